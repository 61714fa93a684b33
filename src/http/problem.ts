/** One failing field of a request, by JSON-pointer-like path. */
export interface FieldError {
  path: string;
  message: string;
}

/**
 * An RFC 9457 problem. Thrown anywhere in a request; the errors plugin turns it
 * into an `application/problem+json` response with a stable `code`.
 */
export class ProblemError extends Error {
  override name = "ProblemError";
  constructor(
    readonly status: number,
    readonly code: string,
    readonly title: string,
    readonly detail?: string,
    readonly extensions: Record<string, unknown> = {},
    /** Response headers the problem needs (Allow, Retry-After, …). */
    readonly headers: Record<string, string> = {},
  ) {
    super(detail ?? title);
  }
}

export const problems = {
  badRequest: (code: string, detail: string, extensions?: Record<string, unknown>) =>
    new ProblemError(400, code, "Bad request", detail, extensions),
  unauthorized: (detail: string) => new ProblemError(401, "unauthorized", "Unauthorized", detail),
  forbidden: (code: string, detail: string, extensions?: Record<string, unknown>) =>
    new ProblemError(403, code, "Forbidden", detail, extensions),
  notFound: (code: string, detail: string) => new ProblemError(404, code, "Not found", detail),
  conflict: (code: string, detail: string) => new ProblemError(409, code, "Conflict", detail),
  gone: (code: string, detail: string) => new ProblemError(410, code, "Gone", detail),
  payloadTooLarge: (detail: string) => new ProblemError(413, "payload_too_large", "Payload too large", detail),
  unsupportedMediaType: (detail: string) =>
    new ProblemError(415, "unsupported_media_type", "Unsupported media type", detail),
  invalid: (detail: string, errors: FieldError[], code = "validation_failed", extensions?: Record<string, unknown>) =>
    new ProblemError(422, code, "Unprocessable content", detail, { errors, ...extensions }),
  tooManyRequests: (
    code: string,
    detail: string,
    headers?: Record<string, string>,
    extensions?: Record<string, unknown>,
  ) => new ProblemError(429, code, "Too many requests", detail, extensions, headers),
  unavailable: (code: string, detail: string) => new ProblemError(503, code, "Service unavailable", detail),
};

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  code: string;
  detail?: string;
  instance?: string;
  request_id?: string;
  [extension: string]: unknown;
}

export function problemBody(problem: ProblemError, instance: string, requestId: string | undefined): ProblemBody {
  return {
    type: `urn:content-telemetry:problem:${problem.code}`,
    title: problem.title,
    status: problem.status,
    code: problem.code,
    ...(problem.detail === undefined ? {} : { detail: problem.detail }),
    instance,
    ...(requestId ? { request_id: requestId } : {}),
    ...problem.extensions,
  };
}

export function problemResponse(problem: ProblemError, instance: string, requestId: string | undefined): Response {
  const headers: Record<string, string> = { ...problem.headers, "content-type": "application/problem+json" };
  if (requestId) headers["x-request-id"] = requestId;
  return new Response(JSON.stringify(problemBody(problem, instance, requestId)), { status: problem.status, headers });
}
