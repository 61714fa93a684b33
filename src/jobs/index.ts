import type { AppContext } from "../context.ts";
import { purgeExpiredSignIns } from "../modules/auth/purge.ts";
import { expireDelegationRequests } from "../modules/delegations/service.ts";
import { scheduleJob } from "./schedule.ts";

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
    scheduleJob(ctx, "delegation-request-expiry", ctx.config.DELEGATION_REQUEST_EXPIRY_CRON, async (log, tick) => {
      const expired = await expireDelegationRequests(ctx.sql, tick);
      if (expired) log.info("marked delegation requests expired", { expired });
    }),
    ...ctx.db.maintenance.map((job) => scheduleJob(ctx, job.name, job.cron, (log) => job.run(ctx.sql, log))),
  ];
  return {
    stop() {
      for (const job of running) job.stop();
    },
  };
}
