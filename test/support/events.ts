import { hostOfUrl } from "../../src/core/hosts.ts";
import type { Sql } from "../../src/db/sql.ts";
import type { EventRow } from "../../src/modules/ingest/event-columns.ts";
import { flagUpdatesOn, writeEvents } from "../../src/modules/ingest/event-store.ts";
import { testServerUrl } from "./databases.ts";

/** How the suite's engine updates moved flags, as the service on it does (event-store.ts FlagUpdates). */
export const testFlagUpdates = flagUpdatesOn(testServerUrl ? "server" : "embedded");

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

/** A test event as the event store takes it; content_host derived from content_url the way ingest normalises it. */
export function eventRowOf(event: TestEvent): EventRow {
  return {
    eventTime: event.event_time,
    eventId: event.event_id ?? crypto.randomUUID(),
    orgId: event.org_id,
    eventType: event.event_type ?? "content_retrieved",
    sourceRole: event.source_role ?? "agent",
    contentUrl: event.content_url ?? null,
    contentHost: event.content_url ? hostOfUrl(event.content_url) : null,
    agentId: event.agent_id ?? null,
    sessionId: event.session_id ?? null,
    contentId: null,
    contentTelemetryId: null,
    turnId: null,
    outputId: null,
    presentationId: null,
    signatureStatus: "unverified",
    data: event.data ?? {},
    turn: null,
  };
}

/**
 * Stores events through the event store (the read side's tests do not depend on
 * the ingest endpoint), counted as ingest counts them.
 */
export async function insertEvents(sql: Sql, events: readonly TestEvent[]): Promise<void> {
  await writeEvents(sql, events.map(eventRowOf), testFlagUpdates);
}
