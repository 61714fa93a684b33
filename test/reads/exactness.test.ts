import { describe, expect, test } from "bun:test";
import { refreshAggregates, runCompressionPolicies } from "../../src/db/maintenance.ts";
import { registerDomain, verifyDomain } from "../../src/modules/domains/service.ts";
import { type Level, levels } from "../../src/modules/reads/plan.ts";
import { insertEvents, type TestEvent } from "../support/events.ts";
import { createTestOrg, uniqueDomain } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { seededRandom } from "../support/random.ts";
import {
  figuresOf,
  type ReferenceRange,
  type ReferenceScope,
  referenceEvents,
  referenceSummary,
  referenceTimeseries,
  referenceUrls,
} from "../support/reads-reference.ts";
import { testRuntime } from "../support/runtime.ts";

const seed = Number(process.env.READS_SEED ?? Date.now() % 1_000_000);
const random = seededRandom(seed);
const windowStart = Date.UTC(2025, 10, 20);
const windowEnd = Date.UTC(2026, 1, 10);
const hourMs = 3_600_000;
const eventTypes = ["content_retrieved", "content_grounded", "content_cited", "content_presented", "turn_started"];
const roles = ["agent", "origin", "edge", "index"];
const intervals = ["hour", "day", "week", "month"] as const;
/** url_contains texts: several URLs each (page-1 is also in page-10 to page-12), one, or none. */
const urlSearches = ["PAGE-1", "/Page-7", "nothing-matches"];

/** Sessions of a few to 15 events within hours, over one to three hosts and one or more agents, plus session-less events. */
function randomEvents(count: number, hosts: string[], platforms: string[], from: number, to: number): TestEvent[] {
  const events: TestEvent[] = [];
  while (events.length < count) {
    const sessionId = random.chance(0.15) ? null : crypto.randomUUID();
    const sessionHosts = Array.from({ length: random.int(1, 3) }, () => random.pick(hosts));
    const org = random.pick(platforms);
    // Mostly one agent a session; sometimes each event names its own (a batch's envelope agent_id wins).
    const mixed = random.chance(0.25);
    const sessionAgent = random.pick(["agent-a", "agent-b", null]);
    const start = from + random.next() * (to - from);
    for (let i = random.int(1, 15); i > 0; i--) {
      events.push({
        event_time: new Date(Math.min(to - 1, start + random.next() * 6 * hourMs)),
        org_id: org,
        agent_id: mixed ? random.pick(["agent-a", "agent-b", null]) : sessionAgent,
        session_id: sessionId,
        event_type: random.pick(eventTypes),
        source_role: random.pick(roles),
        content_url: `https://${random.pick(sessionHosts)}/page-${random.int(1, 12)}`,
        data: { n: random.int(1, 9) },
      });
    }
  }
  return events;
}

/** Unaligned random ranges within [from, to) and a few days around, some open-ended, some aligned on days. */
function randomRanges(n: number, from = windowStart, to = windowEnd): ReferenceRange[] {
  const ranges: ReferenceRange[] = [{ since: new Date(0), until: null }];
  for (let i = 0; i < n; i++) {
    const a = from - 3 * 86_400_000 + random.next() * (to - from + 6 * 86_400_000);
    const b = from + random.next() * (to - from);
    let [since, until] = [Math.floor(Math.min(a, b)), Math.floor(Math.max(a, b))];
    if (random.chance(0.2))
      [since, until] = [Math.floor(since / 86_400_000) * 86_400_000, Math.ceil(until / 86_400_000) * 86_400_000];
    ranges.push({ since: new Date(since), until: random.chance(0.15) ? null : new Date(until) });
  }
  return ranges;
}

function queryOf(range: ReferenceRange, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams(extra);
  if (range.since.getTime() !== 0) params.set("since", range.since.toISOString());
  if (range.until) params.set("until", range.until.toISOString());
  return params.toString();
}

interface Reader {
  label: string;
  key: string;
  prefix: "/content-owners" | "/agent";
  params: Record<string, string>;
  scope: ReferenceScope;
}

