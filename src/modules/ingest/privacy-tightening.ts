import { isStricter, type PrivacyLevel, stripConversationData, stripTurn } from "../../core/privacy.ts";
import type { Queryable } from "../../db/sql.ts";

interface StoredConversation {
  at: string;
  event_id: string;
  data: Record<string, unknown>;
  turn: Record<string, unknown> | null;
}

/**
 * A session document made the session's level stricter (`from` to `to`): its
 * stored events' turns and conversation data are stripped to the new level, as if
 * they had arrived under it, so no read shows what the session no longer shares.
 * Runs in the write's transaction, before its own events are stored. Rare (a level
 * only ever tightens this way), so it reads the session's events rather than
 * keeping anything for it.
 */
export async function tightenStoredConversation(
  tx: Queryable,
  sessionId: string,
  from: PrivacyLevel,
  to: PrivacyLevel,
): Promise<void> {
  if (!isStricter(to, from)) return;
  // The time as text keeps its microseconds, which a Date would lose.
  const stored = await tx<StoredConversation[]>`
    SELECT event_time::text AS at, event_id, data, turn FROM events
    WHERE session_id = ${sessionId}::uuid AND (turn IS NOT NULL OR data <> '{}'::jsonb)`;
  const changed = stored.flatMap((event) => {
    const data = stripConversationData(event.data, to);
    const turn = event.turn && stripTurn(event.turn, to);
    const turnChanged = turn !== null && (turn.removed.length > 0 || turn.level !== event.turn?.privacy_level);
    return data.removed.length > 0 || turnChanged ? [{ ...event, data: data.data, turn: turn?.turn ?? null }] : [];
  });
  if (changed.length === 0) return;
  await tx`
    UPDATE events e SET data = c.data::jsonb, turn = c.turn::jsonb
    FROM unnest(
      ${changed.map((event) => event.at)}::timestamptz[],
      ${changed.map((event) => event.event_id)}::uuid[],
      ${changed.map((event) => JSON.stringify(event.data))}::text[],
      ${changed.map((event) => (event.turn ? JSON.stringify(event.turn) : null))}::text[]
    ) AS c (event_time, event_id, data, turn)
    WHERE e.session_id = ${sessionId}::uuid AND e.event_time = c.event_time AND e.event_id = c.event_id`;
}
