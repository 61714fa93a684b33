import { type PrivacyLevel, stripConversationData, stripTurn, withheldFields } from "../../core/privacy.ts";
import type { Queryable } from "../../db/sql.ts";

interface StoredConversation {
  at: string;
  event_id: string;
  data: Record<string, unknown>;
  turn: Record<string, unknown> | null;
}

/**
 * A session document declared `level`: its stored events' turns and conversation
 * data are stripped to it, as if they had arrived under it, so no read shows what
 * the session no longer shares. Runs in the write's transaction, after the claim
 * that locks the session and before the write's own events are stored. Only
 * `intent` and `minimal` withhold anything. A session document is sent about once
 * a session, so this reads the session's events (from its earliest) rather than
 * keeping anything for it.
 */
export async function tightenStoredConversation(tx: Queryable, sessionId: string, level: PrivacyLevel): Promise<void> {
  const withheld = withheldFields(level);
  if (withheld.length === 0) return;
  // The session's earliest stored event (sql/030): none means nothing stored yet,
  // and a bound lets the read skip every chunk before it (the write transaction
  // plans each statement for its own values). Times as text keep their microseconds.
  const [bound] = await tx<{ from: string }[]>`
    SELECT events_from::text AS from FROM session_bounds WHERE session_id = ${sessionId}::uuid`;
  if (!bound) return;
  // Turns are read whatever they hold, since each says its own level.
  const stored = await tx<StoredConversation[]>`
    SELECT event_time::text AS at, event_id, data, turn FROM events
    WHERE session_id = ${sessionId}::uuid AND event_time >= ${bound.from}::timestamptz
      AND (turn IS NOT NULL OR data ?| ${withheld}::text[])`;
  const changed = stored.flatMap((event) => {
    const data = stripConversationData(event.data, level);
    const turn = event.turn && stripTurn(event.turn, level);
    const turnChanged = turn !== null && (turn.removed.length > 0 || turn.level !== event.turn?.privacy_level);
    return data.removed.length > 0 || turnChanged ? [{ ...event, data: data.data, turn: turn?.turn ?? null }] : [];
  });
  if (changed.length === 0) return;
  // A long session's events in compressed chunks can lie in many batches (one per
  // host), each decompressed whole; TimescaleDB's default cap of 100,000 rows a
  // transaction would refuse the write, and the level change with it, every time.
  await tx`SET LOCAL timescaledb.max_tuples_decompressed_per_dml_transaction = 0`;
  await tx`
    UPDATE events e SET data = c.data::jsonb, turn = c.turn::jsonb
    FROM unnest(
      ${changed.map((event) => event.at)}::timestamptz[],
      ${changed.map((event) => event.event_id)}::uuid[],
      ${changed.map((event) => JSON.stringify(event.data))}::text[],
      ${changed.map((event) => (event.turn ? JSON.stringify(event.turn) : null))}::text[]
    ) AS c (event_time, event_id, data, turn)
    WHERE e.session_id = ${sessionId}::uuid AND e.event_time >= ${bound.from}::timestamptz
      AND e.event_time = c.event_time AND e.event_id = c.event_id`;
}
