import { type Static, t } from "elysia";
import { ingestLimits as limits } from "../../core/ingest-limits.ts";

export const eventTypes = [
  "content_retrieved",
  "content_grounded",
  "content_cited",
  "content_presented",
  "content_engaged",
  "turn_started",
  "turn_completed",
  "checkout_completed",
] as const;
export type EventType = (typeof eventTypes)[number];

export const sourceRoles = ["origin", "edge", "index", "agent"] as const;
export type SourceRole = (typeof sourceRoles)[number];

const Uuid = t.String({ format: "uuid", description: "UUID" });
const Timestamp = t.String({
  maxLength: 40,
  description: `ISO 8601 date-time with Z or a UTC offset; at most ${limits.maxFutureSkewMs / 60_000} minutes in the future, not before 2000`,
});
const HttpUrl = t.String({
  minLength: 1,
  maxLength: limits.maxUrlLength,
  description: `absolute http or https URL, at most ${limits.maxUrlLength} characters`,
});
const Identifier = t.String({ minLength: 1, maxLength: limits.maxIdLength });
const Label = t.String({ maxLength: limits.maxLabelLength });
const UrlList = t.Array(HttpUrl, { maxItems: limits.maxTurnListItems });
const TokenCount = t.Integer({ minimum: 0, maximum: 2_147_483_647 });

/** A conversation turn (standard 5.4); fields above its privacy level are stripped on ingest. */
export const Turn = t.Object(
  {
    privacy_level: t.Optional(
      t.String({
        maxLength: limits.maxLabelLength,
        description: "full, summary, intent or minimal; missing or unknown is treated as minimal",
      }),
    ),
    query_text: t.Optional(t.String({ maxLength: limits.maxTurnTextLength })),
    response_text: t.Optional(t.String({ maxLength: limits.maxTurnTextLength })),
    query_intent: t.Optional(Label),
    response_type: t.Optional(Label),
    response_mode: t.Optional(Label),
    topics: t.Optional(t.Array(t.String({ maxLength: 128 }), { maxItems: limits.maxTurnListItems })),
    content_urls_retrieved: t.Optional(UrlList),
    content_urls_cited: t.Optional(UrlList),
    query_tokens: t.Optional(TokenCount),
    response_tokens: t.Optional(TokenCount),
    model_id: t.Optional(Identifier),
    ad_rendered: t.Optional(t.Boolean()),
  },
  { additionalProperties: true },
);

/** One Content Telemetry v1 event. Unknown fields are tolerated and not stored. */
export const Event = t.Object(
  {
    id: t.Optional(
      t.String({
        format: "uuid",
        description: "event id (UUID); required on content_cited and content_presented, generated when absent",
      }),
    ),
    type: t.String({
      minLength: 1,
      maxLength: limits.maxLabelLength,
      description: `one of ${eventTypes.join(", ")}; content_displayed (v0.1) is refused`,
    }),
    timestamp: Timestamp,
    source_role: t.Optional(
      t.String({
        maxLength: limits.maxLabelLength,
        description: "origin, edge, index or agent; required on content_retrieved and checkout_completed, else agent",
      }),
    ),
    content_url: t.Optional(HttpUrl),
    content_id: t.Optional(Identifier),
    content_telemetry_id: t.Optional(Identifier),
    session_id: t.Optional(Uuid),
    ctx_token: t.Optional(
      t.String({ maxLength: 128, description: "click token (ctx_…); content_engaged and checkout_completed only" }),
    ),
    turn_id: t.Optional(Identifier),
    output_id: t.Optional(Identifier),
    presentation_id: t.Optional(Identifier),
    data: t.Optional(
      t.Object(
        {},
        {
          additionalProperties: true,
          description: `type-specific details, at most ${limits.maxDataBytes} bytes serialised; data.ip_hash is stripped`,
        },
      ),
    ),
    turn: t.Optional(Turn),
  },
  { additionalProperties: true },
);

const SchemaVersion = t.String({ maxLength: 16, description: "1.x (any minor version of v1)" });

