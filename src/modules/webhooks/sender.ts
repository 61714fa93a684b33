import { promises as dns, type LookupAddress } from "node:dns";
import type { IncomingMessage } from "node:http";
import { Agent, request } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { rootCertificates } from "node:tls";
import { isLoopbackAddress, isNonPublicAddress } from "../../core/addresses.ts";

/** What one attempt came to; `send` never rejects, every failure is an outcome. */
export interface AttemptOutcome {
  succeeded: boolean;
  /** The HTTP status, when an answer came. */
  statusCode: number | null;
  latencyMs: number;
  /** A short reason when the attempt failed. */
  error: string | null;
  /** The start of the response body (at most `sampleBytes`), decoded as UTF-8. */
  responseSample: string | null;
  /** No HTTP answer at all (timeout, refused, reset, DNS, TLS, refused address). */
  unreachable: boolean;
}

export interface OutboundDelivery {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface WebhookSender {
  send(delivery: OutboundDelivery): Promise<AttemptOutcome>;
  /** Closes kept-alive connections. */
  close(): void;
}

/** Every address of a host name. */
export type ResolveHost = (hostname: string) => Promise<LookupAddress[]>;

export interface SenderOptions {
  /** FOR TESTS ONLY (WEBHOOK_ALLOW_LOOPBACK): loopback addresses pass the address check. */
  allowLoopback: boolean;
  /** PEM certificates trusted besides the system roots (WEBHOOK_CA_FILE). */
  extraCa?: string;
  /** The success window: an answer must start within it (interface spec: 10 s). */
  timeoutMs?: number;
  /** How much of the response body is kept. */
  sampleBytes?: number;
  /** The resolver (the system's by default; tests pass their own). */
  resolveHost?: ResolveHost;
}

export const deliveryTimeoutMs = 10_000;
export const responseSampleBytes = 1024;

/** A host that resolves to an address the guard refuses. */
class RefusedAddressError extends Error {
  override name = "RefusedAddressError";
  readonly code = "ERR_WEBHOOK_REFUSED_ADDRESS";
}

const resetCodes = new Set(["ECONNRESET", "EPIPE", "ERR_SOCKET_CLOSED", "ECONNABORTED"]);
const dnsCodes = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_NONAME", "EAI_FAIL", "ENODATA", "ESERVFAIL"]);

/** A short, stable reason for a failed connection, without stack or internals. */
function describeFailure(error: unknown): string {
  const code = String((error as { code?: unknown })?.code ?? "");
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof RefusedAddressError) return message;
  if (code === "ECONNREFUSED") return "connection refused";
  if (resetCodes.has(code) || /socket hang up/i.test(message)) return "connection reset before an answer";
  if (dnsCodes.has(code)) return "the host name does not resolve";
  if (code === "ETIMEDOUT" || code === "ENETUNREACH" || code === "EHOSTUNREACH") return `cannot connect (${code})`;
  if (/CERT|SELF_SIGNED|TLS|SSL|UNABLE_TO_VERIFY|HOSTNAME|ALTNAME/i.test(`${code} ${message}`)) {
    return `TLS failed: ${(code || message).slice(0, 120)}`;
  }
  if (code.startsWith("HPE_")) return `malformed HTTP answer (${code})`;
  return `request failed: ${(code ? `${code} ` : "") + message}`.slice(0, 200);
}

function outcomeOfStatus(status: number): Pick<AttemptOutcome, "succeeded" | "error"> {
  if (status >= 200 && status < 300) return { succeeded: true, error: null };
  if (status >= 300 && status < 400) return { succeeded: false, error: `redirect (${status}) not followed` };
  return { succeeded: false, error: `status ${status}` };
}

/** The sample as text PostgreSQL can store: valid UTF-8 (lossy at the cut), no NUL. */
function sampleText(chunks: Buffer[], limit: number): string | null {
  const bytes = Buffer.concat(chunks).subarray(0, limit);
  if (bytes.byteLength === 0) return null;
  return bytes.toString("utf8").replaceAll("\u0000", "\uFFFD").slice(0, limit);
}

/**
 * The delivery side of the SSRF guard, and the only way deliveries leave the
 * service: an HTTPS POST whose connection goes to the addresses its own lookup
 * checked. The host is resolved when a connection is made; when any address is
 * private, loopback, link-local, CGNAT, multicast, unspecified or cloud metadata
 * (src/core/addresses.ts, IPv4-mapped forms included) no connection is made.
 * Kept-alive connections are reused: each was checked when it was opened, so DNS
 * cannot rebind a name between the check and the connection. TLS is verified
 * against the host name (SNI and Host are the URL's). Redirects are never
 * followed. An answer must start within `timeoutMs`; at most `sampleBytes` of the
 * body are read within the same window, then the connection is dropped.
 */
