import postgres from "postgres";
import type { Queryable, Sql } from "../../db/sql.ts";
import type { EventRow } from "./event-columns.ts";
import { isoTime, microseconds } from "./event-times.ts";

/**
 * The transaction a counted write runs in (event-store.ts): how it meets events
 * stored already (a client's retry), deadlocks, and its last statement.
 */

/**
 * Whether each row is the first of its event among `rows` (`events_dedupe`: the
 * organisation, the id in any case, and the time): a write stores each event once.
 */
export function firstOfEachEvent(rows: readonly EventRow[]): boolean[] {
  const seen = new Set<string>();
  return rows.map((row) => {
    const key = `${row.orgId}|${row.eventId.toLowerCase()}|${microseconds(row.eventTime)}`;
    return !seen.has(key) && Boolean(seen.add(key));
  });
}

/**
 * How a write meets an event already stored (a client's retry, `events_dedupe`):
 * `refuse` inserts plainly and fails the write on it; `skip` looks up which of
 * its events are stored and leaves them out (RowsToWrite) before counting, so a
 * copy that is not written takes no flag, bound or domain first: a retry may
 * differ from what is stored (another agent, URL or session). Retries are rare,
 * and a lookup or a conflict check costs every write (the check about a fifth of
 * the insert, bench:insert-paths), so writes first refuse, and only a write that
 * met a stored event is written again skipping (inWriteTransaction).
 */
export type StoredEvents = "refuse" | "skip";

/**
 * A write's rows, less those already stored when it is written again skipping
 * them (StoredEvents): what it counts and inserts, and how each row it was given
 * fared.
 */
export class RowsToWrite {
  private constructor(
    /** The rows to count and insert. */
    readonly rows: readonly EventRow[],
    /** For each row given, whether it is stored already (null: none looked up). */
    private readonly stored: readonly boolean[] | null,
  ) {}

  static async of(sql: Queryable, rows: readonly EventRow[], stored: StoredEvents): Promise<RowsToWrite> {
    if (stored === "refuse" || rows.length === 0) return new RowsToWrite(rows, null);
    const already = await storedAlready(sql, rows);
    return new RowsToWrite(
      rows.filter((_, i) => !already[i]),
      already,
    );
  }

  /** Whether each row given was inserted, from `written`'s answer for the rows to write. */
  insertedOf(written: LastStatement<boolean[]>): LastStatement<boolean[]> {
    const stored = this.stored;
    if (!stored) return written;
    return new LastStatement(
      written.answer.then((inserted) => {
        let next = 0;
        return stored.map((isStored) => !isStored && (inserted[next++] as boolean));
      }),
    );
  }

  /**
   * Whether `row`, one of those given, is inserted: not stored already, nor a
   * repeat of an earlier row's event (storeCounted inserts the first of each).
   */
  writes(row: EventRow): boolean {
    if (!this.#writing) {
      const first = firstOfEachEvent(this.rows);
      this.#writing = new Set(this.rows.filter((_, i) => first[i]));
    }
    return this.#writing.has(row);
  }

  #writing: Set<EventRow> | undefined;

  /** Nothing to write: no row given was inserted. */
  noneInserted(): boolean[] {
    return (this.stored ?? this.rows).map(() => false);
  }
}

/** Which of the rows are stored already, by `events_dedupe` (organisation, id and time). */
async function storedAlready(sql: Queryable, rows: readonly EventRow[]): Promise<boolean[]> {
  const times = rows.map((row) => ({ time: row.eventTime, us: microseconds(row.eventTime) }));
  const earliest = times.reduce((a, b) => (b.us < a.us ? b : a));
  const latest = times.reduce((a, b) => (b.us > a.us ? b : a));
  // The batch's span as values, so that the planner leaves out every other chunk.
  const found = await sql<{ i: string }[]>`
    SELECT k.i FROM unnest(
      ${rows.map((row) => row.orgId)}::uuid[],
      ${rows.map((row) => row.eventId)}::uuid[],
      ${rows.map((row) => isoTime(row.eventTime))}::timestamptz[]
    ) WITH ORDINALITY AS k (org_id, event_id, event_time, i)
    WHERE EXISTS (
      SELECT 1 FROM events e
      WHERE e.org_id = k.org_id AND e.event_id = k.event_id AND e.event_time = k.event_time
        AND e.event_time BETWEEN ${isoTime(earliest.time)}::timestamptz AND ${isoTime(latest.time)}::timestamptz
    )`;
  const stored = rows.map(() => false);
  for (const { i } of found) stored[Number(i) - 1] = true;
  return stored;
}

