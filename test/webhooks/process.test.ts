import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { cliJson, serviceEnv, startService } from "../support/service-process.ts";
import { tempDir } from "../support/temp-dirs.ts";
import { startReceiver, testCertificate } from "../support/webhooks.ts";

/** HMAC-SHA256 hex with WebCrypto, independent of the service's code. */
async function hmacHex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return Buffer.from(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(message))).toString("hex");
}

/**
 * A service on the embedded engine in `dataDir` (its webhook key generated there)
 * that sweeps every second and may deliver to the test's loopback receiver.
 */
const deliveringServiceEnv = (dataDir: string, extra: Record<string, string> = {}) =>
  serviceEnv({
    DATABASE_URL: "",
    DATA_DIR: dataDir,
    WEBHOOK_SECRET_KEY: "",
    WEBHOOK_ALLOW_LOOPBACK: "true",
    WEBHOOK_CA_FILE: testCertificate().certFile,
    WEBHOOK_SWEEP_CRON: "* * * * * *",
    ...extra,
  });

test("a service process on the embedded engine keeps its webhook key in DATA_DIR and delivers with its own sweep", async () => {
  const dataDir = tempDir("svc-webhooks-");
  const hooks = startReceiver();
  const env = deliveringServiceEnv(dataDir);
  const cli = (...args: string[]) => cliJson(env, ...args);
  /** Pings the endpoint and waits for the receiver to get the delivery. */
  const pingAndReceive = async (base: string, key: string, id: string) => {
    const before = hooks.received.length;
    const res = await fetch(`${base}/api/v1/identity/webhooks/${id}/ping`, {
      method: "POST",
      headers: { "x-api-key": key },
    });
    expect(res.status).toBe(202);
    for (let waited = 0; hooks.received.length === before && waited < 10_000; waited += 50) await Bun.sleep(50);
    return hooks.received[before];
  };

  let service = await startService(env);
  try {
    // The test-only allowance is announced loudly.
    expect(
      service.logs.some((l) => l.level === "warn" && String(l.msg).startsWith("WEBHOOK_ALLOW_LOOPBACK is on")),
    ).toBe(true);
    const keyFile = join(dataDir, "webhook-secret.key");
    expect(existsSync(keyFile)).toBe(true);
    const generated = readFileSync(keyFile, "utf8");

    const org = await cli("org", "create", "--name", "Hooks", "--type", "platform");
    const { key } = await cli("key", "create", "--org", org.id, "--scopes", "identity:read,identity:write");
    const created = await fetch(`${service.base}/api/v1/identity/webhooks`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: JSON.stringify({ url: hooks.url("/live"), event_types: ["delegation.created"] }),
    });
    expect(created.status).toBe(201);
    const { id, secret } = (await created.json()) as { id: string; secret: string };

    const first = await pingAndReceive(service.base, key, id);
    expect(first?.headers["x-svc-signature"]).toBe(
      await hmacHex(secret, `${first?.headers["x-svc-timestamp"]}.${first?.body}`),
    );

    // After a restart the same key opens the stored secret: deliveries are still signed with it.
    expect(await service.stop("SIGTERM")).toBe(0);
    service = await startService(env);
    expect(readFileSync(keyFile, "utf8")).toBe(generated);
    const second = await pingAndReceive(service.base, key, id);
    expect(second?.headers["x-svc-signature"]).toBe(
      await hmacHex(secret, `${second?.headers["x-svc-timestamp"]}.${second?.body}`),
    );
  } finally {
    await service.stop("SIGTERM");
    hooks.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}, 120_000);

test("SIGTERM while a receiver hangs stops within the shutdown grace, and the delivery stays to be sent again", async () => {
  const dataDir = tempDir("svc-webhooks-hang-");
  const hooks = startReceiver();
  hooks.on("/hang", () => new Promise<Response>(() => {}));
  const env = deliveringServiceEnv(dataDir, { SHUTDOWN_GRACE_SECONDS: "1" });
  let service = await startService(env);
  try {
    const org = await cliJson(env, "org", "create", "--name", "Hangs", "--type", "platform");
    const { key } = await cliJson(env, "key", "create", "--org", org.id, "--scopes", "identity:read,identity:write");
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${service.base}/api/v1/identity/webhooks${path}`, {
        method,
        headers: { "content-type": "application/json", "x-api-key": key },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const created = await call("POST", "", { url: hooks.url("/hang"), event_types: ["delegation.created"] });
    const { id } = (await created.json()) as { id: string };
    const pinged = (await (await call("POST", `/${id}/ping`)).json()) as { id: string };
    for (let waited = 0; hooks.received.length === 0 && waited < 10_000; waited += 50) await Bun.sleep(50);
    expect(hooks.received.length).toBe(1);

    // The attempt would wait 10 s for an answer; the shutdown does not wait past its grace.
    const started = performance.now();
    expect(await service.stop("SIGTERM")).toBe(0);
    expect(performance.now() - started).toBeLessThan(8_000);
    expect(service.logs.at(-1)?.msg).toBe("stopped");

    service = await startService(env);
    const delivery = (await (await call("GET", `/${id}/deliveries/${pinged.id}`)).json()) as Record<string, unknown>;
    expect(delivery).toMatchObject({ status: "pending", delivered_at: null });
  } finally {
    await service.stop("SIGTERM");
    hooks.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}, 120_000);