async function expectExact(readers: Reader[], ranges: ReferenceRange[]) {
  const { ctx } = await testRuntime();
  const sql = ctx.sql;
  for (const range of ranges) {
    for (const reader of readers) {
      const where = `${reader.label} ${range.since.toISOString()}..${range.until?.toISOString() ?? "open"} (seed ${seed})`;
      const summary = await call("GET", `${reader.prefix}/summary?${queryOf(range, reader.params)}`, {
        key: reader.key,
      });
      expect({ where, body: figuresOf(summary.body) }).toEqual({
        where,
        body: await referenceSummary(sql, reader.scope, range),
      });

      const urlLimit = random.pick([200, 5]);
      const urlOffset = urlLimit === 5 ? random.int(0, 6) : 0;
      // Now and then only the URLs containing a text (in another case than stored).
      const contains = random.chance(0.3) ? random.pick(urlSearches) : undefined;
      // And now and then ranked by sessions.
      const sort = random.pick(["events", "sessions"] as const);
      const urlParams = { ...reader.params, limit: String(urlLimit), offset: String(urlOffset), sort };
      const urls = await call(
        "GET",
        `${reader.prefix}/urls?${queryOf(range, contains ? { ...urlParams, url_contains: contains } : urlParams)}`,
        { key: reader.key },
      );
      expect({ where, contains, sort, body: figuresOf(urls.body) }).toEqual({
        where,
        contains,
        sort,
        body: await referenceUrls(sql, reader.scope, range, urlLimit, urlOffset, { contains, sort }),
      });

      const offset = random.int(0, 20);
      const events = await call(
        "GET",
        `${reader.prefix}/events?${queryOf(range, { ...reader.params, limit: "25", offset: String(offset) })}`,
        { key: reader.key },
      );
      expect({ where, body: figuresOf(events.body) }).toEqual({
        where,
        body: await referenceEvents(sql, reader.scope, range, 25, offset),
      });

      // Hourly buckets since 1970 exceed the per-request bucket cap (tested in params.test.ts).
      const interval = random.pick(range.since.getTime() === 0 ? intervals.filter((i) => i !== "hour") : intervals);
      const series = await call(
        "GET",
        `${reader.prefix}/timeseries?${queryOf(range, { ...reader.params, interval })}`,
        {
          key: reader.key,
        },
      );
      expect({ where, interval, body: figuresOf(series.body) }).toEqual({
        where,
        interval,
        body: await referenceTimeseries(sql, reader.scope, range, interval),
      });
    }
  }
}

/** Two owners and two reporters with fresh organisations, the hosts their events go to, and a reader each. */
async function ownersAndReporters() {
  const { ctx } = await testRuntime();
  const sql = ctx.sql;
  // Owner A holds two unrelated verified domains (union path); owner B one (rollup path).
  const ownerA = await createTestOrg();
  const secondDomain = uniqueDomain("second").replace(".example.com", ".example.org");
  await registerDomain(sql, ownerA.id, secondDomain);
  await verifyDomain(sql, ownerA.id, secondDomain, "operator");
  const ownerAKey = await ownerA.keyWith(["telemetry:read"]);
  const ownerB = await createTestOrg();
  // Owner C verifies a domain of two labels, which the owner-domain rollups key separately (sql/065).
  const ownerC = await createTestOrg({ domain: uniqueDomain("two").replace(".example.com", ".org") });
  const platform1 = await createTestOrg({ type: "platform" });
  const platform2 = await createTestOrg({ type: "agent" });
  const domainA = ownerA.domain as string;
  const domainB = ownerB.domain as string;
  const domainC = ownerC.domain as string;
  const hosts = [
    domainA,
    `www.${domainA}`,
    `news.${domainA}`,
    secondDomain,
    `blog.${secondDomain}`,
    domainB,
    `shop.${domainB}`,
    domainC,
    `www.${domainC}`,
    `a.b.${domainC}`,
    uniqueDomain("unowned"),
  ];
  const platforms = [platform1.id, platform2.id];
  const readers: Reader[] = [
    {
      label: "owner A",
      key: ownerAKey,
      prefix: "/content-owners",
      params: {},
      scope: { view: "owner", orgId: ownerA.id, domains: [domainA, secondDomain].sort() },
    },
    {
      label: "owner A, one subdomain",
      key: ownerAKey,
      prefix: "/content-owners",
      params: { domain: `news.${domainA}` },
      scope: { view: "owner", orgId: ownerA.id, domains: [`news.${domainA}`] },
    },
    {
      label: "owner B",
      key: ownerB.key,
      prefix: "/content-owners",
      params: {},
      scope: { view: "owner", orgId: ownerB.id, domains: [domainB] },
    },
    {
      label: "owner C",
      key: ownerC.key,
      prefix: "/content-owners",
      params: {},
      scope: { view: "owner", orgId: ownerC.id, domains: [domainC] },
    },
    {
      label: "platform 1",
      key: platform1.key,
      prefix: "/agent",
      params: {},
      scope: { view: "reporter", orgId: platform1.id, agentId: null },
    },
    {
      label: "platform 2, agent-a",
      key: platform2.key,
      prefix: "/agent",
      params: { agent_id: "agent-a" },
      scope: { view: "reporter", orgId: platform2.id, agentId: "agent-a" },
    },
  ];
  return { hosts, platforms, readers };
}

