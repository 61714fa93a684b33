import { ProblemError, problem } from "../core/problem.ts";

/** How much of a request body the service takes in, and for how long. */
export interface BodyLimits {
  /** Largest body, in bytes, after decompression (MAX_BODY_BYTES). */
  maxBytes: number;
  /** Time the whole body may take to arrive (BODY_TIMEOUT_SECONDS), so a stalled upload frees its connection. */
  timeoutMs: number;
}

/** The Content-Encoding values accepted, by the name DecompressionStream knows them by. */
type Format = ConstructorParameters<typeof DecompressionStream>[0];
const decoders: Record<string, Format> = {
  gzip: "gzip",
  "x-gzip": "gzip",
  deflate: "deflate",
  // Bun's DecompressionStream also takes these two, beyond the Compression Streams standard.
  br: "brotli" as Format,
  zstd: "zstd" as Format,
};

export const acceptedContentEncodings = Object.keys(decoders);

function decoderFor(request: Request): Format | undefined {
  const encoding = (request.headers.get("content-encoding") ?? "identity").trim().toLowerCase();
  if (encoding === "identity" || encoding === "") return undefined;
  const format = decoders[encoding];
  if (!format) {
    throw problem(
      "unsupported_content_encoding",
      `Content-Encoding ${encoding} is not accepted: send identity, ${acceptedContentEncodings.join(", ")}`,
      { accepted_encodings: acceptedContentEncodings },
    );
  }
  return format;
}

const tooLarge = (limits: BodyLimits, decompressed: boolean) =>
  problem(
    "payload_too_large",
    `request body exceeds ${limits.maxBytes} bytes${decompressed ? " once decompressed" : ""}`,
    {
      max_body_bytes: limits.maxBytes,
    },
  );

/**
 * Reads a request body as it streams in, decompressing it when it is sent
 * compressed, and stops at the first chunk past the limit (a decompression bomb
 * ends after `maxBytes`, not after it has filled memory) or at the deadline.
 * Every failure is a 4xx problem.
 */
export async function readBoundedBody(request: Request, limits: BodyLimits): Promise<Uint8Array> {
  const format = decoderFor(request);
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > limits.maxBytes) throw tooLarge(limits, false);
  if (!request.body) return new Uint8Array();
  const stream = format ? request.body.pipeThrough(new DecompressionStream(format)) : request.body;
  const reader = stream.getReader();
  let timer: Timer | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(problem("body_timeout", `the request body did not arrive within ${limits.timeoutMs / 1000} s`)),
      limits.timeoutMs,
    );
  });
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), deadline]);
      if (done) break;
      size += value.byteLength;
      if (size > limits.maxBytes) throw tooLarge(limits, format !== undefined);
      chunks.push(value);
    }
  } catch (error) {
    reader.cancel().catch(() => {});
    if (error instanceof ProblemError) throw error;
    if (format)
      throw problem("malformed_body", `the body is not valid ${request.headers.get("content-encoding")} data`);
    throw error;
  } finally {
    clearTimeout(timer);
  }
  return Buffer.concat(chunks, size);
}
