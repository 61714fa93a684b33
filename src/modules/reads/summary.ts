import { joined } from "../../db/fragments.ts";
import type { Sql } from "../../db/sql.ts";
import { eventCount } from "./measures.ts";
import { unionOfPieces } from "./pieces.ts";
import {
  addTo,
  agentKey,
  allLevels,
  breakdownSource,
  byCountThenName,
  count,
  iso,
  plan,
  type Range,
  type Resolved,
  resolve,
} from "./read-context.ts";
import type { RollupFamily } from "./rollups.ts";
import type { ReadScope } from "./scope.ts";
import { unionSessions } from "./sessions.ts";

export type BreakdownKind = "type" | "role" | "agent";

interface BreakdownRow {
  kind: BreakdownKind;
  event_type: string | null;
  source_role: string | null;
  org_id: string | null;
  agent_id: string | null;
  n: string;
  /** Sessions whose first event in the scope (by type: as a whole; by role; by agent) this row holds. */
  sessions: string;
}

/**
 * Per breakdown, its key columns, with NULL for the others so that all three
 * share one row shape, and the owner-domain family that holds it (sql/065;
 * breakdownSource says when it is read).
 */
const breakdownKeys: Record<BreakdownKind, { keys: string[]; domainFamily: RollupFamily }> = {
  type: { keys: ["event_type"], domainFamily: "events_by_domain_type" },
  role: { keys: ["source_role"], domainFamily: "events_by_domain_role" },
  agent: { keys: ["org_id", "agent_id"], domainFamily: "events_by_domain_agent" },
};
/** Every key column of the three breakdowns, as NULL of its type. */
const nullKeys = (sql: Sql) => ({
  event_type: sql`NULL::text`,
  source_role: sql`NULL::text`,
  org_id: sql`NULL::uuid`,
  agent_id: sql`NULL::text`,
});

/**
 * Events per type, per role and per reporting agent, each breakdown on its own,
 * in one statement (one snapshot); with the sessions first in each when the
 * flags count them (by type: the scope's sessions as a whole).
 */
export async function countBreakdowns(
  sql: Sql,
  resolved: Resolved,
  range: Range,
  kinds: readonly BreakdownKind[] = ["type", "role", "agent"],
): Promise<BreakdownRow[]> {
  const counting = "union" in resolved.sessions ? undefined : resolved.sessions;
  const sessionsOf = { type: counting?.total, role: counting?.byRole, agent: counting?.byAgent };
  const parts = kinds.map((kind) => {
    const { keys, domainFamily } = breakdownKeys[kind];
    const { family, filter } = breakdownSource(resolved, domainFamily);
    const columns = joined(
      sql,
      Object.entries(nullKeys(sql)).map(([column, nothing]) =>
        keys.includes(column) ? sql`${sql(column)}` : sql`${nothing} AS ${sql(column)}`,
      ),
    );
    const groupBy = sql`${sql(keys)}`;
    const union = unionOfPieces(sql, family, plan(resolved, family, range, allLevels), (source, inRange) => {
      const sessions = sessionsOf[kind];
      return sql`
        SELECT ${columns}, ${source.measure(eventCount(sql))} AS n, ${sessions ? source.measure(sessions) : sql`0`} AS sessions
        FROM ${source.table} WHERE ${filter(source)} AND ${inRange}
        ${source.groupBy(groupBy)}`;
    });
    return sql`
      SELECT ${kind}::text AS kind, event_type, source_role, org_id, agent_id, sum(n) AS n, sum(sessions) AS sessions
      FROM (${union}) pieces GROUP BY event_type, source_role, org_id, agent_id`;
  });
  return sql<BreakdownRow[]>`${joined(sql, parts, sql` UNION ALL `)}`;
}

export async function summarize(sql: Sql, scope: ReadScope, range: Range) {
  const resolved = await resolve(sql, scope);
  // Sent together on the read's one connection; PostgreSQL runs them in turn.
  const [rows, unionRows] = await Promise.all([
    countBreakdowns(sql, resolved, range),
    "union" in resolved.sessions ? unionSessions(sql, resolved.sessions.union, range) : [],
  ]);

  const byType = new Map<string, number>();
  const byRole = new Map<string, number>();
  const byAgent = new Map<string, { platform_id: string; agent_id: string | null; event_count: number }>();
  const roleSessions = new Map<string, number>();
  const agentSessions = new Map<string, number>();
  let totalEvents = 0;
  let totalSessions = 0;
  for (const row of rows) {
    const n = count(row.n);
    if (row.kind === "type") {
      totalEvents += n;
      totalSessions += count(row.sessions);
      addTo(byType, row.event_type as string, n);
    } else if (row.kind === "role") {
      addTo(byRole, row.source_role as string, n);
      addTo(roleSessions, row.source_role as string, count(row.sessions));
    } else {
      const key = agentKey(row.org_id as string, row.agent_id);
      const agent = byAgent.get(key) ?? { platform_id: row.org_id as string, agent_id: row.agent_id, event_count: 0 };
      agent.event_count += n;
      byAgent.set(key, agent);
      addTo(agentSessions, key, count(row.sessions));
    }
  }
  for (const row of unionRows) {
    const n = count(row.n);
    if (row.kind === "total") totalSessions += n;
    else if (row.kind === "role") addTo(roleSessions, row.role as string, n);
    else addTo(agentSessions, agentKey(row.org_id as string, row.agent_id), n);
  }

  return {
    organization_id: scope.orgId,
    domains: scope.view === "owner" ? [...scope.domains] : [],
    total_events: totalEvents,
    total_sessions: totalSessions,
    events_by_type: [...byType]
      .map(([event_type, n]) => ({ event_type, count: n }))
      .sort(
        byCountThenName(
          (x) => x.count,
          (x) => x.event_type,
        ),
      ),
    events_by_source: [...byRole]
      .map(([source_role, n]) => ({ source_role, count: n, sessions: roleSessions.get(source_role) ?? 0 }))
      .sort(
        byCountThenName(
          (x) => x.count,
          (x) => x.source_role,
        ),
      ),
    agents: [...byAgent]
      .map(([key, agent]) => ({ ...agent, session_count: agentSessions.get(key) ?? 0 }))
      .sort(
        byCountThenName(
          (x) => x.event_count,
          (x) => agentKey(x.platform_id, x.agent_id),
        ),
      ),
    period_start: iso(range.since),
    period_end: range.until ? iso(range.until) : null,
  };
}
