import { TypeCompiler } from "@sinclair/typebox/compiler";
import type { Static } from "elysia";
import { overLongArrays } from "../../core/array-bounds.ts";
import { ingestLimits } from "../../core/ingest-limits.ts";
import type { PrivacyLevel } from "../../core/privacy.ts";
import type { FieldError } from "../../core/problem.ts";
import { describeErrors } from "../../core/schema-errors.ts";
import { unsafeJsonValues } from "../../core/storable-json.ts";
import { manifestRefProblem, parseTimestamp, type TimeWindow } from "../../core/wire-values.ts";
import type { EventInput } from "./event-rules.ts";
import {
  documentEnvelopes,
  type Outcome,
  type SessionBulkRequest,
  type SessionDocument,
  type SessionStartRequest,
} from "./model.ts";

/** An explicitly described session: a session document or a bulk upload. */
export interface SessionHeader {
  id: string;
  initiatorType: "user" | "agent" | null;
  agentId: string | null;
  manifestRef: string | null;
  contentScope: string | null;
  externalSessionId: string | null;
  priorSessionIds: string[] | null;
  privacyLevel: PrivacyLevel | null;
  parentSessionId: string | null;
  startedAt: Date | null;
  endedAt: Date | null;
  outcome: Static<typeof Outcome> | null;
}

/** Envelope fields that apply to every event of the document (standard 7.1). */
export interface Envelope {
  sessionId?: string | undefined;
  ctxToken?: string | undefined;
  agentId?: string | undefined;
  startedAt?: Date | undefined;
  manifestRef?: string | undefined;
  parentSessionId?: string | undefined;
}

/** Any accepted delivery format, reduced to one shape. */
export interface IngestDocument {
  envelope: Envelope;
  events: EventInput[];
  eventPath: (index: number) => string;
  session: SessionHeader | null;
  /** A session document (standard 5.7.5 cross-references apply), not a bulk upload or batch. */
  sessionDocument: boolean;
}

export interface ReadResult {
  document: IngestDocument | null;
  /** Failures of the document itself or of single events' structure. */
  errors: FieldError[];
  /** Indexes of events that failed structurally (their other rules are not checked). */
  invalidEvents: Set<number>;
}

/** The envelopes only: each event is checked against its own type's schema afterwards (event-rules.ts). */
const checkers = {
  event_batch: TypeCompiler.Compile(documentEnvelopes.event_batch),
  event: TypeCompiler.Compile(documentEnvelopes.event),
  session: TypeCompiler.Compile(documentEnvelopes.session),
  bulk: TypeCompiler.Compile(documentEnvelopes.bulk),
};
type Kind = keyof typeof checkers;

/**
 * Reads a POST /events body (`format` events) or a POST /sessions/bulk body
 * (`format` bulk): JSON safety, the TypeBox model of its document type, and the
 * envelope rules. Event-level rules are applied by the caller to the events
 * that passed here.
 */
export function readDocument(body: unknown, format: "events" | "bulk", window: TimeWindow): ReadResult {
  const refuse = (errors: FieldError[]): ReadResult => ({ document: null, errors, invalidEvents: new Set() });
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    return refuse([{ path: "/", message: "must be a JSON object" }]);
  }
  const unsafe = unsafeJsonValues(body, ingestLimits.maxJsonDepth);
  if (unsafe.length > 0) return refuse(unsafe);

  const record = body as Record<string, unknown>;
  const kind = format === "bulk" ? "bulk" : documentKind(record.document_type);
  if (!kind) {
    return refuse([{ path: "/document_type", message: "must be event_batch, event or session (absent: session)" }]);
  }
  // Over-long arrays first: reporting them through TypeBox would visit every item.
  const overLong = overLongArrays(documentEnvelopes[kind], body);
  if (overLong.length > 0) return refuse(overLong);
  const checker = checkers[kind];
  const errors = checker.Check(body) ? [] : describeErrors(checker.Errors(body));
  const eventPath = kind === "event" ? () => "/event" : (index: number) => `/events/${index}`;
  const invalidEvents = new Set<number>();
  const envelopeErrors: FieldError[] = [];
  for (const error of errors) {
    const index = kind === "event" ? (error.path.startsWith("/event/") ? 0 : -1) : eventIndexOf(error.path);
    if (index >= 0) invalidEvents.add(index);
    else envelopeErrors.push(error);
  }
  if (envelopeErrors.length > 0) return { document: null, errors, invalidEvents };

  const raw = body as Static<typeof SessionDocument> & Static<typeof SessionBulkRequest> & { event?: EventInput };
  const envelopeRules = envelopeProblems(raw, window);
  if (envelopeRules.errors.length > 0)
    return { document: null, errors: [...envelopeRules.errors, ...errors], invalidEvents };

  const explicitSession = kind === "session" || kind === "bulk";
  const sessionId = raw.session_id ?? (explicitSession ? crypto.randomUUID() : undefined);
  const envelope: Envelope = {
    sessionId,
    ctxToken: raw.ctx_token,
    agentId: raw.agent_id ?? undefined,
    startedAt: envelopeRules.startedAt,
    manifestRef: raw.manifest_ref ?? undefined,
    parentSessionId: raw.parent_session_id,
  };
  const session =
    explicitSession && sessionId
      ? sessionHeader(sessionId, raw, {
          startedAt: envelopeRules.startedAt ?? null,
          endedAt: envelopeRules.endedAt ?? null,
          outcome: raw.outcome ?? null,
        })
      : null;
  // A session document may describe its session without events (standard 5.1: `events` is optional).
  const events = kind === "event" ? [raw.event as EventInput] : ((raw.events ?? []) as EventInput[]);
  return {
    document: { envelope, events, eventPath, session, sessionDocument: kind === "session" },
    errors,
    invalidEvents,
  };
}

