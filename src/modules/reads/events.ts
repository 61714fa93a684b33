import type { SignatureStatus } from "../../core/signature-status.ts";
import { joined } from "../../db/fragments.ts";
import type { Fragment, Sql } from "../../db/sql.ts";
import { count, endOf, iso, type Range, resolve } from "./read-context.ts";
import type { ReadScope } from "./scope.ts";
import { countBreakdowns } from "./summary.ts";

/** The event list item (reads and export): each field and the `events` column it comes from. */
export const eventItemFields = {
  event_id: "event_id",
  session_id: "session_id",
  event_type: "event_type",
  content_url: "content_url",
  event_timestamp: "event_time",
  event_data: "data",
  platform_id: "org_id",
  agent_id: "agent_id",
  signature_status: "signature_status",
} as const;

const eventColumns = (sql: Sql) =>
  joined(
    sql,
    Object.entries(eventItemFields).map(([field, column]) => sql`${sql(column)} AS ${sql(field)}`),
  );

interface EventRow {
  event_id: string;
  session_id: string | null;
  event_type: string;
  content_url: string | null;
  event_timestamp: Date;
  event_data: Record<string, unknown>;
  platform_id: string;
  agent_id: string | null;
  signature_status: SignatureStatus;
}

/** Which events of the scope a list or export shows: all, or those of one signature status. */
export interface EventFilter {
  signature_status?: SignatureStatus;
}

const filterOf = (sql: Sql, filter: EventFilter): Fragment =>
  filter.signature_status === undefined ? sql`` : sql`AND signature_status = ${filter.signature_status}`;

export const toEventItem = ({ session_name, ...row }: EventRow & { session_name: string | null }) => ({
  ...row,
  session_id: session_name,
  event_timestamp: iso(row.event_timestamp),
});

/**
 * A page of events with each session's name as its reporter gives it (sql/067):
 * its id, but for the few renamed sessions. Joined once the page is cut, so the
 * page keeps its plan (an ordered scan of the range that stops at the limit).
 * A reporter sees no name for a session it does not own: an event it reported
 * with a click token is bound to the issuing agent's session, whose id the token
 * exists to keep from it (standard 7.1).
 */
const withSessionNames = (sql: Sql, scope: ReadScope, page: Fragment, order: Fragment) =>
  scope.view === "reporter"
    ? sql`
      SELECT page.*,
             CASE WHEN own.org_id <> page.platform_id THEN NULL ELSE coalesce(own.wire_id, page.session_id) END AS session_name
      FROM (${page}) page
      LEFT JOIN sessions own ON own.id = page.session_id
      ORDER BY ${order}`
    : sql`
      SELECT page.*, coalesce(renamed.wire_id, page.session_id) AS session_name
      FROM (${page}) page
      LEFT JOIN sessions renamed ON renamed.id = page.session_id AND renamed.wire_id IS NOT NULL
      ORDER BY ${order}`;

/**
 * Ingest refuses events more than minutes ahead, so time windows that step
 * through a range need not start later than this lead over the clock: an
 * export's stop growing there (one last window reaches the range's end, an open
 * range ending in 9999, which costs one cheap query), and an events page's first
 * window reaches back from there.
 */
const aheadOfNowMs = 3_600_000;
/** An events page's first window; each next, older one is four times as long. */
const firstEdgeWindowMs = 86_400_000;
const edgeWindowGrowth = 4;

/**
 * Events newest first. `total` comes from the rollups, or, filtered by signature
 * status (which rollups do not keep), from counting the raw rows; the page from raw rows.
 */
