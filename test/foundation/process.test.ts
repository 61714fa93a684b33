import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dir, "../..");

/** Reads JSON log lines from a process until one matches. */
async function waitForLog(stream: ReadableStream<Uint8Array>, matches: (line: Record<string, any>) => boolean) {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`process ended before the expected log line; output so far:\n${buffered}`);
    buffered += decoder.decode(value, { stream: true });
    for (const line of buffered.split("\n")) {
      if (!line.startsWith("{")) continue;
      const entry = JSON.parse(line);
      if (matches(entry)) {
        reader.releaseLock();
        return entry;
      }
    }
  }
}

describe("the service process", () => {
  test("starts on the embedded engine, shares it with the CLI, and stops cleanly on SIGTERM", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "svc-data-"));
    const env = {
      ...process.env,
      DATABASE_URL: "",
      DATA_DIR: dataDir,
      PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
    };
    const service = Bun.spawn([process.execPath, "src/main.ts"], { cwd: root, env, stdout: "pipe", stderr: "inherit" });
    try {
      const listening = await waitForLog(service.stdout, (l) => l.msg === "listening");
      const base = `http://127.0.0.1:${listening.port}`;
      expect(await (await fetch(`${base}/health`)).json()).toEqual({ status: "ok" });
      const ready = await fetch(`${base}/ready`);
      expect(ready.status).toBe(200);
      expect(ready.headers.get("x-request-id")).toBeTruthy();

      // The CLI reaches the running service's engine instead of opening the files twice.
      const cli = Bun.spawn(
        [process.execPath, "src/cli/index.ts", "org", "create", "--name", "Live", "--type", "agent", "--json"],
        {
          cwd: root,
          env,
          stdout: "pipe",
          stderr: "pipe",
        },
      );
      expect(await cli.exited).toBe(0);
      expect(JSON.parse(await new Response(cli.stdout).text())).toMatchObject({ name: "Live", org_type: "agent" });

      service.kill("SIGTERM");
      await waitForLog(service.stdout, (l) => l.msg === "stopped");
      expect(await service.exited).toBe(0);
      expect(existsSync(join(dataDir, "engine.lock.json"))).toBe(false);
    } finally {
      service.kill("SIGKILL");
    }
  }, 60_000);

  test("an invalid setting stops start-up with a message naming the variable", async () => {
    const proc = Bun.spawn([process.execPath, "src/main.ts"], {
      cwd: root,
      env: { ...process.env, PORT: "not-a-port" },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(await proc.exited).toBe(2);
    expect(await new Response(proc.stderr).text()).toContain("PORT");
  }, 30_000);
});
