import type { Sql } from "../../db/client.ts";

/**
 * Which events a read covers. `owner`: events whose host is one of `domains` or a
 * subdomain (an owner's own verified domains, a delegating owner's, or the one
 * `domain` asked for). `reporter`: events the organisation reported itself,
 * optionally from one agent (agent dashboards).
 */
export type ReadScope =
  | { view: "owner"; orgId: string; domains: readonly string[] }
  | { view: "reporter"; orgId: string; agentId: string | null };

/** An owner's domains without those already covered by a parent in the same list. */
export function coveringDomains(domains: readonly string[]): string[] {
  const unique = [...new Set(domains)];
  return unique.filter((domain) => !unique.some((other) => other !== domain && domain.endsWith(`.${other}`))).sort();
}

/** Hosts seen in events that fall under any of `domains` (each covers its subdomains). */
export async function hostsUnder(sql: Sql, domains: readonly string[]): Promise<string[]> {
  if (domains.length === 0) return [];
  // Escaped so that a LIKE wildcard can never widen the match beyond the domain itself.
  const patterns = domains.map((domain) => `%.${domain.replace(/[\\%_]/g, "\\$&")}`);
  const rows = await sql<{ host: string }[]>`
    SELECT host FROM content_hosts
    WHERE host = ANY (${sql.array([...domains])}::text[]) OR host LIKE ANY (${sql.array(patterns)}::text[])`;
  return rows.map((row) => row.host);
}
