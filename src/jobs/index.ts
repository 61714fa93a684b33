import { readCaFile } from "../config.ts";
import type { AppContext } from "../context.ts";
import { purgeExpiredSignIns } from "../modules/auth/purge.ts";
import { deleteExpiredClickTokens } from "../modules/click-tokens/service.ts";
import { expireDelegationRequests } from "../modules/delegations/service.ts";
import { refreshDueManifests } from "../modules/manifests/service.ts";
import { purgeWebhookHistory } from "../modules/webhooks/queue.ts";
import { createWebhookSender } from "../modules/webhooks/sender.ts";
import { WebhookSweeper } from "../modules/webhooks/sweep.ts";
import { type Expiry, scheduleExpiry } from "./expiry.ts";
import { scheduleJob } from "./schedule.ts";

/** Records that lapse, each swept by a job of its own on EXPIRY_SWEEP_CRON. */
export const expiries: readonly Expiry[] = [
  { name: "click-tokens", sweep: deleteExpiredClickTokens },
  { name: "delegation-requests", sweep: expireDelegationRequests },
];

export interface Jobs {
  /** Stops the schedules, then waits for webhook attempts in flight to be sent and recorded. */
  stop(): Promise<void>;
}

const day = 24 * 60 * 60 * 1000;

/** Starts the process's scheduled jobs: the service's own, and whatever upkeep its database engine needs from it. */
export function startJobs(ctx: AppContext): Jobs {
  const { config } = ctx;
  const secrets = ctx.webhookSecrets;
  const sender = secrets
    ? createWebhookSender({
        allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK,
        extraCa: config.WEBHOOK_CA_FILE ? readCaFile(config.WEBHOOK_CA_FILE) : undefined,
      })
    : undefined;
  const sweeper =
    secrets && sender
      ? new WebhookSweeper({
          sql: ctx.sql,
          log: ctx.log.child({ job: "webhook-sweep" }),
          secrets,
          sender,
          concurrency: config.WEBHOOK_CONCURRENCY,
          perEndpoint: config.WEBHOOK_ENDPOINT_CONCURRENCY,
          disableAfterMs: config.WEBHOOK_DISABLE_AFTER_DAYS * day,
        })
      : undefined;
  const running = [
    scheduleJob(ctx, "sign-in-purge", config.SIGN_IN_PURGE_CRON, async (log) => {
      const deleted = await purgeExpiredSignIns(ctx.sql);
      if (deleted) log.info("purged expired sign-in records", { deleted });
    }),
    scheduleJob(ctx, "manifest-refresh", config.MANIFEST_REFRESH_CRON, async (log, tick) => {
      const refreshed = await refreshDueManifests(ctx, tick);
      if (refreshed) log.info("refetched participant manifests", { refreshed });
    }),
    ...expiries.map((expiry) => scheduleExpiry(ctx, config.EXPIRY_SWEEP_CRON, expiry)),
    ...(sweeper
      ? [
          scheduleJob(
            ctx,
            "webhook-sweep",
            config.WEBHOOK_SWEEP_CRON,
            async (log) => {
              const report = await sweeper.sweep();
              if (report.attempts > 0 || report.events_dispatched > 0) log.info("webhook sweep", { ...report });
            },
            { everyInstance: true },
          ),
        ]
      : []),
    scheduleJob(ctx, "webhook-purge", config.WEBHOOK_PURGE_CRON, async (log) => {
      const purged = await purgeWebhookHistory(ctx.sql, new Date(Date.now() - config.WEBHOOK_RETENTION_DAYS * day));
      if (purged.deliveries || purged.events) log.info("purged webhook history", purged);
    }),
    ...ctx.db.maintenance.map((job) => scheduleJob(ctx, job.name, job.cron, (log) => job.run(ctx.sql, log))),
  ];
  return {
    async stop() {
      for (const job of running) job.stop();
      await sweeper?.stop();
      sender?.close();
    },
  };
}
