import type { ValueError } from "@sinclair/typebox/errors";
import { ValidationError } from "elysia";
import postgres from "postgres";
import { type FieldError, invalid, ProblemError, problem } from "../core/problem.ts";
import { describeErrors } from "../core/schema-errors.ts";
import { isDatabaseUnavailable } from "../db/unavailable.ts";

/** Turns a TypeBox validation failure into one entry per failing field, naming the allowed values. */
function fieldErrors(error: ValidationError): FieldError[] {
  const described = error.all.filter((item): item is ValueError => "schema" in item && typeof item.type === "number");
  if (described.length > 0) return describeErrors(described);
  return [{ path: "/", message: "is invalid" }];
}

/**
 * Elysia decodes numeric query parameters one at a time; one out of range throws a
 * "property" ValidationError that no longer knows the parameter's name, only its
 * value. The query parameter holding that value is named instead ("/" when none or
 * several do), so the 400 says which one to fix.
 */
function queryParameterPath(error: ValidationError, searchParams: URLSearchParams): string | undefined {
  // The parameters as sent, not after defaults were applied (an omitted offset becomes 0 too).
  const holders = [...new Set(searchParams.keys())].filter((name) => Number(searchParams.get(name)) === error.value);
  return holders.length === 1 ? `/${holders[0]}` : undefined;
}

/** Where Elysia's validation failed, in an API user's words. */
const placeNames: Record<string, string> = { params: "path", query: "query", headers: "header" };

function fromValidation(error: ValidationError, searchParams: URLSearchParams): ProblemError {
  const queryPath = error.type === "property" ? queryParameterPath(error, searchParams) : undefined;
  const errors = queryPath ? fieldErrors(error).map((e) => ({ ...e, path: queryPath })) : fieldErrors(error);
  const where =
    error.type === "body"
      ? "request body is"
      : `${queryPath ? "query" : (placeNames[error.type] ?? error.type)} parameters are`;
  return invalid(`the ${where} invalid: ${errors.map((e) => e.path).join(", ")}`, errors);
}

/** A database that is away (restarting, full) is usually back within seconds: clients retry after one. */
const retryAfter = { "retry-after": "1" };
const databaseUnavailable = () =>
  problem(
    "database_unavailable",
    "the database is unavailable for the moment (restarting, unreachable or out of connections)",
    {},
    retryAfter,
  );

/** Postgres errors that are the caller's fault or a timeout; everything else is a 500. */
function fromPostgres(error: postgres.PostgresError): ProblemError | undefined {
  switch (error.code) {
    case "23505":
      return problem("conflict", "a record with the same identity already exists");
    case "22021":
      return invalid(
        "text values cannot contain NUL (\\u0000) characters",
        [{ path: "/", message: "a text value contains a NUL character" }],
        "invalid_text",
      );
    case "57014":
      return problem("query_timeout", "the query took too long; narrow the time range or try again", {}, retryAfter);
    default:
      return undefined;
  }
}

export interface FailedRequest {
  /** Elysia's error code: PARSE, NOT_FOUND, VALIDATION, … */
  code: string | number;
  error: unknown;
  method: string;
  path: string;
  /** The query string as sent. */
  searchParams: URLSearchParams;
  /** Methods the path answers to, for a 405 instead of a 404. */
  allowedMethods: string[];
}

/**
 * The one rule from a thrown error to a problem: services throw ProblemError
 * with a closed code; schema failures, unknown routes, the database's refusals
 * and outages have their own codes; anything else is an internal error (undefined
 * here, so the caller logs it with its stack).
 */
export function problemFor(failed: FailedRequest): ProblemError | undefined {
  const { code, method, path } = failed;
  // Elysia wraps whatever the body parser throws in a ParseError; the cause is ours.
  const thrown = failed.error;
  const error =
    code === "PARSE" && thrown instanceof Error && thrown.cause instanceof ProblemError ? thrown.cause : thrown;
  if (error instanceof ProblemError) return error;
  // An answer that fails its own response schema is the service's fault: an internal error, logged.
  if (error instanceof ValidationError && error.type !== "response") return fromValidation(error, failed.searchParams);
  if (code === "PARSE") return problem("malformed_body", "request body could not be parsed");
  if (code === "NOT_FOUND") {
    const methods = failed.allowedMethods;
    return methods.length > 0
      ? problem(
          "method_not_allowed",
          `${method} is not allowed here`,
          { allow: methods },
          { allow: methods.join(", ") },
        )
      : problem("route_not_found", `no route for ${method} ${path}`);
  }
  if (isDatabaseUnavailable(error)) return databaseUnavailable();
  if (error instanceof postgres.PostgresError) return fromPostgres(error);
  return undefined;
}

export const internalError = () => problem("internal_error", "an unexpected error occurred");