describe("reads are exact", () => {
  test("every figure of every endpoint equals the raw-event definition, before and after refreshes, with late events", async () => {
    const { ctx } = await testRuntime();
    const sql = ctx.sql;
    const { hosts, platforms, readers } = await ownersAndReporters();

    await insertEvents(sql, randomEvents(700, hosts, platforms, windowStart, windowEnd));
    await expectExact(readers, randomRanges(2));

    expect(await refreshAggregates(sql)).toBe(true);
    await expectExact(readers, randomRanges(3));

    // Late events: older than already-refreshed buckets, some moving sessions' first events earlier.
    const [known] = await sql<{ ids: string[] }[]>`
      SELECT array_agg(DISTINCT session_id::text) AS ids FROM events
      WHERE org_id = ANY (${sql.array(platforms)}::uuid[]) AND session_id IS NOT NULL`;
    const late = randomEvents(150, hosts, platforms, windowStart - 2 * 86_400_000, windowEnd - 30 * 86_400_000).map(
      (event) =>
        event.session_id && random.chance(0.5) ? { ...event, session_id: random.pick(known?.ids ?? []) } : event,
    );
    await insertEvents(sql, late);
    await expectExact(readers, randomRanges(3));

    expect(await refreshAggregates(sql)).toBe(true);
    await expectExact(readers, randomRanges(2));
  }, 180_000);
  test("year-long ranges, read from quarters, months, weeks, days, hours and raw rows, across their edges and the watermarks", async () => {
    const { ctx } = await testRuntime();
    const sql = ctx.sql;
    const { hosts, platforms, readers } = await ownersAndReporters();
    const now = Date.now();
    const from = now - 400 * 86_400_000;
    await insertEvents(sql, randomEvents(800, hosts, platforms, from, now - 60_000));
    // Materialised up to the current bucket of each level: the watermarks sit at
    // this hour, today, this Monday, the 1st of this month and of this quarter.
    expect(await refreshAggregates(sql)).toBe(true);
    // Then the compression policies: events and hour-level rollups 30 days old are
    // read compressed (sql/003, sql/069).
    expect(await runCompressionPolicies(sql)).toBe(true);
    const [compressed] = await sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM timescaledb_information.chunks c
      JOIN timescaledb_information.continuous_aggregates a ON a.materialization_hypertable_name = c.hypertable_name
      WHERE a.view_name = 'events_by_url_hour' AND c.is_compressed`;
    expect(compressed?.n).toBeGreaterThan(0);
    const at = (ms: number) => new Date(ms);
    const startOf = (level: Level, ms: number) => level.floor(ms);
    const edges: ReferenceRange[] = [
      { since: at(now - 365 * 86_400_000), until: at(now + 60_000) },
      { since: at(startOf(levels.quarter, now - 200 * 86_400_000)), until: at(startOf(levels.month, now)) },
      { since: at(startOf(levels.week, now - 100 * 86_400_000) - 1), until: at(startOf(levels.week, now) + 1) },
      { since: at(startOf(levels.month, now) - 3_600_000), until: at(startOf(levels.hour, now) + 1) },
      { since: at(startOf(levels.quarter, now) - 86_400_000), until: null },
    ];
    await expectExact(readers, [...edges, ...randomRanges(2, from, now)]);

    // New events: above the hour's watermark, and below the others (their buckets go
    // stale); and late ones into compressed chunks of the events and of the hours.
    await insertEvents(sql, randomEvents(150, hosts, platforms, now - 10 * 86_400_000, Date.now()));
    await insertEvents(sql, randomEvents(60, hosts, platforms, from, now - 150 * 86_400_000));
    await expectExact(readers, [...edges, ...randomRanges(2, from, now)]);

    expect(await refreshAggregates(sql)).toBe(true);
    await expectExact(readers, edges);
  }, 240_000);
});
