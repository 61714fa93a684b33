// What every read shares: its period, its resolved scope, and small formatting helpers.
import { joined } from "../../db/fragments.ts";
import type { Fragment, Sql } from "../../db/sql.ts";
import { bitFirsts, domainFirsts, firstBits, type Measure, type SessionMeasures } from "./measures.ts";
import type { PieceSource } from "./pieces.ts";
import { type Level, levels, type Piece, planRange } from "./plan.ts";
import { loadStaleRanges, type RollupFamily, rollupView, type StaleByLevel } from "./rollups.ts";
import { coveringDomains, hostsUnder, type ReadScope } from "./scope.ts";

/** A read's period: [since, until); `until` null is open-ended. */
export interface Range {
  since: Date;
  until: Date | null;
}

/** Stands in for an open end: aligned on every level, later than any event. */
const openEnd = new Date(Date.UTC(9999, 0, 1));
export const endOf = (range: Range) => range.until ?? openEnd;

/** Every level, coarsest first; a read uses those its family has. */
export const allLevels: readonly Level[] = [levels.quarter, levels.month, levels.week, levels.day, levels.hour];
export const iso = (value: Date | string) => new Date(value).toISOString();
export const count = (value: unknown) => Number(value ?? 0);

/** What one read needs to know about its scope, resolved once. */
export interface Resolved {
  scope: ReadScope;
  /** Filter on events and the rollups keyed by host or reporter. */
  events: Fragment;
  /**
   * Owner reads whose covering domains each have two or three labels: the filter
   * on the domain families' rows (sql/065). Otherwise absent, and those reads use
   * the host family.
   */
  domainRows?: Fragment;
  /** Owner reads: the domains that cover the scope without overlap. */
  covering: string[];
  /** Owner reads: the hosts under those domains, whose events `events` selects (onHosts). */
  hosts: string[];
  /**
   * How sessions are counted: from the first-event flags beside the events, or, for
   * an owner with several unrelated verified domains, as the union of its domains
   * (a session once, at its earliest first among them: sessions.ts).
   */
  sessions: SessionMeasures | { union: string[] };
  /** Sessions per URL, from the URL family of the view. */
  urlSessions: Measure;
  stale: Record<RollupFamily, StaleByLevel>;
}

const labelsOf = (domain: string) => domain.split(".").length;

export async function resolve(sql: Sql, scope: ReadScope): Promise<Resolved> {
  const covering = scope.view === "owner" ? coveringDomains(scope.domains) : [];
  // Sent together: a read's statements share one connection, and these two need
  // nothing of each other, so the second need not wait for the first's answer.
  const [stale, hosts] = await Promise.all([
    loadStaleRanges(sql),
    scope.view === "owner" ? hostsUnder(sql, covering) : [],
  ]);
  if (scope.view === "reporter") {
    const agent = scope.agentId === null ? sql`` : sql`AND agent_id = ${scope.agentId}`;
    const { reporter, agent: agentBit, reporterRole, agentRole, reporterUrl, agentUrl } = firstBits;
    const oneAgent = scope.agentId !== null;
    return {
      scope,
      events: sql`org_id = ${scope.orgId}::uuid ${agent}`,
      covering: [],
      hosts: [],
      sessions: {
        total: oneAgent ? bitFirsts(sql, agentBit, "firsts_agent") : bitFirsts(sql, reporter, "firsts_reporter"),
        byRole: oneAgent
          ? bitFirsts(sql, agentRole, "firsts_agent_role")
          : bitFirsts(sql, reporterRole, "firsts_reporter_role"),
        byAgent: bitFirsts(sql, agentBit, "firsts_agent"),
      },
      urlSessions: oneAgent ? bitFirsts(sql, agentUrl, "firsts_agent") : bitFirsts(sql, reporterUrl, "firsts_reporter"),
      stale,
    };
  }
  const events = onHosts(sql, hosts);
  const labels = covering.length === 1 ? labelsOf(covering[0] as string) : 0;
  return {
    scope,
    events,
    domainRows: domainKeyFilter(sql, covering),
    covering,
    hosts,
    sessions:
      covering.length > 1
        ? { union: covering }
        : {
            total: domainFirsts(sql, "first_domain", labels),
            byRole: domainFirsts(sql, "first_domain_role", labels),
            byAgent: domainFirsts(sql, "first_domain_reporter", labels),
          },
    urlSessions: bitFirsts(sql, firstBits.url, "firsts"),
    stale,
  };
}

/** Events on these hosts, and rows of the rollups keyed by host. */
export const onHosts = (sql: Sql, hosts: string[]): Fragment =>
  hosts.length > 0 ? sql`content_host = ANY (${sql.array(hosts)}::text[])` : sql`false`;

/** The domain families' filter for these domains, when each has two or three labels (sql/065). */
function domainKeyFilter(sql: Sql, covering: readonly string[]): Fragment | undefined {
  if (covering.length === 0 || covering.some((domain) => labelsOf(domain) < 2 || labelsOf(domain) > 3))
    return undefined;
  const parts = (["domain2", "domain3"] as const).flatMap((column, i) => {
    const domains = covering.filter((domain) => labelsOf(domain) === i + 2);
    return domains.length > 0 ? [sql`${sql(column)} = ANY (${sql.array(domains)}::text[])`] : [];
  });
  return sql`(${joined(sql, parts, sql` OR `)})`;
}

/**
 * Where a summary breakdown or timeseries is read and how a piece's rows are
 * filtered: a reporter's own family; an owner's domain family when the owner's
 * domains have one, else the host family, which holds every breakdown. Raw
 * pieces filter on the hosts under the domains, which the events' host index
 * finds (the same events: a host is under a domain exactly when its last labels are it).
 */
export function breakdownSource(
  resolved: Resolved,
  domainFamily: RollupFamily,
): { family: RollupFamily; filter(source: PieceSource): Fragment } {
  const { domainRows } = resolved;
  if (resolved.scope.view === "reporter") return { family: "events_by_reporter", filter: () => resolved.events };
  return domainRows
    ? { family: domainFamily, filter: (source) => (source.raw ? resolved.events : domainRows) }
    : { family: "events_by_host", filter: () => resolved.events };
}

/** The pieces answering `range` from `family`, at those of the levels in `order` the family has. */
export function plan(resolved: Resolved, family: RollupFamily, range: Range, order: readonly Level[]): Piece[] {
  const held = order.filter((level) => rollupView(family, level.name) !== undefined);
  return planRange(range.since, endOf(range), held, resolved.stale[family]);
}

export const byCountThenName =
  <T>(countOf: (item: T) => number, nameOf: (item: T) => string) =>
  (a: T, b: T) =>
    countOf(b) - countOf(a) || (nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0);

export function addTo(map: Map<string, number>, key: string, n: number) {
  map.set(key, (map.get(key) ?? 0) + n);
}

/** One reporting organisation and agent, as a map key. */
export const agentKey = (platformId: string, agentId: string | null) => `${platformId}|${agentId ?? ""}`;
