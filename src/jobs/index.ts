import { Cron } from "croner";
import type { AppContext } from "../context.ts";
import { describeError } from "../log.ts";
import { refreshAggregates } from "./refresh-aggregates.ts";

export interface Jobs {
  stop(): void;
}

/** Starts the process's scheduled jobs (each holds an advisory lock while it runs). */
export function startJobs(ctx: AppContext): Jobs {
  const running: { stop(): void }[] = [];
  // A TimescaleDB server refreshes the read aggregates with its own policies
  // (sql/011_read_aggregates.sql); the embedded engine runs no background jobs.
  if (ctx.databaseKind === "embedded") {
    const log = ctx.log.child({ job: "refresh-aggregates" });
    running.push(
      new Cron(ctx.config.AGGREGATE_REFRESH_CRON, { protect: true, name: "refresh-aggregates" }, async () => {
        const started = performance.now();
        try {
          const ran = await refreshAggregates(ctx.sql);
          log.debug(ran ? "aggregates refreshed" : "refresh skipped: another instance holds the lock", {
            duration_ms: Math.round(performance.now() - started),
          });
        } catch (error) {
          log.error("aggregate refresh failed", describeError(error));
        }
      }),
    );
  }
  return {
    stop() {
      for (const job of running) job.stop();
    },
  };
}
