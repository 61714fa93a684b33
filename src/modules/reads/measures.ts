import type { Fragment, Sql } from "../../db/sql.ts";

/**
 * What a read adds up, written once for both places a piece of a range is read
 * from: a rollup row stands for many events (`row`: its share, summed over the
 * rows of a group), raw rows for one each (`raw`: the aggregate over a group).
 */
export interface Measure {
  row: Fragment;
  raw: Fragment;
}

export const eventCount = (sql: Sql): Measure => ({ row: sql`events`, raw: sql`count(*)` });

/**
 * Sessions counted from the owner-side domain flags (sql/030): events whose
 * session is first in a domain of at most `labels` labels, that is, first in the
 * read's domain. Rollups group on these flags, so the filter applies to their rows.
 */
export function domainFirsts(
  sql: Sql,
  flag: "first_domain" | "first_domain_role" | "first_domain_reporter",
  labels: number,
): Measure {
  const first = sql`${sql(flag)} BETWEEN 1 AND ${labels}::smallint`;
  return { row: sql`CASE WHEN ${first} THEN events ELSE 0 END`, raw: sql`count(*) FILTER (WHERE ${first})` };
}

/** The bits of `first_in` (sql/030), and the rollup column that sums each. */
export const firstBits = {
  url: 1,
  reporterUrl: 2,
  agentUrl: 4,
  reporter: 8,
  agent: 16,
  reporterRole: 32,
  agentRole: 64,
} as const;

/** Sessions counted from one bit of `first_in`; `column` is the rollup's sum of it (sql/031). */
export function bitFirsts(sql: Sql, bit: number, column: string): Measure {
  return { row: sql`${sql(column)}`, raw: sql`count(*) FILTER (WHERE first_in & ${bit}::smallint <> 0)` };
}

/** How a read counts sessions per dimension of the summary and timeseries. */
export interface SessionMeasures {
  total: Measure;
  byRole: Measure;
  byAgent: Measure;
}
