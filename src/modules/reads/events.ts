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

/** All events of a range, oldest first, in batches read through a cursor (constant memory). */
export async function* streamEventBatches(sql: Sql, scope: ReadScope, range: Range, batchSize = 1000) {
  const resolved = await resolve(sql, scope);
  const cursor = sql<EventRow[]>`
    SELECT ${eventColumns(sql)} FROM events
    WHERE ${resolved.events} AND event_time >= ${range.since} AND event_time < ${endOf(range)}
    ORDER BY event_time, event_id, org_id`.cursor(batchSize);
  for await (const rows of cursor) yield rows.map(toEventItem);
}
