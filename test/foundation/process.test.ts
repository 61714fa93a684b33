import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
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
