/**
 * Ingest limits (documented in README.md and in the OpenAPI descriptions).
 * The body size limit itself is MAX_BODY_BYTES in config.ts (413 past it).
 */
export const ingestLimits = {
  /** Events in one POST /events document or one POST /sessions/bulk upload. */
  maxEventsPerBatch: 1000,
  /** content_url, manifest_ref and every URL in a turn. */
  maxUrlLength: 2048,
  /** Identifiers sent by emitters: agent_id, content_id, content_telemetry_id, turn/output/presentation ids. */
  maxIdLength: 256,
  /** Short enumerated or free-form labels (type, source_role, query_intent, ...). */
  maxLabelLength: 64,
  /** turn.query_text and turn.response_text. */
  maxTurnTextLength: 65_536,
  /** Items of turn.topics and of each turn URL array. */
  maxTurnListItems: 200,
  /** A single event's `data` object, serialised. */
  maxDataBytes: 16_384,
  /** Nesting of a request body (envelope → events → event → data → ...). */
  maxJsonDepth: 12,
  /** Field errors one refusal lists at most; past it `errors_truncated` and `error_count` say how many there were. */
  maxReportedErrors: 100,
} as const;
