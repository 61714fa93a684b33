/**
 * Read-side benchmark: builds a year of telemetry (one large owner with 40 hosts
 * and 10,000 URLs, three smaller owners, 10 agents on 3 platforms, sessions of 3
 * to 70 events), then times summary, top-20 URLs, events page 1 and timeseries
 * over 1, 30 and 365 days through the HTTP app, for the large owner
 * (`/content-owners/*`) and for the platform that reported most of its events
 * (`/agent/*`), beside the plain raw-scan SQL answering the same question, checks
 * both answers are equal, and prints p50s, the ratio and the issue-9 targets for
 * the year. The service's p50 is warm: each read first runs once per pooled
 * connection (DATABASE_POOL_SIZE on a server; warmUp), and the first of those runs
 * is printed too. Also prints the load time and
 * the on-disk size before and after compression, and (unless --skip-export) the
 * rate of a year-long NDJSON export.
 *
 *   bun run bench:reads [--events N] [--runs R] [--raw-runs R] [--reuse] [--skip-export]
 *
 * Against DATABASE_URL when set (a TimescaleDB server; the data stays there, and
 * --reuse times a data set of the same size loaded by an earlier run instead of
 * loading again), otherwise on an in-memory embedded engine. Events are stored
 * through the service's counted write path (writeEvents: the flags and session
 * bookkeeping ingest computes), whole sessions per transaction.
 */

import { parseArgs } from "node:util";
import { deepEquals } from "bun";
import { createApp } from "../src/app.ts";
import { progressLine } from "../src/cli/progress.ts";
import { loadConfig } from "../src/config.ts";
import { refreshAggregates, runCompressionPolicies } from "../src/db/maintenance.ts";
import { rateLimitsOff } from "../src/http/rate-limit.ts";
import { createLogger } from "../src/log.ts";
import { registerDomain, verifyDomain } from "../src/modules/domains/service.ts";
import { createApiKey } from "../src/modules/keys/service.ts";
import { createOrganization } from "../src/modules/organizations/service.ts";
import { startRuntime } from "../src/runtime.ts";
import { insertEvents, type TestEvent } from "../test/support/events.ts";
import { seededRandom } from "../test/support/random.ts";
import {
  type ReferenceRange,
  type ReferenceScope,
  referenceEvents,
  referenceSummary,
  referenceTimeseries,
  referenceUrls,
} from "../test/support/reads-reference.ts";
import { failInOneLine, numberOption } from "./cli.ts";

failInOneLine();
const { values } = parseArgs({
  options: {
    events: { type: "string", default: "100000" },
    runs: { type: "string", default: "5" },
    "raw-runs": { type: "string", default: "3" },
    reuse: { type: "boolean", default: false },
    "skip-export": { type: "boolean", default: false },
  },
});
const totalEvents = numberOption(values, "events", 1);
const runs = numberOption(values, "runs", 1);
const rawRuns = numberOption(values, "raw-runs", 1);
const dayMs = 86_400_000;
const minuteMs = 60_000;

const config = loadConfig({ ...process.env, ...rateLimitsOff, LOG_LEVEL: "error" });
const { ctx, db } = await startRuntime(config, createLogger("error"), { inMemory: !config.DATABASE_URL });
const sql = ctx.sql;
const app = createApp(ctx);
const random = seededRandom(20261122);
const progress = progressLine();

// ---------------------------------------------------------------------------
// Data set

// Named by its size, so that --reuse finds the data set an earlier run loaded.
const tag = `e${totalEvents}`;
const bigDomain = `big-${tag}.example.com`;
const smallDomains = [1, 2, 3].map((n) => `owner${n}-${tag}.example.org`);

interface DataSet {
  ownerId: string;
  /** The platform that reported most of the large owner's events: the agent reads' scope. */
  platformId: string;
  end: number;
  loaded: number;
}

async function previousDataSet(): Promise<DataSet | undefined> {
  const [row] = await sql<{ org_id: string; platform_id: string; end: Date; n: number }[]>`
    SELECT d.org_id, (SELECT max(event_time) FROM events WHERE content_host = d.domain) AS end,
           (SELECT count(*)::int FROM events) AS n,
           (SELECT org_id FROM events_by_host_month WHERE content_host = d.domain
            GROUP BY org_id ORDER BY sum(events) DESC LIMIT 1) AS platform_id
    FROM domains d WHERE d.domain = ${bigDomain} AND d.verified_at IS NOT NULL`;
  return row?.end
    ? { ownerId: row.org_id, platformId: row.platform_id, end: row.end.getTime() + minuteMs, loaded: row.n }
    : undefined;
}

async function verifiedOwner(name: string, domain: string): Promise<string> {
  const org = await createOrganization(sql, { name, orgType: "content_owner" });
  await registerDomain(sql, org.id, domain);
  await verifyDomain(sql, org.id, domain, "operator");
  return org.id;
}

