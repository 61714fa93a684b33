/**
 * Scaling benchmark (docs/SCALING.md):
 *
 *   bun run bench:scaling [--duration 10] [--concurrency 16]
 *
 * Starts a TimescaleDB server of its own and a streaming replica of it
 * (../shared/tsdb/start.sh and start-replica.sh; TSDB_SCRIPTS points elsewhere),
 * then three service processes on it: `ingest`, `api` with the replica in
 * READ_REPLICA_URLS, and `all`. It prints:
 *
 *  1. the memory each role's process takes after start (the cost of the split);
 *  2. ingest throughput through the `ingest` and the `all` instance, same load;
 *  3. replica lag while `concurrency` clients ingest through the `ingest` instance
 *     and two read through the `api` one (an organisation of their own with ten
 *     events, so reads are quick): PostgreSQL's replay_lag, the bytes the replica
 *     is behind, and how far the reads' as_of was behind the moment they were asked;
 *  4. failover: reads in flight when the replica is stopped (`immediate`), their
 *     errors and latency, against the latency before;
 *  5. what a rate limit shared through the database would cost: one token-bucket
 *     upsert per request, sequential and 32 at once.
 */
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { connect } from "../src/db/client.ts";
import { callApp, overHttp } from "../test/support/http.ts";
import { startPrivateServer, tsdbScriptsAvailable } from "../test/support/private-server.ts";
import { cliJson, type ServiceProcess, serviceEnv, startService } from "../test/support/service-process.ts";
import { batch, validEvents } from "../test/support/telemetry-events.ts";
import { removeTempDirs } from "../test/support/temp-dirs.ts";
import { failInOneLine, numberOption } from "./cli.ts";

failInOneLine();
const { values: flags } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    concurrency: { type: "string", default: "16" },
  },
});
const durationMs = numberOption(flags, "duration", 1) * 1000;
const concurrency = numberOption(flags, "concurrency", 1);

