import type { Sql } from "../db/client.ts";
import type { Logger } from "../log.ts";

// Arbitrary constant shared by every instance: one compression run at a time.
const compressionLockKey = 7_260_331_003;

/**
 * Runs the events hypertable's compression policy (sql/003_ingest.sql) once, under
 * an advisory lock. Its settings stay in SQL: this only triggers the policy job,
 * which compresses chunks past `compress_after`. Returns false when another
 * instance holds the lock.
 */
export async function runEventCompression(sql: Sql, log: Logger): Promise<boolean> {
  // run_job commits between chunks, so it runs on one reserved session, outside any transaction.
  const conn = await sql.reserve();
  try {
    const [lock] = await conn<{ locked: boolean }[]>`SELECT pg_try_advisory_lock(${compressionLockKey}) AS locked`;
    if (!lock?.locked) return false;
    try {
      const jobs = await conn<{ job_id: number }[]>`
        SELECT job_id FROM timescaledb_information.jobs
        WHERE proc_name = 'policy_compression' AND hypertable_name = 'events'`;
      for (const job of jobs) await conn`CALL run_job(${job.job_id}::int)`;
      log.info("events compression policy ran", { jobs: jobs.length });
      return true;
    } finally {
      await conn`SELECT pg_advisory_unlock(${compressionLockKey})`;
    }
  } finally {
    conn.release();
  }
}
