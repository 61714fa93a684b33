import type { Static } from "elysia";
import { ingestLimits } from "../../core/ingest-limits.ts";
import type { FieldError } from "../../core/problem.ts";
import { escapePointer } from "../../core/storable-json.ts";
import { httpUrlHost, parseTimestamp } from "../../core/wire-values.ts";
import { type Event, type EventType, eventTypes, type SourceRole, sourceRoles } from "./model.ts";

export type EventInput = Static<typeof Event>;

/** Who may report each type (the interface's type × source_role table). */
const allowedRoles: Record<EventType, readonly SourceRole[]> = {
  content_retrieved: sourceRoles,
  content_grounded: ["agent"],
  content_cited: ["agent"],
  content_presented: ["agent"],
  content_engaged: ["agent"],
  turn_started: ["agent"],
  turn_completed: ["agent"],
  checkout_completed: ["index", "agent"],
};

const contentEvents: ReadonlySet<EventType> = new Set([
  "content_retrieved",
  "content_grounded",
  "content_cited",
  "content_presented",
  "content_engaged",
]);
const turnEvents: ReadonlySet<EventType> = new Set(["turn_started", "turn_completed"]);
/** Events a click token may stand in for a session on (rules 4 and 5). */
const clickBoundEvents: ReadonlySet<EventType> = new Set(["content_engaged", "checkout_completed"]);
/** Retrieval-level roles, which may correlate by content_telemetry_id alone (rule 3). */
const retrievalRoles: ReadonlySet<SourceRole> = new Set(["origin", "edge", "index"]);

const citationTypes = new Set(["direct_quote", "paraphrase", "reference", "contradiction", "unclassified"]);
const positions = new Set(["primary", "supporting", "mentioned", "unclassified"]);
const groundingScopes = new Set(["session", "turn"]);
const presentationKinds = new Set(["content", "source_reference"]);

/** What a document contributes to each of its events. */
export interface EventScope {
  /** Top-level session_id (envelope, session document or bulk upload). */
  sessionId?: string | undefined;
  ctxToken?: string | undefined;
  nowMs: number;
}

/** An event that passed every rule that needs no database, normalised as it will be stored. */
export interface CheckedEvent {
  index: number;
  path: string;
  eventId: string;
  eventTime: Date;
  type: EventType;
  sourceRole: SourceRole;
  contentUrl: string | null;
  contentHost: string | null;
  contentId: string | null;
  contentTelemetryId: string | null;
  turnId: string | null;
  outputId: string | null;
  presentationId: string | null;
  sessionId: string | null;
  ctxToken: string | null;
  data: Record<string, unknown>;
  turn: Record<string, unknown> | null;
}

const isBlank = (value: unknown) => value === undefined || value === null || value === "";

/**
 * Applies the v1 rules to one structurally valid event: type and source role,
 * the structural rules, session correlation, value-set normalisation, ip_hash
 * Returns every failure, not only the first.
 */
