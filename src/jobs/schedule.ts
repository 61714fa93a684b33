import { Cron } from "croner";
import type { AppContext } from "../context.ts";
import { describeError, type Logger } from "../log.ts";

/**
 * Runs `task` on a cron pattern, never overlapping itself in this process
 * (`protect`) and logging, not throwing, when it fails. Tasks that must not run
 * twice across instances take their own advisory lock.
 */
export function scheduleJob(
  ctx: AppContext,
  name: string,
  pattern: string,
  task: (log: Logger) => Promise<void>,
): Cron {
  const log = ctx.log.child({ job: name });
  return new Cron(pattern, { protect: true, name }, async () => {
    const started = performance.now();
    try {
      await task(log);
      log.debug("job finished", { duration_ms: Math.round(performance.now() - started) });
    } catch (error) {
      log.error("job failed", describeError(error));
    }
  });
}
