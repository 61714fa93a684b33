import { type TLiteral, type TUnion, Type } from "@sinclair/typebox";
import { type Static, type TSchema, t } from "elysia";
import { ingestLimits as limits } from "../../core/ingest-limits.ts";
import { privacyLevels } from "../../core/privacy.ts";

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
  description:
    "ISO 8601 date-time with Z or a UTC offset, inside the event-age window (EVENT_MAX_AGE_DAYS back, EVENT_MAX_FUTURE_SECONDS ahead)",
});
const HttpUrl = t.String({
  minLength: 1,
  maxLength: limits.maxUrlLength,
  description: `absolute http or https URL as written (no spaces, control characters, backslashes, user name or password), at most ${limits.maxUrlLength} characters`,
});
const Identifier = t.String({ minLength: 1, maxLength: limits.maxIdLength });
const Label = t.String({ maxLength: limits.maxLabelLength });
const Text = t.String({ maxLength: limits.maxIdLength });
const UrlList = t.Array(HttpUrl, { maxItems: limits.maxTurnListItems });
// Elysia's t.Integer also takes numeric strings; the standard's integers are JSON numbers, hence TypeBox's own.
const TokenCount = Type.Integer({ minimum: 0, maximum: 2_147_483_647 });
const Count = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
const Sha256 = t.String({
  pattern: "^sha256:[a-f0-9]{64}$",
  errorMessage: "sha256: followed by 64 lower-case hexadecimal digits",
});
/** As POST /click-tokens mints them; an empty or other string is refused here, never taken for "a token". */
const clickToken = (description: string) =>
  t.String({
    pattern: "^ctx_[A-Za-z0-9_-]{43}$",
    errorMessage: "a click token: ctx_ and 43 characters of A-Z, a-z, 0-9, _ or -",
    description,
  });
/** The schemas allow null here (standard Annex A); null is stored as absent. */
const nullable = <T extends TSchema>(schema: T) => t.Union([schema, t.Null()]);
/** A closed value set: an error names every allowed value. */
const oneOf = <const V extends readonly string[]>(values: V, options: { description?: string } = {}) =>
  t.Union(
    values.map((value) => t.Literal(value)),
    options,
  ) as unknown as TUnion<{ -readonly [K in keyof V]: TLiteral<V[K]> }>;

export const citationTypes = ["direct_quote", "paraphrase", "reference", "contradiction", "unclassified"] as const;
export const citationPositions = ["primary", "supporting", "mentioned", "unclassified"] as const;
export const groundingScopes = ["session", "turn"] as const;
export const groundingProvenances = ["agent_fetched", "agent_cached", "third_party_sourced"] as const;
export const presentationKinds = ["content", "source_reference"] as const;

/** A conversation turn (standard 5.4); fields above its privacy level are stripped on ingest. */
export const Turn = t.Object(
  {
    privacy_level: oneOf(privacyLevels, { description: "required (standard 5.5)" }),
    query_text: t.Optional(nullable(t.String({ maxLength: limits.maxTurnTextLength }))),
    response_text: t.Optional(nullable(t.String({ maxLength: limits.maxTurnTextLength }))),
    query_intent: t.Optional(nullable(Label)),
    response_type: t.Optional(nullable(Label)),
    response_mode: t.Optional(nullable(Label)),
    topics: t.Optional(t.Array(t.String({ maxLength: 128 }), { maxItems: limits.maxTurnListItems })),
    content_urls_retrieved: t.Optional(UrlList),
    content_urls_cited: t.Optional(UrlList),
    query_tokens: t.Optional(nullable(TokenCount)),
    response_tokens: t.Optional(nullable(TokenCount)),
    model_id: t.Optional(nullable(Identifier)),
    ad_rendered: t.Optional(nullable(t.Boolean())),
  },
  { additionalProperties: true },
);

const EventId = t.String({
  format: "uuid",
  description: "event id (UUID); required on content_cited and content_presented, generated when absent",
});
const OutputId = t.String({
  minLength: 1,
  maxLength: limits.maxIdLength,
  description: "required on content_cited and content_presented",
});

