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

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await Bun.sleep(100);
  }
}

/** Sessions of this database waiting for a lock: a compression blocked behind the holder's. */
const waitingOnLocks = async (watcher: Sql) => {
  const [row] = await watcher<{ n: number }[]>`
    SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
  return row?.n ?? 0;
};

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
      await migrate(sql, createLogger("error"));
      const [events] = await sql<{ job_id: number }[]>`
        SELECT job_id FROM timescaledb_information.jobs WHERE proc_name = 'policy_compression' AND hypertable_name = 'events'`;
      const job = events?.job_id as number;
      // The scheduler's own runs only where this test starts them.
      await sql`
        SELECT alter_job(job_id, scheduled => false) FROM timescaledb_information.jobs
        WHERE proc_name = 'policy_compression'`;
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
      await until("the run waits for the chunk", async () => (await waitingOnLocks(watcher)) === 1);
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
      await until("the scheduler's run waits for the chunk", async () => (await waitingOnLocks(watcher)) === 1);
      const beside = runCompressionPolicies(sql);
      await until("both runs wait for the chunk", async () => (await waitingOnLocks(watcher)) === 2);
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
