import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";
import type { Static, TSchema } from "elysia";
import { ingestLimits } from "../../core/ingest-limits.ts";
import type { FieldError } from "../../core/problem.ts";
import { describeErrors } from "../../core/schema-errors.ts";
import { httpUrlHost, parseTimestamp, type TimeWindow } from "../../core/wire-values.ts";
import { Event, type EventType, eventSchemas, eventTypes, type SourceRole, sourceRoles } from "./model.ts";

export type EventInput = Static<typeof Event>;

/** Who may report each type (the interface's type × source_role table). */
export const allowedRoles: Record<EventType, readonly SourceRole[]> = {
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
/** Events a click token may stand in for a session on (interface rules 4 and 5; standard 7.1). */
const clickBoundEvents: readonly EventType[] = ["content_engaged", "checkout_completed"];

/**
 * Fields that belong to some event types only (standard 5.2; the commerce
 * extension's checkout_completed takes a click token too). A non-null value on
 * any other type is refused.
 */
const fieldPlacement: Readonly<Record<string, readonly EventType[]>> = {
  presentation_id: ["content_engaged"],
  citation_id: ["content_presented"],
  ctx_token: clickBoundEvents,
  turn: ["turn_started", "turn_completed"],
};

/** content_grounded: the cached flag each provenance requires (standard 6.4). */
const cachedByProvenance: Readonly<Record<string, boolean>> = { agent_fetched: false, agent_cached: true };

/** Event types withdrawn in v1, with what to send instead (standard 12.1). */
const withdrawnTypes: Readonly<Record<string, string>> = { content_displayed: "content_presented" };

/** content_grounded data fields of v0.x that v1 refuses (standard 6.4, 12.1). */
const withdrawnGroundingFields: readonly {
  pointer: string;
  get: (data: Record<string, unknown>) => unknown;
  why: string;
}[] = [
  {
    pointer: "content_fingerprint/preserved_in_output",
    get: (data) => (data.content_fingerprint as Record<string, unknown> | undefined)?.preserved_in_output,
    why: "was withdrawn in Content Telemetry v1 (section 12.1); remove it",
  },
];

const eventCheckers = Object.fromEntries(
  eventTypes.map((type) => [type, TypeCompiler.Compile(eventSchemas[type])]),
) as Record<EventType, TypeCheck<TSchema>>;
/** Events of an unknown type are checked against the fields every event shares. */
const commonChecker = TypeCompiler.Compile(Event);

/** What a document contributes to each of its events. */
export interface EventScope {
  /** Top-level session_id (envelope, session document or bulk upload). */
  sessionId?: string | undefined;
  /** The envelope's ctx_token. */
  ctxToken?: string | undefined;
  /** A session document: agent-reported, so content_engaged always names its presentation (standard Annex A). */
  sessionDocument: boolean;
  window: TimeWindow;
}

/** An event that passed every rule that needs no database, normalised as it will be stored. */
export interface CheckedEvent {
  index: number;
  path: string;
  eventId: string;
  /** The id as sent (undefined when the service generated one). */
  sentId: string | undefined;
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
  citationId: string | null;
  sessionId: string | null;
  ctxToken: string | null;
  data: Record<string, unknown>;
  turn: Record<string, unknown> | null;
}

/** A field removed before storing, as the standard asks (ip_hash, turn fields above the privacy level). */
export interface StrippedField {
  path: string;
  reason: string;
}

export type EventCheck = { event: CheckedEvent; stripped: StrippedField[] } | { errors: FieldError[] };

const isBlank = (value: unknown) => value === undefined || value === null || value === "";
const orNull = <T>(value: T | null | undefined): T | null => value ?? null;

/** A turn's content URL lists hold absolute http(s) URLs, as content_url does. */
function checkTurnUrls(turn: unknown, fail: (field: string, message: string) => void): void {
  if (turn === null || typeof turn !== "object") return;
  for (const field of ["content_urls_retrieved", "content_urls_cited"] as const) {
    const urls = (turn as Record<string, unknown>)[field];
    if (!Array.isArray(urls)) continue;
    urls.forEach((url, i) => {
      const host = typeof url === "string" ? httpUrlHost(url) : undefined;
      if (host && "reason" in host) fail(`turn/${field}/${i}`, host.reason);
    });
  }
}

/**
 * Judges one event as the standard does: its type's schema (TypeBox, compiled
 * once per type), then the rules a schema cannot express, each from a table
 * above. Returns every failure, one per field, or the event normalised for
 * storage with what was stripped from it.
 */
export function checkEvent(raw: EventInput, index: number, path: string, scope: EventScope): EventCheck {
  const known = (eventTypes as readonly unknown[]).includes(raw.type);
  const type = raw.type as EventType;
  const checker = known ? eventCheckers[type] : commonChecker;
  const errors: FieldError[] = checker.Check(raw)
    ? []
    : describeErrors(checker.Errors(raw)).map((error) => ({ path: path + error.path, message: error.message }));
  const failed = new Set(errors.map((error) => error.path));
  const fail = (field: string, message: string) => {
    const at = `${path}/${field}`;
    if (failed.has(at)) return;
    failed.add(at);
    errors.push({ path: at, message });
  };

  if (!known && typeof raw.type === "string") {
    const replacement = withdrawnTypes[raw.type];
    fail(
      "type",
      replacement
        ? `${raw.type} was withdrawn in Content Telemetry v1; report it as ${replacement}`
        : `must be one of ${eventTypes.join(", ")} (unknown types are refused: the v1 schema's list is closed, and extensions are registered here first)`,
    );
  }

  let eventTime: Date | undefined;
  if (typeof raw.timestamp === "string") {
    const time = parseTimestamp(raw.timestamp, scope.window);
    if ("reason" in time) fail("timestamp", time.reason);
    else eventTime = new Date(time.ms);
  }

  let contentHost: string | null = null;
  if (typeof raw.content_url === "string") {
    const host = httpUrlHost(raw.content_url);
    if ("reason" in host) fail("content_url", host.reason);
    else contentHost = host.host;
  }
  checkTurnUrls(raw.turn, fail);

  if (raw.session_id && scope.sessionId && raw.session_id.toLowerCase() !== scope.sessionId.toLowerCase()) {
    fail(
      "session_id",
      "differs from the document's session_id; send events of different sessions in separate documents",
    );
  }
  const sessionId = raw.session_id ?? scope.sessionId ?? null;
  const ctxToken = raw.ctx_token ?? scope.ctxToken ?? null;
  const data: Record<string, unknown> = { ...raw.data };
  const stripped: StrippedField[] = [];
  if (data.ip_hash !== undefined) {
    // Personal data, withdrawn in v1 (standard 9.1): stripped rather than refused, and the answer says so.
    delete data.ip_hash;
    stripped.push({
      path: `${path}/data/ip_hash`,
      reason: "personal data withdrawn in v1 (section 9.1); never stored",
    });
  }

  if (known) {
    const sourceRole = checkSourceRole(type, raw.source_role, fail);
    for (const field in fieldPlacement) {
      const allowed = fieldPlacement[field] as readonly EventType[];
      if ((raw as Record<string, unknown>)[field] != null && !allowed.includes(type)) {
        fail(field, `is only valid on ${allowed.join(" and ")} events, not on ${type}`);
      }
    }
    if (scope.ctxToken && !clickBoundEvents.includes(type)) {
      fail(
        "type",
        `${type} cannot be sent under the document's ctx_token, which carries ${clickBoundEvents.join(" and ")} events only`,
      );
    }
    if (contentEvents.has(type) && isBlank(raw.content_url) && isBlank(raw.content_id)) {
      fail("content_url", `${type} needs content_url or content_id (section 5.7.5)`);
    }
    if (
      type === "content_engaged" &&
      raw.presentation_id === undefined &&
      (scope.sessionDocument || ctxToken === null)
    ) {
      fail(
        "presentation_id",
        scope.sessionDocument
          ? "content_engaged in a session document needs presentation_id, the id of the content_presented event acted on"
          : "content_engaged needs presentation_id unless it carries a ctx_token",
      );
    }
    if (sessionId === null && ctxToken === null && !(type === "content_retrieved" && sourceRole !== "agent")) {
      fail(
        "session_id",
        "the event needs session_id or ctx_token (only content_retrieved reported by an origin, edge or index may omit both)",
      );
    }
    if (type === "content_grounded") checkGrounding(data, fail);
    const dataBytes = Buffer.byteLength(JSON.stringify(data));
    if (dataBytes > ingestLimits.maxDataBytes)
      fail("data", `is ${dataBytes} bytes; at most ${ingestLimits.maxDataBytes}`);

    if (errors.length === 0 && sourceRole && eventTime) {
      return {
        stripped,
        event: {
          index,
          path,
          eventId: raw.id ?? crypto.randomUUID(),
          sentId: raw.id,
          eventTime,
          type,
          sourceRole,
          contentUrl: orNull(raw.content_url),
          contentHost,
          contentId: orNull(raw.content_id),
          contentTelemetryId: orNull(raw.content_telemetry_id),
          turnId: orNull(raw.turn_id),
          outputId: orNull(raw.output_id),
          presentationId: orNull(raw.presentation_id),
          citationId: orNull(raw.citation_id),
          sessionId,
          ctxToken,
          data,
          // Stripped to the session's privacy level once sessions are known (pipeline.ts).
          turn: orNull(raw.turn) as Record<string, unknown> | null,
        },
      };
    }
  }
  return { errors };
}

function checkSourceRole(
  type: EventType,
  role: unknown,
  fail: (field: string, message: string) => void,
): SourceRole | undefined {
  const allowed = allowedRoles[type];
  if (role === undefined) {
    if (allowed.length === 1) return allowed[0];
    fail("source_role", `is required on ${type}: ${allowed.join(", ")}`);
    return undefined;
  }
  if (!allowed.includes(role as SourceRole)) {
    fail("source_role", `${type} may only be reported with source_role ${allowed.join(" or ")}`);
    return undefined;
  }
  return role as SourceRole;
}

/** content_grounded: provenance and cached agree (6.4); withdrawn v0.x fields are refused (12.1). */
function checkGrounding(data: Record<string, unknown>, fail: (field: string, message: string) => void): void {
  const required = cachedByProvenance[data.provenance as string];
  if (required !== undefined && data.cached !== required) {
    fail("data/cached", `must be ${required} when data.provenance is ${data.provenance} (section 6.4)`);
  }
  for (const field of withdrawnGroundingFields) {
    if (field.get(data) !== undefined) fail(`data/${field.pointer}`, field.why);
  }
}
