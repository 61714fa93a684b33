import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { isAlive } from "../../src/core/process-alive.ts";
import { serverDatabasesOf, testServerUrl } from "../support/databases.ts";
import { tempDir } from "../support/temp-dirs.ts";

/**
 * bench:ingest makes a temporary DATA_DIR (embedded engine) or a scratch database
 * (a server) and runs the service as a process of its own: interrupted or
 * failing, it leaves none of them behind. Its TMPDIR is the test's, where
 * nothing may be left.
 */
function benchIngest(env: Record<string, string> = {}) {
  const tmp = tempDir("bench-ingest-");
  const bench = Bun.spawn(
    ["bun", join(import.meta.dir, "../../bench/ingest.ts"), "--duration", "1", "--shapes", "realistic"],
    { env: { ...process.env, DATABASE_URL: testServerUrl ?? "", TMPDIR: tmp, ...env }, stdout: "pipe", stderr: "pipe" },
  );
  /** What the bench leaves: its DATA_DIR, its scratch database. */
  const left = async () => [
    ...readdirSync(tmp),
    ...(testServerUrl ? await serverDatabasesOf(testServerUrl, bench.pid) : []),
  ];
  return { bench, left };
}

const childrenOf = (pid: number) =>
  Bun.spawnSync(["pgrep", "-P", String(pid)])
    .stdout.toString()
    .split("\n")
    .filter(Boolean)
    .map(Number);

/** What a stream has said until `line` starts one of its lines. */
async function readUntilLine(stream: ReadableStream<Uint8Array>, line: string): Promise<string> {
  const reader = stream.getReader();
  let text = "";
  while (!`\n${text}`.includes(`\n${line}`)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return text;
}

/** Its text, or what it said until `ms` passed: a child left behind holds the pipe open. */
const textWithin = (stream: ReadableStream<Uint8Array>, ms: number) =>
  Promise.race([new Response(stream).text(), Bun.sleep(ms).then(() => "(still open)")]);

describe(`bench:ingest leaves nothing behind (${testServerUrl ? "server" : "embedded"})`, () => {
  test.each([
    ["SIGINT", 130],
    ["SIGTERM", 143],
    ["SIGHUP", 129],
  ] as const)(
    "%s during the run: the service stopped, its data removed, exit code %d",
    async (signal, code) => {
      const { bench, left } = benchIngest();
      const services: number[] = [];
      try {
        // Its first line comes once the service is up and the run begins.
        expect(await readUntilLine(bench.stdout, "database: ")).toContain("clients, 100-event batches");
        services.push(...childrenOf(bench.pid));
        expect(services.length).toBe(1);
        bench.kill(signal);
        const exitCode = await bench.exited;
        // Ended on its own (not by the signal, which would leave all this), with what it started and made.
        expect({ exitCode, signal: bench.signalCode, running: services.filter(isAlive), left: await left() }).toEqual({
          exitCode: code,
          signal: null,
          running: [],
          left: [],
        });
        expect(await textWithin(bench.stderr, 5_000)).toContain(
          `interrupted (${signal}): stopping what the bench started\n`,
        );
      } finally {
        bench.kill("SIGKILL");
        for (const pid of services.filter(isAlive)) process.kill(pid, "SIGKILL");
      }
    },
    180_000,
  );

  test("a service that does not start: exit code 1, in one line, its data removed", async () => {
    const { bench, left } = benchIngest({ SERVICE_ROLES: "none" });
    expect(await bench.exited).toBe(1);
    expect(await new Response(bench.stdout).text()).toBe("");
    expect((await textWithin(bench.stderr, 5_000)).trimEnd().split("\n").at(-1)).toBe(
      "error: the service did not start",
    );
    expect(await left()).toEqual([]);
  }, 60_000);
});
