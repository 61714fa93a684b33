import { expect, test } from "bun:test";
import type { Sql } from "../../src/db/sql.ts";
import { allRollupViews } from "../../src/modules/reads/rollups.ts";
import { insertEvents } from "../support/events.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { testRuntime } from "../support/runtime.ts";

/** The ids of the policy jobs running `proc`. */
async function policyJobs(sql: Sql, proc: "policy_refresh_continuous_aggregate" | "policy_compression") {
  const jobs = await sql<{ job_id: number }[]>`
    SELECT job_id FROM timescaledb_information.jobs WHERE proc_name = ${proc} ORDER BY job_id`;
  return jobs.map((job) => job.job_id);
}

/**
 * Starts the jobs now and waits until TimescaleDB's scheduler has run each of them;
 * returns the time they were started at.
 */
async function runNow(sql: Sql, ids: readonly number[]): Promise<Date> {
  const [marker] = await sql<{ now: Date }[]>`SELECT now() AS now`;
  for (const id of ids) await sql`SELECT alter_job(${id}::int, next_start => now())`;
  const deadline = Date.now() + 90_000;
  let pending = ids;
  while (pending.length > 0 && Date.now() < deadline) {
    // Again for any the scheduler has put off since: a run under way when it was
    // asked for sets its next start a schedule interval after it ends (a minute
    // for the hour-level rollups, which a busy machine's wait can pass).
    const idle = await sql<{ job_id: number }[]>`
      SELECT job_id FROM timescaledb_information.job_stats
      WHERE job_id = ANY (${pending}::int[]) AND job_status <> 'Running' AND next_start > now()`;
    for (const { job_id } of idle) await sql`SELECT alter_job(${job_id}::int, next_start => now())`;
    await Bun.sleep(500);
    const done = await sql<{ job_id: number }[]>`
      SELECT job_id FROM timescaledb_information.job_stats
      WHERE job_id = ANY (${ids}::int[]) AND last_run_started_at >= ${marker?.now as Date}
        AND last_run_status IS NOT NULL AND job_status <> 'Running'`;
    const finished = new Set(done.map((row) => row.job_id));
    pending = ids.filter((id) => !finished.has(id));
  }
  expect(pending).toEqual([]);
  return marker?.now as Date;
}

/** The schema-qualified materialised hypertable of a continuous aggregate. */
async function materialisedTable(sql: Sql, view: string): Promise<{ schema: string; name: string }> {
  const [table] = await sql<{ schema: string; name: string }[]>`
    SELECT h.schema_name AS schema, h.table_name AS name
    FROM _timescaledb_catalog.continuous_agg ca JOIN _timescaledb_catalog.hypertable h ON h.id = ca.mat_hypertable_id
    WHERE ca.user_view_name = ${view}`;
  if (!table) throw new Error(`no continuous aggregate ${view}`);
  return table;
}

// On a server, TimescaleDB's own background jobs refresh the aggregates and
// compress old chunks (the policies of sql/003, sql/011 and sql/069); nothing of
// the service stands in for them. They must run without errors.
test.skipIf(!process.env.TEST_DATABASE_URL)(
  "TimescaleDB's policies run on the server without errors: aggregates refreshed, old chunks compressed",
  async () => {
    const { ctx } = await testRuntime();
    const sql = ctx.sql;
    const reporter = await createTestOrg({ type: "platform" });
    const old = new Date(Date.now() - 60 * 86_400_000);
    // Old enough that the hour-level rollups' chunk holding it (70 days wide) is past 30 days too.
    const older = new Date(Date.now() - 150 * 86_400_000);
    await insertEvents(sql, [
      { event_time: old, org_id: reporter.id, session_id: crypto.randomUUID() },
      { event_time: older, org_id: reporter.id, session_id: crypto.randomUUID() },
      { event_time: new Date(Date.now() - 3 * 3_600_000), org_id: reporter.id, session_id: crypto.randomUUID() },
    ]);

    // A continuous aggregate for each rollup the reads use, a refresh policy for
    // each, and compression policies for the events and the four hour-level rollups.
    const [aggregates] = await sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM timescaledb_information.continuous_aggregates`;
    expect(aggregates?.n).toBe(allRollupViews.length);
    const refreshes = await policyJobs(sql, "policy_refresh_continuous_aggregate");
    const compressions = await policyJobs(sql, "policy_compression");
    expect(refreshes.length).toBe(allRollupViews.length);
    expect(compressions.length).toBe(5);

    // The refreshes first, so that the old hours are materialised before they are compressed.
    const since = await runNow(sql, refreshes);
    await runNow(sql, compressions);

    // The runs since the marker: earlier in the suite, tests' own refreshAggregates
    // calls (which the service never makes on a server) can collide with a policy
    // run on the same window, and job_errors keeps those too.
    const ids = [...refreshes, ...compressions];
    const errors = await sql`
      SELECT job_id, proc_name, err_message FROM timescaledb_information.job_errors
      WHERE job_id = ANY (${ids}::int[]) AND start_time >= ${since}`;
    expect([...errors]).toEqual([]);
    const failed = await sql`
      SELECT job_id FROM timescaledb_information.job_stats WHERE job_id = ANY (${ids}::int[]) AND last_run_status <> 'Success'`;
    expect([...failed]).toEqual([]);

    const compressedAt = async (schema: string, hypertable: string, time: Date) => {
      const [chunk] = await sql<{ is_compressed: boolean }[]>`
        SELECT is_compressed FROM timescaledb_information.chunks
        WHERE hypertable_schema = ${schema} AND hypertable_name = ${hypertable}
          AND range_start <= ${time} AND range_end > ${time}`;
      return chunk?.is_compressed;
    };
    expect(await compressedAt("public", "events", old)).toBe(true);
    const hours = await materialisedTable(sql, "events_by_host_hour");
    expect(await compressedAt(hours.schema, hours.name, older)).toBe(true);

    // The materialised rows themselves hold the old events, compressed or not; the
    // event of three hours ago is in neither (the day policy stops a day back).
    for (const [view, events] of [
      ["events_by_host_day", 2],
      ["events_by_host_hour", 2],
    ] as const) {
      const table = await materialisedTable(sql, view);
      const [materialised] = await sql<{ n: string }[]>`
        SELECT coalesce(sum(events), 0) AS n FROM ${sql(table.schema)}.${sql(table.name)}
        WHERE org_id = ${reporter.id}::uuid AND bucket < ${new Date(Date.now() - 86_400_000)}`;
      expect({ view, events: Number(materialised?.n) }).toEqual({ view, events });
    }
  },
  240_000,
);
