import type { Sql } from "../../db/sql.ts";
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
import { countSessions, summarySessionKeys } from "./sessions.ts";

interface EventCountRow {
  event_type: string;
  source_role: string;
  org_id: string;
  agent_id: string | null;
  n: string;
}

export async function countEvents(sql: Sql, resolved: Resolved, range: Range): Promise<EventCountRow[]> {
  const pieces = plan(resolved, "events_by_host", range, allLevels);
  const union = unionOfPieces(
    sql,
    "events_by_host",
    pieces,
    (source, inRange) => sql`
      SELECT event_type, source_role, org_id, agent_id, ${source.count} AS n
      FROM ${source.table} WHERE ${resolved.events} AND ${inRange}
      GROUP BY event_type, source_role, org_id, agent_id`,
  );
  return sql<EventCountRow[]>`
    SELECT event_type, source_role, org_id, agent_id, sum(n) AS n FROM (${union}) pieces
    GROUP BY event_type, source_role, org_id, agent_id`;
}

export async function summarize(sql: Sql, scope: ReadScope, range: Range) {
  const resolved = await resolve(sql, scope);
  const sessionKeys = summarySessionKeys(sql, resolved);
  // One after the other: the embedded engine has a single connection.
  const events = await countEvents(sql, resolved, range);
  const sessions = await countSessions(sql, resolved, range, sessionKeys.keys, { union: sessionKeys.union });

  const byType = new Map<string, number>();
  const byRole = new Map<string, number>();
  const byAgent = new Map<string, { platform_id: string; agent_id: string | null; event_count: number }>();
  let totalEvents = 0;
  for (const row of events) {
    const n = count(row.n);
    totalEvents += n;
    addTo(byType, row.event_type, n);
    addTo(byRole, row.source_role, n);
    const key = agentKey(row.org_id, row.agent_id);
    const agent = byAgent.get(key) ?? { platform_id: row.org_id, agent_id: row.agent_id, event_count: 0 };
    agent.event_count += n;
    byAgent.set(key, agent);
  }
  let totalSessions = 0;
  const roleSessions = new Map<string, number>();
  const agentSessions = new Map<string, number>();
  for (const row of sessions) {
    const n = count(row.n);
    if (sessionKeys.total(row)) totalSessions += n;
    const role = sessionKeys.role(row);
    if (role !== undefined) addTo(roleSessions, role, n);
    const agent = sessionKeys.agent(row);
    if (agent !== undefined) addTo(agentSessions, agent, n);
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