/**
 * A transaction's last statement, sent and not yet answered. Returned from
 * inWriteTransaction's `write`, it lets sql.begin send COMMIT right behind it,
 * one round trip fewer. Should the statement fail, the transaction is aborted
 * and PostgreSQL ends it at that COMMIT (answering ROLLBACK), so the failure is
 * read from `answer`, after.
 */
export class LastStatement<T> {
  constructor(readonly answer: Promise<T>) {
    // Read by inWriteTransaction once the transaction has ended; never unhandled meanwhile.
    answer.catch(() => {});
  }
}

const deadlockDetected = "40P01";
const uniqueViolation = "23505";

/**
 * The write inserted an event already stored: the unique index of events, on a
 * chunk of the hypertable. PostgreSQL names the index in a field of the error;
 * TimescaleDB's insert into a compressed chunk names it only in the message.
 */
function metStoredEvent(error: unknown): boolean {
  if (!(error instanceof postgres.PostgresError) || error.code !== uniqueViolation) return false;
  const index = error.constraint_name ?? /unique constraint "([^"]+)"/.exec(error.message)?.[1] ?? "";
  return index.endsWith("events_dedupe");
}

/**
 * Makes PostgreSQL plan each statement of the transaction for its own values and
 * the tables as they are now. Left to itself, it may keep one plan for a prepared
 * statement after five runs; but `events` takes every write into its newest chunk,
 * which grows from empty, and the plan kept from when the chunk was small scans it:
 * a write that moved a flag then read the whole chunk, until autovacuum analysed
 * it (test/ingest/flag-moves-plan.test.ts). Planning anew cost about 4 % of
 * saturated ingest on a new database and nothing measurable with a year of chunks,
 * where PostgreSQL planned afresh anyway (docs/benchmarks.md).
 *
 * And without parallel workers, as reads are (underReadSettings,
 * src/db/statement-timeout.ts): the newest chunk's statistics lag behind it, and
 * the holder read, misled by them, started two workers, each a new server process,
 * to read a few events of a session (seen while `bench:reads` loaded two million
 * events, docs/benchmarks.md). Sent behind BEGIN, in the same round trip as the
 * write's first statement.
 */
const writePlanSettings = (tx: Queryable) =>
  tx`SELECT set_config('plan_cache_mode', 'force_custom_plan', true),
            set_config('max_parallel_workers_per_gather', '0', true)`.execute();

/**
 * Runs `write` in a transaction, refusing stored events (StoredEvents); again,
 * skipping them, when it met one, at most `skippingRetries` times in all (each
 * further time another write stored one of its events between the lookup and the
 * insert); and once more when PostgreSQL broke a deadlock by aborting it: two
 * writes that lock the same sessions in different statements (a claim and a
 * bound) can meet in the wrong order, and the retry then waits its turn. A `write`
 * that returns its last statement unanswered (LastStatement) gets that
 * statement's answer, read after COMMIT.
 */
export async function inWriteTransaction<T>(
  sql: Sql,
  write: (tx: Queryable, stored: StoredEvents) => Promise<T | LastStatement<T>>,
): Promise<T> {
  let stored: StoredEvents = "refuse";
  let deadlocks = 0;
  let metStored = 0;
  for (;;) {
    try {
      const written = await sql.begin((tx) =>
        Promise.all([writePlanSettings(tx), write(tx, stored)]).then(([, statement]) => statement),
      );
      return written instanceof LastStatement ? await written.answer : (written as T);
    } catch (error) {
      const deadlock = error instanceof postgres.PostgresError && error.code === deadlockDetected;
      if (metStoredEvent(error) && metStored++ < skippingRetries) stored = "skip";
      else if (!deadlock || deadlocks++ > 0) throw error;
    }
  }
}

/**
 * Each takes another write storing one of the same events at that very moment:
 * rare twice. Past them the write fails as a conflict (409), stored nothing, and
 * the client's own retry then finds the events stored.
 */
const skippingRetries = 3;
