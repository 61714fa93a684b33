import type { Principal } from "../../core/caller.ts";
import { isWithinDomain, siteOf } from "../../core/hosts.ts";
import { ingestLimits } from "../../core/ingest-limits.ts";
import { holdsConversationFields, type PrivacyLevel, stripConversationData, stripTurn } from "../../core/privacy.ts";
import { type FieldError, invalid, problem } from "../../core/problem.ts";
import { hashPresentedSecret } from "../../core/secrets.ts";
import type { SignatureStatus } from "../../core/signature-status.ts";
import type { TimeWindow } from "../../core/wire-values.ts";
import { httpUrlHost } from "../../core/wire-values.ts";
import type { Sql } from "../../db/sql.ts";
import { type ClickTokenSession, clickTokenPrefix, resolveClickTokens } from "../click-tokens/service.ts";
import type { ClickedPresentation } from "./clicked-presentations.ts";
import { type Envelope, type IngestDocument, readDocument } from "./documents.ts";
import type { EventRow } from "./event-columns.ts";
import { type CheckedEvent, checkEvent, type StrippedField } from "./event-rules.ts";
import type { GroupWriter } from "./group-writer.ts";
import { type ImplicitSession, type PendingConversation, SessionEndsBeforeStartError } from "./service.ts";
import { sessionDocumentErrors } from "./session-integrity.ts";

export interface IngestResult {
  sessionId: string | null;
  eventsCreated: number;
  outcomeRecorded: boolean;
  /** Fields removed before storing (the standard's "strip, don't refuse"); empty when none. */
  stripped: StrippedField[];
}

/** The event-age window's limits (config: EVENT_MAX_AGE_DAYS, EVENT_MAX_FUTURE_SECONDS). */
export type AgeLimits = Omit<TimeWindow, "nowMs">;

/** Collects field errors of a request and the event indexes they concern. */
class Refusal {
  readonly errors: FieldError[] = [];
  readonly events = new Set<number>();

  add(errors: FieldError[], index?: number) {
    this.errors.push(...errors);
    if (index !== undefined && errors.length > 0) this.events.add(index);
  }

  /**
   * `eventCount` undefined: the document itself failed, whatever its events did.
   * One error per field (the first cause found), at most maxReportedErrors of them.
   */
  throwIfAny(eventCount?: number): void {
    if (this.errors.length === 0) return;
    const invalidEvents = [...this.events].sort((a, b) => a - b);
    const seen = new Set<string>();
    const errors = this.errors.filter((error) => !seen.has(error.path) && seen.add(error.path));
    // Document-level failures first, then event by event (stable within an event).
    const eventOf = (error: FieldError) => Number(/^\/events?\/(\d+)/.exec(error.path)?.[1] ?? -1);
    errors.sort((a, b) => eventOf(a) - eventOf(b));
    const detail =
      eventCount !== undefined && invalidEvents.length > 0
        ? `${invalidEvents.length} of ${eventCount} ${eventCount === 1 ? "event is" : "events are"} invalid; nothing was stored`
        : "the document is invalid; nothing was stored";
    const cap = ingestLimits.maxReportedErrors;
    const truncated = errors.length > cap ? { errors_truncated: true, error_count: errors.length } : {};
    throw invalid(detail, errors.slice(0, cap), "validation_failed", { invalid_events: invalidEvents, ...truncated });
  }
}

/**
 * POST /events and POST /sessions/bulk: reads the document, applies every rule,
 * and stores it whole or not at all. Database work: one click-token lookup when
 * tokens are present, then the write of sessions and events with their
 * first-event flags (which also reads the sessions' stored privacy levels for
 * turn objects), in a transaction it may share with
 * requests arriving at the same time (group-writer.ts).
 */
