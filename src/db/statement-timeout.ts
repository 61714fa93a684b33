import type { Logger } from "../log.ts";
import type { Sql } from "./sql.ts";
import { errorCode } from "./unavailable.ts";

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
 * only once it is answered all the same. Should COMMIT then fail, `log` has the
 * one line that tells of it.
 *
 * Each statement is planned for its own values (plan_cache_mode), without
 * parallel workers (underReadSettings). A read's statements take their time
 * range as parameters, and left to itself PostgreSQL may keep one generic plan
 * for a prepared statement after five runs: a plan over every chunk of the
 * hypertables it reads, which the values would have left out at planning, all
 * of them locked and set up again on every run. On the embedded
 * engine such a plan of an events page's statements took 300 ms to make and
 * tens of milliseconds a run (test/reads/events-page.test.ts).
 */
export function withStatementTimeout<T>(
  sql: Sql,
  timeoutMs: number,
  log: Logger,
  work: (sql: Sql) => Promise<T>,
): Promise<T> {
  return new Promise<T>((answer, fail) => {
    let answered = false;
    inReadTransaction(sql, async (tx) => {
      underReadSettings(tx, timeoutMs);
      answer(await work(tx));
      answered = true;
    }).catch((error: unknown) => {
      if (!answered) return fail(error);
      // Only COMMIT is left to fail by then (its connection lost): the answer stands,
      // and nobody else hears of the failure.
      log.warn("a read's COMMIT failed after the read was answered", { code: errorCode(error), error: String(error) });
    });
  });
}

/**
 * Sends the settings a read's transaction runs under, without waiting for their
 * answer: a transaction's statements run in the order sent, and should this fail,
 * the statements behind it fail too (postgres.js rethrows its error).
 *
 * A read plans no parallel workers. Each worker is a new server process, and on
 * a two-core server a statement with two took 50 to 60 ms against 1 ms without
 * them, the start of the workers being nearly all of it (docs/benchmarks.md,
 * 2026-11-28). A read takes whole buckets from the rollups and raw rows only at
 * its range's edges, too few for workers to pay for themselves; under ingest, the
 * statistics of the chunk being filled lag behind it, and a plan misled by them
 * started two workers to count a handful of rows. The URL ranking's two halves
 * are the one read worth a second process (read-companion.ts).
 */
export function underReadSettings(tx: Sql, timeoutMs: number): void {
  tx`SELECT set_config('statement_timeout', ${String(timeoutMs)}, true),
            set_config('plan_cache_mode', 'force_custom_plan', true),
            set_config('max_parallel_workers_per_gather', '0', true)`.execute();
}