/** Every field an event may carry (standard Annex A, TelemetryEvent). Unknown fields are tolerated. */
const eventFields = {
  id: t.Optional(EventId),
  type: t.String({
    minLength: 1,
    maxLength: limits.maxLabelLength,
    description: `one of ${eventTypes.join(", ")}; content_displayed (v0.1) is refused`,
  }),
  timestamp: Timestamp,
  source_role: t.Optional(
    oneOf(sourceRoles, {
      description: "required on content_retrieved and checkout_completed; agent when absent on the other types",
    }),
  ),
  content_url: t.Optional(nullable(HttpUrl)),
  content_id: t.Optional(nullable(Identifier)),
  content_telemetry_id: t.Optional(nullable(Uuid)),
  session_id: t.Optional(
    t.String({
      format: "uuid",
      description:
        "the session's id; this or ctx_token on every event but content_retrieved from an origin, edge or index",
    }),
  ),
  ctx_token: t.Optional(clickToken("click token (ctx_ and 43 characters), as POST /click-tokens returns it")),
  turn_id: t.Optional(nullable(Identifier)),
  output_id: t.Optional(OutputId),
  output_element_id: t.Optional(Identifier),
  citation_id: t.Optional(
    t.String({ format: "uuid", description: "id of the content_cited event; content_presented only" }),
  ),
  presentation_id: t.Optional(
    t.String({ format: "uuid", description: "id of the content_presented event acted on; content_engaged only" }),
  ),
  license_ref: t.Optional(nullable(Text)),
  terms_ref: t.Optional(nullable(Text)),
  data: t.Optional(
    t.Object(
      {},
      {
        additionalProperties: true,
        description: `type-specific details, at most ${limits.maxDataBytes} bytes serialised; data.ip_hash is stripped`,
      },
    ),
  ),
  turn: t.Optional(nullable(Turn)),
};

/** One Content Telemetry v1 event, as OpenAPI shows it; each type adds its own rules (eventSchemas). */
export const Event = t.Object(eventFields, { additionalProperties: true });

const ContentFingerprint = t.Object(
  {
    scheme: t.String({ minLength: 1 }),
    detected: t.Boolean(),
    value: t.Optional(t.String({ minLength: 1 })),
  },
  { additionalProperties: true },
);

/**
 * The data profile of each event type (standard section 6 and Annex A): the keys a
 * type's data may carry, with their value rules; `required` keys make data required.
 * Open vocabularies (media_type, presentation_type, engagement_type, …) are plain strings.
 */
const dataProfiles: Record<EventType, { properties: Record<string, TSchema>; required?: readonly string[] }> = {
  content_retrieved: {
    properties: {
      media_type: t.String(),
      content_depth: t.String(),
      user_agent: t.String(),
      purpose: t.String(),
      bot_name: t.String(),
      verified: t.Boolean(),
      cache_status: t.String(),
      response_status: Type.Integer({ minimum: 100, maximum: 599 }),
      response_bytes: Count,
      ja4: t.String(),
      asn: Type.Integer(),
      asn_org: t.String(),
      country: t.String({ pattern: "^[A-Z]{2}$", errorMessage: "an ISO 3166-1 alpha-2 code such as DE" }),
    },
  },
  content_grounded: {
    required: ["scope"],
    properties: {
      scope: oneOf(groundingScopes),
      cached: t.Boolean(),
      provenance: oneOf(groundingProvenances),
      chars_ingested: Count,
      tokens_ingested: Count,
      content_version: t.String(),
      content_last_modified: t.String({ format: "date-time" }),
      content_hash: Sha256,
      media_type: t.String(),
      content_fingerprint: ContentFingerprint,
    },
  },
  content_cited: {
    required: ["citation_type"],
    properties: {
      citation_type: oneOf(citationTypes),
      media_type: t.String(),
      excerpt_tokens: Count,
      excerpt_chars: Count,
      excerpt_hash: Sha256,
      position: oneOf(citationPositions),
      content_hash: Sha256,
      url_verified: t.Boolean(),
    },
  },
  content_presented: {
    required: ["presentation_kind", "presentation_type"],
    properties: {
      presentation_kind: oneOf(presentationKinds),
      presentation_type: t.String({
        minLength: 1,
        description: "open vocabulary: link, snippet, inline_quote, card, …",
      }),
      media_type: t.String(),
    },
  },
  content_engaged: { properties: { engagement_type: t.String() } },
  turn_started: { properties: {} },
  turn_completed: { properties: {} },
  checkout_completed: {
    required: ["value_amount", "currency"],
    properties: {
      value_amount: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: "minor currency units" }),
      currency: t.String({ pattern: "^[A-Z]{3}$", errorMessage: "an ISO 4217 code such as USD" }),
    },
  },
};

