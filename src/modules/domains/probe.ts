import { promises as dns } from "node:dns";
import { isIP } from "node:net";

/**
 * The outside world as domain verification sees it. Injected (AppContext) so that
 * tests run the real verification logic against an in-test resolver and a local
 * HTTP server.
 */
export interface DomainProbe {
  /** TXT records at `name`, each record's strings joined; empty when there are none. */
  txtRecords(name: string): Promise<string[]>;
  /** An HTTP request the verifier makes (never following redirects). */
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

/** The real resolver and fetcher; the fetcher refuses hosts that resolve to non-public addresses. */
export const systemDomainProbe: DomainProbe = {
  async txtRecords(name) {
    try {
      return (await dns.resolveTxt(name)).map((chunks) => chunks.join(""));
    } catch (error) {
      if (noRecords.has((error as { code?: string }).code ?? "")) return [];
      throw error;
    }
  },
  async fetch(url, init) {
    const addresses = await dns.lookup(new URL(url).hostname, { all: true });
    if (addresses.length === 0 || addresses.some((a) => isNonPublicAddress(a.address))) {
      throw new Error("the host resolves to a non-public address");
    }
    return fetch(url, init);
  },
};
