import { subdomainsReversed } from "../../core/hosts.ts";
import type { Sql } from "../../db/sql.ts";

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
  // An index range per domain (sql/014), never a scan of every host.
  const ranges = domains.map(subdomainsReversed);
  const rows = await sql<{ host: string }[]>`
    SELECT host FROM content_hosts WHERE host = ANY (${sql.array([...domains])}::text[])
    UNION
    SELECT h.host
    FROM unnest(${sql.array(ranges.map((r) => r.low))}::text[], ${sql.array(ranges.map((r) => r.high))}::text[])
      AS r (low, high)
    JOIN content_hosts h
      ON reverse(h.host) COLLATE "C" >= r.low COLLATE "C" AND reverse(h.host) COLLATE "C" < r.high COLLATE "C"`;
  return rows.map((row) => row.host);
}