export function createWebhookSender(options: SenderOptions): WebhookSender {
  const timeoutMs = options.timeoutMs ?? deliveryTimeoutMs;
  const sampleBytes = options.sampleBytes ?? responseSampleBytes;
  const resolveHost: ResolveHost = options.resolveHost ?? ((hostname) => dns.lookup(hostname, { all: true }));
  const allowed = (address: string) =>
    !isNonPublicAddress(address) || (options.allowLoopback && isLoopbackAddress(address));

  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolveHost(hostname).then(
      (addresses) => {
        const refused = addresses.find((a) => !allowed(a.address));
        if (addresses.length === 0) {
          callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0);
        } else if (refused) {
          callback(
            new RefusedAddressError(`refused: the host resolves to a non-public address (${refused.address})`),
            "",
            0,
          );
        } else if (lookupOptions.all) {
          callback(null, addresses);
        } else {
          const [first] = addresses as [LookupAddress];
          callback(null, first.address, first.family);
        }
      },
      (error: NodeJS.ErrnoException) => callback(error, "", 0),
    );
  };
  const agent = new Agent({
    keepAlive: true,
    lookup,
    ...(options.extraCa ? { ca: [...rootCertificates, options.extraCa] } : {}),
  } as ConstructorParameters<typeof Agent>[0]);

  const refusedOutright = (error: string): AttemptOutcome => ({
    succeeded: false,
    statusCode: null,
    latencyMs: 0,
    error,
    responseSample: null,
    unreachable: true,
  });

  /** One request; `retryOnStaleSocket` sends once more when a kept-alive connection was closed under it. */
  function attempt(delivery: OutboundDelivery, started: number, retryOnStaleSocket: boolean): Promise<AttemptOutcome> {
    let target: URL;
    try {
      target = new URL(delivery.url);
    } catch {
      return Promise.resolve(refusedOutright("the URL cannot be parsed"));
    }
    // URLs are checked at creation; this is the second line for one that got past.
    if (target.protocol !== "https:") return Promise.resolve(refusedOutright("refused: the URL is not https://"));
    if (isIP(target.hostname.replace(/^\[|\]$/g, "")) !== 0) {
      return Promise.resolve(refusedOutright("refused: the URL names an IP address"));
    }
    return new Promise((resolve) => {
      const elapsed = () => Math.max(0, Math.round(performance.now() - started));
      let response: IncomingMessage | undefined;
      const chunks: Buffer[] = [];
      let received = 0;
      let settled = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const finish = (outcome: Omit<AttemptOutcome, "latencyMs">, keepConnection: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (!keepConnection) req.destroy();
        resolve({ ...outcome, latencyMs: elapsed() });
      };
      const answered = (keepConnection: boolean) => {
        const status = response?.statusCode ?? 0;
        finish(
          {
            ...outcomeOfStatus(status),
            statusCode: status,
            responseSample: sampleText(chunks, sampleBytes),
            unreachable: false,
          },
          keepConnection,
        );
      };
      const failed = (error: string) =>
        finish({ succeeded: false, statusCode: null, error, responseSample: null, unreachable: true }, false);

      const req = request(
        target,
        {
          method: "POST",
          agent,
          lookup,
          headers: { ...delivery.headers, "content-length": String(Buffer.byteLength(delivery.body)) },
        },
        (res) => {
          response = res;
          res.on("data", (chunk: Buffer) => {
            if (received < sampleBytes) chunks.push(chunk);
            received += chunk.byteLength;
            // Enough of a sample: the rest of the body is not read.
            if (received >= sampleBytes) answered(false);
          });
          res.on("end", () => answered(true));
          res.on("error", () => answered(false));
          res.on("aborted", () => answered(false));
        },
      );
      timer = setTimeout(
        () => {
          if (response) answered(false);
          else failed(`no answer within ${timeoutMs / 1000} s`);
        },
        Math.max(0, timeoutMs - (performance.now() - started)),
      );
      req.on("error", (error) => {
        if (settled) return;
        if (response) {
          answered(false);
          return;
        }
        const reused = (req as { reusedSocket?: boolean }).reusedSocket === true;
        if (retryOnStaleSocket && reused && describeFailure(error).startsWith("connection reset")) {
          settled = true;
          clearTimeout(timer);
          resolve(attempt(delivery, started, false));
          return;
        }
        failed(describeFailure(error));
      });
      req.end(delivery.body);
    });
  }

  return {
    send: (delivery) => {
      try {
        return attempt(delivery, performance.now(), true);
      } catch (error) {
        return Promise.resolve(refusedOutright(describeFailure(error)));
      }
    },
    close: () => agent.destroy(),
  };
}
