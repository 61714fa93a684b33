import { domainAndParents, hostOfUrl, isHostName } from "../../core/hosts.ts";
import { invalid } from "../../core/problem.ts";
import type { Queryable } from "../../db/sql.ts";
import type { Resolution } from "./model.ts";

/** The host of an http or https URL; null for any other. */
function hostOfHttpUrl(url: string): string | null {
  return /^https?:\/\//i.test(url) ? hostOfUrl(url) : null;
}

/** Host of the `domain` or `url` parameter in canonical form (lower case, punycode, no trailing dot). */
export function queriedHost(query: { domain?: string; url?: string }): string {
  if ((query.domain === undefined) === (query.url === undefined)) {
    throw invalid("give exactly one of domain or url", [
      { path: "/domain", message: "exactly one of domain or url is required" },
    ]);
  }
  const host = query.url !== undefined ? hostOfHttpUrl(query.url) : hostOfUrl(`http://${query.domain}/`);
  // The URL parser lets much through (a backslash ends a host, "*" and empty labels pass):
  // only a host name DNS could hold is looked up, which also bounds the lookup's size.
  if (!host || !isHostName(host) || (query.domain !== undefined && /[/:@?#\\*\s]/.test(query.domain))) {
    const path = query.url !== undefined ? "/url" : "/domain";
    const message = query.url !== undefined ? "is not an http or https URL with a host name" : "is not a host name";
    throw invalid("no host name in the query", [{ path, message }]);
  }
  return host;
}

/**
 * Whether a content owner has verified this host (or a parent domain of it).
 * `locked` holds the verified domain found (FOR SHARE) until the caller's
 * transaction ends, so a decision made on it cannot meet its removal.
 */
export async function resolveDomain(sql: Queryable, host: string, locked = false): Promise<Resolution> {
  const [owner] = await sql<{ id: string; name: string }[]>`
    SELECT o.id, o.name
    FROM domains d JOIN organizations o ON o.id = d.org_id
    WHERE d.state = 'verified' AND o.org_type = 'content_owner' AND d.domain IN ${sql(domainAndParents(host))}
    ORDER BY char_length(d.domain) DESC
    LIMIT 1
    ${locked ? sql`FOR SHARE OF d` : sql``}`;
  return { domain: host, handled: owner !== undefined, organization: owner ?? null };
}
