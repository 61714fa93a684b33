import type { Sql } from "../db/client.ts";
import { levels } from "../modules/reads/plan.ts";
import { rollupFamilies, rollupLevels, rollupView } from "../modules/reads/rollups.ts";

// Arbitrary constant shared by every instance: one refresh at a time across processes.
const refreshLockKey = 7_260_331_004;

/**
 * Refreshes every read-side continuous aggregate up to the start of its current
 * bucket (the open bucket stays in the real-time part), re-materialising any
 * older bucket that late rows invalidated. Used where TimescaleDB runs no
 * background jobs (the embedded engine). Holds an advisory lock on its own
 * connection; returns false when another instance holds it.
 */
export async function refreshAggregates(sql: Sql, now: Date = new Date()): Promise<boolean> {
  const conn = await sql.reserve();
  try {
    const [row] = await conn<{ locked: boolean }[]>`SELECT pg_try_advisory_lock(${refreshLockKey}) AS locked`;
    if (!row?.locked) return false;
    try {
      for (const level of rollupLevels) {
        const end = new Date(levels[level].floor(now.getTime()));
        for (const family of rollupFamilies) {
          await conn`CALL refresh_continuous_aggregate(${rollupView(family, level)}::regclass, NULL::timestamptz, ${end}::timestamptz)`;
        }
      }
      return true;
    } finally {
      await conn`SELECT pg_advisory_unlock(${refreshLockKey})`;
    }
  } finally {
    conn.release();
  }
}