export async function listEvents(
  sql: Sql,
  scope: ReadScope,
  range: Range,
  filter: EventFilter,
  limit: number,
  offset: number,
) {
  const resolved = await resolve(sql, scope);
  const inRange = sql`${resolved.events} AND event_time >= ${range.since} AND event_time < ${endOf(range)}`;
  const totalRows =
    filter.signature_status === undefined
      ? countBreakdowns(sql, resolved, range, ["type"])
      : sql<{ n: string }[]>`SELECT count(*) AS n FROM events WHERE ${inRange} ${filterOf(sql, filter)}`;
  // First the time of the page's oldest possible event, through the time index
  // alone; the page then reads from that time on (ties at it included), with the
  // time as a value that leaves out every older chunk. Ordered by event id and
  // reporter too in one statement, a range longer than a chunk had the newest
  // chunk sorted whole (a year of 20 million events: 290 ms, README "Reads").
  // That time is looked for in windows of time growing back from the range's end,
  // each statement planned over the chunks of its window only: planned over a
  // year's chunks at once, it took 50 ms or more to plan on the embedded engine
  // for a page found in the newest day. The first window is sent with the total,
  // which says when no older window can hold more of the scope's events.
  const wanted = offset + limit;
  const sinceMs = range.since.getTime();
  let upperMs = endOf(range).getTime();
  let windowMs = firstEdgeWindowMs;
  let lowerMs = Math.max(sinceMs, Math.min(upperMs, Date.now() + aheadOfNowMs) - windowMs);
  const newestIn = (n: number) =>
    sql<{ n: number; from: string | null }[]>`
      SELECT count(*)::int AS n, min(event_time)::text AS from FROM (
        SELECT event_time FROM events
        WHERE ${inRange} AND event_time >= ${new Date(lowerMs)} AND event_time < ${new Date(upperMs)}
          ${filterOf(sql, filter)}
        ORDER BY event_time DESC LIMIT ${n}) newest`;
  const [counted, [first]] = await Promise.all([totalRows, newestIn(wanted)]);
  const total = counted.reduce((sum, row) => sum + count(row.n), 0);
  let found = first?.n ?? 0;
  let edge = first?.from ?? null;
  while (found < Math.min(wanted, total) && lowerMs > sinceMs) {
    upperMs = lowerMs;
    windowMs *= edgeWindowGrowth;
    lowerMs = Math.max(sinceMs, upperMs - windowMs);
    const [older] = await newestIn(wanted - found);
    found += older?.n ?? 0;
    edge = older?.from ?? edge;
  }
  const rows = edge
    ? await sql<(EventRow & { session_name: string | null })[]>`${withSessionNames(
        sql,
        scope,
        sql`
          SELECT ${eventColumns(sql)} FROM events
          WHERE ${inRange} AND event_time >= ${edge}::timestamptz ${filterOf(sql, filter)}
          ORDER BY event_time DESC, event_id DESC, org_id DESC
          LIMIT ${limit} OFFSET ${offset}`,
        sql`page.event_timestamp DESC, page.event_id DESC, page.platform_id DESC`,
      )}`
    : [];
  return { items: rows.map(toEventItem), total, limit, offset };
}

/** A page's last row, as the next page continues after it (time as text: microseconds). */
interface ExportPosition {
  time: string;
  eventId: string;
  orgId: string;
}

const firstWindowMs = 3_600_000;

/**
 * Every event of the range, oldest first, in pages. Each page is its own short
 * query that continues after the last row of the page before (keyset), so nothing
 * (no connection, cursor or snapshot) is held while the client reads: a slow reader
 * never holds up other requests, even on the embedded engine's single connection.
 * Events written during an export appear when they sort after its position.
 *
 * Each query also looks only at a window of time after the position, sized from
 * the page before (twice the span that filled it; doubled while pages come back
 * short), so that it reads about a page of rows instead of the whole rest of the
 * range, which the (host, time) index cannot hand over in key order.
 */
export async function* streamEventBatches(
  sql: Sql,
  scope: ReadScope,
  range: Range,
  filter: EventFilter = {},
  pageSize = 1000,
) {
  const resolved = await resolve(sql, scope);
  const endMs = endOf(range).getTime();
  let windowStartMs = range.since.getTime();
  let windowMs = firstWindowMs;
  let after: ExportPosition | undefined;
  while (windowStartMs < endMs) {
    const stepEndMs = windowStartMs + windowMs;
    const windowEnd = new Date(stepEndMs >= Math.min(endMs, Date.now() + aheadOfNowMs) ? endMs : stepEndMs);
    const rows = await sql<(EventRow & { session_name: string | null; position: string })[]>`${withSessionNames(
      sql,
      scope,
      sql`
      SELECT ${eventColumns(sql)},
             to_char(event_time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS position
      FROM events
      WHERE ${resolved.events} AND event_time >= ${range.since} AND event_time < ${windowEnd} ${filterOf(sql, filter)}
        ${
          after
            ? sql`AND event_time >= ${after.time}::timestamptz
                  AND (event_time, event_id, org_id) > (${after.time}::timestamptz, ${after.eventId}::uuid, ${after.orgId}::uuid)`
            : sql`AND event_time >= ${new Date(windowStartMs)}`
        }
      ORDER BY event_time, event_id, org_id
      LIMIT ${pageSize}`,
      sql`page.event_timestamp, page.event_id, page.platform_id`,
    )}`;
    if (rows.length > 0) yield rows.map(({ position: _position, ...row }) => toEventItem(row));
    const last = rows.at(-1);
    if (last && rows.length === pageSize) {
      // More may follow in this window: continue after the last row, in a window
      // twice the span this page took (at least a millisecond, past the last row).
      const lastMs = last.event_timestamp.getTime();
      windowMs = Math.max(2 * (lastMs - windowStartMs), 1);
      windowStartMs = lastMs;
      after = { time: last.position, eventId: last.event_id, orgId: last.platform_id };
    } else {
      windowStartMs = windowEnd.getTime();
      windowMs *= 2;
      after = undefined;
    }
  }
}
