import { promises as dns, type LookupAddress } from "node:dns";
import { get as httpGet } from "node:http";
import { get as httpsGet } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { Readable } from "node:stream";
import { isNonPublicAddress } from "../../core/addresses.ts";

/**
 * The outside world as domain verification sees it. Injected (AppContext) so that
 * tests run the real verification logic against an in-test resolver and a local
 * HTTP server.
 */
export interface DomainProbe {
  /** TXT records at `name`, each record's strings joined; empty when there are none. */
  txtRecords(name: string): Promise<string[]>;
  /** A GET the verifier makes (never following redirects). */
  fetch(url: string, init: RequestInit): Promise<Response>;
}

const noRecords = new Set(["ENOTFOUND", "ENODATA", "ESERVFAIL", "ETIMEOUT", "ECONNREFUSED", "EREFUSED"]);

/** Every address of a host name, as the system resolver gives them. */
export type ResolveHost = (hostname: string) => Promise<LookupAddress[]>;

const nullBodyStatuses = new Set([204, 205, 304]);

/**
 * A GET whose connection goes to the addresses its own lookup checked: the host is
 * resolved once, refused when any address is not allowed, and the socket connects
 * to exactly those addresses. DNS therefore cannot pass the check with one address
 * and serve the connection from another (rebinding). Redirects are never followed.
 */
function pinnedGet(resolveHost: ResolveHost, isAllowed: (address: string) => boolean) {
  const lookup: LookupFunction = (hostname, options, callback) => {
    resolveHost(hostname).then(
      (addresses) => {
        if (addresses.length === 0 || addresses.some((a) => !isAllowed(a.address))) {
          callback(new Error("the host resolves to a non-public address"), "", 0);
        } else if (options.all) {
          callback(null, addresses);
        } else {
          const [first] = addresses as [LookupAddress];
          callback(null, first.address, first.family);
        }
      },
      (error: NodeJS.ErrnoException) => callback(error, "", 0),
    );
  };
  return (url: string, init: RequestInit): Promise<Response> =>
    new Promise((resolve, reject) => {
      const target = new URL(url);
      // A literal address is connected to without a lookup: check it here.
      const literal = target.hostname.replace(/^\[|\]$/g, "");
      if (isIP(literal) && !isAllowed(literal)) {
        reject(new Error("the host is a non-public address"));
        return;
      }
      const send = target.protocol === "https:" ? httpsGet : httpGet;
      const request = send(
        target,
        // No pooled connection: every request goes through the checked lookup.
        { lookup, agent: false, headers: init.headers as Record<string, string>, signal: init.signal ?? undefined },
        (response) => {
          const status = response.statusCode ?? 0;
          if (status < 200 || status > 599) {
            response.destroy();
            reject(new Error(`the site answered with status ${status}`));
            return;
          }
          try {
            const headers = new Headers();
            for (const [name, value] of Object.entries(response.headers)) {
              if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
            }
            // node:stream/web's ReadableStream type differs from the global one (the dashboard's
            // type check sees DOM's); the object is the same.
            const body = nullBodyStatuses.has(status) ? null : (Readable.toWeb(response) as unknown as ReadableStream);
            if (!body) response.resume();
            resolve(new Response(body, { status, headers }));
          } catch (error) {
            response.destroy();
            reject(error);
          }
        },
      );
      request.on("error", reject);
    });
}

/**
 * The real resolver and fetcher. The fetcher reaches only hosts whose every address
 * is public (`isAllowed`, replaceable with `resolveHost` so tests can check the
 * pinning against a local server).
 */
export function systemProbe(
  resolveHost: ResolveHost = (hostname) => dns.lookup(hostname, { all: true }),
  isAllowed: (address: string) => boolean = (address) => !isNonPublicAddress(address),
): DomainProbe {
  return {
    async txtRecords(name) {
      try {
        return (await dns.resolveTxt(name)).map((chunks) => chunks.join(""));
      } catch (error) {
        if (noRecords.has((error as { code?: string }).code ?? "")) return [];
        throw error;
      }
    },
    fetch: pinnedGet(resolveHost, isAllowed),
  };
}

export const systemDomainProbe = systemProbe();

/** A GET's outcome as the verifiers use it: the body as text, or why there is none. */
export type CappedGet = { ok: true; body: string; headers: Headers } | { ok: false; reason: string };

/**
 * GETs `url` through the probe with every limit a verifier needs: no redirects,
 * `timeoutMs` for the whole exchange (headers and body), at most `maxBytes` of
 * body, and status 200 only. Never throws: the reason says what went wrong.
 */
export async function getCapped(
  probe: DomainProbe,
  url: string,
  limits: { accept: string; timeoutMs: number; maxBytes: number },
): Promise<CappedGet> {
  const signal = AbortSignal.timeout(limits.timeoutMs);
  try {
    const response = await probe.fetch(url, { redirect: "manual", signal, headers: { accept: limits.accept } });
    if (response.status !== 200) {
      await response.body?.cancel();
      return { ok: false, reason: `${url} answered ${response.status} (redirects are not followed)` };
    }
    const body = await readCapped(response, limits.maxBytes);
    if (body === null) return { ok: false, reason: `${url} is larger than ${limits.maxBytes} bytes` };
    return { ok: true, body, headers: response.headers };
  } catch (error) {
    const reason = signal.aborted ? `did not answer within ${limits.timeoutMs} ms` : (error as Error).message;
    return { ok: false, reason: `${url} could not be fetched: ${reason}` };
  }
}

/** The body as text, or null when it is larger than `limit` bytes. */
async function readCapped(response: Response, limit: number): Promise<string | null> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}
