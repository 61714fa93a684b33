/**
 * Ingest benchmark: `bun run bench:ingest [--duration 10] [--concurrency 8] [--batch 100]`.
 *
 * Serves the real app over HTTP on loopback against DATABASE_URL (or a fresh
 * embedded engine in a temp DATA_DIR when unset), then:
 *  1. max rate: `concurrency` clients post `batch`-event documents back to back for
 *     `duration` seconds; prints events/s and p50/p95/p99 request latency;
 *  2. COPY: loads as many equivalent rows into `events` with COPY FROM STDIN,
 *     then records their session firsts in one call, and prints its rate and
 *     HTTP ingest as a ratio of it;
 *  3. half rate: posts at half the measured maximum (open loop, fixed schedule)
 *     for `duration` seconds and prints the latency percentiles there.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
import { createApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { hostOfUrl } from "../src/core/hosts.ts";
import { rateLimitsOff } from "../src/http/rate-limit.ts";
import { createLogger } from "../src/log.ts";
import { createApiKey } from "../src/modules/keys/service.ts";
import { createOrganization } from "../src/modules/organizations/service.ts";
import { startRuntime } from "../src/runtime.ts";
import { type GeneratedEvent, generateBatch } from "./event-generator.ts";

const { values: flags } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    concurrency: { type: "string", default: "8" },
    batch: { type: "string", default: "100" },
  },
});
const durationMs = Number(flags.duration) * 1000;
const concurrency = Number(flags.concurrency);
const batchSize = Number(flags.batch);
const batchesPerSession = 10;

const dataDir = process.env.DATABASE_URL ? undefined : await mkdtemp(join(tmpdir(), "ingest-bench-"));
const config = loadConfig({
  ...process.env,
  ...rateLimitsOff,
  LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
  ...(dataDir ? { DATA_DIR: dataDir } : {}),
});
const log = createLogger(config.LOG_LEVEL, { service: "bench" });
const { ctx, db } = await startRuntime(config, log);
const server = createApp(ctx).listen({ port: 0, hostname: "127.0.0.1", maxRequestBodySize: config.MAX_BODY_BYTES + 1 });
const endpoint = `http://127.0.0.1:${server.server?.port}/events`;

const org = await createOrganization(ctx.sql, { name: "Bench agent", orgType: "agent" });
const { key } = await createApiKey(ctx.sql, { orgId: org.id, scopes: ["telemetry:write"] });

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}
const ms = (value: number) => `${value.toFixed(1)} ms`;

/** Posts one batch; returns its latency and the events stored. */
async function post(sessionId: string, agentId: string): Promise<{ latency: number; created: number }> {
  const body = JSON.stringify({
    document_type: "event_batch",
    schema_version: "1.0",
    session_id: sessionId,
    agent_id: agentId,
    events: generateBatch(batchSize),
  });
  const started = performance.now();
  const response = await fetch(endpoint, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body,
  });
  const result = (await response.json()) as { events_created?: number; detail?: string };
  const latency = performance.now() - started;
  if (response.status !== 200) throw new Error(`ingest answered ${response.status}: ${result.detail}`);
  return { latency, created: result.events_created ?? 0 };
}

function summarise(label: string, latencies: number[], events: number, elapsedMs: number) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const rate = events / (elapsedMs / 1000);
  console.log(
    `${label}: ${events} events in ${latencies.length} requests over ${(elapsedMs / 1000).toFixed(1)} s = ${rate.toFixed(0)} events/s; latency p50 ${ms(percentile(sorted, 50))}, p95 ${ms(percentile(sorted, 95))}, p99 ${ms(percentile(sorted, 99))}`,
  );
  return rate;
}

async function maxRate(): Promise<{ rate: number; events: number }> {
  const latencies: number[] = [];
  let events = 0;
  const started = performance.now();
  const deadline = started + durationMs;
  const client = async (clientIndex: number) => {
    let sessionId = crypto.randomUUID();
    for (let sent = 0; performance.now() < deadline; sent++) {
      if (sent % batchesPerSession === 0) sessionId = crypto.randomUUID();
      const result = await post(sessionId, `agent-${clientIndex}`);
      latencies.push(result.latency);
      events += result.created;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, i) => client(i)));
  return { rate: summarise("HTTP max rate", latencies, events, performance.now() - started), events };
}