export function checkEvent(
  raw: EventInput,
  index: number,
  path: string,
  scope: EventScope,
): { event: CheckedEvent } | { errors: FieldError[] } {
  const errors: FieldError[] = [];
  const fail = (field: string, message: string) => errors.push({ path: `${path}/${field}`, message });

  const type = checkType(raw.type, fail);
  const sourceRole = type ? checkSourceRole(type, raw.source_role, fail) : undefined;

  let eventTime: Date | undefined;
  const time = parseTimestamp(raw.timestamp, scope.nowMs);
  if ("reason" in time) fail("timestamp", time.reason);
  else eventTime = new Date(time.ms);

  let contentHost: string | null = null;
  if (raw.content_url !== undefined) {
    const host = httpUrlHost(raw.content_url);
    if ("reason" in host) fail("content_url", host.reason);
    else contentHost = host.host;
  }

  if (raw.session_id && scope.sessionId && raw.session_id !== scope.sessionId) {
    fail("session_id", "differs from the document's session_id; send events of different sessions in separate batches");
  }
  const sessionId = raw.session_id ?? scope.sessionId ?? null;
  const ctxToken = raw.ctx_token ?? scope.ctxToken ?? null;

  const data: Record<string, unknown> = { ...raw.data };
  delete data.ip_hash; // personal data: never stored

  if (type) {
    if (contentEvents.has(type) && isBlank(raw.content_url) && isBlank(raw.content_id)) {
      fail("content_url", `${type} needs content_url or content_id`);
    }
    if (type === "content_cited" || type === "content_presented") {
      if (raw.id === undefined) fail("id", `${type} needs an event id`);
      if (raw.output_id === undefined) fail("output_id", `${type} needs output_id`);
    }
    if (ctxToken !== null && !clickBoundEvents.has(type)) {
      fail("ctx_token", "a click token is accepted only on content_engaged and checkout_completed events");
    }
    if (type === "content_engaged" && raw.presentation_id === undefined && ctxToken === null) {
      fail("presentation_id", "content_engaged needs presentation_id unless it carries a ctx_token");
    }
    const retrievalLevel = type === "content_retrieved" && sourceRole !== undefined && retrievalRoles.has(sourceRole);
    if (sessionId === null && ctxToken === null && !retrievalLevel) {
      fail(
        "session_id",
        "the event needs session_id or ctx_token (only origin, edge and index retrievals may omit both)",
      );
    }
    normaliseData(type, data, (key, message) => fail(`data/${escapePointer(key)}`, message));
  }

  const dataBytes = Buffer.byteLength(JSON.stringify(data));
  if (dataBytes > ingestLimits.maxDataBytes)
    fail("data", `is ${dataBytes} bytes; at most ${ingestLimits.maxDataBytes}`);

  if (errors.length > 0 || !type || !sourceRole || !eventTime) return { errors };
  return {
    event: {
      index,
      path,
      eventId: raw.id ?? crypto.randomUUID(),
      eventTime,
      type,
      sourceRole,
      contentUrl: raw.content_url ?? null,
      contentHost,
      contentId: raw.content_id ?? null,
      contentTelemetryId: raw.content_telemetry_id ?? null,
      turnId: raw.turn_id ?? null,
      outputId: raw.output_id ?? null,
      presentationId: raw.presentation_id ?? null,
      sessionId,
      ctxToken,
      data,
      // Turn fields belong to turn events only; elsewhere they are not stored at all.
      // They are stripped to the session's privacy level once sessions are known (pipeline.ts).
      turn: turnEvents.has(type) && raw.turn ? raw.turn : null,
    },
  };
}

function checkType(type: string, fail: (field: string, message: string) => void): EventType | undefined {
  if ((eventTypes as readonly string[]).includes(type)) return type as EventType;
  if (type === "content_displayed") {
    fail("type", "content_displayed was withdrawn in Content Telemetry v1; report it as content_presented");
  } else {
    fail("type", `unknown event type; expected one of ${eventTypes.join(", ")}`);
  }
  return undefined;
}

function checkSourceRole(
  type: EventType,
  role: string | undefined,
  fail: (field: string, message: string) => void,
): SourceRole | undefined {
  const allowed = allowedRoles[type];
  if (role === undefined) {
    if (allowed.length === 1) return allowed[0];
    fail("source_role", `${type} needs source_role (${allowed.join(", ")})`);
    return undefined;
  }
  if (!(sourceRoles as readonly string[]).includes(role)) {
    fail("source_role", `must be one of ${sourceRoles.join(", ")}`);
    return undefined;
  }
  if (!allowed.includes(role as SourceRole)) {
    fail("source_role", `${type} may only be reported with source_role ${allowed.join(" or ")}`);
    return undefined;
  }
  return role as SourceRole;
}

/** The per-type data rules: required keys, closed value sets normalised in place. */
function normaliseData(
  type: EventType,
  data: Record<string, unknown>,
  fail: (key: string, message: string) => void,
): void {
  switch (type) {
    case "content_cited":
      if (isBlank(data.citation_type)) fail("citation_type", "content_cited needs data.citation_type");
      else if (!citationTypes.has(data.citation_type as string)) data.citation_type = "unclassified";
      if (data.position !== undefined && !positions.has(data.position as string)) data.position = "unclassified";
      break;
    case "content_presented":
      if (!presentationKinds.has(data.presentation_kind as string)) {
        fail("presentation_kind", "content_presented needs data.presentation_kind content or source_reference");
      }
      if (typeof data.presentation_type !== "string" || data.presentation_type === "") {
        fail("presentation_type", "content_presented needs a non-empty data.presentation_type");
      }
      break;
    case "content_grounded":
      if (isBlank(data.scope)) fail("scope", "content_grounded needs data.scope");
      else if (!groundingScopes.has(data.scope as string)) delete data.scope;
      break;
    case "checkout_completed":
      if (!Number.isSafeInteger(data.value_amount) || (data.value_amount as number) < 0) {
        fail("value_amount", "checkout_completed needs data.value_amount, a non-negative integer in minor units");
      }
      if (typeof data.currency !== "string" || !/^[A-Z]{3}$/.test(data.currency)) {
        fail("currency", "checkout_completed needs data.currency, an ISO 4217 code such as USD");
      }
      break;
    default:
      break;
  }
}
