// What every read shares: its period, its resolved scope, and small formatting helpers.
import type { Fragment, Sql } from "../../db/sql.ts";
import { type Level, levels, type Piece, planRange } from "./plan.ts";
import { loadStaleRanges, type RollupFamily, type StaleByLevel } from "./rollups.ts";
import { coveringDomains, hostsUnder, type ReadScope } from "./scope.ts";

/** A read's period: [since, until); `until` null is open-ended. */
export interface Range {
  since: Date;
  until: Date | null;
}

/** Stands in for an open end: aligned on every level, later than any event. */
const openEnd = new Date(Date.UTC(9999, 0, 1));
export const endOf = (range: Range) => range.until ?? openEnd;

export const allLevels: readonly Level[] = [levels.month, levels.day, levels.hour];
export const iso = (value: Date | string) => new Date(value).toISOString();
export const count = (value: unknown) => Number(value ?? 0);

/** What one read needs to know about its scope, resolved once. */
export interface Resolved {
  scope: ReadScope;
  /** Filter on events and event rollups. */
  events: Fragment;
  /** Owner reads: the domains that cover the scope without overlap. */
  covering: string[];
  stale: Record<RollupFamily, StaleByLevel>;
}

export async function resolve(sql: Sql, scope: ReadScope): Promise<Resolved> {
  const stale = await loadStaleRanges(sql);
  if (scope.view === "reporter") {
    const agent = scope.agentId === null ? sql`` : sql`AND agent_id = ${scope.agentId}`;
    return { scope, events: sql`org_id = ${scope.orgId}::uuid ${agent}`, covering: [], stale };
  }
  const covering = coveringDomains(scope.domains);
  const hosts = await hostsUnder(sql, covering);
  const events = hosts.length > 0 ? sql`content_host = ANY (${sql.array(hosts)}::text[])` : sql`false`;
  return { scope, events, covering, stale };
}

export function plan(resolved: Resolved, family: RollupFamily, range: Range, order: readonly Level[]): Piece[] {
  return planRange(range.since, endOf(range), order, resolved.stale[family]);
}

export const byCountThenName =
  <T>(countOf: (item: T) => number, nameOf: (item: T) => string) =>
  (a: T, b: T) =>
    countOf(b) - countOf(a) || (nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0);

export function addTo(map: Map<string, number>, key: string, n: number) {
  map.set(key, (map.get(key) ?? 0) + n);
}

/** A missing agent id is stored as '' in scope keys. */
export const agentKey = (platformId: string, agentId: string | null) => `${platformId}|${agentId ?? ""}`;
