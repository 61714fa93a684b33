/**
 * Ingest benchmark:
 *
 *   bun run bench:ingest [--duration 10] [--concurrency 32] [--batch 100] [--shapes worst,realistic]
 *                        [--history-days 0] [--long-session 0]
 *
 * Against a TimescaleDB server when DATABASE_URL is set (the bench creates a
 * database of its own there and drops it afterwards), otherwise an embedded engine
 * in a temporary DATA_DIR. The service runs as its own process (`bun src/main.ts`,
 * with the settings `bun run start` gives it: bench/start-script.ts);
 * this process only generates traffic and loads COPY. For each data shape
 * (bench/event-generator.ts):
 *
 *  1. plain COPY: as many rows of the same shape into the events hypertable alone
 *     (no session counting) as fast as COPY takes them; then ANALYZE, so that the
 *     writes meet the statistics a production database has;
 *  2. saturation: `concurrency` clients post `batch`-event documents back to back;
 *     with it, and with COPY, the CPU time spent per 1,000 events by the service
 *     process, (a server on this machine) the database's backends, and this
 *     process, which shares the cores;
 *  3. half that rate, open loop (requests on a fixed schedule, whatever the earlier
 *     ones are doing): the latency an emitter sees below saturation;
 *  4. offered against accepted at 0.5, 1, 2 and 4 times saturation (open loop):
 *     past the sustainable rate the service sheds with 503 + Retry-After;
 *  5. counting lag: during saturation, a probe session posted and read back at
 *     once, until the read counts it;
 *  6. one client posting one request at a time: the unloaded latency, the floor
 *     under every latency above;
 *
 * then the service's peak resident memory (VmHWM). `--history-days N` first stores
 * N days of history (an event an hour, chunks older than the compression policy's
 * 30 days compressed): a write then meets a database with a year of chunks, as in
 * production, instead of an empty one. `--long-session N` then has one client post
 * one session's worst-shape batches until it holds N events, and prints a write's
 * latency as the session grows: a write reads the flag holders of its sessions
 * among their stored events (src/modules/ingest/event-store.ts, storedEventsOf).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
import { connect } from "../src/db/client.ts";
import type { Sql } from "../src/db/sql.ts";
import { storedEventColumns } from "../src/modules/ingest/event-columns.ts";
import { createApiKey } from "../src/modules/keys/service.ts";
import { createOrganization } from "../src/modules/organizations/service.ts";
import { createServerDatabase } from "../test/support/databases.ts";
import { failInOneLine, finish, numberOption, stopOnExit, undoOnExit } from "./cli.ts";
import { emitter, type GeneratedEvent, type ShapeName } from "./event-generator.ts";
import { csvLine, eventRow } from "./event-rows.ts";
import { freePort } from "./free-port.ts";
import { backendCpuBetween, backendCpuMs, cpuMsOf } from "./process-cpu.ts";
import { startScriptEnv } from "./start-script.ts";

failInOneLine();
const { values: flags } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    concurrency: { type: "string", default: "32" },
    batch: { type: "string", default: "100" },
    shapes: { type: "string", default: "worst,realistic" },
    "history-days": { type: "string", default: "0" },
    "long-session": { type: "string", default: "0" },
  },
});
const durationMs = numberOption(flags, "duration", 1) * 1000;
const concurrency = numberOption(flags, "concurrency", 1);
const batchSize = numberOption(flags, "batch", 1);
const shapes = (flags.shapes as string).split(",") as ShapeName[];
const historyDays = numberOption(flags, "history-days", 0);
const longSessionEvents = numberOption(flags, "long-session", 0);

// ---------------------------------------------------------------------------
// The database and the service process

const serverUrl = process.env.DATABASE_URL || undefined;
const scratch = serverUrl ? await createServerDatabase(serverUrl) : undefined;
if (scratch) undoOnExit(() => scratch.drop());
const dataDir = serverUrl ? undefined : await mkdtemp(join(tmpdir(), "ingest-bench-"));
if (dataDir) undoOnExit(() => rm(dataDir, { recursive: true, force: true }));

const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const service = Bun.spawn([process.execPath, "src/main.ts"], {
  cwd: join(import.meta.dir, ".."),
  env: {
    ...process.env,
    ...startScriptEnv(),
    DATABASE_URL: scratch?.url ?? "",
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
    RATE_LIMIT_INGEST_PER_SECOND: "0",
    RATE_LIMIT_READ_PER_SECOND: "0",
  },
  // The service's log lines on stderr (fd 2): stdout is the report alone.
  stdout: 2,
  stderr: "inherit",
});
stopOnExit(service);
for (let waited = 0; ; waited += 100) {
  const up = await fetch(`${base}/ready`)
    .then((res) => res.ok)
    .catch(() => false);
  if (up) break;
  if (waited > 120_000 || service.exitCode !== null) throw new Error("the service did not start");
  await Bun.sleep(100);
}

/** A client of the service's database: the scratch server database, or the embedded engine the service serves. */
async function databaseClient(): Promise<Sql> {
  if (scratch) return connect(scratch.url, 2);
  const lock = JSON.parse(await readFile(join(dataDir as string, "engine.lock.json"), "utf8")) as { port: number };
  return connect(`postgres://postgres@127.0.0.1:${lock.port}/postgres`, 1);
}
const sql = await databaseClient();
undoOnExit(() => sql.end({ timeout: 5 }));

