import type { Sql } from "../../db/sql.ts";
import type { Level, StaleRange } from "./plan.ts";

/**
 * The families of continuous aggregates, each at every level, counting events and
 * sessions: per host with every breakdown, per URL, per reporter and URL (sql/031),
 * and per host and type alone, for owners' timeseries (sql/060).
 */
export const rollupFamilies = [
  "events_by_host",
  "events_by_url",
  "events_by_reporter_url",
  "events_by_host_type",
] as const;
export type RollupFamily = (typeof rollupFamilies)[number];

export const rollupLevels: readonly Level["name"][] = ["hour", "day", "month"];

export function rollupView(family: RollupFamily, level: Level["name"]): string {
  return `${family}_${level}`;
}

export const allRollupViews: readonly string[] = rollupFamilies.flatMap((family) =>
  rollupLevels.map((level) => rollupView(family, level)),
);

export type StaleByLevel = Partial<Record<Level["name"], StaleRange[]>>;

/**
 * Per family and level, the time ranges whose materialised buckets are not yet
 * up to date: late rows since the last refresh, and everything from the
 * aggregate's watermark on (the aggregates are materialised-only, sql/061).
 * Read once per request.
 */
export async function loadStaleRanges(sql: Sql): Promise<Record<RollupFamily, StaleByLevel>> {
  const rows = await sql<{ view_name: string; lowest_ms: number; greatest_ms: number }[]>`
    SELECT view_name, lowest_ms, greatest_ms FROM rollup_stale_ranges(${sql.array([...allRollupViews])})`;
  const result = Object.fromEntries(rollupFamilies.map((family) => [family, {}])) as Record<RollupFamily, StaleByLevel>;
  for (const family of rollupFamilies) {
    for (const level of rollupLevels) {
      const view = rollupView(family, level);
      result[family][level] = rows
        .filter((row) => row.view_name === view)
        .map((row) => ({ lowestMs: Number(row.lowest_ms), greatestMs: Number(row.greatest_ms) }));
    }
  }
  return result;
}
