import { hostname } from "node:os";
import type { Cron } from "croner";
import type { Sql } from "../db/sql.ts";

/** Names this process in job_ticks, so an operator can see which instance ran a tick. */
export const instanceName = `${hostname()}/${process.pid}`;

/**
 * The scheduled time of the run that fired at `firedAt`: croner fires a little
 * after the time it aims at, and every instance must name the same tick.
 */
export function scheduledTick(cron: Cron, firedAt: Date): Date {
  const second = new Date(Math.floor(firedAt.getTime() / 1000) * 1000);
  return cron.match(second) ? second : (cron.previousRuns(1, second)[0] ?? second);
}

/**
 * Records that this instance runs `job` at `tick`; false when another instance
 * recorded it first (sql/028). Old ticks of the job are pruned on the way.
 */
export async function claimTick(sql: Sql, job: string, tick: Date): Promise<boolean> {
  const [row] = await sql<{ claimed: boolean }[]>`
    WITH pruned AS (
      DELETE FROM job_ticks WHERE job = ${job} AND tick < ${tick}::timestamptz - interval '1 day'
    )
    INSERT INTO job_ticks (job, tick, instance) VALUES (${job}, ${tick}, ${instanceName})
    ON CONFLICT (job, tick) DO NOTHING
    RETURNING true AS claimed`;
  return row?.claimed === true;
}
