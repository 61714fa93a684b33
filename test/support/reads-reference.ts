import type postgres from "postgres";
import type { Sql } from "../../src/db/sql.ts";

/**
 * The read side's figures computed the plain way, straight from raw events, by
 * the definitions in DESIGN.md ("Counting"): a session counts in a scope in the
 * period holding its first event in that scope. Tests compare every endpoint with these.
 */
export type ReferenceScope =
  | { view: "owner"; orgId: string; domains: string[] }
  | { view: "reporter"; orgId: string; agentId: string | null };

export interface ReferenceRange {
  since: Date;
  until: Date | null;
}

type Fragment = postgres.PendingQuery<postgres.Row[]>;
const farFuture = new Date(Date.UTC(9999, 0, 1));

function inScope(sql: Sql, scope: ReferenceScope): Fragment {
  if (scope.view === "reporter") {
    return scope.agentId === null
      ? sql`org_id = ${scope.orgId}::uuid`
      : sql`org_id = ${scope.orgId}::uuid AND agent_id = ${scope.agentId}`;
  }
  return sql`EXISTS (
    SELECT 1 FROM unnest(${sql.array(scope.domains)}::text[]) d
    WHERE content_host = d OR content_host LIKE '%.' || d)`;
}

const byCountThenName =
  <T>(countOf: (x: T) => number, nameOf: (x: T) => string) =>
  (a: T, b: T) =>
    countOf(b) - countOf(a) || (nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0);

/** URLs rank by count, then in byte order (COLLATE "C" over their UTF-8), as the interface documents. */
const byCountThenBytes =
  <T>(countOf: (x: T) => number, nameOf: (x: T) => string) =>
  (a: T, b: T) =>
    countOf(b) - countOf(a) || Buffer.compare(Buffer.from(nameOf(a)), Buffer.from(nameOf(b)));

/** Sessions whose first event in (scope + grouping columns) lies in the range, per group. */
async function firstsPerGroup(
  sql: Sql,
  scope: ReferenceScope,
  range: ReferenceRange,
  groupBy: Fragment,
): Promise<{ g: string; n: number }[]> {
  return sql<{ g: string; n: number }[]>`
    SELECT g, count(*)::int AS n FROM (
      SELECT ${groupBy} AS g, session_id, min(event_time) AS first
      FROM events WHERE ${inScope(sql, scope)} AND session_id IS NOT NULL
      GROUP BY 1, 2
    ) firsts
    WHERE first >= ${range.since} AND first < ${range.until ?? farFuture}
    GROUP BY g`;
}

export async function referenceSummary(sql: Sql, scope: ReferenceScope, range: ReferenceRange) {
  const until = range.until ?? farFuture;
  const events = await sql<
    { event_type: string; source_role: string; org_id: string; agent_id: string | null; n: number }[]
  >`
    SELECT event_type, source_role, org_id, agent_id, count(*)::int AS n FROM events
    WHERE ${inScope(sql, scope)} AND event_time >= ${range.since} AND event_time < ${until}
    GROUP BY 1, 2, 3, 4`;
  const total = await firstsPerGroup(sql, scope, range, sql`''`);
  const roles = new Map((await firstsPerGroup(sql, scope, range, sql`source_role`)).map((r) => [r.g, r.n]));
  const agents = new Map(
    (await firstsPerGroup(sql, scope, range, sql`org_id::text || '|' || coalesce(agent_id, '')`)).map((r) => [
      r.g,
      r.n,
    ]),
  );
  const sum = (rows: typeof events, key: (r: (typeof events)[number]) => string) => {
    const map = new Map<string, number>();
    for (const row of rows) map.set(key(row), (map.get(key(row)) ?? 0) + row.n);
    return map;
  };
  const agentEvents = sum(events, (r) => `${r.org_id}|${r.agent_id ?? ""}`);
  return {
    organization_id: scope.orgId,
    domains: scope.view === "owner" ? scope.domains : [],
    total_events: events.reduce((s, r) => s + r.n, 0),
    total_sessions: total[0]?.n ?? 0,
    events_by_type: [...sum(events, (r) => r.event_type)]
      .map(([event_type, count]) => ({ event_type, count }))
      .sort(
        byCountThenName(
          (x) => x.count,
          (x) => x.event_type,
        ),
      ),
    events_by_source: [...sum(events, (r) => r.source_role)]
      .map(([source_role, count]) => ({ source_role, count, sessions: roles.get(source_role) ?? 0 }))
      .sort(
        byCountThenName(
          (x) => x.count,
          (x) => x.source_role,
        ),
      ),
    agents: [...agentEvents]
      .map(([key, event_count]) => {
        const [platform_id = "", agent = ""] = key.split("|");
        return { platform_id, agent_id: agent === "" ? null : agent, event_count, session_count: agents.get(key) ?? 0 };
      })
      .sort(
        byCountThenName(
          (x) => x.event_count,
          (x) => `${x.platform_id}|${x.agent_id ?? ""}`,
        ),
      ),
    period_start: range.since.toISOString(),
    period_end: range.until ? range.until.toISOString() : null,
  };
}