async function loadDataSet(): Promise<DataSet> {
  const ownerId = await verifiedOwner("Large owner", bigDomain);
  for (const [i, domain] of smallDomains.entries()) await verifiedOwner(`Owner ${i + 1}`, domain);
  const platforms = await Promise.all(
    [1, 2, 3].map((n) => createOrganization(sql, { name: `Platform ${n}`, orgType: "platform" })),
  );
  const agents = Array.from({ length: 10 }, (_, i) => ({ org: platforms[i % 3]?.id as string, agent: `agent-${i}` }));
  const bigHosts = Array.from({ length: 40 }, (_, i) => (i === 0 ? bigDomain : `h${i}.${bigDomain}`));
  const smallHosts = smallDomains.flatMap((domain) => [domain, `www.${domain}`]);
  // "Many thousands of URLs": a site's size, not scaled with the event count.
  const pagesPerHost = 250;
  const eventTypes = ["content_retrieved", "content_grounded", "content_cited", "content_presented", "content_engaged"];
  const end = Date.now();
  const start = end - 365 * dayMs;

  /** A session: a few to tens of events within minutes, over one to three hosts. */
  function session(hosts: readonly string[]): TestEvent[] {
    const { org, agent } = random.pick(agents);
    const id = crypto.randomUUID();
    const touched = Array.from({ length: random.int(1, 3) }, () => random.pick(hosts));
    const begin = start + random.next() * (end - start - 30 * minuteMs);
    const length = random.int(3, 30) + (random.chance(0.1) ? random.int(10, 40) : 0);
    return Array.from({ length }, () => {
      // Popular pages get most reads (a square skew over the page list).
      const page = Math.floor(random.next() ** 2 * pagesPerHost);
      return {
        event_time: new Date(begin + random.next() * 20 * minuteMs),
        org_id: org,
        agent_id: agent,
        session_id: id,
        event_type: random.pick(eventTypes),
        source_role: random.chance(0.85) ? "agent" : random.pick(["origin", "edge", "index"]),
        content_url: `https://${random.pick(touched)}/articles/${page}`,
      };
    });
  }

  /** Whole sessions, about `size` events. */
  function nextBatch(size: number): TestEvent[] {
    const batch: TestEvent[] = [];
    while (batch.length < size) batch.push(...session(random.chance(0.9) ? bigHosts : smallHosts));
    return batch;
  }

  // Several writers at once on a server, as ingest runs; the embedded engine has one connection.
  const writers = ctx.db.kind === "server" ? 3 : 1;
  const started = performance.now();
  let loaded = 0;
  const writer = async () => {
    while (loaded < totalEvents) {
      const batch = nextBatch(Math.min(5000, totalEvents - loaded));
      loaded += batch.length;
      await insertEvents(sql, batch);
      const seconds = (performance.now() - started) / 1000;
      const rate = loaded / seconds;
      progress.show(
        `loading: ${loaded} / ${totalEvents} events, ${Math.round(rate)} events/s, ` +
          `${Math.max(0, (totalEvents - loaded) / rate).toFixed(0)} s to go`,
      );
    }
  };
  await Promise.all(Array.from({ length: writers }, writer));
  progress.clear();
  // Platform 1 reports agents 0, 3, 6 and 9 of the ten, the most events of the three.
  return { ownerId, platformId: platforms[0]?.id as string, end, loaded };
}

async function onDiskMegabytes(): Promise<number> {
  const [row] = await sql<{ bytes: string }[]>`SELECT pg_database_size(current_database()) AS bytes`;
  return Number(row?.bytes) / 1024 / 1024;
}

/**
 * A bulk load of a whole year invalidates every bucket of every aggregate, so a
 * server's refresh policies (every minute for hourly buckets) would re-materialise
 * the year again and again while it runs, and its compression policy would
 * compress chunks still being written. As TimescaleDB advises for backfills, the
 * policies are paused during the load; the aggregates are refreshed and the old
 * chunks compressed once after it.
 */
async function policiesScheduled(scheduled: boolean): Promise<void> {
  await sql`
    SELECT alter_job(job_id, scheduled => ${scheduled}) FROM timescaledb_information.jobs
    WHERE proc_name IN ('policy_refresh_continuous_aggregate', 'policy_compression')`;
}