export async function ingestDocument(
  writer: Pick<GroupWriter, "sql" | "write">,
  principal: Principal,
  body: unknown,
  format: "events" | "bulk",
  ageLimits: AgeLimits,
  /** The request's signature, checked against the reporter's manifest; stored on every event. */
  signatureStatus: SignatureStatus = "unverified",
): Promise<IngestResult> {
  const { sql } = writer;
  const window = { nowMs: Date.now(), ...ageLimits };
  const refusal = new Refusal();
  const read = readDocument(body, format, window);
  for (const index of read.invalidEvents) refusal.events.add(index);
  refusal.add(read.errors);
  if (!read.document) refusal.throwIfAny();
  const document = read.document as IngestDocument;
  if (principal.orgType === "content_owner") enforceOwnerDomains(document, principal);

  const scope = {
    sessionId: document.envelope.sessionId,
    ctxToken: document.envelope.ctxToken,
    sessionDocument: document.sessionDocument,
    window,
  };
  const checked: CheckedEvent[] = [];
  const stripped: StrippedField[] = [];
  const sentIds = new Set<string>();
  document.events.forEach((raw, index) => {
    if (read.invalidEvents.has(index)) return;
    const result = checkEvent(raw, index, document.eventPath(index), scope);
    if ("errors" in result) {
      refusal.add(result.errors, index);
      return;
    }
    stripped.push(...result.stripped);
    // An id repeated in a batch is one event, stored once (a session document refuses it below).
    const id = result.event.sentId?.toLowerCase();
    if (id !== undefined && sentIds.has(id) && !document.sessionDocument) return;
    if (id !== undefined) sentIds.add(id);
    checked.push(result.event);
  });
  if (document.sessionDocument) {
    for (const error of sessionDocumentErrors(document.events, document.eventPath)) {
      refusal.add([error], Number(/^\/events\/(\d+)/.exec(error.path)?.[1]));
    }
  }

  const rows = await resolveSessions(sql, principal.orgId, document.envelope, checked, signatureStatus, refusal);
  const header = document.session;
  // Without started_at a described session starts at its first event, which its end may not precede.
  const firstEvent = header && !header.startedAt ? earliest(checked) : null;
  if (header?.endedAt && firstEvent && header.endedAt < firstEvent) {
    refusal.add([
      { path: "/ended_at", message: "is before the session's first event (its start, as started_at is absent)" },
    ]);
  }
  refusal.throwIfAny(document.events.length);

  const settling = conversationToSettle(checked, rows, header?.privacyLevel ?? null);
  const plan = {
    orgId: principal.orgId,
    clickedPresentations: clickedPresentations(checked, rows),
    header,
    implicitSessions: implicitSessions(document, checked),
    events: rows,
    conversation: settling.conversation,
  };
  try {
    const eventsCreated = await writer.write(plan);
    stripped.push(...settling.stripped);
    return { sessionId: header?.id ?? null, eventsCreated, outcomeRecorded: header?.outcome != null, stripped };
  } catch (error) {
    if (error instanceof SessionEndsBeforeStartError) {
      refusal.add([{ path: "/ended_at", message: "is before the start already stored for this session" }]);
      refusal.throwIfAny(document.events.length);
    }
    throw error;
  }
}

/**
 * Turn fields are kept only as far as both the turn's own level and its session's
 * allow; the same conversation-derived fields sent as keys of an event's `data`,
 * which have no level of their own, as far as the session's allows. A document
 * that describes its session declares that level (and stores it); otherwise the
 * session's stored level applies. A session that declared none leaves its turns
 * to their own levels and strips data to `minimal`, as it does for an event bound
 * by a click token (fail closed). The stored levels come back from the statement of the write that
 * claims the sessions (service.ts): no query of their own. `settle` strips the
 * rows' turns and data from those as sent (a retried write strips afresh) and
 * lists each stripped field (standard 5.7.5: strip, and say so). `checked` and
 * `rows` are one event each.
 */
