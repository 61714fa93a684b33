import type { AppContext } from "../context.ts";
import { purgeExpiredSignIns } from "../modules/auth/purge.ts";
import { deleteExpiredClickTokens } from "../modules/click-tokens/service.ts";
import { refreshDueManifests } from "../modules/manifests/service.ts";
import { type Expiry, scheduleExpiry } from "./expiry.ts";
import { scheduleJob } from "./schedule.ts";

/** Records that lapse, each swept by a job of its own on EXPIRY_SWEEP_CRON. */
export const expiries: readonly Expiry[] = [{ name: "click-tokens", sweep: deleteExpiredClickTokens }];

export interface Jobs {
  stop(): void;
}

/** Starts the process's scheduled jobs: the service's own, and whatever upkeep its database engine needs from it. */
export function startJobs(ctx: AppContext): Jobs {
  const running = [
    scheduleJob(ctx, "sign-in-purge", ctx.config.SIGN_IN_PURGE_CRON, async (log) => {
      const deleted = await purgeExpiredSignIns(ctx.sql);
      if (deleted) log.info("purged expired sign-in records", { deleted });
    }),
    scheduleJob(ctx, "manifest-refresh", ctx.config.MANIFEST_REFRESH_CRON, async (log, tick) => {
      const refreshed = await refreshDueManifests(ctx, tick);
      if (refreshed) log.info("refetched participant manifests", { refreshed });
    }),
    ...expiries.map((expiry) => scheduleExpiry(ctx, ctx.config.EXPIRY_SWEEP_CRON, expiry)),
    ...ctx.db.maintenance.map((job) => scheduleJob(ctx, job.name, job.cron, (log) => job.run(ctx.sql, log))),
  ];
  return {
    stop() {
      for (const job of running) job.stop();
    },
  };
}
