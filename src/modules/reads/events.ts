import type { Sql } from "../../db/client.ts";
import { count, endOf, iso, type Range, resolve } from "./read-context.ts";
import type { ReadScope } from "./scope.ts";
import { countEvents } from "./summary.ts";

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

/**
 * Every event of the range, oldest first, in pages. Each page is its own short
 * query that continues after the last row of the page before (keyset), so nothing
 * (no connection, cursor or snapshot) is held while the client reads: a slow reader
 * never holds up other requests, even on the embedded engine's single connection.
 * The position is kept as text with microseconds, which a JavaScript Date would
 * round. Events written during an export appear when they sort after its position.
 */
export async function* streamEventBatches(sql: Sql, scope: ReadScope, range: Range, pageSize = 1000) {
  const resolved = await resolve(sql, scope);
  let after: { time: string; eventId: string; orgId: string } | undefined;
  for (;;) {
    const rows = await sql<(EventRow & { position: string })[]>`
      SELECT ${eventColumns(sql)},
             to_char(event_time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS position
      FROM events
      WHERE ${resolved.events} AND event_time >= ${range.since} AND event_time < ${endOf(range)}
        ${
          after
            ? sql`AND event_time >= ${after.time}::timestamptz
                  AND (event_time, event_id, org_id) > (${after.time}::timestamptz, ${after.eventId}::uuid, ${after.orgId}::uuid)`
            : sql``
        }
      ORDER BY event_time, event_id, org_id
      LIMIT ${pageSize}`;
    if (rows.length > 0) yield rows.map(({ position: _position, ...row }) => toEventItem(row));
    const last = rows.at(-1);
    if (!last || rows.length < pageSize) return;
    after = { time: last.position, eventId: last.event_id, orgId: last.platform_id };
  }
}
