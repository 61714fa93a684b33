import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { overLongArrays } from "../core/array-bounds.ts";
import { ingestLimits } from "../core/ingest-limits.ts";
import { invalid, type ProblemError, problem } from "../core/problem.ts";
import { overNestedPath } from "../core/storable-json.ts";
import { describeError } from "../log.ts";
import { eventsCarried } from "../modules/ingest-health/service.ts";
import type { Access } from "./access-declarations.ts";
import { AccessResolver, admittedPrincipalOf } from "./access-resolver.ts";
import { internalError, problemFor } from "./errors.ts";
import { readJsonBody } from "./json-body.ts";
import { loggedPath } from "./logged-path.ts";
import { problemResponse } from "./problem.ts";
import { refuseLooseIntegers, refuseNulInQuery } from "./query-text.ts";
import type { RouteBody } from "./routes.ts";

const requestIds = new WeakMap<Request, string>();
const requestStarts = new WeakMap<Request, number>();
const acceptableRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

const emptyObjectAccepted = new WeakMap<TSchema, boolean>();

/** Whether `{}` is a valid body: every field optional. Checked once per schema. */
function acceptsEmptyObject(schema: TSchema): boolean {
  let accepted = emptyObjectAccepted.get(schema);
  if (accepted === undefined) {
    accepted = Value.Check(schema, {});
    emptyObjectAccepted.set(schema, accepted);
  }
  return accepted;
}

/** Nothing was sent, whatever Content-Type says: some clients send one on every request. */
function hasNoBody(request: Request): boolean {
  return request.body === null || request.headers.get("content-length") === "0";
}

export interface RouteIndex {
  /** Methods a path answers to, so an unknown method on a known path answers 405, not 404. */
  allowedMethods(path: string): string[];
  /** Who may call a route (its declaration, src/http/access-declarations.ts). */
  accessOf(method: string, route: string): Access | undefined;
  /** What the route takes as its body (routeBodyIndex): an empty one, and the bounded pre-check of its arrays. */
  bodyOf(method: string, route: string): RouteBody | undefined;
  /** Routes behind the ingest admission gate: refused before their body is read while it is full. */
  shedsWhenFull(method: string, route: string): boolean;
  /** The route's integer query parameters (routeIntegerQueryIndex), checked as sent before Elysia reads them. */
  integerQueryOf(method: string, route: string): readonly string[];
}

/**
 * Cross-cutting HTTP behaviour shared by every module: request ids, credentials
 * checked before anything else, strict JSON bodies, one problem-details shape for
 * every error, and a structured access log.
 */
/** Routes that take telemetry in (a key with telemetry:write): their refusals count in ingest health. */
const isIngest = (access: Access | undefined) => access?.kind === "key" && access.scope === "telemetry:write";

