import { Elysia, type Static, type TSchema, t } from "elysia";
import type { AppContext } from "../../context.ts";
import type { Principal } from "../../core/caller.ts";
import { ingestLimits } from "../../core/ingest-limits.ts";
import { invalid, problem } from "../../core/problem.ts";
import { assertStorableJson } from "../../core/storable-json.ts";
import { manifestRefProblem } from "../../core/wire-values.ts";
import { accessPlugin } from "../../http/access.ts";
import { rawBodyOf } from "../../http/json-body.ts";
import { ownProblems } from "../../http/openapi-examples.ts";
import { signatureHeader, signatureStatusOf } from "../manifests/service.ts";
import { outcomeValueProblem, sessionHeader } from "./documents.ts";
import {
  EventsRequest,
  EventsResponse,
  SessionBulkRequest,
  SessionBulkResponse,
  SessionDocumentResponse,
  SessionEndRequest,
  SessionEndResponse,
  SessionStartRequest,
  SessionStartResponse,
} from "./model.ts";
import { type AgeLimits, ingestDocument } from "./pipeline.ts";
import { endSession } from "./service.ts";
import { sessionDocument } from "./session-document.ts";

const limitsText = `Limits: at most ${ingestLimits.maxEventsPerBatch} events per request; the body at most MAX_BODY_BYTES (default 5 MiB, 413 past it); URLs at most ${ingestLimits.maxUrlLength} characters, identifiers ${ingestLimits.maxIdLength}, an event's data ${ingestLimits.maxDataBytes} bytes, nesting ${ingestLimits.maxJsonDepth} levels; timestamps inside the event-age window (EVENT_MAX_AGE_DAYS back, default 3650 days; EVENT_MAX_FUTURE_SECONDS ahead, default 300 s).`;

const signatureText =
  "Signed telemetry: an optional Content-Telemetry-Signature header carries a detached compact JWS (alg EdDSA, kid = a key id of the reporter's registered manifest) over the exact request body. Every stored event records signature_status: verified, unverified (unsigned, or no valid manifest), invalid, unknown_key or expired_key. An invalid signature is accepted and marked, never rejected (the standard makes signing informational, sections 8.4 and 8.7).";

/** What a document declaring a withholding privacy level does to what its session stored. */
const privacyTighteningText =
  "A session document declaring privacy_level intent or minimal also strips the session's stored events and turns to that level (the answer's stripped lists only its own fields).";
const atomicText = `A request with any invalid event is refused whole with 400 problem+json: \`errors\` lists one entry per failing field, {path (JSON pointer such as /events/3/data/citation_type), message (the rule and the allowed values)}, at most ${ingestLimits.maxReportedErrors} (past that \`errors_truncated\` is true and \`error_count\` gives the total); \`invalid_events\` lists the indexes. Nothing of it is stored. An event id already stored for the reporting organisation (same id and timestamp) is skipped and not counted, so retries are safe; an id repeated within one batch is stored once, within one session document it is refused. Unknown event types are refused (the v1 type list is closed; checkout_completed is this service's registered extension). Events later than their session's ended_at are accepted and stored.`;

const conformanceText =
  "Judged as the Content Telemetry v1 schemas and specification judge it: each event type's schema (formats such as UUIDs and sha256: hashes, closed value sets, non-negative counts, required data keys), field placement (presentation_id on content_engaged, citation_id on content_presented, ctx_token on content_engaged and checkout_completed, turn on turn events), grounding provenance against cached, withdrawn v0.x fields refused; in a session document event ids are distinct, presentation_id and citation_id name an event of the document about the same content, and one ctx_token binds one presentation; a ctx_token in a session document or bulk upload is checked as in a batch (a live token the caller issued for that session), and engagements of any format that bind one token to two presentations end its resolution (standard 7.4.1). null is accepted where the schemas allow it. data.ip_hash and turn fields above the privacy level are stripped, and `stripped` in the answer lists them.";

// The documents' own models are applied per event inside the pipeline so that one
// 400 can list every invalid event; they are shown to OpenAPI as the request body.
const jsonBody = (schema: TSchema) => ({ required: true, content: { "application/json": { schema } } });

