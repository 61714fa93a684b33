import { problem } from "../../core/problem.ts";
import type { Sql } from "../../db/sql.ts";

const readinessTimeoutMs = 2000;

/** Round-trips one trivial query; a database that does not answer in time is not ready. */
export async function checkDatabase(sql: Sql): Promise<number> {
  const started = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("timeout")), readinessTimeoutMs);
  });
  try {
    await Promise.race([sql`SELECT 1`, timeout]);
  } catch {
    throw problem("database_unavailable", "the database is not reachable", {}, { "retry-after": "1" });
  } finally {
    clearTimeout(timer);
  }
  return Math.round((performance.now() - started) * 100) / 100;
}
