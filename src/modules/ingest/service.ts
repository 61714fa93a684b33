import postgres from "postgres";
import type { PrivacyLevel } from "../../core/privacy.ts";
import type { Queryable, Sql } from "../../db/sql.ts";
import type { SessionHeader } from "./documents.ts";
import type { EventRow } from "./event-columns.ts";
import {
  boundSessions,
  eventKeyOf,
  inWriteTransaction,
  sessionsOf,
  storeCounted,
  storedEventsOf,
} from "./event-store.ts";
import type { OutcomeValue } from "./model.ts";

/** A session named by events and created on first sight when it does not exist. */
export interface ImplicitSession {
  id: string;
  agentId: string | null;
  startedAt: Date;
  manifestRef: string | null;
  parentSessionId: string | null;
}

export interface WritePlan {
  orgId: string;
  header: SessionHeader | null;
  implicitSessions: ImplicitSession[];
  events: EventRow[];
}

/** A session named by the request is owned by another organisation; nothing was stored. */
export class ForeignSessionError extends Error {
  override name = "ForeignSessionError";
}

/** The described session's end precedes the start already stored for it (sql/015); nothing was stored. */
export class SessionEndsBeforeStartError extends Error {
  override name = "SessionEndsBeforeStartError";
}

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/**
 * The implicit sessions of plans written together, one per id: the earliest start,
 * the first agent, manifest and parent given. Plans of two organisations naming one
 * session cannot share a transaction (one of them is refused).
 */