const previous = values.reuse ? await previousDataSet() : undefined;
// A load interrupted (Ctrl-C) leaves fewer events than asked for: timed as this
// size, its figures would pass for another data set's.
if (previous && previous.loaded < totalEvents) {
  console.error(
    `--reuse: the database holds ${previous.loaded} events, fewer than --events ${totalEvents} (an interrupted load?); load them into an empty database`,
  );
  await db.close();
  process.exit(1);
}
const loadStarted = performance.now();
// Ctrl-C during the load or the refresh would leave the policies paused on this database for good.
const resumePolicies = () => {
  progress.clear();
  console.error("interrupted: the refresh and compression policies are scheduled again");
  void policiesScheduled(true).finally(() => process.exit(130));
};
process.once("SIGINT", resumePolicies);
await policiesScheduled(false);
const { ownerId, platformId, end, loaded } = previous ?? (await loadDataSet());
const loadSeconds = (performance.now() - loadStarted) / 1000;
const refreshStarted = performance.now();
await progress.during("refreshing the continuous aggregates", refreshAggregates(sql));
const refreshSeconds = (performance.now() - refreshStarted) / 1000;
await policiesScheduled(true);
process.off("SIGINT", resumePolicies);
const uncompressedMb = await onDiskMegabytes();
const compressStarted = performance.now();
await progress.during("compressing chunks older than the compression policy's 30 days", runCompressionPolicies(sql));
const compressSeconds = (performance.now() - compressStarted) / 1000;
const compressedMb = await onDiskMegabytes();
progress.clear();
const readKey = async (orgId: string) => (await createApiKey(sql, { orgId, scopes: ["telemetry:read"] })).key;
const key = await readKey(ownerId);
const platformKey = await readKey(platformId);
const [ownerEvents] = await sql<{ n: number }[]>`
  SELECT count(*)::int AS n FROM events WHERE content_host = ${bigDomain} OR content_host LIKE ${`%.${bigDomain}`}`;
// The server's parallelism moves the figures (README, Reads, Benchmark): printed beside them.
const [parallelism] = await sql<
  { workers: string }[]
>`SELECT current_setting('max_parallel_workers_per_gather') AS workers`;
console.log(
  `database: ${ctx.db.kind} (max_parallel_workers_per_gather ${parallelism?.workers}); ` +
    `events: ${loaded} (large owner ${ownerEvents?.n}), 10000 large-owner URLs; ` +
    (previous
      ? "loaded by an earlier run (--reuse)"
      : `load ${loadSeconds.toFixed(1)} s (${Math.round(loaded / loadSeconds)} events/s, counted write path)`) +
    `; aggregate refresh ${refreshSeconds.toFixed(1)} s; compression ${compressSeconds.toFixed(1)} s; ` +
    `database on disk ${uncompressedMb.toFixed(0)} MB before compression, ${compressedMb.toFixed(0)} MB after`,
);

// ---------------------------------------------------------------------------
// Timing

/** The two sides that read: the large owner, and the platform that reported most of its events. */
const sides: { prefix: string; label: string; key: string; scope: ReferenceScope }[] = [
  { prefix: "/content-owners", label: "", key, scope: { view: "owner", orgId: ownerId, domains: [bigDomain] } },
  {
    prefix: "/agent",
    label: "agent ",
    key: platformKey,
    scope: { view: "reporter", orgId: platformId, agentId: null },
  },
];

async function get(path: string, key: string) {
  const response = await app.handle(new Request(`http://bench.local${path}`, { headers: { "x-api-key": key } }));
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  // Freshness is the service's own; the raw scan has none to compare.
  const { as_of: _asOf, ...answer } = (await response.json()) as Record<string, unknown>;
  return answer;
}

async function p50(run: () => Promise<unknown>, count = runs): Promise<{ ms: number; answer: unknown }> {
  let answer: unknown;
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    answer = await run();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor((times.length - 1) / 2)] as number, answer };
}

/** The embedded engine has one connection; a server, a pool of DATABASE_POOL_SIZE. */
const pooledConnections = ctx.db.kind === "server" ? config.DATABASE_POOL_SIZE : 1;

/**
 * Runs the read once per pooled connection, untimed but for the first, which it
 * returns. The pool gives out its idle connections in turn (postgres.js), and a
 * connection plans and runs a read over many chunks slower the first time: on a
 * new connection the year's top-20 URLs at 2 million events planned in 72 to 167
 * ms and ran in 475 to 653, against 6 to 31 and about 50 after
 * (docs/benchmarks.md, "Reads timed warm"). The first run met connections that
 * had served this bench's shorter ranges already, so it understates a new
 * connection's cost.
 */
async function warmUp(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  const first = performance.now() - started;
  for (let i = 1; i < pooledConnections; i++) await run();
  return first;
}

