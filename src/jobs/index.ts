import type { AppContext } from "../context.ts";

export interface Jobs {
  stop(): void;
}

/** Starts the process's scheduled jobs (each holds an advisory lock while it runs). */
export function startJobs(_ctx: AppContext): Jobs {
  const running: { stop(): void }[] = [];
  return {
    stop() {
      for (const job of running) job.stop();
    },
  };
}
