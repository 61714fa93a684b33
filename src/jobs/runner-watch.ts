import { Cron } from "croner";
import { cronTimeZone } from "../config.ts";
import type { AppContext } from "../context.ts";

/** Longer than the longest gap between claimed ticks of the default schedules (EXPIRY_SWEEP_CRON, every 10 minutes). */
const quietMinutes = 15;

/**
 * On an instance without the `jobs` role: warns, at start and then every quarter
 * hour, when no instance has claimed a job tick for `quietMinutes`, so that jobs
 * disabled everywhere (expiry, purges, webhook deliveries) show in the logs
 * instead of failing silently.
 */
export function watchForJobRunners(ctx: Pick<AppContext, "sql" | "log">, roles: string): Cron {
  const watch = new Cron(
    "*/15 * * * *",
    { protect: true, name: "job-runner-watch", timezone: cronTimeZone },
    async () => {
      await warnUnlessJobsRun(ctx, roles).catch((error: unknown) =>
        ctx.log.warn("job runner check failed", { error: String(error) }),
      );
    },
  );
  // At start too, delayed so an instance started alongside has time to claim a tick.
  setTimeout(() => void watch.trigger(), 60_000).unref();
  return watch;
}

/** Logs the warning when no instance has claimed a job tick for `quietMinutes`; whether some instance has. */
export async function warnUnlessJobsRun(ctx: Pick<AppContext, "sql" | "log">, roles: string): Promise<boolean> {
  const [row] = await ctx.sql<{ recent: boolean }[]>`
    SELECT EXISTS (
      SELECT 1 FROM job_ticks WHERE claimed_at > now() - make_interval(mins => ${quietMinutes})
    ) AS recent`;
  if (!row?.recent) {
    ctx.log.warn(
      `no instance has run a scheduled job in the last ${quietMinutes} minutes: this one does not (SERVICE_ROLES=${roles}); run at least one instance with the jobs role (or all)`,
    );
  }
  return row?.recent ?? false;
}
