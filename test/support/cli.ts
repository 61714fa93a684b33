import { join } from "node:path";
import { testRuntime } from "./runtime.ts";

const cliPath = join(import.meta.dir, "../../src/cli/index.ts");

/** Runs the operator CLI as a real process, with these environment variables over the test's own. */
export async function runCli(options: { env: Record<string, string>; cwd?: string }, ...args: string[]) {
  const proc = Bun.spawn([process.execPath, cliPath, ...args], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { stdout, stderr, exitCode };
}

/** Runs the operator CLI as a real process against the test database. */
export async function cli(...args: string[]) {
  const { db } = await testRuntime();
  return runCli({ env: { DATABASE_URL: db.url } }, ...args);
}