/** Envelope fields that apply to every event of a document (standard 7.1). */
const envelopeFields = {
  schema_version: SchemaVersion,
  session_id: t.Optional(Uuid),
  ctx_token: t.Optional(t.String({ maxLength: 128 })),
  agent_id: t.Optional(Identifier),
  started_at: t.Optional(Timestamp),
  manifest_ref: t.Optional(HttpUrl),
  parent_session_id: t.Optional(Uuid),
};

/** Session start fields (POST /sessions/start, session documents, POST /sessions/bulk). */
export const sessionStartFields = {
  initiator_type: t.Optional(t.Union([t.Literal("user"), t.Literal("agent")], { description: "default user" })),
  agent_id: t.Optional(Identifier),
  manifest_ref: t.Optional(
    t.String({
      minLength: 1,
      maxLength: limits.maxUrlLength,
      description: "http(s) URL of a manifest served at /.well-known/content-telemetry.json (root or path-prefixed)",
    }),
  ),
  content_scope: t.Optional(Identifier),
  external_session_id: t.Optional(Identifier),
  prior_session_ids: t.Optional(t.Array(Uuid, { maxItems: 100 })),
  privacy_level: t.Optional(
    t.Union([t.Literal("full"), t.Literal("summary"), t.Literal("intent"), t.Literal("minimal")], {
      description: "default minimal (fail closed)",
    }),
  ),
  parent_session_id: t.Optional(Uuid),
};

const eventList = (minItems: number) =>
  t.Array(Event, { minItems, maxItems: limits.maxEventsPerBatch, description: `at most ${limits.maxEventsPerBatch}` });

export const EventBatchDocument = t.Object(
  { document_type: t.Literal("event_batch"), ...envelopeFields, events: eventList(1) },
  { additionalProperties: true },
);
export const SingleEventDocument = t.Object(
  { document_type: t.Literal("event"), ...envelopeFields, event: Event },
  { additionalProperties: true },
);
export const SessionDocument = t.Object(
  {
    document_type: t.Optional(t.Literal("session", { description: "absent means session" })),
    ...envelopeFields,
    ...sessionStartFields,
    ended_at: t.Optional(Timestamp),
    events: eventList(0),
  },
  { additionalProperties: true },
);

export const EventsRequest = t.Union([EventBatchDocument, SingleEventDocument, SessionDocument], {
  description: "document_type event_batch, event or session (absent: session)",
});
export const EventsResponse = t.Object({ status: t.Literal("ok"), events_created: t.Integer() });

export const Outcome = t.Object({
  type: t.Union([t.Literal("conversion"), t.Literal("abandonment"), t.Literal("browse")]),
  value_amount: t.Optional(
    t.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: "minor currency units (cents for USD)" }),
  ),
  currency: t.Optional(t.String({ pattern: "^[A-Z]{3}$", description: "ISO 4217 code; required with value_amount" })),
});

export const SessionStartRequest = t.Object(sessionStartFields, { additionalProperties: true });
export const SessionStartResponse = t.Object({ session_id: t.String({ format: "uuid" }) });

export const SessionEndRequest = t.Object({ session_id: Uuid, outcome: t.Optional(Outcome) });
export const SessionEndResponse = t.Object({
  session_id: t.String({ format: "uuid" }),
  ended_at: t.String({ format: "date-time" }),
  outcome_recorded: t.Boolean(),
});

export const SessionBulkRequest = t.Object(
  {
    session_id: t.Optional(t.String({ format: "uuid", description: "generated when absent" })),
    ...sessionStartFields,
    schema_version: t.Optional(SchemaVersion),
    started_at: t.Optional(t.String({ maxLength: 40, description: "default: the earliest event timestamp, else now" })),
    ended_at: t.Optional(Timestamp),
    events: eventList(0),
    outcome: t.Optional(Outcome),
  },
  { additionalProperties: true },
);
export const SessionBulkResponse = t.Object({
  session_id: t.String({ format: "uuid" }),
  events_created: t.Integer(),
  outcome_recorded: t.Boolean(),
});
export type OutcomeValue = Static<typeof Outcome>;
