import type postgres from "postgres";
import type { Sql } from "../../db/client.ts";
import type { Interval } from "./model.ts";
import { unionOfPieces } from "./pieces.ts";
import { type Level, levels, type Piece, planRange } from "./plan.ts";
import { loadStaleRanges, type RollupFamily, type StaleByLevel } from "./rollups.ts";
import { coveringDomains, hostsUnder, type ReadScope } from "./scope.ts";

type Fragment = postgres.PendingQuery<postgres.Row[]>;

/** A read's period: [since, until); `until` null is open-ended. */
export interface Range {
  since: Date;
  until: Date | null;
}

/** Stands in for an open end: aligned on every level, later than any event. */
const openEnd = new Date(Date.UTC(9999, 0, 1));
const endOf = (range: Range) => range.until ?? openEnd;

const allLevels: readonly Level[] = [levels.month, levels.day, levels.hour];
/** Levels whose buckets nest inside each timeseries interval. */
const timeseriesLevels: Record<Interval, readonly Level[]> = {
  hour: [levels.hour],
  day: [levels.day, levels.hour],
  week: [levels.day, levels.hour],
  month: [levels.month, levels.day, levels.hour],
};

const iso = (value: Date | string) => new Date(value).toISOString();
const count = (value: unknown) => Number(value ?? 0);

/** What one read needs to know about its scope, resolved once. */
interface Resolved {
  scope: ReadScope;
  /** Filter on events and event rollups. */
  events: Fragment;
  /** Owner reads: the domains that cover the scope without overlap. */
  covering: string[];
  stale: Record<RollupFamily, StaleByLevel>;
}

async function resolve(sql: Sql, scope: ReadScope): Promise<Resolved> {
  const stale = await loadStaleRanges(sql);
  if (scope.view === "reporter") {
    const agent = scope.agentId === null ? sql`` : sql`AND agent_id = ${scope.agentId}`;
    return { scope, events: sql`org_id = ${scope.orgId}::uuid ${agent}`, covering: [], stale };
  }
  const covering = coveringDomains(scope.domains);
  const hosts = await hostsUnder(sql, covering);
  const events = hosts.length > 0 ? sql`content_host = ANY (${sql.array(hosts)}::text[])` : sql`false`;
  return { scope, events, covering, stale };
}

function plan(resolved: Resolved, family: RollupFamily, range: Range, order: readonly Level[]): Piece[] {
  return planRange(range.since, endOf(range), order, resolved.stale[family]);
}

// ---------------------------------------------------------------------------
// Sessions: counted in the scope's first-seen rollups (sql/010_session_firsts.sql).

interface SessionRow {
  kind: string;
  k1: string;
  k2: string;
  k3: string;
  b: Date | null;
  n: string;
}

/**
 * Sessions per scope key whose first event in that key's scope lies in the range.
 * `union` merges the keys of several k1 values into one scope (an owner with
 * several unrelated verified domains): a session is counted once, at its
 * earliest first time among them, read from the per-session state.
 */
async function countSessions(
  sql: Sql,
  resolved: Resolved,
  range: Range,
  keys: Fragment,
  options: { union?: boolean; unit?: Interval; order?: readonly Level[] } = {},
): Promise<SessionRow[]> {
  const unit = options.unit;
  if (options.union) {
    const bucket = unit ? sql`date_trunc(${unit}, first, 'UTC')` : sql`NULL::timestamptz`;
    return sql<SessionRow[]>`
      SELECT kind, '' AS k1, k2, k3, ${bucket} AS b, count(*) AS n
      FROM (
        SELECT kind, k2, k3, session_id, min(first_seen) AS first
        FROM session_scope_firsts
        WHERE ${keys} AND first_seen < ${endOf(range)}
        GROUP BY kind, k2, k3, session_id
      ) firsts
      WHERE first >= ${range.since}
      GROUP BY kind, k2, k3, b`;
  }
  const pieces = plan(resolved, "session_firsts", range, options.order ?? allLevels);
  const union = unionOfPieces(sql, "session_firsts", pieces, (source, inRange) => {
    const bucket = unit ? sql`date_trunc(${unit}, ${source.time}, 'UTC')` : sql`NULL::timestamptz`;
    return sql`
      SELECT kind, k1, k2, k3, ${bucket} AS b, ${source.count} AS n
      FROM ${source.table} WHERE ${keys} AND ${inRange}
      GROUP BY kind, k1, k2, k3, b`;
  });
  return sql<SessionRow[]>`
    SELECT kind, k1, k2, k3, b, sum(n) AS n FROM (${union}) pieces
    GROUP BY kind, k1, k2, k3, b HAVING sum(n) <> 0`;
}