/** A session described by its start fields (POST /sessions/start, session documents, bulk uploads). */
export function sessionHeader(
  id: string,
  fields: Static<typeof SessionStartRequest>,
  extra: Pick<SessionHeader, "startedAt" | "endedAt" | "outcome"> = { startedAt: null, endedAt: null, outcome: null },
): SessionHeader {
  return {
    id,
    initiatorType: fields.initiator_type ?? null,
    agentId: fields.agent_id ?? null,
    manifestRef: fields.manifest_ref ?? null,
    contentScope: fields.content_scope ?? null,
    externalSessionId: fields.external_session_id ?? null,
    priorSessionIds: fields.prior_session_ids ?? null,
    privacyLevel: fields.privacy_level ?? null,
    parentSessionId: fields.parent_session_id ?? null,
    ...extra,
  };
}

function documentKind(documentType: unknown): Kind | undefined {
  if (documentType === undefined || documentType === "session") return "session";
  if (documentType === "event_batch" || documentType === "event") return documentType;
  return undefined;
}

function eventIndexOf(path: string): number {
  const match = /^\/events\/(\d+)(\/|$)/.exec(path);
  return match ? Number(match[1]) : -1;
}

interface EnvelopeRuleResult {
  errors: FieldError[];
  startedAt?: Date;
  endedAt?: Date;
}

/** Rules on document-level fields that a schema cannot express. */
function envelopeProblems(
  raw: {
    started_at?: string | undefined;
    ended_at?: string | null | undefined;
    manifest_ref?: string | null | undefined;
    outcome?: Static<typeof Outcome> | undefined;
  },
  window: TimeWindow,
): EnvelopeRuleResult {
  const result: EnvelopeRuleResult = { errors: [] };
  const fail = (path: string, message: string) => result.errors.push({ path, message });
  for (const field of ["started_at", "ended_at"] as const) {
    const text = raw[field];
    if (text === undefined || text === null) continue;
    const parsed = parseTimestamp(text, window);
    if ("reason" in parsed) fail(`/${field}`, parsed.reason);
    else result[field === "started_at" ? "startedAt" : "endedAt"] = new Date(parsed.ms);
  }
  if (result.startedAt && result.endedAt && result.endedAt < result.startedAt) {
    fail("/ended_at", "is before started_at");
  }
  if (raw.manifest_ref !== undefined && raw.manifest_ref !== null) {
    const problem = manifestRefProblem(raw.manifest_ref);
    if (problem) fail("/manifest_ref", problem);
  }
  const outcomeProblem = raw.outcome ? outcomeValueProblem(raw.outcome) : undefined;
  if (outcomeProblem) fail("/outcome", outcomeProblem);
  return result;
}

/** A value needs its currency and a currency needs its value. */
export function outcomeValueProblem(outcome: Static<typeof Outcome>): string | undefined {
  if ((outcome.value_amount === undefined) !== (outcome.currency === undefined)) {
    return "value_amount and currency go together";
  }
  return undefined;
}
