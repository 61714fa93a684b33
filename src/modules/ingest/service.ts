import postgres from "postgres";
import type { PrivacyLevel } from "../../core/privacy.ts";
import type { Fragment, Queryable, Sql } from "../../db/sql.ts";
import { type ClickedPresentation, recordClickedPresentations } from "./clicked-presentations.ts";
import type { SessionHeader } from "./documents.ts";
import type { EventRow } from "./event-columns.ts";
import {
  boundSessions,
  earliestBound,
  type FlagUpdates,
  holdersOf,
  readHoldersAhead,
  type SessionStart,
  sessionStarts,
  storeCounted,
} from "./event-store.ts";
import { isoTime } from "./event-times.ts";
import type { OutcomeValue } from "./model.ts";
import { tightenStoredConversation } from "./privacy-tightening.ts";
import { sessionName, sessionsNamed } from "./session-names.ts";
import { inWriteTransaction, RowsToWrite } from "./write-transaction.ts";

/** A session named by events and created on first sight when it does not exist. */
export interface ImplicitSession {
  id: string;
  agentId: string | null;
  /** The envelope's started_at; without one, the session starts at its earliest event written. */
  declaredStart: Date | null;
  manifestRef: string | null;
  parentSessionId: string | null;
}

export interface WritePlan {
  orgId: string;
  /** Engagements carrying click tokens, with the presentations they name (standard 7.4.1). */
  clickedPresentations?: ClickedPresentation[];
  header: SessionHeader | null;
  implicitSessions: ImplicitSession[];
  events: EventRow[];
  /** Turns and conversation data to strip to their sessions' stored privacy levels, which the write reads. */
  conversation?: PendingConversation | undefined;
}

/** Turn objects and conversation data whose stored fields depend on their sessions' stored privacy levels (pipeline.ts). */
export interface PendingConversation {
  /** Strips the plan's turns and data, given the declared level of each session of its organisation the write claimed, by name. */
  settle(levels: ReadonlyMap<string, PrivacyLevel | null>): void;
}

/** The described session's end precedes the start already stored for it (sql/015); nothing was stored. */
export class SessionEndsBeforeStartError extends Error {
  override name = "SessionEndsBeforeStartError";
}

type ClaimedImplicitSession = Omit<ImplicitSession, "declaredStart"> & { orgId: string; startedAt: Date | string };

/**
 * The implicit sessions of plans written together, one per organisation and name:
 * the earliest start, the first agent, manifest and parent given. A plan speaks
 * for a session only when it writes one of its events: a retry skips the events
 * stored already (RowsToWrite), and a skipped event takes no part in anything, so
 * the session it names is neither created nor given an agent or start through it.
 * Without a declared start, a plan's session starts at that plan's earliest
 * event written (`planStarts`, sessionStarts of each plan's written rows), as it
 * would were the plan written alone.
 */
function implicitSessionsOf(
  plans: readonly WritePlan[],
  planStarts: readonly (readonly SessionStart[])[],
): ClaimedImplicitSession[] {
  const byName = new Map<string, ClaimedImplicitSession & { startUs: number }>();
  plans.forEach((plan, i) => {
    const firstWritten = namedStarts(planStarts[i] ?? []);
    for (const { declaredStart, ...session } of plan.implicitSessions) {
      const key = `${plan.orgId}/${session.id.toLowerCase()}`;
      const written = firstWritten.get(key);
      if (!written) continue;
      const start = declaredStart
        ? { startedAt: declaredStart, startUs: declaredStart.getTime() * 1000 }
        : { startedAt: written.row.eventTime, startUs: written.timeUs };
      const known = byName.get(key);
      if (!known) {
        byName.set(key, { ...session, ...start, orgId: plan.orgId });
        continue;
      }
      known.agentId ??= session.agentId;
      known.manifestRef ??= session.manifestRef;
      known.parentSessionId ??= session.parentSessionId;
      if (start.startUs < known.startUs) Object.assign(known, start);
    }
  });
  // Sessions are claimed in name order so that concurrent writes naming the same
  // sessions wait on each other in one order and never deadlock.
  const name = (session: { id: string }) => session.id.toLowerCase();
  return [...byName.values()].sort((a, b) =>
    name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : a.orgId < b.orgId ? -1 : 1,
  );
}