/** Session keys of a summary: the whole scope, per source role, per reporting agent. */
function summarySessionKeys(sql: Sql, resolved: Resolved) {
  const { scope } = resolved;
  if (scope.view === "owner") {
    return {
      keys:
        resolved.covering.length > 0
          ? sql`kind IN ('O', 'OR', 'OA') AND k1 = ANY (${sql.array(resolved.covering)}::text[])`
          : sql`false`,
      union: resolved.covering.length > 1,
      total: (row: SessionRow) => row.kind === "O",
      role: (row: SessionRow) => (row.kind === "OR" ? row.k2 : undefined),
      agent: (row: SessionRow) => (row.kind === "OA" ? agentKey(row.k2, row.k3) : undefined),
    };
  }
  if (scope.agentId === null) {
    return {
      keys: sql`kind IN ('P', 'PR', 'PA') AND k1 = ${scope.orgId}`,
      union: false,
      total: (row: SessionRow) => row.kind === "P",
      role: (row: SessionRow) => (row.kind === "PR" ? row.k2 : undefined),
      agent: (row: SessionRow) => (row.kind === "PA" ? agentKey(scope.orgId, row.k2) : undefined),
    };
  }
  return {
    keys: sql`kind IN ('PA', 'PAR') AND k1 = ${scope.orgId} AND k2 = ${scope.agentId}`,
    union: false,
    total: (row: SessionRow) => row.kind === "PA",
    role: (row: SessionRow) => (row.kind === "PAR" ? row.k3 : undefined),
    agent: (row: SessionRow) => (row.kind === "PA" ? agentKey(scope.orgId, row.k2) : undefined),
  };
}

/** A missing agent id is stored as '' in scope keys. */
const agentKey = (platformId: string, agentId: string | null) => `${platformId}|${agentId ?? ""}`;

// ---------------------------------------------------------------------------
// Summary

interface EventCountRow {
  event_type: string;
  source_role: string;
  org_id: string;
  agent_id: string | null;
  n: string;
}

async function countEvents(sql: Sql, resolved: Resolved, range: Range): Promise<EventCountRow[]> {
  const pieces = plan(resolved, "events_by_host", range, allLevels);
  const union = unionOfPieces(
    sql,
    "events_by_host",
    pieces,
    (source, inRange) => sql`
      SELECT event_type, source_role, org_id, agent_id, ${source.count} AS n
      FROM ${source.table} WHERE ${resolved.events} AND ${inRange}
      GROUP BY event_type, source_role, org_id, agent_id`,
  );
  return sql<EventCountRow[]>`
    SELECT event_type, source_role, org_id, agent_id, sum(n) AS n FROM (${union}) pieces
    GROUP BY event_type, source_role, org_id, agent_id`;
}

const byCountThenName =
  <T>(countOf: (item: T) => number, nameOf: (item: T) => string) =>
  (a: T, b: T) =>
    countOf(b) - countOf(a) || (nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0);

function addTo(map: Map<string, number>, key: string, n: number) {
  map.set(key, (map.get(key) ?? 0) + n);
}

export async function summarize(sql: Sql, scope: ReadScope, range: Range) {
  const resolved = await resolve(sql, scope);
  const sessionKeys = summarySessionKeys(sql, resolved);
  // One after the other: the embedded engine has a single connection.
  const events = await countEvents(sql, resolved, range);
  const sessions = await countSessions(sql, resolved, range, sessionKeys.keys, { union: sessionKeys.union });

  const byType = new Map<string, number>();
  const byRole = new Map<string, number>();
  const byAgent = new Map<string, { platform_id: string; agent_id: string | null; event_count: number }>();
  let totalEvents = 0;
  for (const row of events) {
    const n = count(row.n);
    totalEvents += n;
    addTo(byType, row.event_type, n);
    addTo(byRole, row.source_role, n);
    const key = agentKey(row.org_id, row.agent_id);
    const agent = byAgent.get(key) ?? { platform_id: row.org_id, agent_id: row.agent_id, event_count: 0 };
    agent.event_count += n;
    byAgent.set(key, agent);
  }
  let totalSessions = 0;
  const roleSessions = new Map<string, number>();
  const agentSessions = new Map<string, number>();
  for (const row of sessions) {
    const n = count(row.n);
    if (sessionKeys.total(row)) totalSessions += n;
    const role = sessionKeys.role(row);
    if (role !== undefined) addTo(roleSessions, role, n);
    const agent = sessionKeys.agent(row);
    if (agent !== undefined) addTo(agentSessions, agent, n);
  }

  return {
    organization_id: scope.orgId,
    domains: scope.view === "owner" ? [...scope.domains] : [],
    total_events: totalEvents,
    total_sessions: totalSessions,
    events_by_type: [...byType]
      .map(([event_type, n]) => ({ event_type, count: n }))
      .sort(
        byCountThenName(
          (x) => x.count,
          (x) => x.event_type,
        ),
      ),
    events_by_source: [...byRole]
      .map(([source_role, n]) => ({ source_role, count: n, sessions: roleSessions.get(source_role) ?? 0 }))
      .sort(
        byCountThenName(
          (x) => x.count,
          (x) => x.source_role,
        ),
      ),
    agents: [...byAgent]
      .map(([key, agent]) => ({ ...agent, session_count: agentSessions.get(key) ?? 0 }))
      .sort(
        byCountThenName(
          (x) => x.event_count,
          (x) => agentKey(x.platform_id, x.agent_id),
        ),
      ),
    period_start: iso(range.since),
    period_end: range.until ? iso(range.until) : null,
  };
}

