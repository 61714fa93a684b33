import { expect, test } from "bun:test";
import { connect } from "../../src/db/client.ts";
import { runCompressionPolicies } from "../../src/db/maintenance.ts";
import { migrate } from "../../src/db/migrate.ts";
import type { Sql } from "../../src/db/sql.ts";
import { createLogger } from "../../src/log.ts";
import { createOrganization } from "../../src/modules/organizations/service.ts";
import { scratchDatabase, testServerUrl } from "../support/databases.ts";
import { insertEvents } from "../support/events.ts";

const day = 86_400_000;

/** The events chunk holding `time`, once one of its events is stored. */
async function eventsChunkAt(sql: Sql, time: Date): Promise<string> {
  const [chunk] = await sql<{ name: string }[]>`
    SELECT format('%I.%I', chunk_schema, chunk_name) AS name FROM timescaledb_information.chunks
    WHERE hypertable_name = 'events' AND range_start <= ${time} AND range_end > ${time}`;
  if (!chunk) throw new Error(`no events chunk at ${time.toISOString()}`);
  return chunk.name;
}

/**
 * Runs of compression policy `job` that `holder` blocks: ours, from a client
 * session, and the scheduler's, in a background worker named after the job.
 */
async function blockedRuns(watcher: Sql, holder: number, job: number) {
  const [runs] = await watcher<{ clients: number; schedulers: number }[]>`
    SELECT count(*) FILTER (WHERE backend_type = 'client backend')::int AS clients,
           count(*) FILTER (WHERE backend_type = format('Columnstore Policy [%s]', ${job}::int))::int AS schedulers
    FROM pg_stat_activity
    WHERE datname = current_database() AND query LIKE '%policy_compression%'
      AND ${holder}::int = ANY (pg_blocking_pids(pid))`;
  return runs ?? { clients: 0, schedulers: 0 };
}

/** Waits until `holder` blocks `clients` runs of `job` of ours and `schedulers` of TimescaleDB's. */
async function untilBlocked(watcher: Sql, holder: number, job: number, want: { clients: number; schedulers: number }) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const runs = await blockedRuns(watcher, holder, job);
    if (runs.clients === want.clients && runs.schedulers === want.schedulers) return;
    if (Date.now() > deadline) {
      // What this database's sessions were doing, so a failure says why.
      const sessions = await watcher`
        SELECT pid, backend_type, state, wait_event_type, wait_event, pg_blocking_pids(pid) AS blockers, left(query, 80) AS query
        FROM pg_stat_activity WHERE datname = current_database()`;
      throw new Error(
        `timed out waiting for ${JSON.stringify(want)} blocked by ${holder}; sessions: ${JSON.stringify(sessions)}`,
      );
    }
    await Bun.sleep(100);
  }
}

// Tests and benchmarks run the compression policies on a server too, beside
// TimescaleDB's scheduler (src/db/maintenance.ts). A chunk compressed by another
// session while a policy run waits for it fails that run; the run is tried again
// only when the other session was the scheduler running the same job.
test.skipIf(!testServerUrl)(
  "a compression run that meets the scheduler's run of its policy tries again; one that meets another session fails at once",
  async () => {
    const db = await scratchDatabase();
    const sql = db.sql;
    const watcher = connect(db.url, 1);
    const holder = await sql.reserve();
    try {
      const [session] = await holder<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
      const holderPid = session?.pid as number;
      await migrate(sql, createLogger("error"));
      const [events] = await sql<{ job_id: number }[]>`
        SELECT job_id FROM timescaledb_information.jobs WHERE proc_name = 'policy_compression' AND hypertable_name = 'events'`;
      const job = events?.job_id as number;
      // The scheduler's own runs only where this test starts them: its refresh
      // policies, too, would wait for the chunk being compressed.
      await sql`
        SELECT alter_job(job_id, scheduled => false) FROM timescaledb_information.jobs
        WHERE proc_name IN ('policy_compression', 'policy_refresh_continuous_aggregate')`;
      const reporter = await createOrganization(sql, { name: "compression retry", orgType: "platform" });
      // Each time, one chunk due for compression: a run that compresses none fails.
      const first = new Date(Date.now() - 60 * day);
      await insertEvents(sql, [{ event_time: first, org_id: reporter.id }]);

      // Another session compresses the chunk while the run waits for it: not the
      // scheduler's work, so the run fails without trying again for a minute.
      await holder`BEGIN`;
      await holder`SELECT compress_chunk(${await eventsChunkAt(sql, first)}::regclass)`;
      const started = Date.now();
      const alone = runCompressionPolicies(sql).then(
        () => undefined,
        (error: Error) => error,
      );
      await untilBlocked(watcher, holderPid, job, { clients: 1, schedulers: 0 });
      await holder`COMMIT`;
      expect((await alone)?.message).toBe("columnstore policy failure");
      expect(Date.now() - started).toBeLessThan(30_000);

      // The scheduler runs the events' policy and waits for the next chunk, and so
      // does ours: the chunk the scheduler failed on is its work, so ours tries again.
      const second = new Date(Date.now() - 90 * day);
      await insertEvents(sql, [{ event_time: second, org_id: reporter.id }]);
      await holder`BEGIN`;
      await holder`SELECT compress_chunk(${await eventsChunkAt(sql, second)}::regclass)`;
      await sql`SELECT alter_job(${job}::int, scheduled => true, next_start => now())`;
      await untilBlocked(watcher, holderPid, job, { clients: 0, schedulers: 1 });
      const beside = runCompressionPolicies(sql);
      await untilBlocked(watcher, holderPid, job, { clients: 1, schedulers: 1 });
      await holder`COMMIT`;
      expect(await beside).toBe(true);
      const [left] = await sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM timescaledb_information.chunks
        WHERE hypertable_name = 'events' AND NOT is_compressed AND range_end < now() - interval '30 days'`;
      expect(left?.n).toBe(0);
    } finally {
      holder.release();
      await watcher.end({ timeout: 5 });
      await db.close();
    }
  },
  120_000,
);
