import type { Sql } from "../../db/sql.ts";
import type { Level, StaleRange } from "./plan.ts";

type LevelName = Level["name"];

/**
 * The families of continuous aggregates, each at several levels, counting events
 * and sessions: per host with every breakdown, per URL and type, per reporter,
 * URL and type (sql/031), per URL alone, for ranking owners' URLs (sql/062),
 * per owner domain and type, role or agent, for owners' timeseries and
 * summaries (sql/065), and per reporter with every breakdown, per reporter's
 * agent and URL, and per reporter's URL alone, for agent dashboards' (sql/071,
 * sql/072).
 */
const familyViews = {
  events_by_host: levelViews("events_by_host", ["hour", "day", "month"]),
  events_by_url: levelViews("events_by_url", ["hour", "day", "month"]),
  events_by_reporter_url: levelViews("events_by_reporter_url", ["hour", "day", "month"]),
  // Their hours are one family with every breakdown column: summed over the others, a row is the same.
  events_by_domain_type: { hour: "events_by_domain_hour", ...levelViews("events_by_domain_type", ["day", "month"]) },
  events_by_domain_role: { hour: "events_by_domain_hour", ...levelViews("events_by_domain_role", ["day", "month"]) },
  events_by_domain_agent: { hour: "events_by_domain_hour", ...levelViews("events_by_domain_agent", ["day", "month"]) },
  // Its hours are the host family's, which has every column it groups on: summed over hosts, a row is the same.
  events_by_reporter: { hour: "events_by_host_hour", ...levelViews("events_by_reporter", ["day", "month"]) },
  // Its hours are the per-type family's: summed over types, a URL's row is the same.
  url_totals: { hour: "events_by_url_hour", ...levelViews("url_totals", ["day", "week", "month", "quarter"]) },
  // The same for reporters' URLs: its hours are their per-type family's.
  reporter_url_totals: {
    hour: "events_by_reporter_url_hour",
    ...levelViews("reporter_url_totals", ["day", "week", "month", "quarter"]),
  },
  // A whole reporter's URLs, over all its agents: its hours are the per-type family's too.
  whole_reporter_url_totals: {
    hour: "events_by_reporter_url_hour",
    ...levelViews("whole_reporter_url_totals", ["day", "week", "month", "quarter"]),
  },
} satisfies Record<string, Partial<Record<LevelName, string>>>;

export type RollupFamily = keyof typeof familyViews;
export const rollupFamilies = Object.keys(familyViews) as RollupFamily[];

function levelViews(prefix: string, names: readonly LevelName[]): Partial<Record<LevelName, string>> {
  return Object.fromEntries(names.map((name) => [name, `${prefix}_${name}`]));
}

/** The aggregate holding `family` at `level`, if the family has that level. */
export function rollupView(family: RollupFamily, level: LevelName): string | undefined {
  return (familyViews[family] as Partial<Record<LevelName, string>>)[level];
}

export const allRollupViews: readonly string[] = [
  ...new Set(rollupFamilies.flatMap((family) => Object.values(familyViews[family]))),
];

export type StaleByLevel = Partial<Record<LevelName, StaleRange[]>>;

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
    for (const [level, view] of Object.entries(familyViews[family]) as [LevelName, string][]) {
      result[family][level] = rows
        .filter((row) => row.view_name === view)
        .map((row) => ({ lowestMs: Number(row.lowest_ms), greatestMs: Number(row.greatest_ms) }));
    }
  }
  return result;
}
