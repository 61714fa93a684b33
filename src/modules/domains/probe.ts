import { promises as dns, type LookupAddress } from "node:dns";
import { get as httpGet } from "node:http";
import { get as httpsGet } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { Readable } from "node:stream";

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

/** True for addresses a verifier must never be pointed at: private, loopback, link-local (cloud metadata), unspecified. */
export function isNonPublicAddress(address: string): boolean {
  if (isIP(address) === 4) {
    const [a = 0, b = 0] = address.split(".").map(Number);
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b < 128) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b < 32) ||
      (a === 192 && b === 168) ||
      a >= 224
    );
  }
  const v6 = address.toLowerCase();
  if (v6.startsWith("::ffff:")) return isNonPublicAddress(v6.slice(7));
  return v6 === "::" || v6 === "::1" || v6.startsWith("fc") || v6.startsWith("fd") || v6.startsWith("fe80");
}

/** Every address of a host name, as the system resolver gives them. */
export type ResolveHost = (hostname: string) => Promise<LookupAddress[]>;

const nullBodyStatuses = new Set([101, 204, 205, 304]);

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
          const status = response.statusCode ?? 502;
          const headers = new Headers();
          for (const [name, value] of Object.entries(response.headers)) {
            if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
          }
          const body = nullBodyStatuses.has(status) ? null : (Readable.toWeb(response) as ReadableStream<Uint8Array>);
          if (!body) response.resume();
          resolve(new Response(body, { status, headers }));
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