interface Row {
  read: string;
  days: number;
  /** The read's first run in this process (warmUp). */
  first: number;
  service: number;
  raw: number;
  equal: boolean;
}
const rows: Row[] = [];
for (const days of [1, 30, 365]) {
  const range: ReferenceRange = { since: new Date(end - days * dayMs), until: new Date(end) };
  const query = `since=${range.since.toISOString()}&until=${range.until?.toISOString()}`;
  const interval = days === 1 ? "hour" : "day";
  const reads: [string, () => Promise<unknown>, () => Promise<unknown>][] = sides.flatMap(
    ({ prefix, label, key, scope }): [string, () => Promise<unknown>, () => Promise<unknown>][] => [
      [`${label}summary`, () => get(`${prefix}/summary?${query}`, key), () => referenceSummary(sql, scope, range)],
      [
        `${label}top-20 URLs`,
        () => get(`${prefix}/urls?${query}&limit=20`, key),
        () => referenceUrls(sql, scope, range, 20, 0),
      ],
      [
        `${label}events page 1`,
        () => get(`${prefix}/events?${query}&limit=100`, key),
        () => referenceEvents(sql, scope, range, 100, 0),
      ],
      [
        `${label}timeseries (${interval})`,
        () => get(`${prefix}/timeseries?${query}&interval=${interval}`, key),
        () => referenceTimeseries(sql, scope, range, interval),
      ],
    ],
  );
  for (const [read, service, raw] of reads) {
    progress.show(`timing ${read} over ${days} days`);
    const first = await warmUp(service);
    const fast = await p50(service);
    const slow = await p50(raw, rawRuns);
    rows.push({ read, days, first, service: fast.ms, raw: slow.ms, equal: deepEquals(fast.answer, slow.answer) });
  }
}

progress.clear();
const pad = (value: string, width: number) => value.padEnd(width);
console.log(
  `\np50 over ${runs} runs each, after ${pooledConnections} to warm the pool's connections (raw scan: ${rawRuns})\n`,
);
console.log("| read | days | service first run ms | service p50 ms | raw-scan p50 ms | raw / service | equal |");
console.log("|---|---:|---:|---:|---:|---:|---|");
for (const row of rows) {
  console.log(
    `| ${pad(row.read, 24)} | ${row.days} | ${row.first.toFixed(1)} | ${row.service.toFixed(1)} | ${row.raw.toFixed(1)} | ${(row.raw / row.service).toFixed(1)}x | ${row.equal ? "yes" : "NO"} |`,
  );
}
// The year-long targets of issue 9: under 100 ms (p50, warm) and at least 50x the raw scan.
console.log("\nyear-long targets (p50 < 100 ms, >= 50x raw scan):");
for (const row of rows.filter((r) => r.days === 365 && !r.read.endsWith("events page 1"))) {
  const met = row.service < 100 && row.raw / row.service >= 50;
  console.log(
    `  ${pad(row.read, 24)} ${row.service.toFixed(1)} ms, ${(row.raw / row.service).toFixed(1)}x: ${met ? "met" : "MISSED"}`,
  );
}
// Export: the whole year as NDJSON, read as fast as the client takes it. The longest
// wait for one chunk is the longest single page query, i.e. the longest the engine
// is held at once by this export.
async function timeExport(): Promise<boolean> {
  const year = `since=${new Date(end - 365 * dayMs).toISOString()}&until=${new Date(end).toISOString()}`;
  const exportStarted = performance.now();
  const exportResponse = await app.handle(
    new Request(`http://bench.local/content-owners/export?${year}`, { headers: { "x-api-key": key } }),
  );
  const reader = (exportResponse.body as ReadableStream<Uint8Array>).getReader();
  let exportedLines = 0;
  let longestWaitMs = 0;
  for (let waitStarted = performance.now(); ; waitStarted = performance.now()) {
    const chunk = await reader.read();
    longestWaitMs = Math.max(longestWaitMs, performance.now() - waitStarted);
    if (chunk.done) break;
    for (const byte of chunk.value) if (byte === 10) exportedLines++;
    progress.show(`exporting 365 days as NDJSON: ${exportedLines} events`);
  }
  progress.clear();
  const exportSeconds = (performance.now() - exportStarted) / 1000;
  const [inYear] = await sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM events
    WHERE (content_host = ${bigDomain} OR content_host LIKE ${`%.${bigDomain}`})
      AND event_time >= ${new Date(end - 365 * dayMs)} AND event_time < ${new Date(end)}`;
  const equal = exportedLines === inYear?.n;
  console.log(
    `\nexport, 365 days as NDJSON: ${exportedLines} events in ${exportSeconds.toFixed(2)} s ` +
      `(${Math.round(exportedLines / exportSeconds)} events/s); longest wait for one page ${longestWaitMs.toFixed(1)} ms; ` +
      `count ${equal ? "equal to" : "DIFFERENT FROM"} the raw count`,
  );
  return equal;
}

const exportEqual = values["skip-export"] || (await timeExport());

await db.close();
if (rows.some((row) => !row.equal) || !exportEqual) {
  console.error("some answers differ from the raw-scan SQL");
  process.exit(1);
}
