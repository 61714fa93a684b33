import { afterAll, expect, test } from "bun:test";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { connect } from "../../src/db/client.ts";
import { createServerDatabase, testServerUrl } from "../support/databases.ts";
import { callApp, overHttp } from "../support/http.ts";
import { cliJson, type ServiceProcess, serviceEnv, startService } from "../support/service-process.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";
import { startReceiver, testCertificate } from "../support/webhooks.ts";

/**
 * Three instances started at once on one new database on the server: two serving
 * api and ingest (and jobs), one running only jobs, under ingest and read load.
 * One of them applies the migrations while the others wait; each job tick runs
 * once; each webhook delivery goes out once; a key revoked through one serving
 * instance is refused by the other within a second.
 */
const receiver = startReceiver();
let database: { url: string; drop(): Promise<void> } | undefined;
let instances: ServiceProcess[] = [];

afterAll(async () => {
  await Promise.all(instances.map((instance) => instance.stop()));
  receiver.stop();
  await database?.drop();
}, 60_000);

test.skipIf(!testServerUrl)(
  "three instances on one database: migrations once, job ticks once, webhook deliveries once, revocations everywhere",
  async () => {
    database = await createServerDatabase(testServerUrl as string);
    const env = (roles: string) =>
      serviceEnv({
        DATABASE_URL: database?.url,
        SERVICE_ROLES: roles,
        WEBHOOK_SECRET_KEY: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64"),
        WEBHOOK_ALLOW_LOOPBACK: "true",
        WEBHOOK_CA_FILE: testCertificate().certFile,
        WEBHOOK_SWEEP_CRON: "* * * * * *",
        SIGN_IN_PURGE_CRON: "* * * * * *",
        // Only the change notifications can make a revocation apply within a second.
        KEY_CACHE_TTL_SECONDS: "300",
        RATE_LIMIT_INGEST_PER_SECOND: "0",
        RATE_LIMIT_READ_PER_SECOND: "0",
        RATE_LIMIT_CONTROL_PER_SECOND: "0",
        LOG_LEVEL: "debug",
      });
    const secretKey = env("all").WEBHOOK_SECRET_KEY;
    const envOf = (roles: string) => ({ ...env(roles), WEBHOOK_SECRET_KEY: secretKey });
    instances = await Promise.all([
      startService(envOf("api,ingest,jobs")),
      startService(envOf("api,ingest,jobs")),
      startService(envOf("jobs")),
    ]);
    const [a, b, c] = instances as [ServiceProcess, ServiceProcess, ServiceProcess];

    // Migrations: each file applied once, by whichever instance took its turn first.
    const migrated = instances.flatMap((instance) =>
      instance.logs.filter((l) => l.msg === "migration applied").map((l) => l.migration as string),
    );
    expect(migrated.sort()).toEqual((await readdir(join(import.meta.dir, "../../sql"))).sort());

    const cli = (...args: string[]) => cliJson(envOf("all"), ...args);
    const agent = await cli("org", "create", "--name", "Many instances agent", "--type", "agent");
    const agentKey = (await cli("key", "create", "--org", agent.id, "--scopes", "telemetry:write,telemetry:read")).key;
    const platform = await cli("org", "create", "--name", "Many instances platform", "--type", "platform");
    const admin = (await cli("key", "create", "--org", platform.id, "--scopes", "identity:read,identity:write")).key;
    const reader = await cli("key", "create", "--org", platform.id, "--scopes", "identity:read");

    // Load on both serving instances for the rest of the test.
    let loading = true;
    const failures: string[] = [];
    const load = [a, b].flatMap((instance) => [
      (async () => {
        while (loading) {
          const events = Array.from({ length: 20 }, () => validEvents.retrieved("many.example.net"));
          const res = await callApp(overHttp(instance.base), "POST", "/events", { key: agentKey, body: batch(events) });
          if (res.status !== 200) failures.push(`ingest ${res.status}`);
        }
      })(),
      (async () => {
        while (loading) {
          const since = new Date(Date.now() - 365 * 86_400_000).toISOString();
          const res = await callApp(overHttp(instance.base), "GET", `/agent/summary?since=${since}`, { key: agentKey });
          if (res.status !== 200) failures.push(`read ${res.status}`);
        }
      })(),
    ]);

    try {
      // Webhook deliveries: five pings through both serving instances, each delivered once.
      const created = await callApp(overHttp(a.base), "POST", "/api/v1/identity/webhooks", {
        key: admin,
        body: { url: receiver.url("/many"), event_types: ["delegation.created"] },
      });
      expect(created.status).toBe(201);
      for (const instance of [a, b, a, b, a]) {
        const ping = await callApp(
          overHttp(instance.base),
          "POST",
          `/api/v1/identity/webhooks/${created.body.id}/ping`,
          {
            key: admin,
          },
        );
        expect(ping.status).toBe(202);
      }
      const deliveries = () => receiver.received.filter((r) => r.path === "/many");
      for (let waited = 0; deliveries().length < 5 && waited < 15_000; waited += 100) await Bun.sleep(100);
      await Bun.sleep(2000); // room for a duplicate to show up
      const ids = deliveries().map((r) => r.headers["x-svc-delivery-id"]);
      expect(ids).toHaveLength(5);
      expect(new Set(ids).size).toBe(5);

      // Revocation through one serving instance applies on the other within a second.
      const keys = (instance: ServiceProcess) =>
        callApp(overHttp(instance.base), "GET", "/api/v1/identity/keys", { key: reader.key });
      expect((await keys(b)).status).toBe(200);
      expect(
        (await callApp(overHttp(a.base), "DELETE", `/api/v1/identity/keys/${reader.id}`, { key: admin })).status,
      ).toBe(200);
      const revokedAt = performance.now();
      while ((await keys(b)).status !== 401 && performance.now() - revokedAt < 5000) await Bun.sleep(25);
      expect(performance.now() - revokedAt).toBeLessThan(1000);
    } finally {
      loading = false;
      await Promise.all(load);
    }
    expect(failures).toEqual([]);

    // Job ticks: three instances fire every second, one runs each tick.
    const ran = instances.flatMap((instance) =>
      instance.logs.filter((l) => l.job === "sign-in-purge" && l.msg === "job finished").map((l) => l.tick as string),
    );
    expect(ran.length).toBeGreaterThanOrEqual(3);
    expect(new Set(ran).size).toBe(ran.length);
    const sql = connect(database.url, 1);
    try {
      const [claims] = await sql<{ n: number; instances: number }[]>`
        SELECT count(*)::int AS n, count(DISTINCT instance)::int AS instances
        FROM job_ticks WHERE job = 'sign-in-purge' AND tick = ANY (${ran}::timestamptz[])`;
      expect(claims?.n).toBe(ran.length);
    } finally {
      await sql.end();
    }
    // The jobs-only instance serves nothing but health.
    expect((await callApp(overHttp(c.base), "GET", "/health")).status).toBe(200);
    expect((await callApp(overHttp(c.base), "POST", "/events", { key: agentKey, body: batch([]) })).status).toBe(404);
  },
  120_000,
);