/** Top-level fields each type requires (standard Annex A; 5.7.5). */
const requiredFields: Partial<Record<EventType, Record<string, TSchema>>> = {
  content_cited: { id: EventId, output_id: OutputId },
  content_presented: { id: EventId, output_id: OutputId },
};

/** The full schema of one event type: the common fields, its required ones and its data profile. */
function eventSchemaOf(type: EventType) {
  const profile = dataProfiles[type];
  const required = profile.required ?? [];
  const properties = Object.fromEntries(
    Object.entries(profile.properties).map(([key, schema]) => [
      key,
      required.includes(key) ? schema : t.Optional(schema),
    ]),
  );
  const data = t.Object(properties, { additionalProperties: true });
  return t.Object(
    { ...eventFields, data: profile.required ? data : t.Optional(data), ...requiredFields[type] },
    { additionalProperties: true },
  );
}

export const eventSchemas = Object.fromEntries(
  eventTypes.map((type) => [type, eventSchemaOf(type)]),
) as unknown as Record<EventType, TSchema>;

const SchemaVersion = t.String({
  maxLength: 16,
  pattern: "^1(\\.\\d+){0,2}$",
  errorMessage: "1.x, such as 1.0 (this service reads Content Telemetry v1; 0.x documents are refused)",
  description: "1.x (any minor version of v1)",
});

/** Envelope fields that apply to every event of a document (standard 7.1). */
const envelopeFields = {
  schema_version: SchemaVersion,
  session_id: t.Optional(Uuid),
  ctx_token: t.Optional(clickToken("click token; only with content_engaged and checkout_completed events")),
  agent_id: t.Optional(Identifier),
  started_at: t.Optional(Timestamp),
  manifest_ref: t.Optional(nullable(HttpUrl)),
  parent_session_id: t.Optional(Uuid),
};

/** Session start fields (POST /sessions/start, session documents, POST /sessions/bulk). */
export const sessionStartFields = {
  initiator_type: t.Optional(t.Union([t.Literal("user"), t.Literal("agent")], { description: "default user" })),
  agent_id: t.Optional(nullable(Identifier)),
  manifest_ref: t.Optional(
    nullable(
      t.String({
        minLength: 1,
        maxLength: limits.maxUrlLength,
        description: "http(s) URL of a manifest served at /.well-known/content-telemetry.json (root or path-prefixed)",
      }),
    ),
  ),
  content_scope: t.Optional(nullable(Identifier)),
  external_session_id: t.Optional(Identifier),
  prior_session_ids: t.Optional(t.Array(Uuid, { maxItems: 100 })),
  privacy_level: t.Optional(
    oneOf(privacyLevels, {
      description:
        "absent: none declared (turns keep their own level; data fields and click manifests read it as minimal)",
    }),
  ),
  parent_session_id: t.Optional(Uuid),
};

/** Session-level data (standard 5.1.3): an extension container; access_context identifiers are checked. */
const SessionData = t.Object(
  {
    access_context: t.Optional(
      t.Object(
        {
          identifiers: t.Optional(
            t.Array(t.Object({ scheme: t.String(), value: t.String() }, { additionalProperties: true }), {
              maxItems: limits.maxTurnListItems,
            }),
          ),
        },
        { additionalProperties: true },
      ),
    ),
  },
  { additionalProperties: true, description: "checked (access_context identifiers need scheme and value), not stored" },
);

/** Where each event goes: the full event model for OpenAPI; for checking, any object (each is checked by its type). */
const eventList = (event: TSchema, minItems: number) =>
  t.Array(event, { minItems, maxItems: limits.maxEventsPerBatch, description: `at most ${limits.maxEventsPerBatch}` });
const AnyEvent = t.Object({}, { additionalProperties: true });

