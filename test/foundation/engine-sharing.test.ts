import { afterAll, expect, test } from "bun:test";
import { connect as connectTcp } from "node:net";
import { connect } from "../../src/db/client.ts";
import type { Sql } from "../../src/db/sql.ts";
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

/** PostgreSQL frontend messages, for a client that stops in the middle of an exchange. */
const cString = (text: string) => Buffer.from(`${text}\0`);
function frontendMessage(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0);
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}
function startupMessage(): Buffer {
  const body = Buffer.concat([
    Buffer.from([0, 3, 0, 0]),
    cString("user"),
    cString("postgres"),
    cString("database"),
    cString("postgres"),
    Buffer.from([0]),
  ]);
  const length = Buffer.alloc(4);
  length.writeInt32BE(body.length + 4);
  return Buffer.concat([length, body]);
}

/** A raw connection that sends each message once the engine has answered the one before. */
async function rawConnection(url: string) {
  const { hostname, port } = new URL(url);
  const socket = connectTcp(Number(port), hostname);
  let received = Buffer.alloc(0);
  socket.on("data", (data: Buffer) => {
    received = Buffer.concat([received, data]);
  });
  socket.on("error", () => {});
  await new Promise((resolve) => socket.once("connect", resolve));
  const send = async (message: Buffer, answerEndsWith: string) => {
    received = Buffer.alloc(0);
    socket.write(message);
    for (let waited = 0; !received.includes(Buffer.from(answerEndsWith)) && waited < 5000; waited += 10)
      await Bun.sleep(10);
  };
  await send(startupMessage(), "R");
  await send(frontendMessage("p", cString(`md5${"0".repeat(32)}`)), "Z");
  return { send, close: () => socket.destroy() };
}

test("a connection that closes mid-transaction, after an error and before its Sync, leaves the engine clean", async () => {
  const { db } = await testRuntime();
  const raw = await rawConnection(db.url);
  await raw.send(frontendMessage("Q", cString("BEGIN; SELECT set_config('app.marker', 'left behind', true)")), "Z");
  // A statement that fails to parse, then no Sync: the backend now skips messages until one.
  await raw.send(frontendMessage("P", Buffer.concat([cString(""), cString("SELEC broken"), Buffer.from([0, 0])])), "E");
  raw.close();
  const next = await client();
  const [row] = await next<{ marker: string; status: string }[]>`
    SELECT coalesce(nullif(current_setting('app.marker', true), ''), 'unset') AS marker, ${"answered"}::text AS status`;
  expect(row).toEqual({ marker: "unset", status: "answered" });
}, 20_000);