async function agentKey(name: string): Promise<{ orgId: string; key: string }> {
  const org = await createOrganization(sql, { name, orgType: "agent" });
  const { key } = await createApiKey(sql, { orgId: org.id, scopes: ["telemetry:write", "telemetry:read"] });
  return { orgId: org.id, key };
}

// ---------------------------------------------------------------------------
// Measuring

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}
const ms = (value: number) => (Number.isNaN(value) ? "-" : `${value.toFixed(1)} ms`);
const perSecond = (count: number, elapsedMs: number) => count / (elapsedMs / 1000);

interface Answer {
  status: number;
  latency: number;
  created: number;
}

async function post(key: string, events: GeneratedEvent[]): Promise<Answer> {
  const body = JSON.stringify({ document_type: "event_batch", schema_version: "1.0", agent_id: "bench-agent", events });
  const started = performance.now();
  try {
    const response = await fetch(`${base}/events`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body,
    });
    const answer = (await response.json()) as { events_created?: number; detail?: string };
    if (response.status !== 200 && response.status !== 503) {
      throw new Error(`ingest answered ${response.status}: ${answer.detail}`);
    }
    return { status: response.status, latency: performance.now() - started, created: answer.events_created ?? 0 };
  } catch (error) {
    if (error instanceof Error && error.message.startsWith("ingest answered")) throw error;
    return { status: 0, latency: performance.now() - started, created: 0 };
  }
}

interface PhaseResult {
  offered: number;
  accepted: number;
  /** Events the accepted requests created. */
  events: number;
  refused: number;
  failed: number;
  p50: number;
  p95: number;
  p99: number;
  p99All: number;
}

function summarise(answers: Answer[], offered: number, elapsedMs: number): PhaseResult {
  const ok = answers.filter((a) => a.status === 200);
  const events = ok.reduce((sum, a) => sum + a.created, 0);
  const okLatencies = ok.map((a) => a.latency).sort((a, b) => a - b);
  const allLatencies = answers.map((a) => a.latency).sort((a, b) => a - b);
  return {
    offered: perSecond(offered, elapsedMs),
    accepted: perSecond(events, elapsedMs),
    events,
    refused: answers.filter((a) => a.status === 503).length,
    failed: answers.filter((a) => a.status === 0).length,
    p50: percentile(okLatencies, 50),
    p95: percentile(okLatencies, 95),
    p99: percentile(okLatencies, 99),
    p99All: percentile(allLatencies, 99),
  };
}

/** Closed loop: each of `clients` posts its emitter's next batch as soon as the last is answered. */
async function closedLoop(
  shape: ShapeName,
  key: string,
  {
    clients = concurrency,
    forMs = durationMs,
    probe,
  }: { clients?: number; forMs?: number; probe?: () => Promise<void> },
): Promise<PhaseResult> {
  const answers: Answer[] = [];
  const started = performance.now();
  const deadline = started + forMs;
  const client = async () => {
    const next = emitter(shape, batchSize);
    while (performance.now() < deadline) answers.push(await post(key, next()));
  };
  await Promise.all([...Array.from({ length: clients }, client), probe?.()]);
  return summarise(answers, answers.length * batchSize, performance.now() - started);
}

/** Open loop at `eventsPerSecond`: requests start on a fixed schedule, round robin over `concurrency` emitters. */
async function paced(shape: ShapeName, key: string, eventsPerSecond: number, forMs: number): Promise<PhaseResult> {
  const emitters = Array.from({ length: concurrency }, () => emitter(shape, batchSize));
  const intervalMs = (1000 * batchSize) / eventsPerSecond;
  const answers: Answer[] = [];
  const inFlight: Promise<void>[] = [];
  const started = performance.now();
  let sent = 0;
  for (; ; sent++) {
    const due = started + sent * intervalMs;
    if (due >= started + forMs) break;
    const wait = due - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    const events = (emitters[sent % concurrency] as () => GeneratedEvent[])();
    inFlight.push(post(key, events).then((answer) => void answers.push(answer)));
  }
  await Promise.all(inFlight);
  return summarise(answers, sent * batchSize, forMs);
}

/**
 * During saturation: a new session posted, then read back through the agent
 * summary until it is counted. The lag is the time from the acknowledgement to
 * the first read that counts it.
 */
