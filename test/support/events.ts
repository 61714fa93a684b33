import { hostOfUrl } from "../../src/core/hosts.ts";
import type { Queryable } from "../../src/db/sql.ts";
import { recordSessionFirsts, sessionFirstColumns } from "../../src/modules/ingest/session-firsts.ts";

/** One raw event as the ingest side stores it; omitted fields get plausible defaults. */
export interface TestEvent {
  /** A Date, or an ISO 8601 text for microseconds a Date cannot hold. */
  event_time: Date | string;
  org_id: string;
  event_type?: string;
  source_role?: string;
  content_url?: string | null;
  agent_id?: string | null;
  session_id?: string | null;
  event_id?: string;
  data?: Record<string, unknown>;
}

/**
 * Inserts events straight into the `events` hypertable in one statement (the
 * read side's tests do not depend on the ingest endpoint), recording their
 * session firsts as ingest does. content_host is derived from content_url the
 * way ingest normalises it.
 */
export async function insertEvents(sql: Queryable, events: readonly TestEvent[]): Promise<void> {
  if (events.length === 0) return;
  const rows = events.map((event) => ({
    event_time: event.event_time,
    event_id: event.event_id ?? crypto.randomUUID(),
    org_id: event.org_id,
    event_type: event.event_type ?? "content_retrieved",
    source_role: event.source_role ?? "agent",
    content_url: event.content_url ?? null,
    content_host: event.content_url ? hostOfUrl(event.content_url) : null,
    agent_id: event.agent_id ?? null,
    session_id: event.session_id ?? null,
    data: sql.json((event.data ?? {}) as Parameters<Queryable["json"]>[0]),
  }));
  await sql`
    WITH inserted AS (INSERT INTO events ${sql(rows)} RETURNING ${sessionFirstColumns(sql)})
    ${recordSessionFirsts(sql, "inserted")}`;
}
