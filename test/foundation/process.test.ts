import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { basename, join } from "node:path";
import { runUntilExit, serviceEnv, startService } from "../support/service-process.ts";
import { tempDir } from "../support/temp-dirs.ts";

const root = join(import.meta.dir, "../..");

describe("the service process", () => {
  test("starts on the embedded engine, shares it with the CLI, and stops cleanly on SIGTERM", async () => {
    const dataDir = tempDir("svc-data-");
    const env = serviceEnv({ DATABASE_URL: "", DATA_DIR: dataDir });
    const service = await startService(env);
    try {
      expect(await (await fetch(`${service.base}/health`)).json()).toEqual({ status: "ok" });
      const ready = await fetch(`${service.base}/ready`);
      expect(ready.status).toBe(200);
      expect(ready.headers.get("x-request-id")).toBeTruthy();

      // The CLI reaches the running service's engine instead of opening the files twice.
      const cli = Bun.spawn(
        [process.execPath, "src/cli/index.ts", "org", "create", "--name", "Live", "--type", "agent", "--json"],
        { cwd: root, env, stdout: "pipe", stderr: "pipe" },
      );
      expect(await cli.exited).toBe(0);
      expect(JSON.parse(await new Response(cli.stdout).text())).toMatchObject({ name: "Live", org_type: "agent" });

      expect(await service.stop("SIGTERM")).toBe(0);
      expect(service.logs.some((line) => line.msg === "stopped")).toBe(true);
      expect(existsSync(join(dataDir, "engine.lock.json"))).toBe(false);
    } finally {
      service.proc.kill("SIGKILL");
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  test("without PUBLIC_BASE_URL, sign-in links point at the address and port the service listens on", async () => {
    const dataDir = tempDir("svc-data-");
    const service = await startService(serviceEnv({ DATABASE_URL: "", DATA_DIR: dataDir, PUBLIC_BASE_URL: "" }));
    try {
      const sent = await fetch(`${service.base}/api/v1/identity/auth/magic-link`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: "newcomer@example.com" }),
      });
      expect(sent.status).toBe(202);
      const mail = await service.waitForLog((line) => typeof line.link === "string");
      // PORT 0: the port is only known once listening, so this is the real one, not 3000.
      expect(new URL(mail.link).origin).toBe(service.base);
      expect(await service.stop("SIGTERM")).toBe(0);
    } finally {
      service.proc.kill("SIGKILL");
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  test("an invalid setting stops start-up with a message naming the variable", async () => {
    const result = await runUntilExit(serviceEnv({ PORT: "not-a-port" }));
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain("PORT");
  }, 30_000);
});

describe("start-up the operator must fix ends with one line, never a stack", () => {
  test("a port already in use names HOST and PORT, though its holder lets others share it", async () => {
    // Another instance of the service held it with SO_REUSEPORT, Elysia's default, and was shared silently.
    const taken = Bun.serve({ port: 0, hostname: "127.0.0.1", reusePort: true, fetch: () => new Response("taken") });
    const dataDir = tempDir("svc-data-");
    try {
      const result = await runUntilExit(
        serviceEnv({ DATABASE_URL: "", DATA_DIR: dataDir, PORT: String(taken.port), HOST: "127.0.0.1" }),
        60_000,
      );
      expect(result.exitCode).toBe(1);
      const failed = result.stdout.split("\n").find((line) => line.includes("start-up failed"));
      expect(failed).toContain("cannot listen on 127.0.0.1 port");
      expect(`${result.stdout}${result.stderr}`).not.toContain("    at ");
    } finally {
      taken.stop(true);
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  test("a DATA_DIR the service cannot create names DATA_DIR", async () => {
    const result = await runUntilExit(serviceEnv({ DATABASE_URL: "", DATA_DIR: "/proc/no-such-data-dir" }));
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toContain("DATA_DIR /proc/no-such-data-dir cannot be used");
    expect(`${result.stdout}${result.stderr}`).not.toContain("    at ");
  }, 30_000);

  test("a signal while the service starts stops it at once, saying so", async () => {
    const dataDir = tempDir("svc-data-");
    const proc = Bun.spawn([process.execPath, "src/main.ts"], {
      cwd: root,
      env: serviceEnv({ DATABASE_URL: "", DATA_DIR: dataDir, LOG_LEVEL: "info" }),
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      const messages: string[] = [];
      let pending = "";
      for await (const chunk of proc.stdout.pipeThrough(new TextDecoderStream())) {
        pending += chunk;
        const lines = pending.split("\n");
        pending = lines.pop() ?? "";
        for (const line of lines.filter((text) => text.startsWith("{"))) {
          const { msg } = JSON.parse(line) as { msg: string };
          messages.push(msg);
          // Its first line: the engine is still to start and the migrations to apply.
          if (messages.length === 1) proc.kill("SIGTERM");
        }
      }
      expect(await proc.exited).toBe(0);
      expect(messages).not.toContain("listening");
      expect(messages.at(-1)).toBe("stopped while starting");
      // Nor is its claim on DATA_DIR left behind (beside a new directory, inside an existing one).
      const parent = join(dataDir, "..");
      const claims = (await readdir(parent)).filter(
        (name) => name.includes(basename(dataDir)) && name.endsWith(".lock.json"),
      );
      expect(claims).toEqual([]);
    } finally {
      proc.kill("SIGKILL");
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
