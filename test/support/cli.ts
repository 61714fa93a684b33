import { join } from "node:path";
import { run } from "./run.ts";
import { testRuntime } from "./runtime.ts";

const cliPath = join(import.meta.dir, "../../src/cli/index.ts");

/** Runs the operator CLI as a real process, with these environment variables over the test's own. */
export function runCli(options: { env: Record<string, string>; cwd?: string }, ...args: string[]) {
  return run([process.execPath, cliPath, ...args], { cwd: options.cwd, env: { ...process.env, ...options.env } });
}

/** Runs the operator CLI as a real process against the test database. */
export async function cli(...args: string[]) {
  const { db } = await testRuntime();
  return runCli({ env: { DATABASE_URL: db.url } }, ...args);
}
