/** Runs a command to its end and returns what it printed and its exit code. */
export async function run(command: string[], options: { cwd?: string; env?: Record<string, string | undefined> } = {}) {
  const proc = Bun.spawn(command, { cwd: options.cwd, env: options.env, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { stdout, stderr, exitCode };
}
