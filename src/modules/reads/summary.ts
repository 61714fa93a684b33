import type { Sql } from "../../db/sql.ts";
import { eventCount } from "./measures.ts";
import { unionOfPieces } from "./pieces.ts";
import {
  addTo,
  agentKey,
  allLevels,
  byCountThenName,
  count,
  iso,
  plan,
  type Range,
  type Resolved,
  resolve,
} from "./read-context.ts";
import type { ReadScope } from "./scope.ts";
import { unionSessions } from "./sessions.ts";

interface EventCountRow {
  event_type: string;
  source_role: string;
  org_id: string;
  agent_id: string | null;
  n: string;
  /** Sessions whose first event in the scope (as a whole, per role, per agent) this row holds. */
  sessions: string;
  role_sessions: string;
  agent_sessions: string;
}

/** Events per type, role and reporting agent; with the sessions first in each when the flags count them. */
export async function countEvents(sql: Sql, resolved: Resolved, range: Range): Promise<EventCountRow[]> {
  const pieces = plan(resolved, "events_by_host", range, allLevels);
  const counting = "union" in resolved.sessions ? undefined : resolved.sessions;
  const union = unionOfPieces(sql, "events_by_host", pieces, (source, inRange) => {
    const sessions = counting
      ? sql`${source.measure(counting.total)} AS sessions, ${source.measure(counting.byRole)} AS role_sessions,
            ${source.measure(counting.byAgent)} AS agent_sessions`
      : sql`0 AS sessions, 0 AS role_sessions, 0 AS agent_sessions`;
    return sql`
      SELECT event_type, source_role, org_id, agent_id, ${source.measure(eventCount(sql))} AS n, ${sessions}
      FROM ${source.table} WHERE ${resolved.events} AND ${inRange}
      GROUP BY event_type, source_role, org_id, agent_id`;
  });
  return sql<EventCountRow[]>`
    SELECT event_type, source_role, org_id, agent_id, sum(n) AS n, sum(sessions) AS sessions,
           sum(role_sessions) AS role_sessions, sum(agent_sessions) AS agent_sessions
    FROM (${union}) pieces
    GROUP BY event_type, source_role, org_id, agent_id`;
}

export async function summarize(sql: Sql, scope: ReadScope, range: Range) {
  const resolved = await resolve(sql, scope);
  // One after the other: the embedded engine has a single connection.
  const rows = await countEvents(sql, resolved, range);
  const unionRows = "union" in resolved.sessions ? await unionSessions(sql, resolved.sessions.union, range) : [];

  const byType = new Map<string, number>();
  const byRole = new Map<string, number>();
  const byAgent = new Map<string, { platform_id: string; agent_id: string | null; event_count: number }>();
  const roleSessions = new Map<string, number>();
  const agentSessions = new Map<string, number>();
  let totalEvents = 0;
  let totalSessions = 0;
  for (const row of rows) {
    const n = count(row.n);
    totalEvents += n;
    addTo(byType, row.event_type, n);
    addTo(byRole, row.source_role, n);
    const key = agentKey(row.org_id, row.agent_id);
    const agent = byAgent.get(key) ?? { platform_id: row.org_id, agent_id: row.agent_id, event_count: 0 };
    agent.event_count += n;
    byAgent.set(key, agent);
    totalSessions += count(row.sessions);
    addTo(roleSessions, row.source_role, count(row.role_sessions));
    addTo(agentSessions, key, count(row.agent_sessions));
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