if (!tsdbScriptsAvailable) {
  console.error("bench:scaling needs ../shared/tsdb (or TSDB_SCRIPTS) to start a TimescaleDB server and a replica");
  process.exit(1);
}
const progress = (line: string) => console.error(`[scaling] ${line}`);

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};
const round = (value: number, digits = 1) => Number(value.toFixed(digits));
const statusMb = async (pid: number, field: "VmRSS" | "VmHWM") =>
  round(Number(new RegExp(`${field}:\\s+(\\d+)`).exec(await readFile(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024, 0);

progress("starting a TimescaleDB server and a streaming replica of it");
const server = await startPrivateServer();
const replica = await server.startReplica();
const instances: ServiceProcess[] = [];

try {
  const common = {
    DATABASE_URL: server.databaseUrl,
    RATE_LIMIT_INGEST_PER_SECOND: "0",
    RATE_LIMIT_READ_PER_SECOND: "0",
    LOG_LEVEL: "warn",
  };
  progress("starting the ingest, api and all instances");
  const ingestOnly = await startService(serviceEnv({ ...common, SERVICE_ROLES: "ingest", LOG_LEVEL: "info" }));
  instances.push(ingestOnly);
  const api = await startService(
    serviceEnv({ ...common, SERVICE_ROLES: "api", READ_REPLICA_URLS: replica.databaseUrl, LOG_LEVEL: "info" }),
  );
  instances.push(api);
  const everything = await startService(serviceEnv({ ...common, SERVICE_ROLES: "all", LOG_LEVEL: "info" }));
  instances.push(everything);
  await Bun.sleep(2000);
  const memory = {
    ingest: await statusMb(ingestOnly.proc.pid, "VmRSS"),
    api: await statusMb(api.proc.pid, "VmRSS"),
    all: await statusMb(everything.proc.pid, "VmRSS"),
  };
  console.log(`\n1. RSS after start (MB): ingest ${memory.ingest}, api ${memory.api}, all ${memory.all}`);

  const env = serviceEnv(common);
  const org = await cliJson(env, "org", "create", "--name", "Scaling bench", "--type", "agent");
  const { key } = await cliJson(env, "key", "create", "--org", org.id, "--scopes", "telemetry:write,telemetry:read");
  // Reads come from an organisation of its own with a handful of events, so that they are quick and the
  // figures show the replica's routing and lag rather than the time a raw scan of the load takes.
  const readerOrg = await cliJson(env, "org", "create", "--name", "Scaling bench reader", "--type", "agent");
  const reader = (
    await cliJson(env, "key", "create", "--org", readerOrg.id, "--scopes", "telemetry:write,telemetry:read")
  ).key;
  const seeded = await callApp(overHttp(everything.base), "POST", "/events", {
    key: reader,
    body: batch(Array.from({ length: 10 }, () => validEvents.retrieved("reader.example.net"))),
  });
  if (seeded.status !== 200) throw new Error(`seeding the reader failed: ${seeded.status}`);
  const body = JSON.stringify(batch(Array.from({ length: 100 }, () => validEvents.retrieved("scaling.example.net"))));
  // Every request carries new event ids: the body is rebuilt cheaply from one template.
  const freshBody = () => body.replace(/"id":"[0-9a-f-]{36}"/g, () => `"id":"${crypto.randomUUID()}"`);

  /** `clients` loops posting 100-event batches to `instance` until `stop`; events acknowledged and failures. */
  const ingestLoad = async (instance: ServiceProcess, clients: number, stop: Promise<unknown>) => {
    let running = true;
    void stop.then(() => {
      running = false;
    });
    let events = 0;
    let failures = 0;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (running) {
          const res = await fetch(`${instance.base}/events`, {
            method: "POST",
            headers: { "x-api-key": key, "content-type": "application/json" },
            body: freshBody(),
          });
          await res.arrayBuffer();
          if (res.status === 200) events += 100;
          else failures++;
        }
      }),
    );
    return { events, failures };
  };

  progress(`ingest through the ingest instance, then the all instance, ${durationMs / 1000} s each`);
  const through = async (instance: ServiceProcess) => {
    const started = performance.now();
    const result = await ingestLoad(instance, concurrency, Bun.sleep(durationMs));
    return { perSecond: Math.round(result.events / ((performance.now() - started) / 1000)), failures: result.failures };
  };
  const viaIngest = await through(ingestOnly);
  const viaAll = await through(everything);
  console.log(
    `2. ingest events/s, ${concurrency} clients, 100-event batches: ingest role ${viaIngest.perSecond} (${viaIngest.failures} failed), all roles ${viaAll.perSecond} (${viaAll.failures} failed)`,
  );

  progress("replica lag under ingest load, with reads on the api instance");
  const primary = connect(server.adminUrl, 1);
  const since = new Date(Date.now() - 365 * 86_400_000).toISOString();
  const lagSeconds: number[] = [];
  const behindBytes: number[] = [];
  const staleness: number[] = [];
  let readFailures = 0;
  const window = Bun.sleep(durationMs);
  let sampling = true;
  void window.then(() => {
    sampling = false;
  });
  const sampler = (async () => {
    while (sampling) {
      const [row] = await primary<{ lag: number | null; behind: string | null }[]>`
        SELECT extract(epoch FROM replay_lag)::float8 AS lag,
               pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::text AS behind
        FROM pg_stat_replication LIMIT 1`;
      lagSeconds.push(row?.lag ?? 0);
      behindBytes.push(Number(row?.behind ?? 0));
      await Bun.sleep(200);
    }
  })();
  const readers = Array.from({ length: 2 }, async () => {
    while (sampling) {
      const asked = Date.now();
      const res = await callApp(overHttp(api.base), "GET", `/agent/summary?since=${since}`, { key: reader });
      if (res.status !== 200) readFailures++;
      else staleness.push((asked - Date.parse(res.body.as_of)) / 1000);
    }
  });
  const [lagLoad] = await Promise.all([ingestLoad(ingestOnly, concurrency, window), sampler, ...readers]);
  await primary.end();
  console.log(
    `3. replica lag at ${Math.round(lagLoad.events / (durationMs / 1000))} events/s: replay_lag p50 ${round(percentile(lagSeconds, 50), 3)} s, p99 ${round(percentile(lagSeconds, 99), 3)} s, max ${round(Math.max(...lagSeconds), 3)} s; behind at most ${round(Math.max(...behindBytes) / 1024, 0)} KiB; reads' as_of behind the moment they were asked p50 ${round(percentile(staleness, 50), 2)} s, max ${round(Math.max(...staleness), 2)} s (${staleness.length} reads, ${readFailures} failed)`,
  );

  progress("failover: the replica stopped while reads run");
  const latencies: { at: number; ms: number; status: number }[] = [];
  let reading = true;
  const failoverReaders = Array.from({ length: 4 }, async () => {
    while (reading) {
      const started = performance.now();
      const res = await callApp(overHttp(api.base), "GET", `/agent/summary?since=${since}`, { key: reader });
      latencies.push({ at: started, ms: performance.now() - started, status: res.status });
    }
  });
  await Bun.sleep(2000);
  const stoppedAt = performance.now();
  await replica.stop("immediate");
  await Bun.sleep(3000);
  reading = false;
  await Promise.all(failoverReaders);
  const before = latencies.filter((l) => l.at < stoppedAt).map((l) => l.ms);
  const around = latencies.filter((l) => l.at >= stoppedAt - 1000 && l.at < stoppedAt + 3000);
  console.log(
    `4. failover: before the stop p50 ${round(percentile(before, 50))} ms, p99 ${round(percentile(before, 99))} ms; from 1 s before to 3 s after it: ${around.length} reads, ${around.filter((l) => l.status !== 200).length} not 200, max ${round(Math.max(...around.map((l) => l.ms)))} ms`,
  );

  progress("a rate limit shared through the database: one upsert per request");
  const buckets = connect(server.databaseUrl, 32);
  await buckets`CREATE UNLOGGED TABLE IF NOT EXISTS bench_rate_buckets (key text PRIMARY KEY, tokens float8 NOT NULL, at timestamptz NOT NULL)`;
  const take = (bucket: string) => buckets`
    INSERT INTO bench_rate_buckets AS b (key, tokens, at) VALUES (${bucket}, 199, now())
    ON CONFLICT (key) DO UPDATE SET
      tokens = least(200, b.tokens + extract(epoch FROM now() - b.at) * 100) - 1, at = now()
    RETURNING tokens`;
  const sequential = 2000;
  let started = performance.now();
  for (let i = 0; i < sequential; i++) await take("one-key");
  const sequentialUs = ((performance.now() - started) * 1000) / sequential;
  started = performance.now();
  let done = 0;
  await Promise.all(
    Array.from({ length: 32 }, async (_, client) => {
      for (let i = 0; i < 250; i++, done++) await take(`key-${client % 8}`);
    }),
  );
  const concurrentPerSecond = Math.round(done / ((performance.now() - started) / 1000));
  await buckets`DROP TABLE bench_rate_buckets`;
  await buckets.end();
  console.log(
    `5. shared rate-limit bucket (upsert per request): ${round(sequentialUs, 0)} µs each in sequence; ${concurrentPerSecond} upserts/s from 32 clients over 8 keys`,
  );
  const peaks = await Promise.all(instances.map((instance) => statusMb(instance.proc.pid, "VmHWM")));
  console.log(`   peak RSS (MB): ingest ${peaks[0]}, api ${peaks[1]}, all ${peaks[2]}`);
} finally {
  await Promise.all(instances.map((instance) => instance.stop()));
  await server.stop();
  removeTempDirs();
}