function documentSchemas(event: TSchema) {
  return {
    event_batch: t.Object(
      { document_type: t.Literal("event_batch"), ...envelopeFields, events: eventList(event, 1) },
      { additionalProperties: true },
    ),
    event: t.Object({ document_type: t.Literal("event"), ...envelopeFields, event }, { additionalProperties: true }),
    session: t.Object(
      {
        document_type: t.Optional(t.Literal("session", { description: "absent means session" })),
        ...envelopeFields,
        ...sessionStartFields,
        session_id: t.Optional(t.String({ format: "uuid", description: "generated and returned when absent" })),
        started_at: t.String({ maxLength: 40, description: "required (standard 5.1)" }),
        ended_at: t.Optional(nullable(Timestamp)),
        data: t.Optional(nullable(SessionData)),
        events: t.Optional(eventList(event, 0)),
      },
      { additionalProperties: true },
    ),
    bulk: t.Object(
      {
        session_id: t.Optional(t.String({ format: "uuid", description: "generated when absent" })),
        ...sessionStartFields,
        schema_version: t.Optional(SchemaVersion),
        started_at: t.Optional(
          t.String({ maxLength: 40, description: "default: the earliest event timestamp, else now" }),
        ),
        ended_at: t.Optional(nullable(Timestamp)),
        events: eventList(event, 0),
        outcome: t.Optional(Outcome),
      },
      { additionalProperties: true },
    ),
  };
}

export const Outcome = t.Object({
  type: oneOf(["conversion", "abandonment", "browse"] as const),
  value_amount: t.Optional(
    Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: "minor currency units (cents for USD)" }),
  ),
  currency: t.Optional(
    t.String({
      pattern: "^[A-Z]{3}$",
      errorMessage: "an ISO 4217 code such as USD",
      description: "required with value_amount",
    }),
  ),
});

const documented = documentSchemas(Event);
/** The document shapes with each event left to its type's own schema (documents.ts checks them one by one). */
export const documentEnvelopes = documentSchemas(AnyEvent);
export const EventBatchDocument = documented.event_batch;
export const SingleEventDocument = documented.event;
export const SessionDocument = documented.session;
export const SessionBulkRequest = documented.bulk;

export const EventsRequest = t.Union([EventBatchDocument, SingleEventDocument, SessionDocument], {
  description: "document_type event_batch, event or session (absent: session)",
});
/** A field the standard says to strip rather than refuse (ip_hash, turn fields above the privacy level). */
const Stripped = t.Object({ path: t.String({ description: "JSON pointer in the request" }), reason: t.String() });
export const EventsResponse = t.Object({
  status: t.Literal("ok"),
  events_created: Type.Integer(),
  session_id: t.Optional(
    t.String({ format: "uuid", description: "the session of a session document (generated when it had none)" }),
  ),
  stripped: t.Optional(t.Array(Stripped, { description: "fields removed before storing; present when any were" })),
});

export const SessionStartRequest = t.Object(sessionStartFields, { additionalProperties: true });
export const SessionStartResponse = t.Object({ session_id: t.String({ format: "uuid" }) });

export const SessionEndRequest = t.Object({ session_id: Uuid, outcome: t.Optional(Outcome) });
export const SessionEndResponse = t.Object({
  session_id: t.String({ format: "uuid" }),
  ended_at: t.String({ format: "date-time" }),
  outcome_recorded: t.Boolean(),
});

export const SessionBulkResponse = t.Object({
  session_id: t.String({ format: "uuid" }),
  events_created: Type.Integer(),
  outcome_recorded: t.Boolean(),
  stripped: t.Optional(t.Array(Stripped, { description: "fields removed before storing; present when any were" })),
});

/** GET /sessions/{id}/document: a session document as POST /events takes it. */
export const SessionDocumentResponse = t.Object(
  {
    document_type: t.Literal("session"),
    schema_version: t.Literal("1.0"),
    session_id: t.String({ format: "uuid" }),
    started_at: t.String({ description: "ISO 8601, microseconds, UTC" }),
    ended_at: t.Optional(t.String()),
    events: t.Array(Event),
  },
  { additionalProperties: true },
);
export type OutcomeValue = Static<typeof Outcome>;
