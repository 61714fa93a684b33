import type { Sql } from "./sql.ts";
import { isDatabaseUnavailable } from "./unavailable.ts";

/**
 * Runs `work` on one connection of the pool, reserved for it, holding the session
 * advisory lock `key` (work that commits as it goes, or runs several transactions,
 * needs a session lock, not a transaction's). Resolves `false` at once when
 * another session holds the lock. When the server ends the connection, its
 * statements fail as unavailable and it is not given back (postgres.js as patched,
 * patches/README.md); the lock ended with the session.
 */
export async function underSessionLock<T>(sql: Sql, key: number, work: (conn: Sql) => Promise<T>): Promise<T | false> {
  const conn = await sql.reserve();
  try {
    const [row] = await conn<{ locked: boolean }[]>`SELECT pg_try_advisory_lock(${key}) AS locked`;
    if (!row?.locked) return false;
    try {
      return await work(conn as unknown as Sql);
    } finally {
      // A session the server ended took its lock with it; work's own error is the one to report.
      await conn`SELECT pg_advisory_unlock(${key})`.catch((error: unknown) => {
        if (!isDatabaseUnavailable(error)) throw error;
      });
    }
  } finally {
    conn.release();
  }
}
