import type { Queryable } from "../../src/db/sql.ts";

/** How long `check` takes to become true, polling every 25 ms for at most 5 s (Infinity when it never does). */
export async function msUntil(check: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > 5000) return Number.POSITIVE_INFINITY;
    await Bun.sleep(25);
  }
  return performance.now() - started;
}

/**
 * Waits until `count` client backends of this database wait on a lock: the
 * requests a test holds up with a transaction it keeps open have reached it.
 * Fails after 5 s, so a request that never waits fails the test instead of racing past it.
 */
export async function untilWaitingOnLocks(watcher: Queryable, count = 1): Promise<void> {
  const waiting = async () => {
    const [row] = await watcher<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND backend_type = 'client backend' AND wait_event_type = 'Lock'`;
    return (row?.n ?? 0) >= count;
  };
  if ((await msUntil(waiting)) === Number.POSITIVE_INFINITY) {
    throw new Error(`fewer than ${count} backends came to wait on a lock within 5 s`);
  }
}
