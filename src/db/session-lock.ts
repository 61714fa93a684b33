import type { Sql } from "./sql.ts";
import { isDatabaseUnavailable } from "./unavailable.ts";

/**
 * Runs `work` on one connection of the pool, reserved for it, holding the session
 * advisory lock `key` (work that commits as it goes, or runs several transactions,
 * needs a session lock, not a transaction's). `wait`: wait for the lock; otherwise
 * resolve `false` at once when another session holds it.
 *
 * When the server ends that connection (a restart, pg_terminate_backend), nothing
 * more is sent on it and it is not given back: postgres.js 3.4.9 never answers a
 * reserved connection's statements after its backend died, and a connection given
 * back breaks the pool's later statements with an exception no caller can catch
 * (porsager/postgres#1199, #1208). The pool is one connection short from then on;
 * the server has released the lock with the session.
 */
export function underSessionLock<T>(
  sql: Sql,
  key: number,
  options: { wait: true },
  work: (conn: Sql) => Promise<T>,
): Promise<T>;
export function underSessionLock<T>(
  sql: Sql,
  key: number,
  options: { wait: false },
  work: (conn: Sql) => Promise<T>,
): Promise<T | false>;
export async function underSessionLock<T>(
  sql: Sql,
  key: number,
  { wait }: { wait: boolean },
  work: (conn: Sql) => Promise<T>,
): Promise<T | false> {
  const conn = await sql.reserve();
  let connectionLost = false;
  try {
    if (wait) await conn`SELECT pg_advisory_lock(${key})`;
    else {
      const [row] = await conn<{ locked: boolean }[]>`SELECT pg_try_advisory_lock(${key}) AS locked`;
      if (!row?.locked) return false;
    }
    try {
      return await work(conn as unknown as Sql);
    } catch (error) {
      connectionLost = lostWith(error);
      throw error;
    } finally {
      if (!connectionLost) await conn`SELECT pg_advisory_unlock(${key})`;
    }
  } catch (error) {
    connectionLost ||= lostWith(error);
    throw error;
  } finally {
    if (!connectionLost) conn.release();
  }
}

/** The error, or the one it wraps, says the connection is gone. */
export function lostWith(error: unknown): boolean {
  return isDatabaseUnavailable(error) || (error instanceof Error && isDatabaseUnavailable(error.cause));
}
