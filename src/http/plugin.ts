import { Elysia, ValidationError } from "elysia";
import postgres from "postgres";
import type { AppContext } from "../context.ts";
import { describeError } from "../log.ts";
import { readJsonBody } from "./json-body.ts";
import { type FieldError, ProblemError, problemResponse, problems } from "./problem.ts";

const requestIds = new WeakMap<Request, string>();
const requestStarts = new WeakMap<Request, number>();
const acceptableRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

/** Turns a TypeBox validation failure into one entry per failing field. */
function fieldErrors(error: ValidationError): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const item of error.all) {
    const path = "path" in item && typeof item.path === "string" ? item.path || "/" : "/";
    const message = "message" in item && typeof item.message === "string" ? item.message : "is invalid";
    const key = `${path}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ path, message });
  }
  return out;
}

/**
 * Elysia decodes numeric query parameters one at a time; one out of range throws a
 * "property" ValidationError that no longer knows the parameter's name, only its
 * value. The query parameter holding that value is named instead ("/" when none or
 * several do), so the 422 says which one to fix.
 */
function queryParameterPath(error: ValidationError, query: Record<string, unknown> | undefined): string | undefined {
  const holders = Object.keys(query ?? {}).filter((name) => Number(query?.[name]) === error.value);
  return holders.length === 1 ? `/${holders[0]}` : undefined;
}

/** Postgres errors that are the caller's fault or a passing outage; everything else is a 500. */
function fromPostgres(error: postgres.PostgresError): ProblemError | undefined {
  switch (error.code) {
    case "23505":
      return problems.conflict("conflict", "a record with the same identity already exists");
    case "22021":
      return problems.invalid(
        "text values cannot contain NUL (\\u0000) characters",
        [{ path: "/", message: "a text value contains a NUL character" }],
        "invalid_text",
      );
    case "57014":
      return problems.unavailable("query_timeout", "the query took too long; narrow the time range or try again");
    case "57P01":
    case "57P03":
    case "53300":
      return problems.unavailable("database_unavailable", "the database is not accepting requests right now");
    default:
      return undefined;
  }
}

function hasNoBody(request: Request): boolean {
  return (
    !request.headers.get("content-type") && (request.body === null || request.headers.get("content-length") === "0")
  );
}

const connectionErrors = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECT_TIMEOUT",
]);

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
    .onError({ as: "global" }, ({ code, error: thrown, request, path, query }) => {
      const requestId = requestIds.get(request);
      // Elysia wraps whatever the body parser throws in a ParseError; the cause is ours.
      const error = code === "PARSE" && thrown.cause instanceof ProblemError ? thrown.cause : thrown;
      let problem: ProblemError;
      if (error instanceof ProblemError) {
        problem = error;
      } else if (error instanceof ValidationError) {
        const queryPath = error.type === "property" ? queryParameterPath(error, query) : undefined;
        const errors = queryPath ? fieldErrors(error).map((e) => ({ ...e, path: queryPath })) : fieldErrors(error);
        const where = error.type === "body" ? "request body is" : `${queryPath ? "query" : error.type} parameters are`;
        problem = problems.invalid(`the ${where} invalid: ${errors.map((e) => e.path).join(", ")}`, errors);
      } else if (code === "PARSE") {
        problem = problems.badRequest("malformed_body", "request body could not be parsed");
      } else if (code === "NOT_FOUND") {
        const methods = allowedMethods(path);
        problem =
          methods.length > 0
            ? new ProblemError(
                405,
                "method_not_allowed",
                "Method not allowed",
                `${request.method} is not allowed here`,
                { allow: methods },
                { allow: methods.join(", ") },
              )
            : problems.notFound("route_not_found", `no route for ${request.method} ${path}`);
      } else if (error instanceof postgres.PostgresError && fromPostgres(error)) {
        problem = fromPostgres(error) as ProblemError;
      } else if (
        typeof error === "object" &&
        error !== null &&
        "code" in error &&
        connectionErrors.has(String(error.code))
      ) {
        problem = problems.unavailable("database_unavailable", "the database cannot be reached");
      } else {
        ctx.log.error("unhandled error", { request_id: requestId, path, ...describeError(error) });
        problem = new ProblemError(500, "internal_error", "Internal server error", "an unexpected error occurred");
      }
      return problemResponse(problem, path, requestId);
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