/** Starts of sessions named by name (not a click token's id), by organisation and name. */
function namedStarts(starts: readonly SessionStart[]): Map<string, SessionStart> {
  const byName = new Map<string, SessionStart>();
  for (const start of starts) {
    if (!start.row.sessionFromToken) byName.set(`${start.row.orgId}/${start.row.sessionId?.toLowerCase()}`, start);
  }
  return byName;
}

/**
 * The id a new session named `name` by `orgId` takes (sql/067): its name, unless
 * another organisation's session has that id; then a random one, the name kept
 * in `wire_id`. A claim that finds the organisation's session by name keeps it.
 */
function newSessionIds(sql: Queryable, name: Fragment, orgId: Fragment) {
  return sql`CROSS JOIN LATERAL (
    SELECT CASE WHEN taken THEN gen_random_uuid() ELSE ${name} END AS id, CASE WHEN taken THEN ${name} END AS wire_id
    FROM (SELECT EXISTS (SELECT 1 FROM sessions o WHERE o.id = ${name} AND o.org_id <> ${orgId}) AS taken) t
  ) fresh`;
}

/**
 * A session row as a claim returns it: its organisation, name, id, agent and
 * declared privacy level, and whether the claim created it (xmax is 0 for a row
 * inserted, not updated). A claim never changes the level of a stored session
 * unless its document declares one (whose turns then take the declared level), so
 * the level returned is the stored one: null for a session that declared none.
 */
type ClaimedSession = [
  orgId: string,
  name: string,
  id: string,
  agentId: string | null,
  level: PrivacyLevel | null,
  created: boolean,
];

/** What a claim of sessions (aliased `s`) returns: the columns of ClaimedSession. */
const returningClaimed = (sql: Queryable) =>
  sql`RETURNING s.org_id, ${sessionName(sql, "s")} AS name, s.id, s.agent_id, s.privacy_level, s.xmax = 0 AS created`;

/**
 * Claims every session the plans name (creating unknown ones for their
 * organisation, sql/067) and stores their events counted, in one transaction of
 * three statements (event-store.ts): the claims and the sessions' bounds; the
 * claimed sessions' stored flag holders; the events with their first-event
 * flags. Returns, for each plan, the events it inserted (a retried event is
 * skipped; an event in two plans counts for the first).
 *
 * Several plans share a transaction only without a session header (GroupWriter).
 */
