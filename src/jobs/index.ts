import type { AppContext } from "../context.ts";
import { signInPurgeJob } from "./sign-in-purge.ts";

export interface Jobs {
  stop(): void;
}

/** Starts the process's scheduled jobs (each holds an advisory lock while it runs). */
export function startJobs(ctx: AppContext): Jobs {
  const running: { stop(): void }[] = [signInPurgeJob(ctx)];
  return {
    stop() {
      for (const job of running) job.stop();
    },
  };
}