export const ingestModule = (ctx: AppContext) => {
  const ageLimits: AgeLimits = {
    maxAgeDays: ctx.config.EVENT_MAX_AGE_DAYS,
    maxFutureSeconds: ctx.config.EVENT_MAX_FUTURE_SECONDS,
  };
  /**
   * Ingests a POST /events or /sessions/bulk body through the admission gate, with
   * the request's signature header checked against the reporter's manifest (one
   * query, only when signed).
   */
  const ingest = (format: "events" | "bulk", request: Request, principal: Principal, body: unknown) =>
    ctx.ingestGate.run(async () => {
      const headerValue = request.headers.get(signatureHeader);
      const signature = await signatureStatusOf(ctx.sql, principal.orgId, headerValue, rawBodyOf(request), new Date());
      const result = await ingestDocument(ctx.ingestWriter, principal, body, format, ageLimits, signature);
      ctx.ingestHealth.accepted(principal.orgId, result.eventsCreated);
      return result;
    });
  return new Elysia({ name: "ingest", detail: { tags: ["Ingest"] } })
    .use(accessPlugin(ctx))
    .post(
      "/sessions/start",
      async ({ body, principal }) => {
        assertStorableJson(body, ingestLimits.maxJsonDepth);
        const manifestError = body.manifest_ref == null ? undefined : manifestRefProblem(body.manifest_ref);
        if (manifestError)
          throw invalid(`manifest_ref ${manifestError}`, [{ path: "/manifest_ref", message: manifestError }]);
        const sessionId = crypto.randomUUID();
        const header = sessionHeader(sessionId, body);
        await ctx.ingestGate.run(() =>
          ctx.ingestWriter.write({ orgId: principal.orgId, header, implicitSessions: [], events: [] }),
        );
        return { session_id: sessionId };
      },
      {
        key: "telemetry:write",
        // Labels the body as JSON for OpenAPI; the global strict JSON reader still parses it.
        parse: "json",
        body: SessionStartRequest,
        response: SessionStartResponse,
        detail: {
          summary: "Start a session",
          description:
            "The session belongs to the caller's organisation; no other organisation can write to it. Without privacy_level the session declares none: its turns keep what their own level allows, while conversation fields in events' data and click manifests read it as minimal (fail closed).",
        },
      },
    )
    .post(
      "/events",
      async ({ body, principal, request }) => {
        const result = await ingest("events", request, principal, body);
        return {
          status: "ok" as const,
          events_created: result.eventsCreated,
          ...(result.sessionId ? { session_id: result.sessionId } : {}),
          ...(result.stripped.length > 0 ? { stripped: result.stripped } : {}),
        };
      },
      {
        key: "telemetry:write",
        response: EventsResponse,
        detail: {
          summary: "Report events (event_batch, event or session document)",
          description: `Content Telemetry v1 documents: document_type event_batch (events), event (one event) or session (a whole session with nested events and a required started_at; absent document_type means session; a missing session_id is generated and returned as session_id). schema_version must be 1.x. ${conformanceText} session_id names a session of the caller's organisation (ids are per organisation): an unknown one creates the session, and an id another organisation's session has is answered and stored as a new session of the caller's own. ctx_token on content_engaged and checkout_completed resolves to the token's session (a session_id sent with it must be the caller's own name for that session, which only the token's issuer has: 400 at ctx_token otherwise, whatever the id); a content_engaged reported with one is the click on the token's link, so its content_url lies on that link's site (its registrable domain; 400 at content_url otherwise). A token is a bearer credential: each report of a click is stored and counted (only a retry, the same id and timestamp, is not). A content-owner key may report only events whose content_url lies on its verified domains (403 naming the offending events). An event's agent is the envelope's agent_id, else its session's. data.ip_hash is stripped; turn fields above the privacy level are stripped. ${privacyTighteningText} ${atomicText} ${signatureText} ${limitsText}`,
          requestBody: jsonBody(EventsRequest),
          ...ownProblems("outside_verified_domains"),
        },
      },
    )
    .post(
      "/sessions/end",
      async ({ body, principal }) => {
        assertStorableJson(body, ingestLimits.maxJsonDepth);
        const outcomeError = body.outcome ? outcomeValueProblem(body.outcome) : undefined;
        if (outcomeError) throw invalid(`outcome: ${outcomeError}`, [{ path: "/outcome", message: outcomeError }]);
        const ended = await ctx.ingestGate.run(() =>
          endSession(ctx.sql, principal.orgId, body.session_id, body.outcome),
        );
        if (!ended) throw problem("session_not_found", "your organisation has no session with this id");
        return {
          session_id: body.session_id,
          ended_at: ended.ended_at.toISOString(),
          outcome_recorded: !!body.outcome,
        };
      },
      {
        key: "telemetry:write",
        parse: "json",
        body: SessionEndRequest,
        response: SessionEndResponse,
        detail: {
          summary: "End a session and record its outcome",
          description:
            "The first end time is kept; a later call may record or replace the outcome. 404 when the session is not the caller's.",
          ...ownProblems("session_not_found"),
        },
      },
    )
    .post(
      "/sessions/bulk",
      async ({ body, principal, request }) => {
        const result = await ingest("bulk", request, principal, body);
        return {
          session_id: result.sessionId as string,
          events_created: result.eventsCreated,
          outcome_recorded: result.outcomeRecorded,
          ...(result.stripped.length > 0 ? { stripped: result.stripped } : {}),
        };
      },
      {
        key: "telemetry:write",
        response: SessionBulkResponse,
        detail: {
          summary: "Upload a whole session (start, events, outcome) in one request",
          description: `For batch reporting or replay. Creates the session (or updates the caller's own), stores its events and records the outcome, atomically. Events take the upload's session_id. ${privacyTighteningText} ${atomicText} ${signatureText} ${limitsText}`,
          requestBody: jsonBody(SessionBulkRequest),
          ...ownProblems("outside_verified_domains"),
        },
      },
    )
    .get(
      "/sessions/:id/document",
      async ({ params, principal }) => {
        const document = await sessionDocument(ctx.sql, principal.orgId, params.id);
        if (!document) throw problem("session_not_found", "your organisation has no session with this id");
        return document as Static<typeof SessionDocumentResponse>;
      },
      {
        key: "telemetry:read",
        params: t.Object({ id: t.String({ format: "uuid", description: "session id" }) }),
        response: SessionDocumentResponse,
        detail: {
          summary: "A stored session as a Content Telemetry v1 session document",
          description:
            "The caller's own session (404 session_not_found otherwise) with the events its organisation reported in it, oldest first, times to the microsecond. Posting it back to POST /events stores nothing new and leaves the session unchanged, so it round-trips. Interface session fields (initiator_type, privacy_level, external_session_id, prior_session_ids) travel as extension fields; fields never sent are left out. Not part of it: the outcome, fields the service does not store (citation_id, output_element_id, license_ref, terms_ref, session data), and stripped fields.",
        },
      },
    );
};
