import type { AppContext } from "../context.ts";
import { scheduleEventCompression } from "./compress-events.ts";
import { signInPurgeJob } from "./sign-in-purge.ts";

export interface Jobs {
  stop(): void;
}

/** Starts the process's scheduled jobs (each holds an advisory lock while it runs). */
export function startJobs(ctx: AppContext): Jobs {
  const running: { stop(): void }[] = [signInPurgeJob(ctx)];
  const compression = scheduleEventCompression(ctx);
  if (compression) running.push(compression);
  return {
    stop() {
      for (const job of running) job.stop();
    },
  };
}