export const httpPlugin = (ctx: AppContext, routes: RouteIndex) => {
  const resolver = new AccessResolver(ctx);
  /** An ingest request refused after its key was known: shown to its organisation (ingest health). */
  const recordRefusal = async (
    request: Request,
    path: string,
    answer: ProblemError,
    body: unknown,
    requestId: string | undefined,
  ) => {
    try {
      const principal = await admittedPrincipalOf(request);
      if (!principal) return;
      ctx.ingestHealth.refused({
        orgId: principal.orgId,
        path,
        status: answer.status,
        code: answer.code,
        detail: answer.detail,
        errors: Array.isArray(answer.extensions.errors) ? answer.extensions.errors : [],
        events: eventsCarried(body),
        requestId,
      });
    } catch (error) {
      // Health is a view on ingest: it never turns a refusal into a crash.
      ctx.log.warn("an ingest refusal could not be counted", { request_id: requestId, ...describeError(error) });
    }
  };
  const bodyLimits = { maxBytes: ctx.config.MAX_BODY_BYTES, timeoutMs: ctx.config.BODY_TIMEOUT_SECONDS * 1000 };
  /**
   * Authenticates against the route's declaration before the body is read (parse)
   * or, for requests without one, before query and path are validated (transform):
   * a caller without the right credential learns nothing about the input's shape.
   */
  const admitEarly = async (context: Parameters<AccessResolver["admit"]>[0] & { route: string }) => {
    const access = routes.accessOf(context.request.method, context.route);
    if (access) await resolver.admit(context, access);
  };
  return (
    new Elysia({ name: "http" })
      .onRequest(({ request, set }) => {
        const incoming = request.headers.get("x-request-id");
        const id = incoming && acceptableRequestId.test(incoming) ? incoming : crypto.randomUUID();
        requestIds.set(request, id);
        requestStarts.set(request, performance.now());
        set.headers["x-request-id"] = id;
      })
      // An empty body is {} on a route that takes none (POST …/approve, DELETE …) or whose every body field
      // is optional, and 400 empty_body where the route needs one (ingest's documents included).
      .onParse({ as: "global" }, async (context) => {
        await admitEarly(context);
        // A batch the gate would refuse is refused before its body is read: under
        // overload, the parsing of refused batches took CPU and memory from the
        // admitted ones (README, Ingest, Backpressure).
        if (routes.shedsWhenFull(context.request.method, context.route)) ctx.ingestGate.refuseWhenFull();
        const takes = routes.bodyOf(context.request.method, context.route);
        const schema = takes === "checkedByHandler" ? undefined : takes;
        // Defined, so that Elysia's own parser does not try an empty body as JSON.
        const empty = takes === undefined || (schema && acceptsEmptyObject(schema)) ? {} : undefined;
        if (hasNoBody(context.request)) {
          if (!empty) throw problem("empty_body", "request body is empty; a JSON document is required");
          return empty;
        }
        const body = await readJsonBody(context.request, bodyLimits, empty);
        // Before Elysia validates it: its error messages recurse through a rejected value,
        // and a few thousand nested arrays took seconds of the event loop or its stack (500).
        // Elysia lets a primitive or an array through a schema whose every member is optional.
        if (schema?.type === "object" && (body === null || typeof body !== "object" || Array.isArray(body))) {
          throw invalid("the request body is invalid: /", [{ path: "/", message: "must be a JSON object" }]);
        }
        const maxDepth = ingestLimits.maxJsonDepth;
        const nested = takes === "checkedByHandler" ? undefined : overNestedPath(body, maxDepth);
        if (nested) {
          const message = `nesting deeper than ${maxDepth} levels`;
          throw invalid(`the request body is invalid: ${nested}`, [{ path: nested, message }]);
        }
        const overLong = schema ? overLongArrays(schema, body) : [];
        if (overLong.length > 0) {
          throw invalid(`the request body is invalid: ${overLong.map((e) => e.path).join(", ")}`, overLong);
        }
        return body;
      })
      .onTransform({ as: "global" }, async (context) => {
        await admitEarly(context);
        refuseNulInQuery(context.request.url);
        // A HEAD is answered by its GET route.
        const method = context.request.method === "HEAD" ? "GET" : context.request.method;
        refuseLooseIntegers(context.request.url, routes.integerQueryOf(method, context.route));
      })
      .onError({ as: "global" }, ({ code, error, request, path, route, body }) => {
        const requestId = requestIds.get(request);
        const known = problemFor({
          code,
          error,
          method: request.method,
          path,
          searchParams: new URL(request.url).searchParams,
          allowedMethods: code === "NOT_FOUND" ? routes.allowedMethods(path) : [],
        });
        if (!known) {
          ctx.log.error("unhandled error", { request_id: requestId, path: loggedPath(path), ...describeError(error) });
        }
        const answer = known ?? internalError();
        if (isIngest(routes.accessOf(request.method, route)))
          void recordRefusal(request, path, answer, body, requestId);
        return problemResponse(answer, path, requestId);
      })
      .onAfterResponse({ as: "global" }, ({ request, path, set }) => {
        const started = requestStarts.get(request);
        ctx.log.info("request", {
          request_id: requestIds.get(request),
          method: request.method,
          path: loggedPath(path),
          status: set.status,
          duration_ms: started === undefined ? undefined : Math.round((performance.now() - started) * 100) / 100,
        });
      })
  );
};
