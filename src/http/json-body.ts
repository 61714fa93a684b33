import { problem } from "../core/problem.ts";
import { type BodyLimits, readBoundedBody } from "./body-stream.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The exact bytes of each request's JSON body, for checking a signature over them (signed telemetry). */
const rawBodies = new WeakMap<Request, Uint8Array>();

/** The bytes readJsonBody read from `request`; undefined when it read none. */
export const rawBodyOf = (request: Request): Uint8Array | undefined => rawBodies.get(request);

export function isJsonContentType(contentType: string | null): boolean {
  if (!contentType) return false;
  const mediaType = contentType.split(";", 1)[0]?.trim().toLowerCase() ?? "";
  return mediaType === "application/json" || (mediaType.startsWith("application/") && mediaType.endsWith("+json"));
}

/**
 * Reads a request body as strict JSON: at most `limits.maxBytes` (checked while it
 * streams in, after decompression), in time, valid UTF-8, and a JSON text. Every
 * failure is a 4xx problem, never a 500. An empty body is `empty` where the route
 * takes one (every field optional), otherwise refused.
 */
export async function readJsonBody(request: Request, limits: BodyLimits, empty?: object): Promise<unknown> {
  const bytes = await readBoundedBody(request, limits);
  // An empty body is none, whatever Content-Type says (a stream of no bytes has no Content-Length).
  if (bytes.byteLength === 0) {
    if (empty) return empty;
    throw problem("empty_body", "request body is empty; a JSON document is required");
  }
  if (!isJsonContentType(request.headers.get("content-type"))) {
    throw problem("unsupported_media_type", "request bodies must be JSON: send Content-Type: application/json");
  }
  rawBodies.set(request, bytes);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw problem("invalid_utf8", "request body is not valid UTF-8");
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    const reason = error instanceof SyntaxError ? error.message : "document is too deeply nested";
    throw problem("malformed_json", `request body is not valid JSON: ${reason}`);
  }
}
