import postgres from "postgres";
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import { underSessionLock } from "./session-lock.ts";
import type { Sql } from "./sql.ts";

/**
 * Work a TimescaleDB server does in its own background jobs (the policies of
 * sql/003, sql/011 and sql/069) and the embedded engine, which runs none, needs the service
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
      await retryWhileDoneElsewhere(
        () => conn`CALL refresh_continuous_aggregate(${view}::regclass, NULL::timestamptz, ${until}::timestamptz)`,
        refreshedElsewhere,
      );
    }
    return true;
  });
}

// On a server, the service never runs the policies itself, but tests and
// benchmarks do, beside TimescaleDB's scheduler running the same policy jobs.
// TimescaleDB then refuses the work the other session is doing, and the work is
// tried again, for up to a minute.
const lockNotAvailable = "55P03";
const compressionPolicyFailure = "columnstore policy failure";
const retryForMs = 60_000;

async function retryWhileDoneElsewhere(
  work: () => Promise<unknown>,
  doneElsewhere: (error: unknown) => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + retryForMs;
  for (;;) {
    try {
      await work();
      return;
    } catch (error) {
      if (Date.now() > deadline || !(await doneElsewhere(error))) throw error;
      await Bun.sleep(200);
    }
  }
}

/** A refresh of a window another refresh is materialising. */
const refreshedElsewhere = async (error: unknown) =>
  error instanceof postgres.PostgresError && error.code === lockNotAvailable;

/**
 * A compression policy run fails when a chunk it chose was compressed meanwhile,
 * but also when a chunk fails for any other reason: it is the scheduler's work
 * only if the scheduler's last run of the job has not finished yet, or finished
 * since `since`, beside ours (a run_job call leaves the job's statistics alone).
 * A failed run's end is recorded a moment after its failure, and until then its
 * duration is unknown (job_stats' job_status already says it is not running).
 * The embedded engine has no scheduler, so there a failure is never retried.
 */
const compressedElsewhere = (conn: Sql, jobId: number, since: Date) => async (error: unknown) => {
  if (!(error instanceof postgres.PostgresError) || error.message !== compressionPolicyFailure) return false;
  const [job] = await conn<{ scheduled: boolean }[]>`
    SELECT last_run_started_at IS NOT NULL
       AND (last_run_duration IS NULL OR last_run_started_at + last_run_duration >= ${since}) AS scheduled
    FROM timescaledb_information.job_stats WHERE job_id = ${jobId}::int`;
  return job?.scheduled === true;
};

/**
 * Runs the compression policies (sql/003, sql/069) once: their settings stay in
 * SQL, this only triggers the policy jobs. Returns false when another session is
 * running them.
 */
export function runCompressionPolicies(sql: Sql): Promise<boolean> {
  return underSessionLock(sql, compressionLockKey, async (conn) => {
    const jobs = await conn<{ job_id: number }[]>`
      SELECT job_id FROM timescaledb_information.jobs WHERE proc_name = 'policy_compression' ORDER BY job_id`;
    for (const { job_id } of jobs) {
      // Each run's own start, on the server's clock: a scheduler run that ended
      // before it was not beside it.
      const [run] = await conn<{ started: Date }[]>`SELECT now() AS started`;
      await retryWhileDoneElsewhere(
        () => conn`CALL run_job(${job_id}::int)`,
        compressedElsewhere(conn, job_id, run?.started as Date),
      );
    }
    return true;
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
      name: "compression",
      cron: config.EVENTS_COMPRESSION_CRON ?? "17 * * * *",
      async run(sql, log) {
        if (await runCompressionPolicies(sql)) log.info("compression policies ran");
        else skipped(log);
      },
    },
  ];
}