export async function referenceEvents(
  sql: Sql,
  scope: ReferenceScope,
  range: ReferenceRange,
  limit: number,
  offset: number,
) {
  const until = range.until ?? farFuture;
  const where = sql`${inScope(sql, scope)} AND event_time >= ${range.since} AND event_time < ${until}`;
  const rows = await sql`
    SELECT event_id, session_id, event_type, content_url, event_time, data, org_id, agent_id, signature_status
    FROM events WHERE ${where} ORDER BY event_time DESC, event_id DESC, org_id DESC LIMIT ${limit} OFFSET ${offset}`;
  const [total] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM events WHERE ${where}`;
  return {
    items: rows.map((r) => ({
      event_id: r.event_id,
      session_id: r.session_id,
      event_type: r.event_type,
      content_url: r.content_url,
      event_timestamp: (r.event_time as Date).toISOString(),
      event_data: r.data,
      platform_id: r.org_id,
      agent_id: r.agent_id,
      signature_status: r.signature_status,
    })),
    total: total?.n ?? 0,
    limit,
    offset,
  };
}

export async function referenceUrls(
  sql: Sql,
  scope: ReferenceScope,
  range: ReferenceRange,
  limit: number,
  offset: number,
  { contains, sort = "events" }: { contains?: string | undefined; sort?: "events" | "sessions" } = {},
) {
  const until = range.until ?? farFuture;
  const rows = await sql<{ content_url: string; event_type: string; n: number; last_seen: Date }[]>`
    SELECT content_url, event_type, count(*)::int AS n, max(event_time) AS last_seen FROM events
    WHERE ${inScope(sql, scope)} AND content_url IS NOT NULL AND event_time >= ${range.since} AND event_time < ${until}
    GROUP BY 1, 2`;
  const sessions = new Map((await firstsPerGroup(sql, scope, range, sql`content_url`)).map((r) => [r.g, r.n]));
  const urls = new Map<
    string,
    { total_events: number; last_seen: number; types: { event_type: string; count: number }[] }
  >();
  for (const row of rows) {
    const url = urls.get(row.content_url) ?? { total_events: 0, last_seen: 0, types: [] };
    url.total_events += row.n;
    url.last_seen = Math.max(url.last_seen, row.last_seen.getTime());
    url.types.push({ event_type: row.event_type, count: row.n });
    urls.set(row.content_url, url);
  }
  const all = [...urls]
    .filter(([content_url]) => contains === undefined || content_url.toLowerCase().includes(contains.toLowerCase()))
    .map(([content_url, url]) => ({
      content_url,
      total_events: url.total_events,
      unique_sessions: sessions.get(content_url) ?? 0,
      event_types: url.types.sort(
        byCountThenName(
          (x) => x.count,
          (x) => x.event_type,
        ),
      ),
      last_seen: new Date(url.last_seen).toISOString(),
    }))
    .sort(
      byCountThenBytes(
        (x) => (sort === "sessions" ? x.unique_sessions : x.total_events),
        (x) => x.content_url,
      ),
    );
  return { items: all.slice(offset, offset + limit), total: all.length, limit, offset };
}

export async function referenceTimeseries(
  sql: Sql,
  scope: ReferenceScope,
  range: ReferenceRange,
  interval: "hour" | "day" | "week" | "month",
) {
  const until = range.until ?? farFuture;
  const events = await sql<{ b: Date; event_type: string; n: number }[]>`
    SELECT date_trunc(${interval}, event_time, 'UTC') AS b, event_type, count(*)::int AS n FROM events
    WHERE ${inScope(sql, scope)} AND event_time >= ${range.since} AND event_time < ${until}
    GROUP BY 1, 2`;
  const sessions = await sql<{ b: Date; n: number }[]>`
    SELECT date_trunc(${interval}, first, 'UTC') AS b, count(*)::int AS n FROM (
      SELECT session_id, min(event_time) AS first FROM events
      WHERE ${inScope(sql, scope)} AND session_id IS NOT NULL GROUP BY 1
    ) firsts
    WHERE first >= ${range.since} AND first < ${until}
    GROUP BY 1`;
  const buckets = new Map<
    number,
    { total_events: number; sessions: number; types: { event_type: string; count: number }[] }
  >();
  const at = (b: Date) => {
    const key = b.getTime();
    const bucket = buckets.get(key) ?? { total_events: 0, sessions: 0, types: [] };
    buckets.set(key, bucket);
    return bucket;
  };
  for (const row of events) {
    const bucket = at(row.b);
    bucket.total_events += row.n;
    bucket.types.push({ event_type: row.event_type, count: row.n });
  }
  for (const row of sessions) at(row.b).sessions += row.n;
  return {
    interval,
    period_start: range.since.toISOString(),
    period_end: range.until ? range.until.toISOString() : null,
    buckets: [...buckets]
      .sort(([a], [b]) => a - b)
      .map(([start, bucket]) => ({
        bucket_start: new Date(start).toISOString(),
        total_events: bucket.total_events,
        sessions: bucket.sessions,
        events_by_type: bucket.types.sort(
          byCountThenName(
            (x) => x.count,
            (x) => x.event_type,
          ),
        ),
      })),
  };
}

/** A read's body without its freshness stamp (`as_of`), to compare its figures with the reference. */
export function figuresOf<T extends { as_of?: unknown }>(body: T): Omit<T, "as_of"> {
  const { as_of: _asOf, ...figures } = body;
  return figures;
}
