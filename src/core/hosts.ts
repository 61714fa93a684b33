import { getDomain, getPublicSuffix } from "tldts";
import { invalid } from "./problem.ts";

/** Why a host cannot be registered as a content owner's domain. */
export class DomainError extends Error {
  override name = "DomainError";
}

const label = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const ipv4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** A suffix under which anyone may register: ICANN's and the private section's (`co.uk`, `github.io`). */
const isPublicSuffix = (host: string) => getPublicSuffix(host, { allowPrivateDomains: true }) === host;

/**
 * Canonical form of a registrable host: lower case, no trailing dot, IDN in
 * punycode (via the WHATWG URL parser), at least two labels; IPs, localhost and
 * public suffixes (ICANN and private sections of the Public Suffix List, such as
 * `co.uk` or `github.io`) refused: no one organisation can own those.
 */
export function normalizeDomain(input: string): string {
  const trimmed = input.trim().replace(/\.$/, "");
  if (trimmed === "" || trimmed.includes("/") || trimmed.includes(":") || trimmed.includes("@")) {
    throw new DomainError(`"${input}" is not a host name`);
  }
  let host: string;
  try {
    host = new URL(`http://${trimmed}/`).hostname;
  } catch {
    throw new DomainError(`"${input}" is not a host name`);
  }
  if (ipv4.test(host) || host.startsWith("[")) throw new DomainError("IP addresses cannot be registered as domains");
  if (host === "localhost" || host.endsWith(".localhost")) throw new DomainError("localhost cannot be registered");
  const labels = host.split(".");
  if (labels.length < 2 || !labels.every((l) => label.test(l)) || host.length > 253) {
    throw new DomainError(`"${input}" is not a registrable domain name`);
  }
  if (isPublicSuffix(host)) {
    throw new DomainError(`${host} is a public suffix and cannot be registered`);
  }
  return host;
}

/** Whether a canonical host is a host name DNS could hold: labels of 1 to 63 letters, digits and hyphens, 253 at most in all. */
export function isHostName(host: string): boolean {
  return host.length <= 253 && host.split(".").every((part) => label.test(part));
}

/** The host of a parsed URL in the same canonical form, or null when it has none. */
export function hostOfParsedUrl(url: URL): string | null {
  const host = url.hostname.replace(/\.$/, "").toLowerCase();
  return host === "" ? null : host;
}

/** The host of a URL in the same canonical form, or null when the URL has none. */
export function hostOfUrl(url: string): string | null {
  try {
    return hostOfParsedUrl(new URL(url));
  } catch {
    return null;
  }
}

/** True when `host` is `domain` or one of its subdomains. */
export function isWithinDomain(host: string, domain: string): boolean {
  return host === domain || host.endsWith(`.${domain}`);
}

/**
 * A domain's subdomains as a range of reversed names: reversed, each subdomain of
 * `d` lies in [reverse(d) + ".", reverse(d) + "/") in byte order (collation "C"),
 * so an index on reverse(name) finds them all as one range, never by a scan.
 */
export function subdomainsReversed(domain: string): { low: string; high: string } {
  const reversed = [...domain].reverse().join("");
  return { low: `${reversed}.`, high: `${reversed}/` };
}

/** The host and each parent domain of it, longest first: a verified domain covers its subdomains. */
export function domainAndParents(host: string): string[] {
  const labels = host.split(".");
  return labels.slice(0, -1).map((_, i) => labels.slice(i).join("."));
}

/**
 * The site of a canonical host, as browsers read "same site": its registrable
 * domain under the ICANN and private sections of the Public Suffix List
 * (`news.example.co.uk` and `www.example.co.uk` are `example.co.uk`, while
 * `a.github.io` and `b.github.io` are two sites); a host without one (an IP
 * address, localhost) is its own site.
 */
export function siteOf(host: string): string {
  return getDomain(host, { allowPrivateDomains: true }) ?? host;
}

/**
 * The shortest parent of a canonical domain (or itself) that is not a public
 * suffix: `example.co.uk` for `news.example.co.uk`. A domain and all its parents
 * and subdomains that anyone can hold share it, also across a private suffix
 * (`amazonaws.com` and `bucket.s3.amazonaws.com`), which the registrable domain
 * would split.
 */
export function domainFamily(domain: string): string {
  return domainAndParents(domain).findLast((parent) => !isPublicSuffix(parent)) ?? domain;
}

/** Runs `fn`, turning a refused host name into a 400 naming the body field it came from. */
export async function withDomainInput<T>(path: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof DomainError) {
      throw invalid(error.message, [{ path, message: error.message }], "invalid_domain");
    }
    throw error;
  }
}

/** `input` in canonical form (normalizeDomain), or a 400 invalid_domain naming the field `/domain`. */
export const domainInput = (input: string): Promise<string> =>
  withDomainInput("/domain", async () => normalizeDomain(input));