// ---------------------------------------------------------------------------
// Events

const eventColumns = (sql: Sql) => sql`
  event_id, session_id, event_type, content_url, event_time AS event_timestamp, data AS event_data,
  org_id AS platform_id, agent_id`;

interface EventRow {
  event_id: string;
  session_id: string | null;
  event_type: string;
  content_url: string | null;
  event_timestamp: Date;
  event_data: Record<string, unknown>;
  platform_id: string;
  agent_id: string | null;
}

export const toEventItem = (row: EventRow) => ({ ...row, event_timestamp: iso(row.event_timestamp) });

/** Events newest first; `total` comes from the rollups, the page from raw rows. */
export async function listEvents(sql: Sql, scope: ReadScope, range: Range, limit: number, offset: number) {
  const resolved = await resolve(sql, scope);
  const counts = await countEvents(sql, resolved, range);
  const rows = await sql<EventRow[]>`
    SELECT ${eventColumns(sql)} FROM events
    WHERE ${resolved.events} AND event_time >= ${range.since} AND event_time < ${endOf(range)}
    ORDER BY event_time DESC, event_id DESC, org_id DESC
    LIMIT ${limit} OFFSET ${offset}`;
  return {
    items: rows.map(toEventItem),
    total: counts.reduce((sum, row) => sum + count(row.n), 0),
    limit,
    offset,
  };
}

/** All events of a range, oldest first, in batches read through a cursor (constant memory). */
export async function* streamEventBatches(sql: Sql, scope: ReadScope, range: Range, batchSize = 1000) {
  const resolved = await resolve(sql, scope);
  const cursor = sql<EventRow[]>`
    SELECT ${eventColumns(sql)} FROM events
    WHERE ${resolved.events} AND event_time >= ${range.since} AND event_time < ${endOf(range)}
    ORDER BY event_time, event_id, org_id`.cursor(batchSize);
  for await (const rows of cursor) yield rows.map(toEventItem);
}

// ---------------------------------------------------------------------------
// URLs

interface UrlRow {
  total: string;
  content_url: string | null;
  total_events: string | null;
  last_seen: Date | null;
  event_types: { event_type: string; count: number }[] | null;
}

const md5 = (value: string) => new Bun.CryptoHasher("md5").update(value).digest("hex");

/** URL metrics by total_events descending, then URL (byte order). */
export async function listUrls(sql: Sql, scope: ReadScope, range: Range, limit: number, offset: number) {
  const resolved = await resolve(sql, scope);
  const family = scope.view === "owner" ? "events_by_url" : "events_by_reporter_url";
  const pieces = plan(resolved, family, range, allLevels);
  const union = unionOfPieces(
    sql,
    family,
    pieces,
    (source, inRange) => sql`
      SELECT content_url, event_type, ${source.count} AS n, ${source.lastSeen} AS last_seen
      FROM ${source.table} WHERE ${resolved.events} AND ${inRange}
      GROUP BY content_url, event_type`,
  );
  // Rank URLs on their totals first; event types are gathered for the page's URLs only.
  const rows = await sql<UrlRow[]>`
    WITH per_type AS (
      SELECT content_url, event_type, sum(n) AS n, max(last_seen) AS last_seen
      FROM (${union}) pieces GROUP BY content_url, event_type
    ), per_url AS (
      SELECT content_url, sum(n) AS total_events, max(last_seen) AS last_seen FROM per_type GROUP BY content_url
    ), page AS (
      SELECT * FROM per_url ORDER BY total_events DESC, content_url COLLATE "C" LIMIT ${limit} OFFSET ${offset}
    )
    SELECT totals.total, page.content_url, page.total_events, page.last_seen,
           jsonb_agg(jsonb_build_object('event_type', t.event_type, 'count', t.n) ORDER BY t.n DESC, t.event_type COLLATE "C")
             FILTER (WHERE t.event_type IS NOT NULL) AS event_types
    FROM (SELECT count(*) AS total FROM per_url) totals
    LEFT JOIN page ON true
    LEFT JOIN per_type t ON t.content_url = page.content_url
    GROUP BY totals.total, page.content_url, page.total_events, page.last_seen
    ORDER BY page.total_events DESC, page.content_url COLLATE "C"`;
  const pageRows = rows.filter((row) => row.content_url !== null);
  const sessions = await urlSessions(
    sql,
    resolved,
    range,
    pageRows.map((row) => row.content_url as string),
  );
  return {
    items: pageRows.map((row) => ({
      content_url: row.content_url as string,
      total_events: count(row.total_events),
      unique_sessions: sessions.get(md5(row.content_url as string)) ?? 0,
      event_types: (row.event_types ?? []).map((type) => ({ event_type: type.event_type, count: count(type.count) })),
      last_seen: iso(row.last_seen as Date),
    })),
    total: count(rows[0]?.total),
    limit,
    offset,
  };
}

