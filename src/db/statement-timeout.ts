import type { Sql } from "./sql.ts";

/**
 * Runs `work` in a read-only, repeatable-read transaction. Its mode is the first
 * statement behind a plain BEGIN rather than BEGIN's options: the patched
 * `sql.begin` sends a plain BEGIN and goes on without waiting for its answer, but
 * waits for one with options (patches/README.md), a round trip of its own on
 * every read. A plain BEGIN fails only with its connection; should SET
 * TRANSACTION fail, the transaction is aborted and the statements behind it fail
 * within it, never outside it.
 */
export function inReadTransaction<T>(sql: Sql, work: (tx: Sql) => Promise<T>): Promise<T> {
  return sql.begin((tx) => {
    tx`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`.execute();
    // A transaction answers every query a pool does; the reads take the pool type.
    return work(tx as unknown as Sql);
  }) as Promise<T>;
}

/**
 * Runs `work` in a read transaction (inReadTransaction) whose statements PostgreSQL
 * cancels after `timeoutMs` (SQLSTATE 57014, answered 503 query_timeout), so a slow
 * read gives its connection back instead of holding it while ingest waits. 0: no limit.
 * Repeatable read: every statement of one read sees the same snapshot, so figures
 * read in two statements (a page, then its breakdown) add up. The answer is given
 * once `work` has it, not a round trip later when COMMIT is answered: a read-only
 * transaction's COMMIT changes nothing, and the connection goes back to the pool
 * only once it is answered all the same.
 *
 * Each statement is planned for its own values (plan_cache_mode). A read's
 * statements take their time range as parameters, and left to itself PostgreSQL
 * may keep one generic plan for a prepared statement after five runs: a plan over
 * every chunk of the hypertables it reads, which the values would have left out
 * at planning, all of them locked and set up again on every run. On the embedded
 * engine such a plan of an events page's statements took 300 ms to make and
 * tens of milliseconds a run (test/reads/events-page.test.ts).
 */
export function withStatementTimeout<T>(sql: Sql, timeoutMs: number, work: (sql: Sql) => Promise<T>): Promise<T> {
  return new Promise<T>((answer, fail) => {
    inReadTransaction(sql, async (tx) => {
      // Sent now, ahead of work's first statement, without waiting for its answer: a
      // transaction's statements run in the order sent, and should it fail, the
      // statements behind it fail too (postgres.js rethrows its error).
      tx`SELECT set_config('statement_timeout', ${String(timeoutMs)}, true),
                set_config('plan_cache_mode', 'force_custom_plan', true)`.execute();
      answer(await work(tx));
    }).catch(fail);
  });
}
