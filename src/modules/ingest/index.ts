import { Elysia, type TSchema } from "elysia";
import type { AppContext } from "../../context.ts";
import { ingestLimits } from "../../core/ingest-limits.ts";
import { invalid, problem } from "../../core/problem.ts";
import { assertStorableJson } from "../../core/storable-json.ts";
import { manifestRefProblem } from "../../core/wire-values.ts";
import { accessPlugin } from "../../http/access.ts";
import { rawBodyOf } from "../../http/json-body.ts";
import { signatureHeader, signatureStatusOf } from "../manifests/service.ts";
import { outcomeValueProblem, sessionHeader } from "./documents.ts";
import {
  EventsRequest,
  EventsResponse,
  SessionBulkRequest,
  SessionBulkResponse,
  SessionEndRequest,
  SessionEndResponse,
  SessionStartRequest,
  SessionStartResponse,
} from "./model.ts";
import { ingestDocument } from "./pipeline.ts";
import { endSession } from "./service.ts";

const limitsText = `Limits: at most ${ingestLimits.maxEventsPerBatch} events per request; the body at most MAX_BODY_BYTES (default 5 MiB, 413 past it); URLs at most ${ingestLimits.maxUrlLength} characters, identifiers ${ingestLimits.maxIdLength}, an event's data ${ingestLimits.maxDataBytes} bytes, nesting ${ingestLimits.maxJsonDepth} levels; timestamps at most ${ingestLimits.maxFutureSkewMs / 60_000} minutes in the future.`;

const signatureText =
  "Signed telemetry: an optional Content-Telemetry-Signature header carries a detached compact JWS (alg EdDSA, kid = a key id of the reporter's registered manifest) over the exact request body. Every stored event records signature_status: verified, unverified (unsigned, or no valid manifest), invalid, unknown_key or expired_key. An invalid signature is accepted and marked, never rejected (the standard makes signing informational, sections 8.4 and 8.7).";

const atomicText =
  "A request with any invalid event is refused whole with 400 (`errors` lists each failing field by path such as /events/3/type, `invalid_events` the indexes); nothing of it is stored. An event id already stored for the reporting organisation (same id and timestamp) is skipped and not counted, so retries are safe.";

// The documents' own models are applied per event inside the pipeline so that one
// 400 can list every invalid event; they are shown to OpenAPI as the request body.
const jsonBody = (schema: TSchema) => ({ required: true, content: { "application/json": { schema } } });

export const ingestModule = (ctx: AppContext) => {
  /** The request's signature header checked against the reporter's manifest (one query, only when signed). */
  const signatureOf = (request: Request, orgId: string) =>
    signatureStatusOf(ctx.sql, orgId, request.headers.get(signatureHeader), rawBodyOf(request), new Date());
  return new Elysia({ name: "ingest", detail: { tags: ["Ingest"] } })
    .use(accessPlugin(ctx))
    .post(
      "/sessions/start",
      async ({ body, principal }) => {
        assertStorableJson(body, ingestLimits.maxJsonDepth);
        const manifestError = body.manifest_ref === undefined ? undefined : manifestRefProblem(body.manifest_ref);
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
            "The session belongs to the caller's organisation; no other organisation can write to it. privacy_level defaults to minimal (fail closed).",
        },
      },
    )
    .post(
      "/events",
      async ({ body, principal, request }) => {
        const result = await ctx.ingestGate.run(async () =>
          ingestDocument(ctx.ingestWriter, principal, body, "events", await signatureOf(request, principal.orgId)),
        );
        return { status: "ok" as const, events_created: result.eventsCreated };
      },
      {
        key: "telemetry:write",
        response: EventsResponse,
        detail: {
          summary: "Report events (event_batch, event or session document)",
          description: `Content Telemetry v1 documents: document_type event_batch (events), event (one event) or session (a whole session with nested events; absent document_type means session). schema_version must be 1.x. An unknown session_id of the caller creates the session; a session of another organisation is refused. ctx_token on content_engaged and checkout_completed resolves to the token's session. A content-owner key may report only events whose content_url lies on its verified domains (403 naming the offending events). data.ip_hash is stripped; turn fields above the privacy level are stripped. ${atomicText} ${signatureText} ${limitsText}`,
          requestBody: jsonBody(EventsRequest),
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
        },
      },
    )
    .post(
      "/sessions/bulk",
      async ({ body, principal, request }) => {
        const result = await ctx.ingestGate.run(async () =>
          ingestDocument(ctx.ingestWriter, principal, body, "bulk", await signatureOf(request, principal.orgId)),
        );
        return {
          session_id: result.sessionId as string,
          events_created: result.eventsCreated,
          outcome_recorded: result.outcomeRecorded,
        };
      },
      {
        key: "telemetry:write",
        response: SessionBulkResponse,
        detail: {
          summary: "Upload a whole session (start, events, outcome) in one request",
          description: `For batch reporting or replay. Creates the session (or updates the caller's own), stores its events and records the outcome, atomically. Events take the upload's session_id. ${atomicText} ${signatureText} ${limitsText}`,
          requestBody: jsonBody(SessionBulkRequest),
        },
      },
    );
};
