import { expect, test } from "bun:test";
import { insertEvents } from "../support/events.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { testRuntime } from "../support/runtime.ts";

const policyProcs = ["policy_refresh_continuous_aggregate", "policy_compression"];

// On a server, TimescaleDB's own background jobs refresh the aggregates and
// compress old chunks (the policies of sql/003 and sql/011); nothing of the
// service stands in for them. They must run without errors.
test.skipIf(!process.env.TEST_DATABASE_URL)(
  "TimescaleDB's policies run on the server without errors: aggregates refreshed, old chunks compressed",
  async () => {
    const { ctx } = await testRuntime();
    const sql = ctx.sql;
    const reporter = await createTestOrg({ type: "platform" });
    const old = new Date(Date.now() - 60 * 86_400_000);
    await insertEvents(sql, [
      { event_time: old, org_id: reporter.id, session_id: crypto.randomUUID() },
      { event_time: new Date(Date.now() - 3 * 3_600_000), org_id: reporter.id, session_id: crypto.randomUUID() },
    ]);

    const jobs = await sql<{ job_id: number }[]>`
      SELECT job_id FROM timescaledb_information.jobs WHERE proc_name = ANY (${policyProcs}::text[])`;
    // A refresh policy per continuous aggregate and the compression policy.
    const [aggregates] = await sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM timescaledb_information.continuous_aggregates`;
    expect(aggregates?.n).toBe(20);
    expect(jobs.length).toBe(21);
    const ids = jobs.map((job) => job.job_id);
    const [marker] = await sql<{ now: Date }[]>`SELECT now() AS now`;
    for (const id of ids) await sql`SELECT alter_job(${id}::int, next_start => now())`;

    // The scheduler picks them up by itself; wait for every one to have run since the marker.
    const deadline = Date.now() + 90_000;
    let pending = ids;
    while (pending.length > 0 && Date.now() < deadline) {
      await Bun.sleep(500);
      const done = await sql<{ job_id: number }[]>`
        SELECT job_id FROM timescaledb_information.job_stats
        WHERE job_id = ANY (${ids}::int[]) AND last_run_started_at >= ${marker?.now as Date}
          AND last_run_status IS NOT NULL AND job_status <> 'Running'`;
      const finished = new Set(done.map((row) => row.job_id));
      pending = ids.filter((id) => !finished.has(id));
    }
    expect(pending).toEqual([]);

    // The runs since the marker: earlier in the suite, tests' own refreshAggregates
    // calls (which the service never makes on a server) can collide with a policy
    // run on the same window, and job_errors keeps those too.
    const errors = await sql`
      SELECT job_id, proc_name, err_message FROM timescaledb_information.job_errors
      WHERE job_id = ANY (${ids}::int[]) AND start_time >= ${marker?.now as Date}`;
    expect([...errors]).toEqual([]);
    const failed = await sql`
      SELECT job_id FROM timescaledb_information.job_stats WHERE job_id = ANY (${ids}::int[]) AND last_run_status <> 'Success'`;
    expect([...failed]).toEqual([]);

    const [chunk] = await sql<{ is_compressed: boolean }[]>`
      SELECT is_compressed FROM timescaledb_information.chunks
      WHERE hypertable_name = 'events' AND range_start <= ${old} AND range_end > ${old}`;
    expect(chunk?.is_compressed).toBe(true);
    // The materialised rows themselves hold the old event.
    const [table] = await sql<{ name: string }[]>`
      SELECT format('%I.%I', h.schema_name, h.table_name) AS name
      FROM _timescaledb_catalog.continuous_agg ca JOIN _timescaledb_catalog.hypertable h ON h.id = ca.mat_hypertable_id
      WHERE ca.user_view_name = 'events_by_host_day'`;
    const [materialised] = await sql.unsafe<{ n: string }[]>(
      `SELECT coalesce(sum(events), 0) AS n FROM ${table?.name} WHERE org_id = $1`,
      [reporter.id],
    );
    expect(Number(materialised?.n)).toBe(1);
  },
  120_000,
);
