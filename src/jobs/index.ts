import type { AppContext } from "../context.ts";
import { purgeExpiredSignIns } from "../modules/auth/purge.ts";
import { runEventCompression } from "./compress-events.ts";
import { refreshAggregates } from "./refresh-aggregates.ts";
import { scheduleJob } from "./schedule.ts";

export interface Jobs {
  stop(): void;
}

/** Starts the process's scheduled jobs (each holds an advisory lock while it runs). */
export function startJobs(ctx: AppContext): Jobs {
  const running = [
    scheduleJob(ctx, "sign-in-purge", ctx.config.SIGN_IN_PURGE_CRON, async (log) => {
      const deleted = await purgeExpiredSignIns(ctx.sql);
      if (deleted) log.info("purged expired sign-in records", { deleted });
    }),
  ];
  // A TimescaleDB server runs the compression and aggregate-refresh policies of
  // sql/003 and sql/011 itself; the embedded engine runs no background jobs.
  if (ctx.databaseKind === "embedded") {
    running.push(
      scheduleJob(ctx, "events-compression", ctx.config.EVENTS_COMPRESSION_CRON, async (log) => {
        if (!(await runEventCompression(ctx.sql, log))) log.debug("skipped: another instance holds the lock");
      }),
      scheduleJob(ctx, "refresh-aggregates", ctx.config.AGGREGATE_REFRESH_CRON, async (log) => {
        if (!(await refreshAggregates(ctx.sql))) log.debug("skipped: another instance holds the lock");
      }),
    );
  }
  return {
    stop() {
      for (const job of running) job.stop();
    },
  };
}
