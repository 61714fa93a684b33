import { Cron } from "croner";
import { cronTimeZone } from "../config.ts";
import type { AppContext } from "../context.ts";
import type { Sql } from "../db/sql.ts";
import { isDatabaseUnavailable } from "../db/unavailable.ts";
import { describeError, type Logger } from "../log.ts";
import { claimTick, scheduledTick } from "./ticks.ts";

/**
 * Runs `task` on a cron pattern, once per tick across every instance on the
 * database (the first to claim the tick runs it), never overlapping itself in
 * this process (`protect`), and logging, not throwing, when it fails. Tasks that
 * must not overlap a slow run of the previous tick elsewhere take their own
 * advisory lock, unless `options.everyInstance` says the instances share it out.
 */
export function scheduleJob(
  ctx: Pick<AppContext, "sql" | "log">,
  name: string,
  pattern: string,
  task: JobTask,
  options: TickOptions = {},
): Cron {
  const log = ctx.log.child({ job: name });
  return new Cron(pattern, { protect: true, name, timezone: cronTimeZone }, async (self: Cron) => {
    await runTick(ctx.sql, log, name, scheduledTick(self, new Date()), task, options);
  });
}

export interface TickOptions {
  /** Skip the claim: for work that instances share out between them (the webhook sweep leases deliveries with SKIP LOCKED). */
  everyInstance?: boolean;
}

/** What a job does at a tick; `tick` is the tick's scheduled time, the job's clock. */
export type JobTask = (log: Logger, tick: Date) => Promise<void>;

/**
 * Runs `task` for `tick` if this instance claims the tick first; true when it
 * did. Failures are logged, not thrown. Each instance's cron calls this at every
 * tick; tests call it with a tick of their choosing (an injected clock).
 */
export async function runTick(
  sql: Sql,
  log: Logger,
  name: string,
  tick: Date,
  task: JobTask,
  options: TickOptions = {},
): Promise<boolean> {
  const started = performance.now();
  try {
    if (!options.everyInstance && !(await claimTick(sql, name, tick))) {
      log.debug("tick run by another instance", { tick: tick.toISOString() });
      return false;
    }
    await task(log, tick);
    log.debug("job finished", { tick: tick.toISOString(), duration_ms: Math.round(performance.now() - started) });
  } catch (error) {
    // A database away for a restart is expected now and then: the next tick runs the job.
    if (isDatabaseUnavailable(error))
      log.warn("job skipped: the database is unavailable", { tick: tick.toISOString(), error: String(error) });
    else log.error("job failed", { tick: tick.toISOString(), ...describeError(error) });
  }
  return true;
}