async function countingLag(untilMs: number): Promise<number[]> {
  const probe = await agentKey("Bench probe");
  const lags: number[] = [];
  let counted = 0;
  while (performance.now() < untilMs) {
    const answer = await post(probe.key, emitter("realistic", 1)());
    if (answer.status !== 200) continue;
    const acknowledged = performance.now();
    for (;;) {
      const summary = (await (
        await fetch(`${base}/agent/summary`, { headers: { "x-api-key": probe.key } })
      ).json()) as { total_sessions: number };
      if (summary.total_sessions > counted) {
        counted = summary.total_sessions;
        lags.push(performance.now() - acknowledged);
        break;
      }
      if (performance.now() - acknowledged > 30_000) throw new Error("a probe session was not counted in 30 s");
      await Bun.sleep(20);
    }
    await Bun.sleep(500);
  }
  return lags;
}

/**
 * One client posting batches of one session back to back until the session holds
 * `events`; prints the latency of each tenth of them, as the session grows.
 */
async function longSession(key: string, events: number): Promise<void> {
  const sessionId = crypto.randomUUID();
  const next = emitter("worst", batchSize);
  const batches = Math.ceil(events / batchSize);
  const perLine = Math.max(1, Math.round(batches / 10));
  let latencies: number[] = [];
  for (let sent = 1; sent <= batches; sent++) {
    const answer = await post(
      key,
      next().map((event) => ({ ...event, session_id: sessionId })),
    );
    if (answer.status !== 200) throw new Error(`a batch of the long session was answered ${answer.status}`);
    latencies.push(answer.latency);
    if (sent % perLine === 0 || sent === batches) {
      latencies.sort((a, b) => a - b);
      console.log(
        `  session holding ${String(sent * batchSize).padStart(7)} events   p50 ${ms(percentile(latencies, 50))}  p99 ${ms(percentile(latencies, 99))} (the last ${latencies.length} batches)`,
      );
      latencies = [];
    }
  }
}

// ---------------------------------------------------------------------------
// Plain COPY

/**
 * COPY of `count` rows of the shape into `events`, with the columns ingest fills
 * (event-columns.ts) and no counting. On a server: COPY FROM STDIN. The embedded
 * engine's socket cannot carry the COPY sub-protocol (its wasm backend aborts on
 * CopyIn), so there the same CSV is written into the engine's data directory and
 * loaded with COPY FROM that file.
 */
async function plainCopy(shape: ShapeName, count: number): Promise<number> {
  const { orgId } = await agentKey(`Bench COPY ${shape}`);
  const columns = storedEventColumns.map((column) => column.name).join(", ");
  function* lines() {
    const next = emitter(shape, batchSize);
    for (let made = 0; made < count; made += batchSize) {
      for (const event of next()) {
        const row = eventRow(event, orgId);
        yield csvLine(row);
      }
    }
  }
  const text = dataDir ? [...lines()].join("") : "";
  const started = performance.now();
  if (dataDir) {
    await Bun.write(join(dataDir, "bench-copy.csv"), text);
    // The engine sees its data directory as /tmp/pglite/base.
    await sql.unsafe(`COPY events (${columns}) FROM '/tmp/pglite/base/bench-copy.csv' WITH (FORMAT csv)`);
  } else {
    const writable = await sql.unsafe(`COPY events (${columns}) FROM STDIN WITH (FORMAT csv)`).writable();
    await pipeline(Readable.from(lines()), writable);
  }
  return perSecond(count, performance.now() - started);
}

// ---------------------------------------------------------------------------
// Where the CPU goes: the service process, and the database's backends when the
// server runs on this machine (their pids from pg_stat_activity, read in /proc).

interface CpuSnapshot {
  service: number;
  /** This process, which generates the traffic and the COPY rows on the same cores. */
  client: number;
  /**
   * Per backend of the bench database alive at the snapshot; absent on the embedded
   * engine (it runs in the service) or a server elsewhere.
   */
  backends?: Map<number, number>;
}

const clientCpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

async function cpuSnapshot(): Promise<CpuSnapshot> {
  const client = clientCpuMs();
  const serviceMs = (await cpuMsOf(service.pid)) ?? 0;
  const backends = scratch ? await backendCpuMs(sql) : undefined;
  return backends ? { service: serviceMs, client, backends } : { service: serviceMs, client };
}

/** CPU per 1,000 events between two snapshots (backendCpuBetween). */
function cpuPerThousand(before: CpuSnapshot, after: CpuSnapshot, events: number): string {
  const per = (used: number) => `${((1000 * used) / events).toFixed(1)} ms`;
  const service = `service ${per(after.service - before.service)}`;
  const client = `bench client ${per(after.client - before.client)}`;
  if (!after.backends) {
    return scratch ? `${service}, database not on this machine, ${client}` : `${service} (engine included), ${client}`;
  }
  const database = backendCpuBetween(before.backends, after.backends);
  return `${service}, database ${per(database)}, ${client}`;
}