/** Open loop: requests start on a fixed schedule whatever the earlier ones are doing. */
async function atRate(eventsPerSecond: number): Promise<void> {
  const intervalMs = (1000 * batchSize) / eventsPerSecond;
  const latencies: number[] = [];
  let events = 0;
  const inFlight: Promise<void>[] = [];
  const started = performance.now();
  let sessionId = crypto.randomUUID();
  for (let sent = 0; ; sent++) {
    const due = started + sent * intervalMs;
    if (due >= started + durationMs) break;
    const wait = due - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    if (sent % batchesPerSession === 0) sessionId = crypto.randomUUID();
    inFlight.push(
      post(sessionId, "agent-paced").then((result) => {
        latencies.push(result.latency);
        events += result.created;
      }),
    );
  }
  await Promise.all(inFlight);
  summarise(
    `HTTP at ${eventsPerSecond.toFixed(0)} events/s (half max)`,
    latencies,
    events,
    performance.now() - started,
  );
}

const csv = (value: string | null) => (value === null ? "" : `"${value.replaceAll('"', '""')}"`);

function copyLine(event: GeneratedEvent, sessionId: string, agentId: string): string {
  const url = event.content_url ?? null;
  return `${[
    csv(event.timestamp),
    csv(crypto.randomUUID()),
    csv(org.id),
    csv(event.type),
    csv(event.source_role),
    csv(url),
    csv(url ? hostOfUrl(url) : null),
    csv(agentId),
    csv(sessionId),
    csv(event.turn_id ?? null),
    csv(event.output_id ?? null),
    csv(event.presentation_id ?? null),
    csv(JSON.stringify(event.data)),
    csv(event.turn ? JSON.stringify(event.turn) : null),
  ].join(",")}\n`;
}

const copyColumns = `events (event_time, event_id, org_id, event_type, source_role, content_url, content_host, agent_id,
  session_id, turn_id, output_id, presentation_id, data, turn)`;

/**
 * Loads `count` equivalent rows with COPY, generated like the HTTP bodies. On a
 * server: COPY FROM STDIN. The embedded engine's socket cannot carry the COPY
 * sub-protocol (its wasm backend aborts on CopyIn), so there the same CSV is
 * written into the engine's data directory and loaded with COPY FROM that file.
 */
async function copyRate(count: number): Promise<number> {
  function* lines() {
    let sessionId = crypto.randomUUID();
    for (let made = 0; made < count; made += batchSize) {
      if ((made / batchSize) % batchesPerSession === 0) sessionId = crypto.randomUUID();
      for (const event of generateBatch(Math.min(batchSize, count - made)))
        yield copyLine(event, sessionId, "agent-copy");
    }
  }
  const started = performance.now();
  if (dataDir) {
    await Bun.write(join(dataDir, "bench-copy.csv"), [...lines()].join(""));
    // The engine sees its data directory as /tmp/pglite/base.
    await ctx.sql.unsafe(`COPY ${copyColumns} FROM '/tmp/pglite/base/bench-copy.csv' WITH (FORMAT csv)`);
  } else {
    const writable = await ctx.sql.unsafe(`COPY ${copyColumns} FROM STDIN WITH (FORMAT csv)`).writable();
    await pipeline(Readable.from(lines()), writable);
  }
  const elapsed = performance.now() - started;
  const rate = count / (elapsed / 1000);
  console.log(
    `COPY (${dataDir ? "from a file in the data directory" : "FROM STDIN"}): ${count} rows in ${(elapsed / 1000).toFixed(1)} s = ${rate.toFixed(0)} rows/s`,
  );
  return rate;
}

try {
  console.log(
    `database: ${ctx.db.kind}${dataDir ? ` (fresh DATA_DIR ${dataDir})` : ""}; ${concurrency} clients, ${batchSize}-event batches, ${durationMs / 1000} s per phase`,
  );
  // Warm-up: JIT, prepared statements, first chunk creation.
  for (let i = 0; i < 5; i++) await post(crypto.randomUUID(), "agent-warmup");
  const max = await maxRate();
  const copy = await copyRate(max.events);
  console.log(`HTTP / COPY = ${(max.rate / copy).toFixed(2)}`);
  await atRate(max.rate / 2);
} finally {
  server.stop(true);
  await db.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}