function conversationToSettle(
  checked: readonly CheckedEvent[],
  rows: readonly EventRow[],
  declared: PrivacyLevel | null,
): { conversation: PendingConversation | undefined; stripped: StrippedField[] } {
  const bound = checked.flatMap((event, i) => {
    const inData = holdsConversationFields(event.data);
    return event.turn || inData ? [{ event, row: rows[i] as EventRow, inData }] : [];
  });
  const stripped: StrippedField[] = [];
  if (bound.length === 0) return { conversation: undefined, stripped };
  const nameOf = (event: CheckedEvent) => event.sessionId?.toLowerCase();
  const settle = (levels: ReadonlyMap<string, PrivacyLevel | null>) => {
    stripped.length = 0;
    for (const { event, row, inData } of bound) {
      const name = nameOf(event);
      const sessionLevel = declared ?? (name ? levels.get(name) : undefined) ?? null;
      const strip = (field: string, level: PrivacyLevel) =>
        stripped.push({
          path: `${event.path}/${field}`,
          reason: `not allowed at privacy level ${level} (section 5.5)`,
        });
      if (event.turn) {
        const result = stripTurn(event.turn, sessionLevel);
        row.turn = result.turn;
        for (const field of result.removed) strip(`turn/${field}`, result.level);
      }
      // Only data that holds such fields is copied: the turns of a batch leave theirs as sent.
      if (inData) {
        const dataLevel = sessionLevel ?? "minimal";
        const data = stripConversationData(event.data, dataLevel);
        row.data = data.data;
        for (const field of data.removed) strip(`data/${field}`, dataLevel);
      }
    }
  };
  return { conversation: { settle }, stripped };
}

/** A content-owner key reports only events whose content_url lies on its verified domains: 403 otherwise. */
function enforceOwnerDomains(document: IngestDocument, principal: Principal): void {
  const offending: number[] = [];
  document.events.forEach((raw, index) => {
    const url = (raw as { content_url?: unknown } | null)?.content_url;
    const host = typeof url === "string" ? httpUrlHost(url) : undefined;
    const onOwnDomain =
      host !== undefined &&
      "host" in host &&
      principal.verifiedDomains.some((domain) => isWithinDomain(host.host, domain));
    if (!onOwnDomain) offending.push(index);
  });
  if (offending.length === 0) return;
  const which = offending.length === 1 ? `event ${offending[0]} does not` : `events ${offending.join(", ")} do not`;
  throw problem(
    "outside_verified_domains",
    `a content-owner key may report only events whose content_url lies on its verified domains; ${which}`,
    { offending_events: offending, verified_domains: principal.verifiedDomains },
  );
}

/**
 * Resolves click tokens (one query) and turns checked events into rows; token
 * failures join the refusal. Every format goes through here, session documents
 * included, so a token is checked, and binds its presentation (7.4.1), alike
 * wherever it is sent. An event's agent is the envelope's `agent_id` (standard
 * 7.1: envelope fields apply to every event), else its session's (service.ts); a
 * click reported with a token in place of a session id is always the token's
 * session's.
 */
async function resolveSessions(
  sql: Sql,
  orgId: string,
  envelope: Envelope,
  checked: CheckedEvent[],
  signatureStatus: SignatureStatus,
  refusal: Refusal,
): Promise<EventRow[]> {
  const tokens = [...new Set(checked.flatMap((event) => (event.ctxToken ? [event.ctxToken] : [])))];
  const sessions = tokens.length > 0 ? await resolveClickTokens(sql, tokens) : new Map();
  const rows: EventRow[] = [];
  for (const event of checked) {
    let sessionId = event.sessionId;
    let agentId = envelope.agentId ?? null;
    let fromToken = false;
    if (event.ctxToken) {
      const token = sessions.get(event.ctxToken);
      if (!token) {
        refusal.add([{ path: `${event.path}/ctx_token`, message: "unknown or expired click token" }], event.index);
        continue;
      }
      const mismatch = clickTokenMismatch(event, token, orgId);
      if (mismatch) {
        refusal.add([mismatch], event.index);
        continue;
      }
      // An event that names its session (the caller's own, as the token's issuer) takes the
      // envelope's agent like any other; a click reported in place of a session id, the session's.
      agentId = event.sessionId ? (agentId ?? token.agentId) : token.agentId;
      sessionId = token.sessionId;
      fromToken = true;
    }
    rows.push({
      eventTime: event.eventTime,
      eventId: event.eventId,
      orgId,
      eventType: event.type,
      sourceRole: event.sourceRole,
      contentUrl: event.contentUrl,
      contentHost: event.contentHost,
      agentId,
      sessionId,
      sessionFromToken: fromToken,
      contentId: event.contentId,
      contentTelemetryId: event.contentTelemetryId,
      turnId: event.turnId,
      outputId: event.outputId,
      presentationId: event.presentationId,
      signatureStatus,
      data: event.data,
      turn: event.turn,
    });
  }
  return rows;
}

