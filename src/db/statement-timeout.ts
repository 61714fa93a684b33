import type { Sql } from "./sql.ts";

/**
 * Runs `work` in a read-only transaction whose statements PostgreSQL cancels after
 * `timeoutMs` (SQLSTATE 57014, answered 503 query_timeout), so a slow read gives
 * its connection back instead of holding it while ingest waits. 0: no limit.
 * Repeatable read: every statement of one read sees the same snapshot, so figures
 * read in two statements (a page, then its breakdown) add up.
 */
export async function withStatementTimeout<T>(sql: Sql, timeoutMs: number, work: (sql: Sql) => Promise<T>): Promise<T> {
  const result = await sql.begin("isolation level repeatable read read only", (tx) => {
    // Sent now, ahead of work's first statement, without waiting for its answer: a
    // transaction's statements run in the order sent, and should it fail, the
    // statements behind it fail too (postgres.js rethrows its error). BEGIN, which
    // carries the isolation level, still waits for its answer: the patched
    // `sql.begin` sends only a plain BEGIN ahead (patches/README.md).
    tx`SELECT set_config('statement_timeout', ${String(timeoutMs)}, true)`.execute();
    // A transaction answers every query a pool does; the reads take the pool type.
    return work(tx as unknown as Sql);
  });
  return result as T;
}
