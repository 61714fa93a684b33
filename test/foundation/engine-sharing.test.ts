import { afterAll, expect, test } from "bun:test";
import { connect, type Sql } from "../../src/db/client.ts";
import { testRuntime } from "../support/runtime.ts";

// The embedded engine is one PostgreSQL backend behind a socket server; the service,
// the operator CLI and a benchmark's COPY connect to it at the same time. These
// connections must never see one another's messages, results or transactions.
const extraClients: Sql[] = [];
afterAll(() => Promise.all(extraClients.map((sql) => sql.end({ timeout: 5 }))));

async function client(): Promise<Sql> {
  const { db } = await testRuntime();
  const sql = connect(db.url, 1);
  extraClients.push(sql);
  return sql;
}

/** Parameterised queries, each answered with its own value, with a failing query now and then. */
async function ownAnswers(sql: Sql, tag: string, rounds: number): Promise<string[]> {
  const wrong: string[] = [];
  for (let i = 0; i < rounds; i++) {
    const [row] = await sql<{ v: string }[]>`SELECT ${`${tag}-${i}`}::text AS v`;
    if (row?.v !== `${tag}-${i}`) wrong.push(`${tag}-${i} got ${row?.v}`);
    if (i % 10 === 0) await sql`SELECT no_such_function()`.catch(() => {});
  }
  return wrong;
}

test("concurrent connections to the embedded engine each get their own answers", async () => {
  const { ctx } = await testRuntime();
  // Connecting concurrently is part of the test: the start-up exchanges interleave too.
  const [a, b] = await Promise.all([client(), client()]);
  const wrong = await Promise.all([ownAnswers(a, "a", 100), ownAnswers(b, "b", 100), ownAnswers(ctx.sql, "c", 100)]);
  expect(wrong.flat()).toEqual([]);
}, 20_000);

test("another connection's statements wait for an open transaction instead of running inside it", async () => {
  const [a, b] = await Promise.all([client(), client()]);
  const markerSeenByB = () =>
    b<{ marker: string }[]>`SELECT current_setting('app.marker', true) AS marker`.then(([row]) => row?.marker || null);
  let readsByB: Promise<(string | null)[]> = Promise.resolve([]);
  const insideA = await a.begin(async (tx) => {
    await tx`SELECT set_config('app.marker', 'set inside a transaction of a', true)`;
    // Sent while the transaction is open; they may only run once it has ended.
    readsByB = Promise.all([markerSeenByB(), markerSeenByB()]);
    await Bun.sleep(50);
    const [row] = await tx<{ marker: string }[]>`SELECT current_setting('app.marker') AS marker`;
    return row?.marker;
  });
  expect(insideA).toBe("set inside a transaction of a");
  expect(await readsByB).toEqual([null, null]);
}, 20_000);
