import type { Sql } from "../../db/sql.ts";
import { eventCount } from "./measures.ts";
import { unionOfPieces } from "./pieces.ts";
import { allLevels, count, iso, plan, type Range, resolve } from "./read-context.ts";
import type { ReadScope } from "./scope.ts";

interface UrlRow {
  total: string;
  content_url: string | null;
  total_events: string | null;
  unique_sessions: string | null;
  last_seen: Date | null;
  event_types: { event_type: string; count: number }[] | null;
}

/** URL metrics by total_events descending, then URL (byte order); sessions counted beside the events. */
export async function listUrls(sql: Sql, scope: ReadScope, range: Range, limit: number, offset: number) {
  const resolved = await resolve(sql, scope);
  const family = scope.view === "owner" ? "events_by_url" : "events_by_reporter_url";
  const pieces = plan(resolved, family, range, allLevels);
  const union = unionOfPieces(
    sql,
    family,
    pieces,
    (source, inRange) => sql`
      SELECT content_url, event_type, ${source.measure(eventCount(sql))} AS n,
             ${source.measure(resolved.urlSessions)} AS sessions, ${source.lastSeen} AS last_seen
      FROM ${source.table} WHERE ${resolved.events} AND ${inRange}
      GROUP BY content_url, event_type`,
  );
  // Rank URLs on their totals first; event types are gathered for the page's URLs only.
  const rows = await sql<UrlRow[]>`
    WITH per_type AS (
      SELECT content_url, event_type, sum(n) AS n, sum(sessions) AS sessions, max(last_seen) AS last_seen
      FROM (${union}) pieces GROUP BY content_url, event_type
    ), per_url AS (
      SELECT content_url, sum(n) AS total_events, sum(sessions) AS unique_sessions, max(last_seen) AS last_seen
      FROM per_type GROUP BY content_url
    ), page AS (
      SELECT * FROM per_url ORDER BY total_events DESC, content_url COLLATE "C" LIMIT ${limit} OFFSET ${offset}
    )
    SELECT totals.total, page.content_url, page.total_events, page.unique_sessions, page.last_seen,
           jsonb_agg(jsonb_build_object('event_type', t.event_type, 'count', t.n) ORDER BY t.n DESC, t.event_type COLLATE "C")
             FILTER (WHERE t.event_type IS NOT NULL) AS event_types
    FROM (SELECT count(*) AS total FROM per_url) totals
    LEFT JOIN page ON true
    LEFT JOIN per_type t ON t.content_url = page.content_url
    GROUP BY totals.total, page.content_url, page.total_events, page.unique_sessions, page.last_seen
    ORDER BY page.total_events DESC, page.content_url COLLATE "C"`;
  return {
    items: rows
      .filter((row) => row.content_url !== null)
      .map((row) => ({
        content_url: row.content_url as string,
        total_events: count(row.total_events),
        unique_sessions: count(row.unique_sessions),
        event_types: (row.event_types ?? []).map((type) => ({ event_type: type.event_type, count: count(type.count) })),
        last_seen: iso(row.last_seen as Date),
      })),
    total: count(rows[0]?.total),
    limit,
    offset,
  };
}
