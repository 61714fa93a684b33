import type { Sql } from "../../db/sql.ts";
import { sessionName, sessionsNamed } from "./session-names.ts";

interface SessionRow {
  id: string;
  /** The session's name as its reporter gives it (sql/067). */
  name: string;
  initiator_type: string;
  agent_id: string | null;
  manifest_ref: string | null;
  content_scope: string | null;
  external_session_id: string | null;
  parent_session_id: string | null;
  prior_session_ids: string[];
  privacy_level: string | null;
  started_at: string;
  ended_at: string | null;
}

interface EventRow {
  event_id: string;
  event_type: string;
  timestamp: string;
  source_role: string;
  content_url: string | null;
  content_id: string | null;
  content_telemetry_id: string | null;
  turn_id: string | null;
  output_id: string | null;
  presentation_id: string | null;
  data: Record<string, unknown>;
  turn: Record<string, unknown> | null;
}

/** Fields with a value: a document leaves out what was never sent rather than sending null. */
function present(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null && value !== undefined));
}

/**
 * A stored session of `orgId` as a Content Telemetry v1 session document
 * (standard 5.1, Annex A), with the events that organisation reported in it,
 * oldest first. Posting it back to POST /events stores nothing new and leaves
 * the session as it is, so reading it again gives the same document. The
 * session-start fields of this interface (initiator_type, privacy_level,
 * external_session_id, prior_session_ids) travel as extension fields. Undefined
 * when the organisation has no such session.
 */
export async function sessionDocument(
  sql: Sql,
  orgId: string,
  sessionId: string,
): Promise<Record<string, unknown> | undefined> {
  // Times are printed to the microsecond as PostgreSQL holds them, so a document posted back names the same instants.
  const [session] = await sql<SessionRow[]>`
    SELECT id, ${sessionName(sql)} AS name, initiator_type, agent_id, manifest_ref, content_scope, external_session_id, parent_session_id,
           prior_session_ids, privacy_level,
           to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS started_at,
           to_char(ended_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS ended_at
    FROM sessions WHERE ${sessionsNamed(sql, orgId, [sessionId])}`;
  if (!session) return undefined;
  const events = await sql<EventRow[]>`
    SELECT event_id, event_type, to_char(event_time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS timestamp,
           source_role, content_url, content_id, content_telemetry_id, turn_id, output_id, presentation_id, data, turn
    FROM events WHERE session_id = ${session.id}::uuid AND org_id = ${orgId}::uuid
    ORDER BY event_time, event_id`;
  return present({
    document_type: "session",
    schema_version: "1.0",
    session_id: session.name,
    started_at: session.started_at,
    ended_at: session.ended_at,
    agent_id: session.agent_id,
    manifest_ref: session.manifest_ref,
    content_scope: session.content_scope,
    parent_session_id: session.parent_session_id,
    initiator_type: session.initiator_type,
    privacy_level: session.privacy_level,
    external_session_id: session.external_session_id,
    prior_session_ids: session.prior_session_ids.length > 0 ? session.prior_session_ids : null,
    events: events.map((event) =>
      present({
        id: event.event_id,
        type: event.event_type,
        timestamp: event.timestamp,
        source_role: event.source_role,
        content_url: event.content_url,
        content_id: event.content_id,
        content_telemetry_id: event.content_telemetry_id,
        turn_id: event.turn_id,
        output_id: event.output_id,
        presentation_id: event.presentation_id,
        data: event.data,
        turn: event.turn,
      }),
    ),
  });
}
