import { describe, expect, test } from "bun:test";
import { scheduledJobs } from "croner";
import { refreshAggregates } from "../../src/db/maintenance.ts";
import { startJobs } from "../../src/jobs/index.ts";
import { loadStaleRanges, rollupFamilies } from "../../src/modules/reads/rollups.ts";
import { insertEvents } from "../support/events.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { testRuntime } from "../support/runtime.ts";

const lateAt = new Date("2025-06-15T12:34:56Z");

function staleAt(ranges: { lowestMs: number; greatestMs: number }[] | undefined, at: Date): boolean {
  return (ranges ?? []).some((range) => range.lowestMs <= at.getTime() && at.getTime() <= range.greatestMs);
}

describe("aggregate refresh job", () => {
  // Three refreshes of every aggregate: seconds on a busy server, whose own policies may hold one up.
  test("materialises new and late events so reads use the rollups again", async () => {
    const { ctx } = await testRuntime();
    const sql = ctx.sql;
    const reporter = await createTestOrg({ type: "platform" });
    await insertEvents(sql, [
      { event_time: new Date("2025-06-20T08:00:00Z"), org_id: reporter.id, session_id: crypto.randomUUID() },
    ]);
    expect(await refreshAggregates(sql)).toBe(true);
    let stale = await loadStaleRanges(sql);
    for (const family of rollupFamilies) {
      for (const level of ["hour", "day", "month"] as const) expect(staleAt(stale[family][level], lateAt)).toBe(false);
    }
    // A late event (older than the refreshed buckets) marks its buckets stale until the next refresh.
    await insertEvents(sql, [{ event_time: lateAt, org_id: reporter.id, session_id: crypto.randomUUID() }]);
    stale = await loadStaleRanges(sql);
    expect(staleAt(stale.events_by_host.day, lateAt)).toBe(true);
    expect(staleAt(stale.events_by_url.month, lateAt)).toBe(true);
    expect(await refreshAggregates(sql)).toBe(true);
    stale = await loadStaleRanges(sql);
    expect(staleAt(stale.events_by_host.day, lateAt)).toBe(false);
    expect(staleAt(stale.events_by_url.month, lateAt)).toBe(false);

    // The materialised rows themselves (not the real-time part) now hold both events.
    const [table] = await sql<{ name: string }[]>`
      SELECT format('%I.%I', h.schema_name, h.table_name) AS name
      FROM _timescaledb_catalog.continuous_agg ca JOIN _timescaledb_catalog.hypertable h ON h.id = ca.mat_hypertable_id
      WHERE ca.user_view_name = 'events_by_host_month'`;
    const [row] = await sql.unsafe<{ n: string }[]>(
      `SELECT sum(events) AS n FROM ${table?.name} WHERE org_id = $1 AND bucket = '2025-06-01T00:00:00Z'`,
      [reporter.id],
    );
    expect(Number(row?.n)).toBe(2);
  }, 60_000);

  test("the service schedules its jobs and the engine's upkeep: stand-ins on the embedded engine, none on a server", async () => {
    const { ctx, db } = await testRuntime();
    const upkeep = db.maintenance.map((job) => job.name);
    expect(upkeep).toEqual(db.kind === "embedded" ? ["refresh-aggregates", "compression"] : []);
    const jobs = startJobs(ctx);
    try {
      const own = [
        "sign-in-purge",
        "manifest-refresh",
        "expire-click-tokens",
        "expire-delegation-requests",
        "webhook-sweep",
        "webhook-purge",
      ];
      expect(scheduledJobs.map((job) => job.name).sort()).toEqual([...own, ...upkeep].sort());
    } finally {
      await jobs.stop();
    }
    expect(scheduledJobs).toEqual([]);
  });
});
