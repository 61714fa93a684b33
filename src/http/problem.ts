import type { ProblemError } from "../core/problem.ts";

/** The RFC 9457 body of a problem: `type` and `code` name it, `errors` lists the fields at fault. */
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
  const standard = {
    type: `urn:content-telemetry:problem:${problem.code}`,
    title: problem.title,
    status: problem.status,
    code: problem.code,
    ...(problem.detail === undefined ? {} : { detail: problem.detail }),
    instance,
    ...(requestId ? { request_id: requestId } : {}),
  };
  // The standard members come first and keep their values: an extension named like one
  // (which ProblemExtensions refuses at compile time) cannot replace it.
  return { ...standard, ...problem.extensions, ...standard };
}

export function problemResponse(problem: ProblemError, instance: string, requestId: string | undefined): Response {
  const headers: Record<string, string> = { ...problem.headers, "content-type": "application/problem+json" };
  if (requestId) headers["x-request-id"] = requestId;
  return new Response(JSON.stringify(problemBody(problem, instance, requestId)), { status: problem.status, headers });
}
