import { testRuntime } from "./runtime.ts";

export interface CallOptions {
  key?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface CallResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** Something that answers requests without a network: the app, or one built with other settings. */
export interface RequestHandler {
  handle(request: Request): Promise<Response>;
}

/** Sends one request through `app` and decodes its JSON body. */
export async function callApp<T = any>(
  app: RequestHandler,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<CallResult<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers["x-api-key"] = options.key;
  let body: string | Uint8Array | undefined;
  if (options.body !== undefined) {
    // Text and bytes (a compressed body) are sent as they are; anything else as JSON.
    body =
      typeof options.body === "string" || options.body instanceof Uint8Array
        ? options.body
        : JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const response = await app.handle(new Request(`http://test.local${path}`, { method, headers, body }));
  const text = await response.text();
  let parsed: unknown = text;
  if ((response.headers.get("content-type") ?? "").includes("json") && text !== "") parsed = JSON.parse(text);
  if (response.headers.get("content-type")?.startsWith("application/problem+json")) {
    assertProblemShape(response.status, parsed);
  }
  return { status: response.status, headers: response.headers, body: parsed as T };
}

/**
 * Every problem any test receives is checked against RFC 9457 and the service's
 * own members, so that an extension overwriting one (a `status` of "approved")
 * fails whichever test meets it.
 */
function assertProblemShape(status: number, body: unknown): void {
  const problem = body as Record<string, unknown>;
  const wrong = [
    problem.status === status ? null : `status ${JSON.stringify(problem.status)} on a ${status}`,
    typeof problem.code === "string" ? null : "no code",
    problem.type === `urn:content-telemetry:problem:${problem.code}` ? null : `type ${JSON.stringify(problem.type)}`,
    typeof problem.title === "string" ? null : "no title",
  ].filter((reason) => reason !== null);
  if (wrong.length > 0) throw new Error(`malformed problem (${wrong.join("; ")}): ${JSON.stringify(body)}`);
}

/** Sends one request through the real app (no network) and decodes its JSON body. */
export async function call<T = any>(method: string, path: string, options: CallOptions = {}): Promise<CallResult<T>> {
  return callApp<T>((await testRuntime()).app, method, path, options);
}

/**
 * A service process reached over loopback HTTP, for `callApp`. A request it does
 * not answer within `timeoutMs` fails the test instead of hanging it.
 */
export function overHttp(base: string, timeoutMs = 30_000): RequestHandler {
  return {
    handle: (request) =>
      fetch(request.url.replace("http://test.local", base), {
        method: request.method,
        headers: request.headers,
        body: request.body,
        signal: AbortSignal.timeout(timeoutMs),
      }),
  };
}