function implicitSessionsOf(plans: readonly WritePlan[]): (ImplicitSession & { orgId: string })[] {
  const byId = new Map<string, ImplicitSession & { orgId: string }>();
  for (const plan of plans) {
    for (const session of plan.implicitSessions) {
      const known = byId.get(session.id);
      if (!known) {
        byId.set(session.id, { ...session, orgId: plan.orgId });
        continue;
      }
      if (known.orgId !== plan.orgId) throw new ForeignSessionError("two organisations name one session");
      known.agentId ??= session.agentId;
      known.manifestRef ??= session.manifestRef;
      known.parentSessionId ??= session.parentSessionId;
      if (session.startedAt < known.startedAt) known.startedAt = session.startedAt;
    }
  }
  // Sessions are claimed in id order so that concurrent writes naming the same
  // sessions wait on each other in one order and never deadlock.
  return [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
}

/**
 * Claims every session the plans name (creating unknown ones for their
 * organisation, refusing ones owned by another) and stores their events counted,
 * in one transaction of two statements, the first sent with the read it needs
 * (event-store.ts): the claims, the sessions' bounds and the guard that aborts
 * everything when a claim fails, with the stored flag holders; then the events
 * with their first-event flags. Returns, for each plan, the events it inserted (a
 * retried event is skipped; an event in two plans counts for the first).
 *
 * Several plans share a transaction only without a session header (GroupWriter).
 */
export async function writeIngest(sql: Sql, plans: readonly WritePlan[]): Promise<number[]> {
  const header = plans.length === 1 ? (plans[0] as WritePlan).header : null;
  if (plans.length > 1 && plans.some((plan) => plan.header)) throw new Error("plans with a header are written alone");
  const implicit = implicitSessionsOf(plans);
  const expected = implicit.length + (header ? 1 : 0);
  const events = plans.flatMap((plan) => plan.events);
  try {
    const inserted = await inWriteTransaction(sql, async (tx) => {
      const headerClaim = header
        ? tx`header_claim AS (${claimHeaderSession(tx, (plans[0] as WritePlan).orgId, header)}),`
        : tx``;
      const claims = tx<{ agents: Record<string, string | null> }[]>`
        WITH ${headerClaim}
        claimed AS (
          INSERT INTO sessions AS s (id, org_id, agent_id, started_at, manifest_ref, parent_session_id)
          SELECT n.id, n.org_id, n.agent_id, n.started_at, n.manifest_ref, n.parent_session_id
          FROM unnest(
            ${implicit.map((s) => s.id)}::uuid[],
            ${implicit.map((s) => s.orgId)}::uuid[],
            ${implicit.map((s) => s.agentId)}::text[],
            ${implicit.map((s) => iso(s.startedAt))}::timestamptz[],
            ${implicit.map((s) => s.manifestRef)}::text[],
            ${implicit.map((s) => s.parentSessionId)}::uuid[]
          ) AS n (id, org_id, agent_id, started_at, manifest_ref, parent_session_id)
          ON CONFLICT (id) DO UPDATE
            SET agent_id = coalesce(s.agent_id, EXCLUDED.agent_id),
                started_at = least(s.started_at, EXCLUDED.started_at)
            WHERE s.org_id = EXCLUDED.org_id
          RETURNING s.id, s.agent_id
        ),
        owned AS (
          SELECT id, agent_id FROM claimed ${header ? tx`UNION ALL SELECT id, agent_id FROM header_claim` : tx``}
        ),
        bounds AS (${boundSessions(tx, events)})
        SELECT ingest_require_sessions((SELECT count(*) FROM owned), ${expected}) AS sessions_claimed,
               (SELECT coalesce(json_object_agg(id, agent_id), '{}') FROM owned) AS agents`;
      if (events.length === 0) {
        await claims;
        return new Set<string>();
      }
      // Sent together (queries are otherwise sent when awaited): the flag holders
      // are read after the claims and bounds have locked the sessions.
      const held = storedEventsOf(tx, sessionsOf(events), { flagsTakenBy: events.map((row) => row.contentUrl) });
      const [[claimed], stored] = await Promise.all([claims.execute(), held]);
      // An event without an agent takes its session's (the caller's own sessions only).
      const agents = claimed?.agents ?? {};
      const rows = events.map((row) =>
        row.agentId === null && row.sessionId ? { ...row, agentId: agents[row.sessionId.toLowerCase()] ?? null } : row,
      );
      return storeCounted(tx, rows, stored);
    });
    return plans.map((plan) =>
      plan.events.reduce((created, row) => created + (inserted.delete(eventKeyOf(row)) ? 1 : 0), 0),
    );
  } catch (error) {
    if (error instanceof postgres.PostgresError && error.code === "CT409") throw new ForeignSessionError(error.message);
    if (error instanceof postgres.PostgresError && error.constraint_name === "sessions_end_not_before_start") {
      throw new SessionEndsBeforeStartError(error.message);
    }
    throw error;
  }
}

/**
 * Upserts an explicitly described session: given fields win, absent ones keep what
 * is stored; an earlier start moves the start. A new session without a start
 * starts now, or at its end when that is earlier.
 */
function claimHeaderSession(sql: Queryable, orgId: string, header: SessionHeader) {
  const outcome = header.outcome;
  return sql`
    INSERT INTO sessions AS s (
      id, org_id, initiator_type, agent_id, manifest_ref, content_scope, external_session_id, parent_session_id,
      prior_session_ids, privacy_level, started_at, ended_at, outcome_type, outcome_value_amount, outcome_currency
    ) VALUES (
      ${header.id}::uuid, ${orgId}::uuid, coalesce(${header.initiatorType}::text, 'user'), ${header.agentId},
      ${header.manifestRef}, ${header.contentScope}, ${header.externalSessionId}, ${header.parentSessionId}::uuid,
      coalesce(${header.priorSessionIds}::uuid[], '{}'), coalesce(${header.privacyLevel}::text, 'minimal'),
      coalesce(${iso(header.startedAt)}::timestamptz, least(now(), ${iso(header.endedAt)}::timestamptz)),
      ${iso(header.endedAt)}::timestamptz,
      ${outcome?.type ?? null}, ${outcome?.value_amount ?? null}::bigint, ${outcome?.currency ?? null}
    )
    ON CONFLICT (id) DO UPDATE SET
      initiator_type = coalesce(${header.initiatorType}::text, s.initiator_type),
      agent_id = coalesce(EXCLUDED.agent_id, s.agent_id),
      manifest_ref = coalesce(EXCLUDED.manifest_ref, s.manifest_ref),
      content_scope = coalesce(EXCLUDED.content_scope, s.content_scope),
      external_session_id = coalesce(EXCLUDED.external_session_id, s.external_session_id),
      parent_session_id = coalesce(EXCLUDED.parent_session_id, s.parent_session_id),
      prior_session_ids = coalesce(${header.priorSessionIds}::uuid[], s.prior_session_ids),
      privacy_level = coalesce(${header.privacyLevel}::text, s.privacy_level),
      started_at = least(s.started_at, ${iso(header.startedAt)}::timestamptz),
      ended_at = coalesce(EXCLUDED.ended_at, s.ended_at),
      outcome_type = coalesce(EXCLUDED.outcome_type, s.outcome_type),
      outcome_value_amount = CASE WHEN EXCLUDED.outcome_type IS NULL THEN s.outcome_value_amount ELSE EXCLUDED.outcome_value_amount END,
      outcome_currency = CASE WHEN EXCLUDED.outcome_type IS NULL THEN s.outcome_currency ELSE EXCLUDED.outcome_currency END
    WHERE s.org_id = EXCLUDED.org_id
    RETURNING s.id, s.agent_id`;
}

/** Of these session ids, the ones that exist under another organisation. */
export async function foreignSessionIds(sql: Sql, orgId: string, ids: string[]): Promise<Set<string>> {
  const rows = await sql<{ id: string }[]>`
    SELECT id FROM sessions WHERE id = ANY(${ids}::uuid[]) AND org_id <> ${orgId}::uuid`;
  return new Set(rows.map((row) => row.id));
}

/**
 * Ends a session of `orgId` now, or at its start when that lies ahead within the
 * allowed clock skew (the first end time is kept), and records the outcome
 * when one is given. Undefined when the organisation has no such session.
 */
export async function endSession(
  sql: Sql,
  orgId: string,
  sessionId: string,
  outcome: OutcomeValue | undefined,
): Promise<{ ended_at: Date } | undefined> {
  const [row] = await sql<{ ended_at: Date }[]>`
    UPDATE sessions SET
      ended_at = coalesce(ended_at, greatest(now(), started_at)),
      outcome_type = coalesce(${outcome?.type ?? null}, outcome_type),
      outcome_value_amount = CASE WHEN ${outcome?.type ?? null}::text IS NULL THEN outcome_value_amount ELSE ${outcome?.value_amount ?? null}::bigint END,
      outcome_currency = CASE WHEN ${outcome?.type ?? null}::text IS NULL THEN outcome_currency ELSE ${outcome?.currency ?? null} END
    WHERE id = ${sessionId}::uuid AND org_id = ${orgId}::uuid
    RETURNING ended_at`;
  return row;
}

/** The declared privacy level of each of these sessions that the organisation owns. */
export async function sessionPrivacyLevels(sql: Sql, orgId: string, ids: string[]): Promise<Map<string, PrivacyLevel>> {
  if (ids.length === 0) return new Map();
  const rows = await sql<{ id: string; privacy_level: PrivacyLevel }[]>`
    SELECT id, privacy_level FROM sessions WHERE id = ANY(${ids}::uuid[]) AND org_id = ${orgId}::uuid`;
  return new Map(rows.map((row) => [row.id, row.privacy_level]));
}

export { recountSessions } from "./event-store.ts";
