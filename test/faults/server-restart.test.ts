import { afterAll, expect, test } from "bun:test";
import { rm } from "node:fs/promises";
import { freePort } from "../../bench/free-port.ts";
import { connect } from "../../src/db/client.ts";
import { callApp, type RequestHandler } from "../support/http.ts";
import { cliJson, type ServiceProcess, serviceEnv, startService } from "../support/service-process.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";
import { tempDir } from "../support/temp-dirs.ts";

/**
 * `pg_ctl restart -m immediate` of the TimescaleDB server under ingest load. It
 * runs on a private server this test starts (../shared/tsdb/start.sh), never the
 * shared test server, on demand: FAULTS_SERVER_RESTART=1 with TEST_DATABASE_URL set.
 * FAULTS_LONG=1 keeps the load up longer and restarts three times.
 * Known to fail still: the service process dies under this load in some runs
 * (see src/main.ts on postgres.js socket errors), so it is not yet in CI.
 */
const onServer = Boolean(process.env.TEST_DATABASE_URL) && process.env.FAULTS_SERVER_RESTART === "1";
const long = process.env.FAULTS_LONG === "1";
const tsdb = "/work/shared/tsdb";
const pgCtl = "/usr/lib/postgresql/15/bin/pg_ctl";
let dataDir: string | undefined;
let service: ServiceProcess | undefined;

afterAll(async () => {
  await service?.stop("SIGKILL");
  if (dataDir) {
    await Bun.$`bash ${tsdb}/stop.sh ${dataDir}`.quiet().nothrow();
    await rm(dataDir, { recursive: true, force: true });
  }
}, 60_000);

/** pg_ctl as the user the server runs as (start.sh runs it as `postgres` when started by root). */
const asServerUser = (args: string[]) =>
  process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--", pgCtl, ...args] : [pgCtl, ...args];

test.skipIf(!onServer)(
  "the service answers 503 with Retry-After while the server restarts, recovers by itself, and loses no acknowledged event",
  async () => {
    dataDir = tempDir("svc-tsdb-");
    const serverUrl = (await Bun.$`bash ${tsdb}/start.sh ${dataDir} ${await freePort()}`.text()).trim();
    const admin = connect(serverUrl, 1);
    await admin`CREATE DATABASE svc`;
    await admin.end();
    const databaseUrl = serverUrl.replace(/\/postgres$/, "/svc");
    const env = serviceEnv({
      DATABASE_URL: databaseUrl,
      WEBHOOK_SECRET_KEY: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64"),
      RATE_LIMIT_INGEST_PER_SECOND: "0",
      LOG_LEVEL: "error",
    });
    service = await startService({ ...env, LOG_LEVEL: "info" });
    const org = await cliJson(env, "org", "create", "--name", "Restart", "--type", "agent");
    const { key } = await cliJson(env, "key", "create", "--org", org.id, "--scopes", "telemetry:write");
    const remote: RequestHandler = {
      handle: (request) => fetch(request.url.replace("http://test.local", service?.base ?? ""), request),
    };

    const acknowledged = new Set<string>();
    const statuses = new Map<number, number>();
    let withoutRetryAfter = 0;
    let running = true;
    const client = async () => {
      while (running) {
        const events = Array.from({ length: 20 }, () =>
          validEvents.retrieved(`restart-${crypto.randomUUID().slice(0, 6)}.example.net`, { source_role: "agent" }),
        );
        const res = await callApp(remote, "POST", "/events", {
          key,
          body: batch(events, { session_id: crypto.randomUUID() }),
        });
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status === 200) for (const event of events) acknowledged.add(event.id);
        else {
          if (res.status === 503 && !res.headers.get("retry-after")) withoutRetryAfter++;
          await Bun.sleep(50);
        }
      }
    };
    const clients = Array.from({ length: 4 }, client);
    for (let round = 0; round < (long ? 3 : 1); round++) {
      await Bun.sleep(long ? 5000 : 1000);
      const restart = Bun.spawnSync(asServerUser(["-D", dataDir, "-w", "restart", "-m", "immediate"]));
      expect(restart.exitCode).toBe(0);
    }
    // Recovery by itself: ingest succeeds again within a few seconds of the restart.
    const okBefore = statuses.get(200) ?? 0;
    const deadline = Date.now() + 15_000;
    while ((statuses.get(200) ?? 0) < okBefore + 10 && Date.now() < deadline) await Bun.sleep(100);
    await Bun.sleep(long ? 5000 : 500);
    running = false;
    await Promise.all(clients);

    console.log(JSON.stringify({ statuses: Object.fromEntries(statuses), acknowledged: acknowledged.size }));
    expect(service.proc.exitCode).toBeNull();
    expect((statuses.get(200) ?? 0) - okBefore).toBeGreaterThanOrEqual(10);
    expect([...statuses.keys()].filter((status) => status !== 200 && status !== 503)).toEqual([]);
    expect(withoutRetryAfter).toBe(0);
    const sql = connect(databaseUrl, 1);
    try {
      const stored = await sql<{ event_id: string; n: number }[]>`
        SELECT event_id::text, count(*)::int AS n FROM events WHERE org_id = ${org.id}::uuid GROUP BY event_id`;
      const counts = new Map(stored.map((row) => [row.event_id, row.n]));
      expect([...acknowledged].filter((id) => counts.get(id) !== 1)).toEqual([]);
    } finally {
      await sql.end();
    }
  },
  long ? 300_000 : 120_000,
);
