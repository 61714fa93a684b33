import { join } from "node:path";

const root = join(import.meta.dir, "../..");

export type LogLine = Record<string, any>;

/** A service started as a real process (`bun src/main.ts`), with its JSON log lines collected as they come. */
export interface ServiceProcess {
  proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  /** http://127.0.0.1:<port>, once the service listens. */
  base: string;
  logs: LogLine[];
  /** Resolves with the first log line (already seen or still to come) that matches. */
  waitForLog(matches: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** Sends `signal` and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number>;
}

function collectLines(stream: ReadableStream<Uint8Array>, into: LogLine[], raw: string[]): Promise<void> {
  const decoder = new TextDecoder();
  let pending = "";
  return (async () => {
    for await (const chunk of stream) {
      pending += decoder.decode(chunk, { stream: true });
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) {
        raw.push(line);
        if (line.startsWith("{")) into.push(JSON.parse(line));
      }
    }
  })();
}

/** Environment for a service on a free loopback port, logging at info. */
export function serviceEnv(overrides: Record<string, string | undefined>): Record<string, string | undefined> {
  return { ...process.env, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", TEST_DATABASE_URL: "", ...overrides };
}

/** Starts `bun src/main.ts` (or `command`, which ends up running it) and waits until it listens. */
export async function startService(
  env: Record<string, string | undefined>,
  options: { command?: string[]; timeoutMs?: number } = {},
): Promise<ServiceProcess> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const command = options.command ?? [process.execPath, "src/main.ts"];
  const proc = Bun.spawn(command, { cwd: root, env, stdout: "pipe", stderr: "pipe" });
  const logs: LogLine[] = [];
  const raw: string[] = [];
  const reading = collectLines(proc.stdout, logs, raw);
  const errors = new Response(proc.stderr).text();
  const waitForLog = async (matches: (line: LogLine) => boolean, waitMs = timeoutMs) => {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const found = logs.find(matches);
      if (found) return found;
      if (proc.exitCode !== null || Date.now() > deadline) {
        await Promise.race([reading, Bun.sleep(100)]);
        const again = logs.find(matches);
        if (again) return again;
        throw new Error(
          `no matching log line (exit ${proc.exitCode}); output:\n${raw.join("\n")}\n${proc.exitCode !== null ? await errors : ""}`,
        );
      }
      await Bun.sleep(20);
    }
  };
  try {
    const listening = await waitForLog((line) => line.msg === "listening");
    return {
      proc,
      base: `http://127.0.0.1:${listening.port}`,
      logs,
      waitForLog,
      async stop(signal = "SIGTERM") {
        proc.kill(signal);
        return proc.exited;
      },
    };
  } catch (error) {
    proc.kill("SIGKILL");
    throw error;
  }
}

/** Runs the service until it exits by itself (a start-up failure), with everything it printed. */
export async function runUntilExit(env: Record<string, string | undefined>, timeoutMs = 30_000) {
  const proc = Bun.spawn([process.execPath, "src/main.ts"], { cwd: root, env, stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  clearTimeout(timer);
  const lines = stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as LogLine);
  return { exitCode, stdout, stderr, lines };
}

/** Runs the operator CLI against a service's database (its environment) and returns its JSON. */
export async function cliJson(env: Record<string, string | undefined>, ...args: string[]) {
  const proc = Bun.spawn([process.execPath, "src/cli/index.ts", ...args, "--json"], {
    cwd: root,
    env,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  if (code !== 0) throw new Error(`cli ${args.join(" ")} failed: ${out}`);
  return JSON.parse(out);
}