function peakRss(pid: number): Promise<number> {
  return readFile(`/proc/${pid}/status`, "utf8").then(
    (status) => Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024,
  );
}

/**
 * An event an hour over the last `days` days, from an organisation of its own,
 * with the chunks older than the compression policy's 30 days compressed.
 */
async function storeHistory(days: number): Promise<void> {
  const { orgId } = await agentKey("Bench history");
  await sql`
    INSERT INTO events (event_time, event_id, org_id, event_type, source_role, content_url, content_host, session_id)
    SELECT now() - g * INTERVAL '1 hour', gen_random_uuid(), ${orgId}::uuid, 'content_retrieved', 'agent',
           'https://history.example/p' || g % 500, 'history.example', gen_random_uuid()
    FROM generate_series(1, ${days * 24}) g`;
  console.log(`history: ${days * 24} events over ${days} days stored; compressing the chunks older than 30 days…`);
  await sql`SELECT count(compress_chunk(c, true)) FROM show_chunks('events', older_than => INTERVAL '30 days') c`;
  const [chunks] = await sql<{ all: number; compressed: number }[]>`
    SELECT count(*)::int AS all, count(*) FILTER (WHERE is_compressed)::int AS compressed
    FROM timescaledb_information.chunks WHERE hypertable_name = 'events'`;
  console.log(`history: events in ${chunks?.all} chunks, ${chunks?.compressed} of them compressed`);
}

const line = (label: string, r: PhaseResult) =>
  console.log(
    `  ${label.padEnd(26)} offered ${r.offered.toFixed(0).padStart(6)}/s  accepted ${r.accepted.toFixed(0).padStart(6)} events/s  ` +
      `p50 ${ms(r.p50)}  p95 ${ms(r.p95)}  p99 ${ms(r.p99)}  (503: ${r.refused}, failed: ${r.failed}, p99 of all answers ${ms(r.p99All)})`,
  );

console.log(
  `database: ${scratch ? "TimescaleDB server" : `embedded (DATA_DIR ${dataDir})`}; ${concurrency} clients, ${batchSize}-event batches, ${durationMs / 1000} s per phase`,
);
if (historyDays > 0) await storeHistory(historyDays);
const warmup = await agentKey("Bench warm-up");
for (let i = 0; i < 10; i++) await post(warmup.key, emitter("realistic", batchSize)());

for (const shape of shapes) {
  console.log(`\nshape: ${shape}`);
  const copyRows = scratch ? 200_000 : 30_000;
  const beforeCopy = await cpuSnapshot();
  const copy = await plainCopy(shape, copyRows);
  const copyCpu = cpuPerThousand(beforeCopy, await cpuSnapshot(), copyRows);
  console.log(`  plain COPY                 ${copy.toFixed(0)} rows/s`);
  // Statistics of the chunk being written, as autovacuum keeps them in production,
  // so that the planner's work with them (event-store.ts, storedEventsOf) is measured
  // in every run, not only in those autovacuum happened to reach first.
  await sql`ANALYZE events`;
  const { key } = await agentKey(`Bench ${shape}`);
  let lags: number[] = [];
  const beforeSaturation = await cpuSnapshot();
  const saturated = await closedLoop(shape, key, {
    probe: async () => {
      lags = await countingLag(performance.now() + durationMs - 1000);
    },
  });
  const saturationCpu = cpuPerThousand(beforeSaturation, await cpuSnapshot(), saturated.events);
  line("saturation (closed loop)", saturated);
  console.log(
    `  HTTP / plain COPY          ${(saturated.accepted / copy).toFixed(2)}; counting lag at saturation: ${lags.length === 0 ? "no probe finished (phase too short)" : `max ${ms(Math.max(...lags))} over ${lags.length} probes`}`,
  );
  console.log(`  CPU per 1,000 events       plain COPY: ${copyCpu}; saturation: ${saturationCpu}`);
  line("half that rate (open loop)", await paced(shape, key, saturated.accepted / 2, durationMs));
  for (const factor of [0.5, 1, 2, 4]) {
    line(`${factor}x saturation`, await paced(shape, key, saturated.accepted * factor, durationMs / 2));
  }
  // The floor under every latency above: one request at a time, nothing else queued.
  line("one client, unloaded", await closedLoop(shape, key, { clients: 1, forMs: durationMs / 2 }));
}
if (longSessionEvents > 0) {
  console.log(`\none long session, worst shape, one client, ${batchSize}-event batches`);
  await longSession((await agentKey("Bench long session")).key, longSessionEvents);
}
console.log(`\nservice peak RSS (VmHWM): ${(await peakRss(service.pid)).toFixed(0)} MB`);
await finish(0);
