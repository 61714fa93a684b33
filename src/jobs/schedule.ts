import { Cron } from "croner";
import type { AppContext } from "../context.ts";
import { describeError, type Logger } from "../log.ts";
import { claimTick, scheduledTick } from "./ticks.ts";

/**
 * Runs `task` on a cron pattern, once per tick across every instance on the
 * database (the first to claim the tick runs it), never overlapping itself in
 * this process (`protect`), and logging, not throwing, when it fails. Tasks that
 * must not overlap a slow run of the previous tick elsewhere take their own
 * advisory lock. `everyInstance` skips the claim: for work that instances share
 * out between them (the webhook sweep leases deliveries with SKIP LOCKED).
 */
export function scheduleJob(
  ctx: Pick<AppContext, "sql" | "log">,
  name: string,
  pattern: string,
  task: (log: Logger, tick: Date) => Promise<void>,
  options: { everyInstance?: boolean } = {},
): Cron {
  const log = ctx.log.child({ job: name });
  return new Cron(pattern, { protect: true, name }, async (self: Cron) => {
    const started = performance.now();
    const tick = scheduledTick(self, new Date());
    try {
      if (!options.everyInstance && !(await claimTick(ctx.sql, name, tick))) {
        log.debug("tick run by another instance", { tick: tick.toISOString() });
        return;
      }
      await task(log, tick);
      log.debug("job finished", { tick: tick.toISOString(), duration_ms: Math.round(performance.now() - started) });
    } catch (error) {
      log.error("job failed", { tick: tick.toISOString(), ...describeError(error) });
    }
  });
}
