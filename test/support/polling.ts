/** How long `check` takes to become true, polling every 25 ms for at most 5 s (Infinity when it never does). */
export async function msUntil(check: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > 5000) return Number.POSITIVE_INFINITY;
    await Bun.sleep(25);
  }
  return performance.now() - started;
}
