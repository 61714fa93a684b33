import { domainAndParents } from "../../core/hosts.ts";
import type { Queryable } from "../../db/sql.ts";

export interface Resolution {
  domain: string;
  handled: boolean;
  organization: { id: string; name: string } | null;
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