/** Sessions per URL (keyed by the URL's md5), in the scope of the read. */
async function urlSessions(sql: Sql, resolved: Resolved, range: Range, urls: string[]): Promise<Map<string, number>> {
  if (urls.length === 0) return new Map();
  const hashes = sql.array(urls.map(md5));
  const { scope } = resolved;
  const keys =
    scope.view === "owner"
      ? sql`kind = 'U' AND k1 = ANY (${hashes}::text[])`
      : scope.agentId === null
        ? sql`kind = 'PU' AND k1 = ${scope.orgId} AND k2 = '' AND k3 = ANY (${hashes}::text[])`
        : sql`kind = 'PAU' AND k1 = ${scope.orgId} AND k2 = ${scope.agentId} AND k3 = ANY (${hashes}::text[])`;
  const rows = await countSessions(sql, resolved, range, keys);
  return new Map(rows.map((row) => [row.kind === "U" ? row.k1 : row.k3, count(row.n)]));
}

// ---------------------------------------------------------------------------
// Timeseries

interface BucketRow {
  b: Date;
  event_type: string;
  n: string;
}

/** Events per bucket and type, and sessions per bucket (first event in scope); only non-empty buckets. */
export async function timeseries(sql: Sql, scope: ReadScope, range: Range, interval: Interval) {
  const resolved = await resolve(sql, scope);
  const order = timeseriesLevels[interval];
  const pieces = plan(resolved, "events_by_host", range, order);
  const union = unionOfPieces(
    sql,
    "events_by_host",
    pieces,
    (source, inRange) => sql`
      SELECT date_trunc(${interval}, ${source.time}, 'UTC') AS b, event_type, ${source.count} AS n
      FROM ${source.table} WHERE ${resolved.events} AND ${inRange}
      GROUP BY b, event_type`,
  );
  const eventRows = await sql<BucketRow[]>`
    SELECT b, event_type, sum(n) AS n FROM (${union}) pieces GROUP BY b, event_type`;
  const sessionKeys = summarySessionKeys(sql, resolved);
  const sessionRows = (
    await countSessions(sql, resolved, range, sessionKeys.keys, { union: sessionKeys.union, unit: interval, order })
  ).filter(sessionKeys.total);

  const buckets = new Map<number, { total_events: number; sessions: number; types: Map<string, number> }>();
  const bucketAt = (at: Date) => {
    const key = new Date(at).getTime();
    let bucket = buckets.get(key);
    if (!bucket) {
      bucket = { total_events: 0, sessions: 0, types: new Map() };
      buckets.set(key, bucket);
    }
    return bucket;
  };
  for (const row of eventRows) {
    const bucket = bucketAt(row.b);
    bucket.total_events += count(row.n);
    addTo(bucket.types, row.event_type, count(row.n));
  }
  for (const row of sessionRows) bucketAt(row.b as Date).sessions += count(row.n);

  return {
    interval,
    period_start: iso(range.since),
    period_end: range.until ? iso(range.until) : null,
    buckets: [...buckets]
      .sort(([a], [b]) => a - b)
      .map(([start, bucket]) => ({
        bucket_start: iso(new Date(start)),
        total_events: bucket.total_events,
        sessions: bucket.sessions,
        events_by_type: [...bucket.types]
          .map(([event_type, n]) => ({ event_type, count: n }))
          .sort(
            byCountThenName(
              (x) => x.count,
              (x) => x.event_type,
            ),
          ),
      })),
  };
}