/**
 * Why an event of `orgId` cannot be reported with a live click token, when it
 * cannot. A session_id it also names is a name among the caller's own sessions
 * (sql/067), so it matches only when the caller issued the token for the session
 * of that name: anyone else is refused alike whatever id it sends, and cannot
 * learn the issuer's session id (standard 7.1: the token keeps the session UUID
 * from crossing the trust boundary). An engagement reported with a token is the
 * click on the link the token was issued for (standard 7.1: a corroborating
 * engagement): its content_url lies on that link's site, which a redirect within
 * the site keeps (7.2's same-domain redirects), so that no holder of a token can
 * credit the click to another site's owner. A purchase (checkout_completed) may
 * complete on another site than the one clicked, and an engagement known by
 * content_id alone is counted for no owner: neither is compared.
 */
function clickTokenMismatch(event: CheckedEvent, token: ClickTokenSession, orgId: string): FieldError | undefined {
  if (event.sessionId && (token.orgId !== orgId || event.sessionId.toLowerCase() !== token.sessionName)) {
    return { path: `${event.path}/ctx_token`, message: "belongs to a different session than session_id" };
  }
  const offSite =
    event.type === "content_engaged" &&
    event.contentHost !== null &&
    (token.linkHost === null || siteOf(event.contentHost) !== siteOf(token.linkHost));
  if (offSite) {
    return {
      path: `${event.path}/content_url`,
      message:
        "is on another site than the link the ctx_token was issued for; an engagement reported with a click token is the click on that link (section 7.1)",
    };
  }
  return undefined;
}

/**
 * Sessions the caller names by session_id (not through a click token, whose
 * session belongs to the token's issuer), other than the document's own session.
 */
function implicitSessions(document: IngestDocument, checked: CheckedEvent[]): ImplicitSession[] {
  const { envelope, session } = document;
  const byId = new Map<string, ImplicitSession>();
  for (const event of checked) {
    if (!event.sessionId || event.ctxToken || event.sessionId.toLowerCase() === session?.id.toLowerCase()) continue;
    if (byId.has(event.sessionId)) continue;
    byId.set(event.sessionId, {
      id: event.sessionId,
      agentId: envelope.agentId ?? null,
      declaredStart: envelope.startedAt ?? null,
      manifestRef: envelope.manifestRef ?? null,
      parentSessionId: envelope.parentSessionId ?? null,
    });
  }
  return [...byId.values()];
}

/**
 * Engagements that carry a click token and name the presentation they acted on
 * (standard 7.4.1). `checked` and `rows` are one event each.
 */
function clickedPresentations(checked: readonly CheckedEvent[], rows: readonly EventRow[]): ClickedPresentation[] {
  return checked.flatMap((event, i) => {
    const tokenHash = event.presentationId ? hashPresentedSecret(event.ctxToken, clickTokenPrefix) : null;
    return tokenHash ? [{ tokenHash, presentationId: event.presentationId as string, row: rows[i] as EventRow }] : [];
  });
}

function earliest(events: CheckedEvent[]): Date | null {
  let first: Date | null = null;
  for (const event of events) if (!first || event.eventTime < first) first = event.eventTime;
  return first;
}