export async function writeIngest(
  sql: Sql,
  plans: readonly WritePlan[],
  flagUpdates: FlagUpdates,
  retried = false,
): Promise<number[]> {
  const header = plans.length === 1 ? (plans[0] as WritePlan).header : null;
  if (plans.length > 1 && plans.some((plan) => plan.header)) throw new Error("plans with a header are written alone");
  const events = plans.flatMap((plan) => plan.events);
  try {
    const inserted = await inWriteTransaction(sql, async (tx, storedEvents) => {
      const writing = await RowsToWrite.of(tx, events, storedEvents);
      const written = writing.rows.length === events.length ? null : new Set(writing.rows);
      const planStarts = plans.map((plan) =>
        sessionStarts(written ? plan.events.filter((row) => written.has(row)) : plan.events),
      );
      const starts = sessionStarts(planStarts.flat().map((start) => start.row));
      const claiming = implicitSessionsOf(plans, planStarts);
      const headerClaim = header
        ? tx`header_claim AS (${claimHeaderSession(tx, (plans[0] as WritePlan).orgId, header, headerStart(header, starts))}),`
        : tx``;
      const claims = tx<{ sessions: ClaimedSession[]; held_from: string | null }[]>`
        WITH ${headerClaim}
        claimed AS (
          INSERT INTO sessions AS s (id, wire_id, org_id, agent_id, started_at, manifest_ref, parent_session_id)
          SELECT fresh.id, fresh.wire_id, n.org_id, n.agent_id, n.started_at, n.manifest_ref, n.parent_session_id
          FROM unnest(
            ${claiming.map((s) => s.id)}::uuid[],
            ${claiming.map((s) => s.orgId)}::uuid[],
            ${claiming.map((s) => s.agentId)}::text[],
            ${claiming.map((s) => isoTime(s.startedAt))}::timestamptz[],
            ${claiming.map((s) => s.manifestRef)}::text[],
            ${claiming.map((s) => s.parentSessionId)}::uuid[]
          ) AS n (name, org_id, agent_id, started_at, manifest_ref, parent_session_id)
          ${newSessionIds(tx, tx`n.name`, tx`n.org_id`)}
          ON CONFLICT (org_id, (${sessionName(tx)})) DO UPDATE
            SET agent_id = coalesce(s.agent_id, EXCLUDED.agent_id),
                started_at = least(s.started_at, EXCLUDED.started_at)
          ${returningClaimed(tx)}
        ),
        owned AS (
          SELECT * FROM claimed ${header ? tx`UNION ALL SELECT * FROM header_claim` : tx``}
        ),
        bounds AS (${boundSessions(tx, starts, tx`owned`)})
        SELECT (SELECT coalesce(json_agg(json_build_array(org_id, name, id, agent_id, privacy_level, created)), '[]') FROM owned)
                 AS sessions,
               ${earliestBound(tx)} AS held_from`.execute();
      const clicks = recordClickedPresentations(
        tx,
        plans.flatMap((plan) => plan.clickedPresentations ?? []).filter((click) => writing.writes(click.row)),
      );
      // Sent behind the claims, in their round trip: named sessions mostly keep their name as id.
      const ahead = readHoldersAhead(tx, writing.rows, starts);
      const [[claimed]] = await Promise.all([claims, clicks]);
      if (header?.privacyLevel) await tightenHeaderSession(tx, plans[0] as WritePlan, claimed?.sessions ?? []);
      if (writing.rows.length === 0) return writing.noneInserted();
      settleConversation(plans, claimed?.sessions ?? []);
      const rows = withClaimedSessions(writing.rows, claimed?.sessions ?? []);
      const held = await holdersOf(tx, ahead, rows, claimed?.held_from ?? null);
      return writing.insertedOf(storeCounted(tx, rows, held, flagUpdates));
    });
    // The rows are the plans' events in order: each plan counts its own share.
    let offset = 0;
    return plans.map((plan) => {
      const created = inserted.slice(offset, offset + plan.events.length).filter(Boolean).length;
      offset += plan.events.length;
      return created;
    });
  } catch (error) {
    if (error instanceof postgres.PostgresError && error.constraint_name === "sessions_end_not_before_start") {
      throw new SessionEndsBeforeStartError(error.message);
    }
    // Two organisations created a session of one new name at once: written again,
    // the later one finds the id taken and gets a session of its own (sql/067).
    // Plans sharing a transaction are instead written alone by GroupWriter: in one
    // statement both would take the name again.
    if (
      !retried &&
      plans.length === 1 &&
      error instanceof postgres.PostgresError &&
      error.constraint_name === "sessions_pkey"
    ) {
      return writeIngest(sql, plans, flagUpdates, true);
    }
    throw error;
  }
}

/**
 * A described session's stored conversation, stripped to the level its document
 * declares. Whatever level was stored before: a document racing this one may have
 * stored looser text a moment ago, which the claim's lock has waited for and a new
 * statement now sees. A session this claim created holds nothing yet (whatever is
 * written after it meets the level it set), so it costs no statement.
 */
async function tightenHeaderSession(tx: Queryable, plan: WritePlan, claimed: readonly ClaimedSession[]): Promise<void> {
  const { id, privacyLevel } = plan.header as SessionHeader;
  const session = claimed.find(([orgId, name]) => orgId === plan.orgId && name === id.toLowerCase());
  if (session && !session[5] && privacyLevel) await tightenStoredConversation(tx, session[2], privacyLevel);
}

/**
 * Strips each plan's turns and conversation data to the levels of its organisation's sessions as the
 * claims returned them. Read there, by the statement that locks the sessions, the
 * levels need no lookup of their own, which a planner with stale statistics once
 * made a scan of all of an organisation's sessions (about 2 ms a session once it had
 * 8,000, bench:ingest).
 */
function settleConversation(plans: readonly WritePlan[], claimed: readonly ClaimedSession[]): void {
  for (const plan of plans) {
    if (!plan.conversation) continue;
    const own = claimed.filter(([orgId]) => orgId === plan.orgId).map(([, name, , , level]) => [name, level] as const);
    plan.conversation.settle(new Map(own));
  }
}

/**
 * The rows with the ids of the sessions they name (a session's name is its id
 * but for a reused name, sql/067); an event without an agent takes its
 * session's. Rows whose session came from a click token already hold its id.
 */
