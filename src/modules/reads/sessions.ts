import type { Fragment, Sql } from "../../db/sql.ts";
import type { Interval } from "./model.ts";
import { unionOfPieces } from "./pieces.ts";
import type { Level } from "./plan.ts";
import { agentKey, allLevels, endOf, plan, type Range, type Resolved } from "./read-context.ts";

// Sessions: counted in the scope's first-seen rollups (sql/010_session_firsts.sql).

export interface SessionRow {
  kind: string;
  k1: string;
  k2: string;
  k3: string;
  b: Date | null;
  n: string;
}

/**
 * Sessions per scope key whose first event in that key's scope lies in the range.
 * `union` merges the keys of several k1 values into one scope (an owner with
 * several unrelated verified domains): a session is counted once, at its
 * earliest first time among them, read from the per-session state.
 */
export async function countSessions(
  sql: Sql,
  resolved: Resolved,
  range: Range,
  keys: Fragment,
  options: { union?: boolean; unit?: Interval; order?: readonly Level[] } = {},
): Promise<SessionRow[]> {
  const unit = options.unit;
  if (options.union) {
    const bucket = unit ? sql`date_trunc(${unit}, first, 'UTC')` : sql`NULL::timestamptz`;
    return sql<SessionRow[]>`
      SELECT kind, '' AS k1, k2, k3, ${bucket} AS b, count(*) AS n
      FROM (
        SELECT kind, k2, k3, session_id, min(first_seen) AS first
        FROM session_scope_firsts
        WHERE ${keys} AND first_seen < ${endOf(range)}
        GROUP BY kind, k2, k3, session_id
      ) firsts
      WHERE first >= ${range.since}
      GROUP BY kind, k2, k3, b`;
  }
  const pieces = plan(resolved, "session_firsts", range, options.order ?? allLevels);
  const union = unionOfPieces(sql, "session_firsts", pieces, (source, inRange) => {
    const bucket = unit ? sql`date_trunc(${unit}, ${source.time}, 'UTC')` : sql`NULL::timestamptz`;
    return sql`
      SELECT kind, k1, k2, k3, ${bucket} AS b, ${source.count} AS n
      FROM ${source.table} WHERE ${keys} AND ${inRange}
      GROUP BY kind, k1, k2, k3, b`;
  });
  return sql<SessionRow[]>`
    SELECT kind, k1, k2, k3, b, sum(n) AS n FROM (${union}) pieces
    GROUP BY kind, k1, k2, k3, b HAVING sum(n) <> 0`;
}

/** Session keys of a summary: the whole scope, per source role, per reporting agent. */
export function summarySessionKeys(sql: Sql, resolved: Resolved) {
  const { scope } = resolved;
  if (scope.view === "owner") {
    return {
      keys:
        resolved.covering.length > 0
          ? sql`kind IN ('O', 'OR', 'OA') AND k1 = ANY (${sql.array(resolved.covering)}::text[])`
          : sql`false`,
      union: resolved.covering.length > 1,
      total: (row: SessionRow) => row.kind === "O",
      role: (row: SessionRow) => (row.kind === "OR" ? row.k2 : undefined),
      agent: (row: SessionRow) => (row.kind === "OA" ? agentKey(row.k2, row.k3) : undefined),
    };
  }
  if (scope.agentId === null) {
    return {
      keys: sql`kind IN ('P', 'PR', 'PA') AND k1 = ${scope.orgId}`,
      union: false,
      total: (row: SessionRow) => row.kind === "P",
      role: (row: SessionRow) => (row.kind === "PR" ? row.k2 : undefined),
      agent: (row: SessionRow) => (row.kind === "PA" ? agentKey(scope.orgId, row.k2) : undefined),
    };
  }
  return {
    keys: sql`kind IN ('PA', 'PAR') AND k1 = ${scope.orgId} AND k2 = ${scope.agentId}`,
    union: false,
    total: (row: SessionRow) => row.kind === "PA",
    role: (row: SessionRow) => (row.kind === "PAR" ? row.k3 : undefined),
    agent: (row: SessionRow) => (row.kind === "PA" ? agentKey(scope.orgId, row.k2) : undefined),
  };
}
