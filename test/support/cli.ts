import { join } from "node:path";
import { testRuntime } from "./runtime.ts";

const cliPath = join(import.meta.dir, "../../src/cli/index.ts");

/** Runs the operator CLI as a real process against the test database. */
export async function cli(...args: string[]) {
  const { db } = await testRuntime();
  const proc = Bun.spawn([process.execPath, cliPath, ...args], {
    env: { ...process.env, DATABASE_URL: db.url },
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
