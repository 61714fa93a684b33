import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { describeError } from "../log.ts";
import { internalError, problemFor } from "./errors.ts";
import { readJsonBody } from "./json-body.ts";
import { problemResponse } from "./problem.ts";

const requestIds = new WeakMap<Request, string>();
const requestStarts = new WeakMap<Request, number>();
const acceptableRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

function hasNoBody(request: Request): boolean {
  return (
    !request.headers.get("content-type") && (request.body === null || request.headers.get("content-length") === "0")
  );
}

/**
 * Cross-cutting HTTP behaviour shared by every module: request ids, strict JSON
 * bodies, one problem-details shape for every error, and a structured access log.
 * `allowedMethods` lets an unknown method on a known path answer 405, not 404.
 */
export const httpPlugin = (ctx: AppContext, allowedMethods: (path: string) => string[]) =>
  new Elysia({ name: "http" })
    .onRequest(({ request, set }) => {
      const incoming = request.headers.get("x-request-id");
      const id = incoming && acceptableRequestId.test(incoming) ? incoming : crypto.randomUUID();
      requestIds.set(request, id);
      requestStarts.set(request, performance.now());
      set.headers["x-request-id"] = id;
    })
    // A bodiless request (POST …/approve, …/sign-out) is left unparsed; routes with a body schema then answer 422.
    .onParse({ as: "global" }, ({ request }) =>
      hasNoBody(request) ? undefined : readJsonBody(request, ctx.config.MAX_BODY_BYTES),
    )
    .onError({ as: "global" }, ({ code, error, request, path, query }) => {
      const requestId = requestIds.get(request);
      const known = problemFor({
        code,
        error,
        method: request.method,
        path,
        query,
        allowedMethods: code === "NOT_FOUND" ? allowedMethods(path) : [],
      });
      if (!known) ctx.log.error("unhandled error", { request_id: requestId, path, ...describeError(error) });
      return problemResponse(known ?? internalError(), path, requestId);
    })
    .onAfterResponse({ as: "global" }, ({ request, path, set }) => {
      const started = requestStarts.get(request);
      ctx.log.info("request", {
        request_id: requestIds.get(request),
        method: request.method,
        path,
        status: set.status,
        duration_ms: started === undefined ? undefined : Math.round((performance.now() - started) * 100) / 100,
      });
    });
