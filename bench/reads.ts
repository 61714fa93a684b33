/**
 * Read-side benchmark: builds the issue-4 data set (one large owner over 365
 * days across 40 hosts, realistic sessions, 10 agents, thousands of URLs, other
 * owners' noise) scaled to `--events N`, then times summary, top-20 URLs, events
 * page 1 and timeseries over 1, 30 and 365 days through the HTTP app, beside the
 * plain raw-scan SQL answering the same question, checks both answers are
 * equal, and prints p50s and the ratio. Then exports the 365 days as NDJSON and
 * prints its rate and the longest wait for one page.
 *
 *   bun run bench:reads [--events N] [--runs R]
 *
 * Against DATABASE_URL when set (a TimescaleDB server; the data stays there),
 * otherwise on an in-memory embedded engine.
 */

import { parseArgs } from "node:util";
import { deepEquals } from "bun";
import { createApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { refreshAggregates } from "../src/db/maintenance.ts";
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

const { values } = parseArgs({
  options: { events: { type: "string", default: "100000" }, runs: { type: "string", default: "5" } },
});
const totalEvents = Number(values.events);
const runs = Number(values.runs);
const dayMs = 86_400_000;
const minuteMs = 60_000;

const config = loadConfig({ ...process.env, ...rateLimitsOff, LOG_LEVEL: "error" });
const { ctx, db } = await startRuntime(config, createLogger("error"), { inMemory: !config.DATABASE_URL });
const sql = ctx.sql;
const app = createApp(ctx);
const random = seededRandom(20261122);

// ---------------------------------------------------------------------------
// Data set

const tag = crypto.randomUUID().slice(0, 8);
const bigDomain = `big-${tag}.example.com`;
const owner = await createOrganization(sql, { name: "Large owner", orgType: "content_owner" });
await registerDomain(sql, owner.id, bigDomain);
await verifyDomain(sql, owner.id, bigDomain, "operator");
const { key } = await createApiKey(sql, { orgId: owner.id, scopes: ["telemetry:read"] });
const platforms = await Promise.all(
  [1, 2, 3].map((n) => createOrganization(sql, { name: `Platform ${n}`, orgType: "platform" })),
);
const agents = Array.from({ length: 10 }, (_, i) => ({ org: platforms[i % 3]?.id as string, agent: `agent-${i}` }));
const bigHosts = Array.from({ length: 40 }, (_, i) => (i === 0 ? bigDomain : `h${i}.${bigDomain}`));
const noiseHosts = Array.from({ length: 20 }, (_, i) => `site${i}-${tag}.example.org`);
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

const loadStarted = performance.now();
let loaded = 0;
let batch: TestEvent[] = [];
while (loaded < totalEvents) {
  const events = session(random.chance(0.9) ? bigHosts : noiseHosts);
  batch.push(...events);
  loaded += events.length;
  if (batch.length >= 2000) {
    await insertEvents(sql, batch);
    batch = [];
  }
}
await insertEvents(sql, batch);
const loadSeconds = (performance.now() - loadStarted) / 1000;
const refreshStarted = performance.now();
await refreshAggregates(sql);
const refreshSeconds = (performance.now() - refreshStarted) / 1000;
const [ownerEvents] = await sql<{ n: number }[]>`
  SELECT count(*)::int AS n FROM events WHERE content_host = ${bigDomain} OR content_host LIKE ${`%.${bigDomain}`}`;
console.log(
  `database: ${ctx.db.kind}; events: ${loaded} (large owner ${ownerEvents?.n}), ${pagesPerHost * 40} owner URLs; ` +
    `load ${loadSeconds.toFixed(1)} s (with session-first bookkeeping), first refresh ${refreshSeconds.toFixed(1)} s`,
);

// ---------------------------------------------------------------------------
// Timing

const scope: ReferenceScope = { view: "owner", orgId: owner.id, domains: [bigDomain] };

async function get(path: string) {
  const response = await app.handle(new Request(`http://bench.local${path}`, { headers: { "x-api-key": key } }));
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

async function p50(run: () => Promise<unknown>): Promise<{ ms: number; answer: unknown }> {
  let answer: unknown;
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    answer = await run();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor((times.length - 1) / 2)] as number, answer };
}

interface Row {
  read: string;
  days: number;
  service: number;
  raw: number;
  equal: boolean;
}
const rows: Row[] = [];
for (const days of [1, 30, 365]) {
  const range: ReferenceRange = { since: new Date(end - days * dayMs), until: new Date(end) };
  const query = `since=${range.since.toISOString()}&until=${range.until?.toISOString()}`;
  const interval = days === 1 ? "hour" : "day";
  const reads: [string, () => Promise<unknown>, () => Promise<unknown>][] = [
    ["summary", () => get(`/content-owners/summary?${query}`), () => referenceSummary(sql, scope, range)],
    ["top-20 URLs", () => get(`/content-owners/urls?${query}&limit=20`), () => referenceUrls(sql, scope, range, 20, 0)],
    [
      "events page 1",
      () => get(`/content-owners/events?${query}&limit=100`),
      () => referenceEvents(sql, scope, range, 100, 0),
    ],
    [
      `timeseries (${interval})`,
      () => get(`/content-owners/timeseries?${query}&interval=${interval}`),
      () => referenceTimeseries(sql, scope, range, interval),
    ],
  ];
  for (const [read, service, raw] of reads) {
    const fast = await p50(service);
    const slow = await p50(raw);
    rows.push({ read, days, service: fast.ms, raw: slow.ms, equal: deepEquals(fast.answer, slow.answer) });
  }
}

const pad = (value: string, width: number) => value.padEnd(width);
console.log(`\np50 over ${runs} runs each\n`);
console.log("| read | days | service p50 ms | raw-scan p50 ms | raw / service | equal |");
console.log("|---|---:|---:|---:|---:|---|");
for (const row of rows) {
  console.log(
    `| ${pad(row.read, 18)} | ${row.days} | ${row.service.toFixed(1)} | ${row.raw.toFixed(1)} | ${(row.raw / row.service).toFixed(1)}x | ${row.equal ? "yes" : "NO"} |`,
  );
}
// Export: the whole year as NDJSON, read as fast as the client takes it. The longest
// wait for one chunk is the longest single page query, i.e. the longest the engine
// is held at once by this export.
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
}
const exportSeconds = (performance.now() - exportStarted) / 1000;
const [inYear] = await sql<{ n: number }[]>`
  SELECT count(*)::int AS n FROM events
  WHERE (content_host = ${bigDomain} OR content_host LIKE ${`%.${bigDomain}`})
    AND event_time >= ${new Date(end - 365 * dayMs)} AND event_time < ${new Date(end)}`;
const exportEqual = exportedLines === inYear?.n;
console.log(
  `\nexport, 365 days as NDJSON: ${exportedLines} events in ${exportSeconds.toFixed(2)} s ` +
    `(${Math.round(exportedLines / exportSeconds)} events/s); longest wait for one page ${longestWaitMs.toFixed(1)} ms; ` +
    `count ${exportEqual ? "equal to" : "DIFFERENT FROM"} the raw count`,
);

await db.close();
if (rows.some((row) => !row.equal) || !exportEqual) {
  console.error("some answers differ from the raw-scan SQL");
  process.exit(1);
}