function withClaimedSessions(rows: readonly EventRow[], claimed: readonly ClaimedSession[]): EventRow[] {
  const byName = new Map(claimed.map(([orgId, name, id, agentId]) => [`${orgId}/${name}`, { id, agentId }]));
  return rows.map((row) => {
    if (row.sessionId === null || row.sessionFromToken) return row;
    const session = byName.get(`${row.orgId}/${row.sessionId.toLowerCase()}`);
    if (!session) return row;
    const agentId = row.agentId ?? session.agentId;
    // Most rows already hold their session's id and agent: no copy for those.
    return session.id === row.sessionId && agentId === row.agentId ? row : { ...row, sessionId: session.id, agentId };
  });
}

/**
 * A described session's start: the one it declares, else its earliest event
 * written (an event a retry skips gives it none); null when it writes none.
 */
function headerStart(header: SessionHeader, starts: readonly SessionStart[]): Date | string | null {
  if (header.startedAt) return header.startedAt;
  for (const start of starts) {
    if (!start.row.sessionFromToken && start.row.sessionId?.toLowerCase() === header.id.toLowerCase()) {
      return start.row.eventTime;
    }
  }
  return null;
}

/**
 * Upserts an explicitly described session: given fields win, absent ones keep what
 * is stored; an earlier start moves the start. A new session without a start
 * starts now, or at its end when that is earlier. `parent_session_id` and
 * `prior_session_ids` are names in the organisation's own namespace (sql/067),
 * stored as given: they can name nothing of another organisation.
 */
function claimHeaderSession(sql: Queryable, orgId: string, header: SessionHeader, startedAt: Date | string | null) {
  const outcome = header.outcome;
  return sql`
    INSERT INTO sessions AS s (
      id, wire_id, org_id, initiator_type, agent_id, manifest_ref, content_scope, external_session_id, parent_session_id,
      prior_session_ids, privacy_level, started_at, ended_at, outcome_type, outcome_value_amount, outcome_currency
    )
    SELECT
      fresh.id, fresh.wire_id, n.org_id, coalesce(${header.initiatorType}::text, 'user'), ${header.agentId},
      ${header.manifestRef}, ${header.contentScope}, ${header.externalSessionId}, ${header.parentSessionId}::uuid,
      coalesce(${header.priorSessionIds}::uuid[], '{}'), ${header.privacyLevel}::text,
      coalesce(${isoTime(startedAt)}::timestamptz, least(now(), ${isoTime(header.endedAt)}::timestamptz)),
      ${isoTime(header.endedAt)}::timestamptz,
      ${outcome?.type ?? null}, ${outcome?.value_amount ?? null}::bigint, ${outcome?.currency ?? null}
    FROM (SELECT ${header.id}::uuid AS name, ${orgId}::uuid AS org_id) n
    ${newSessionIds(sql, sql`n.name`, sql`n.org_id`)}
    ON CONFLICT (org_id, (${sessionName(sql)})) DO UPDATE SET
      initiator_type = coalesce(${header.initiatorType}::text, s.initiator_type),
      agent_id = coalesce(EXCLUDED.agent_id, s.agent_id),
      manifest_ref = coalesce(EXCLUDED.manifest_ref, s.manifest_ref),
      content_scope = coalesce(EXCLUDED.content_scope, s.content_scope),
      external_session_id = coalesce(EXCLUDED.external_session_id, s.external_session_id),
      parent_session_id = coalesce(EXCLUDED.parent_session_id, s.parent_session_id),
      prior_session_ids = coalesce(${header.priorSessionIds}::uuid[], s.prior_session_ids),
      privacy_level = coalesce(${header.privacyLevel}::text, s.privacy_level),
      started_at = least(s.started_at, ${isoTime(startedAt)}::timestamptz),
      ended_at = coalesce(EXCLUDED.ended_at, s.ended_at),
      outcome_type = coalesce(EXCLUDED.outcome_type, s.outcome_type),
      outcome_value_amount = CASE WHEN EXCLUDED.outcome_type IS NULL THEN s.outcome_value_amount ELSE EXCLUDED.outcome_value_amount END,
      outcome_currency = CASE WHEN EXCLUDED.outcome_type IS NULL THEN s.outcome_currency ELSE EXCLUDED.outcome_currency END
    ${returningClaimed(sql)}`;
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
    WHERE ${sessionsNamed(sql, orgId, [sessionId])}
    RETURNING ended_at`;
  return row;
}

export { flagUpdatesOn, recountSessions } from "./event-store.ts";
export { sessionName, sessionsNamed } from "./session-names.ts";
