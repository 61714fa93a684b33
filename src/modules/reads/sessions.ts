import type { Fragment, Sql } from "../../db/sql.ts";
import type { Interval } from "./model.ts";
import { endOf, type Range } from "./read-context.ts";

/**
 * The start of the `unit` (UTC) holding `time`. time_bucket computes timestamptz
 * buckets in UTC, as date_trunc(unit, time, 'UTC') does (weeks from Mondays), at
 * about half the cost: a year of daily timeseries adds up a quarter of a million
 * rollup rows at 20 million events, and the time zone form took half the time.
 */
export const bucketOf = (sql: Sql, unit: Interval, time: Fragment) =>
  sql`time_bucket(${`1 ${unit}`}::interval, ${time})`;

export interface UnionSessionRow {
  kind: "total" | "role" | "agent";
  role: string | null;
  org_id: string | null;
  agent_id: string | null;
  b: Date | null;
  n: string;
}

/**
 * Sessions of an owner with several unrelated verified domains, counted over the
 * union of them (DESIGN "Counting"): a session once, in the period holding its
 * earliest first among the domains; per source role and per reporting agent
 * likewise. Read from session_domain_firsts (sql/030), one row per session and
 * domain, role and reporter. `unit` buckets the totals by that interval (UTC).
 */
export async function unionSessions(
  sql: Sql,
  domains: readonly string[],
  range: Range,
  unit?: Interval,
): Promise<UnionSessionRow[]> {
  const bucket = unit ? bucketOf(sql, unit, sql`first`) : sql`NULL::timestamptz`;
  return sql<UnionSessionRow[]>`
    WITH firsts AS (
      SELECT session_id, source_role, org_id, agent_id, first_seen
      FROM session_domain_firsts
      WHERE domain = ANY (${sql.array([...domains])}::text[]) AND first_seen < ${endOf(range)}
    ),
    earliest AS (
      SELECT 'total' AS kind, NULL::text AS role, NULL::uuid AS org_id, NULL::text AS agent_id, min(first_seen) AS first
      FROM firsts GROUP BY session_id
      UNION ALL
      SELECT 'role', source_role, NULL, NULL, min(first_seen) FROM firsts GROUP BY session_id, source_role
      UNION ALL
      SELECT 'agent', NULL, org_id, nullif(agent_id, ''), min(first_seen) FROM firsts GROUP BY session_id, org_id, agent_id
    )
    SELECT kind, role, org_id, agent_id, ${bucket} AS b, count(*) AS n
    FROM earliest
    WHERE first >= ${range.since} ${unit ? sql`AND kind = 'total'` : sql``}
    GROUP BY kind, role, org_id, agent_id, b`;
}
