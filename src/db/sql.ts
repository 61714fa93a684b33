import type postgres from "postgres";

/** A postgres.js client: a pool, or the one connection of a CLI or test. */
export type Sql = postgres.Sql;
/** A pool or an open transaction: what a function takes when it may run inside `sql.begin`. */
export type Queryable = postgres.Sql | postgres.TransactionSql;
/** Inside `sql.begin`: for work that must commit or fail with the caller's other statements. */
export type Transaction = postgres.TransactionSql;
export type DatabaseKind = "embedded" | "server";
/** A piece of a query, composed into others with ${…}. */
export type Fragment = postgres.PendingQuery<postgres.Row[]>;

/** How many rows `from` (what follows FROM: tables, joins, WHERE) holds: a paged list's total. */
async function countRows(sql: Queryable, from: Fragment): Promise<number> {
  const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM ${from}`;
  return row?.n ?? 0;
}

/**
 * A paged list: its page, and how many rows `from` holds in all (countRows), sent
 * together, since the count needs nothing of the page's answer.
 */
export async function pageWithTotal<T>(
  sql: Queryable,
  page: Promise<T[]>,
  from: Fragment,
): Promise<{ items: T[]; total: number }> {
  const [items, total] = await Promise.all([page, countRows(sql, from)]);
  return { items, total };
}

/**
 * Calls `handler` with the payload of every NOTIFY on a channel, whichever process
 * or connection sent it; `missed` after the listening connection was lost and
 * listens again, since what was sent in between never arrives.
 */
export type Listen = (
  channel: string,
  handler: (payload: string) => void,
  missed?: () => void,
) => Promise<() => Promise<void>>;
