import postgres from "postgres";
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import type { Sql } from "./sql.ts";

/**
 * Work a TimescaleDB server does in its own background jobs (the policies of
 * sql/003 and sql/011) and the embedded engine, which runs none, needs the service
 * to schedule. Each holds an advisory lock while it runs, so instances never
 * overlap; the scheduler runs each tick once across instances (src/jobs/).
 */
export interface MaintenanceJob {
  name: string;
  cron: string;
  run(sql: Sql, log: Logger): Promise<void>;
}

// Arbitrary constants shared by every instance: one run of each at a time.
const refreshLockKey = 7_260_331_004;
const compressionLockKey = 7_260_331_003;

/** Runs `work` on one reserved session holding a session advisory lock; false when another session holds it. */
async function underSessionLock(sql: Sql, key: number, work: (conn: Sql) => Promise<void>): Promise<boolean> {
  // refresh_continuous_aggregate and run_job commit as they go: they run outside
  // any transaction, on one session, so the lock is a session lock.
  const conn = await sql.reserve();
  try {
    const [row] = await conn<{ locked: boolean }[]>`SELECT pg_try_advisory_lock(${key}) AS locked`;
    if (!row?.locked) return false;
    try {
      await work(conn as unknown as Sql);
      return true;
    } finally {
      await conn`SELECT pg_advisory_unlock(${key})`;
    }
  } finally {
    conn.release();
  }
}

/**
 * Refreshes every continuous aggregate up to the start of its current bucket (reads
 * take the open bucket from finer levels and raw rows), re-materialising any older
 * bucket that late rows invalidated. Returns false when another session is refreshing.
 */
export function refreshAggregates(sql: Sql): Promise<boolean> {
  return underSessionLock(sql, refreshLockKey, async (conn) => {
    const views = await conn<{ view: string; until: Date }[]>`
      SELECT format('%I.%I', ca.view_schema, ca.view_name) AS view,
             time_bucket(bf.bucket_width::interval, now()) AS until
      FROM timescaledb_information.continuous_aggregates ca
      JOIN _timescaledb_catalog.continuous_agg c ON c.user_view_schema = ca.view_schema AND c.user_view_name = ca.view_name
      JOIN _timescaledb_catalog.continuous_aggs_bucket_function bf ON bf.mat_hypertable_id = c.mat_hypertable_id
      ORDER BY bf.bucket_width::interval, ca.view_name`;
    for (const { view, until } of views) {
      await whileRefreshedElsewhere(
        () => conn`CALL refresh_continuous_aggregate(${view}::regclass, NULL::timestamptz, ${until}::timestamptz)`,
      );
    }
  });
}

// TimescaleDB refuses a refresh whose window another refresh is materialising:
// on a server, that is the aggregate's own policy job, which is done in moments.
const lockNotAvailable = "55P03";
const refreshWaitMs = 60_000;

async function whileRefreshedElsewhere(refresh: () => Promise<unknown>): Promise<void> {
  const deadline = Date.now() + refreshWaitMs;
  for (;;) {
    try {
      await refresh();
      return;
    } catch (error) {
      const busy = error instanceof postgres.PostgresError && error.code === lockNotAvailable;
      if (!busy || Date.now() > deadline) throw error;
      await Bun.sleep(200);
    }
  }
}

/**
 * Runs the compression policies (sql/003) once: their settings stay in SQL, this
 * only triggers the policy jobs. Returns false when another session is running them.
 */
export function runCompressionPolicies(sql: Sql): Promise<boolean> {
  return underSessionLock(sql, compressionLockKey, async (conn) => {
    const jobs = await conn<{ job_id: number }[]>`
      SELECT job_id FROM timescaledb_information.jobs WHERE proc_name = 'policy_compression' ORDER BY job_id`;
    for (const job of jobs) await conn`CALL run_job(${job.job_id}::int)`;
  });
}

/** The embedded engine's stand-ins for TimescaleDB's background jobs. */
export function embeddedMaintenance(
  config: Partial<Pick<Config, "AGGREGATE_REFRESH_CRON" | "EVENTS_COMPRESSION_CRON">>,
): MaintenanceJob[] {
  const skipped = (log: Logger) => log.debug("skipped: another instance holds the lock");
  return [
    {
      name: "refresh-aggregates",
      cron: config.AGGREGATE_REFRESH_CRON ?? "*/1 * * * *",
      async run(sql, log) {
        if (!(await refreshAggregates(sql))) skipped(log);
      },
    },
    {
      name: "events-compression",
      cron: config.EVENTS_COMPRESSION_CRON ?? "17 * * * *",
      async run(sql, log) {
        if (await runCompressionPolicies(sql)) log.info("compression policies ran");
        else skipped(log);
      },
    },
  ];
}
