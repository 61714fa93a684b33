import type { Cron } from "croner";
import type { AppContext } from "../context.ts";
import type { Sql } from "../db/sql.ts";
import { type JobTask, scheduleJob } from "./schedule.ts";

/**
 * Records that lapse at a stored time (click tokens after 90 days, delegation
 * requests after 30). Whatever reads them refuses a lapsed one from that moment on
 * by itself; the sweep only clears them away (deletes or marks them).
 */
export interface Expiry {
  /** Names the job (`expire-<name>`) and its log lines. */
  name: string;
  /** Deletes or marks the records lapsed at `now` (the tick's time, or a test's clock); returns how many. */
  sweep(sql: Sql, now: Date): Promise<number>;
}

/**
 * Runs an expiry's sweep on `pattern`, once per tick across instances
 * (scheduleJob), with the tick's scheduled time as the clock. A sweep is
 * idempotent, so a tick that two instances both ran would do no harm either.
 */
export function scheduleExpiry(ctx: Pick<AppContext, "sql" | "log">, pattern: string, expiry: Expiry): Cron {
  return scheduleJob(ctx, expiryJobName(expiry), pattern, expiryTask(ctx.sql, expiry));
}

export const expiryJobName = (expiry: Expiry) => `expire-${expiry.name}`;

/** The job's work at a tick: sweep what lapsed by the tick's time. */
export function expiryTask(sql: Sql, expiry: Expiry): JobTask {
  return async (log, tick) => {
    const swept = await expiry.sweep(sql, tick);
    if (swept > 0) log.info("lapsed records swept", { expiry: expiry.name, swept });
  };
}
