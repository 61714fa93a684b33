import { afterAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { connect } from "../../src/db/client.ts";
import type { Sql } from "../../src/db/sql.ts";
import { withStatementTimeout } from "../../src/db/statement-timeout.ts";
import { writeEvents } from "../../src/modules/ingest/event-store.ts";
import { inWriteTransaction, LastStatement } from "../../src/modules/ingest/write-transaction.ts";
import { eventRowOf } from "../support/events.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { recordingLogger } from "../support/logs.ts";
import { msUntil } from "../support/polling.ts";
import { testRuntime } from "../support/runtime.ts";

/**
 * A TCP relay between a client and the database that can hold back the
 * database's answers. While it holds them, whatever the client still sends was
 * sent without waiting for an answer: pipelined, a round trip saved.
 */
async function holdingRelay(databaseUrl: string) {
  const target = new URL(databaseUrl);
  let holding = false;
  let holdFrom: string | undefined;
  let cutAt: string | undefined;
  let sent = "";
  const held: (() => void)[] = [];
  const server = Bun.listen<{ upstream?: Bun.Socket; early: Uint8Array[] }>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      async open(client) {
        client.data = { early: [] };
        const upstream = await Bun.connect({
          hostname: target.hostname,
          port: Number(target.port),
          socket: {
            data(_, chunk) {
              const answer = new Uint8Array(chunk);
              if (holding) held.push(() => client.write(answer));
              else client.write(answer);
            },
            close() {
              client.end();
            },
          },
        });
        client.data.upstream = upstream;
        for (const chunk of client.data.early) upstream.write(chunk);
      },
      data(client, chunk) {
        const text = Buffer.from(chunk).toString("latin1");
        if (cutAt && text.includes(cutAt)) {
          cutAt = undefined;
          client.data.upstream?.end();
          client.end();
          return;
        }
        if (holdFrom && text.includes(holdFrom)) {
          holdFrom = undefined;
          holding = true;
          sent = "";
        }
        sent += text;
        if (client.data.upstream) client.data.upstream.write(chunk);
        else client.data.early.push(new Uint8Array(chunk));
      },
      close: (client) => void client.data.upstream?.end(),
    },
  });
  const relayed = new URL(databaseUrl);
  relayed.port = String(server.port);
  return {
    url: relayed.toString(),
    /** Holds the database's answers from now on; what the client sends meanwhile is read from `sentSince`. */
    hold() {
      holding = true;
      sent = "";
    },
    /** Holds the database's answers from the moment the client sends `text` on. */
    holdOnceSent(text: string) {
      holdFrom = text;
    },
    /** Ends the connection, as a lost one ends, when the client sends `text`, which never reaches the database. */
    cutOnceSent(text: string) {
      cutAt = text;
    },
    /** What the client has sent since the hold began, once `done` says so of it (or a second after the hold began). */
    async sentOnce(done: (sent: string) => boolean): Promise<string> {
      while (!holding) await Bun.sleep(1);
      for (let waited = 0; !done(sent) && waited < 1000; waited += 10) await Bun.sleep(10);
      return sent;
    },
    sentOnceItHas(text: string): Promise<string> {
      return this.sentOnce((sent) => sent.includes(text));
    },
    release() {
      holding = false;
      sent = "";
      for (const deliver of held.splice(0)) deliver();
    },
    stop: () => server.stop(true),
  };
}

/** Statements sent in what a client sent: each ends with a Sync message. */
const statementsIn = (sent: string) => sent.split("S\u0000\u0000\u0000\u0004").length - 1;

describe("round trips of a transaction (patches/README.md)", async () => {
  const { db, ctx } = await testRuntime();
  const relay = await holdingRelay(db.url);
  const table = `round_trips_${crypto.randomUUID().replaceAll("-", "")}`;
  await db.sql`CREATE TABLE ${db.sql(table)} (n int UNIQUE)`;
  afterAll(async () => {
    await db.sql`DROP TABLE ${db.sql(table)}`;
    relay.stop();
  });

  /**
   * A client of one connection through the relay, new for each test: a statement's
   * text goes out only the first time a connection prepares it, so every
   * statement of the test is seen by its text.
   */
  async function throughRelay(work: (sql: Sql) => Promise<void>): Promise<void> {
    const sql = connect(relay.url, 1);
    try {
      await sql`SELECT 1`;
      await work(sql);
    } finally {
      await sql.end();
    }
  }

  test("BEGIN goes out with the transaction's first statement, not after its answer", () =>
    throughRelay(async (sql) => {
      relay.hold();
      const written = sql.begin(async (tx) => tx`SELECT 'first statement' AS marker`);
      const sent = await relay.sentOnceItHas("first statement");
      relay.release();
      await written;
      expect(sent).toContain("begin");
      expect(sent).toContain("first statement");
    }));

  test("BEGIN with options is answered before the first statement goes out, as postgres.js sends it", () =>
    throughRelay(async (sql) => {
      relay.hold();
      const written = sql.begin(
        "read only",
        async (tx) => tx`SELECT current_setting('transaction_read_only') AS read_only`,
      );
      const sent = await relay.sentOnceItHas("transaction_read_only");
      relay.release();
      expect((await written)[0]).toEqual({ read_only: "on" });
      expect(sent).toContain("begin read only");
      expect(sent).not.toContain("transaction_read_only");
    }));

  test("a read's statements go out behind its BEGIN without waiting for its answer, repeatable read, read only and timed", () =>
    throughRelay(async (sql) => {
      const read = (marker: string) =>
        withStatementTimeout(
          sql,
          4321,
          ctx.log,
          async (tx) => tx`
            SELECT ${marker}::text AS marker, current_setting('transaction_isolation') AS isolation,
                   current_setting('transaction_read_only') AS read_only, current_setting('statement_timeout') AS timeout`,
        );
      // Each statement with parameters is described before its first use on a connection;
      // the statement after it waits for its COMMIT.
      await read("preparing");
      await sql`SELECT 1`;
      relay.hold();
      const held = read("held read");
      const sent = await relay.sentOnceItHas("held read");
      relay.release();
      expect([...(await held)]).toEqual([
        { marker: "held read", isolation: "repeatable read", read_only: "on", timeout: "4321ms" },
      ]);
      expect(sent).toContain("begin");
      expect(sent).toContain("held read");
    }));

  test("a read is answered once its statements are, without waiting for COMMIT's answer", async () => {
    const { db } = await testRuntime();
    let commit: "unsent" | "sent" | "maybe answered" = "unsent";
    const sql = postgres(db.url, {
      max: 1,
      onnotice: () => {},
      debug: (_connection: number, text: string) => {
        if (text !== "commit") return;
        commit = "sent";
        // Its answer comes in a later turn of the event loop at the earliest.
        setImmediate(() => {
          commit = "maybe answered";
        });
      },
    });
    try {
      for (const n of [1, 2]) {
        // The connection's one queue holds this behind the last read's COMMIT.
        await sql`SELECT 1`;
        commit = "unsent";
        const [row] = await withStatementTimeout(
          sql,
          1000,
          ctx.log,
          async (tx) => tx<{ n: number }[]>`SELECT ${n}::int AS n`,
        );
        expect({ row, commit }).toEqual({ row: { n }, commit: expect.stringMatching(/^(unsent|sent)$/) });
      }
    } finally {
      await sql.end();
    }
  });

  test(
    "a read whose COMMIT fails after its answer is answered once, and the failure is logged once, never unhandled",
    () =>
      throughRelay(async (sql) => {
        const log = recordingLogger();
        // The connection is lost as COMMIT goes out, after the read's statement is answered.
        relay.cutOnceSent("commit");
        const rows = await withStatementTimeout(sql, 1000, log, async (tx) => tx`SELECT 'answered' AS marker`);
        expect([...rows]).toEqual([{ marker: "answered" }]);
        await msUntil(async () => log.lines.length > 0);
        // Time for a second line, or an unhandled rejection, which bun test fails the running test with.
        await Bun.sleep(50);
        // The pool connects again; a lost connection left alone would keep sql.end() waiting for good.
        expect([...(await sql`SELECT 1 AS n`)]).toEqual([{ n: 1 }]);
        expect(log.lines).toEqual([
          {
            level: "warn",
            msg: "a read's COMMIT failed after the read was answered",
            fields: { code: "CONNECTION_CLOSED", error: expect.stringContaining("CONNECTION_CLOSED") },
          },
        ]);
      }),
    10_000,
  );

  test("the first statement runs inside the transaction: a failure after it rolls it back", () =>
    throughRelay(async (sql) => {
      const failed = sql.begin(async (tx) => {
        await tx`INSERT INTO ${tx(table)} VALUES (1)`;
        await tx`SELECT 1 / 0`;
      });
      expect(failed).rejects.toThrow("division by zero");
      await failed.catch(() => {});
      expect([...(await sql`SELECT n FROM ${sql(table)} WHERE n = 1`)]).toEqual([]);
    }));

  test("a first statement that cannot be sent (an undefined value) fails its transaction alone, and the connection serves on", () =>
    throughRelay(async (sql) => {
      const failed = sql.begin(async (tx) => tx`SELECT ${undefined as unknown as number} AS nothing`);
      expect(failed).rejects.toThrow("Undefined values are not allowed");
      await failed.catch(() => {});
      expect([...(await sql`SELECT 1 AS n`)]).toEqual([{ n: 1 }]);
    }));

  test("a counted write sends COMMIT with its insert, and a retry of stored events goes the same way, skipping them", async () => {
    const org = await createTestOrg({ type: "agent" });
    const rowsOfNewSession = (data: Record<string, unknown>) => {
      const sessionId = crypto.randomUUID();
      return [1, 2, 3].map((n) =>
        eventRowOf({
          event_time: new Date(Date.now() - n * 1000),
          org_id: org.id,
          session_id: sessionId,
          content_url: `https://round-trips.example.org/${n}`,
          data,
        }),
      );
    };
    // Each statement with parameters is described before its first use on a
    // connection, a round trip of its own; a first write prepares them all.
    const rows = rowsOfNewSession({ mark: "held-insert" });
    await throughRelay(async (sql) => {
      expect(await writeEvents(sql, rowsOfNewSession({}))).toBe(3);
      relay.holdOnceSent("held-insert");
      const written = writeEvents(sql, rows);
      const sent = await relay.sentOnce((sent) => statementsIn(sent) >= 2);
      relay.release();
      expect(await written).toBe(3);
      // The insert and COMMIT, both sent before the insert's answer.
      expect(statementsIn(sent)).toBe(2);
      // Sent again: the insert meets the stored events, the transaction ends at its
      // COMMIT, and the write is sent once more skipping them.
      expect(await writeEvents(sql, rows)).toBe(0);
      const [stored] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM events WHERE org_id = ${org.id}`;
      expect(stored?.n).toBe(6);
    });
  });

  test("a counted write whose rows cannot be sent fails before COMMIT: nothing of it is stored", async () => {
    const org = await createTestOrg({ type: "agent" });
    const sessionId = crypto.randomUUID();
    const row = eventRowOf({ event_time: new Date(), org_id: org.id, session_id: sessionId, data: { n: 1n } });
    const { db } = await testRuntime();
    expect(writeEvents(db.sql, [row])).rejects.toThrow("BigInt");
    const [bounds] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM session_bounds WHERE session_id = ${sessionId}::uuid`;
    expect(bounds?.n).toBe(0);
  });

  test("a write's last statement goes out with COMMIT, not before COMMIT", () =>
    throughRelay(async (sql) => {
      const written = inWriteTransaction(sql, async (tx) => {
        await tx`SELECT 1`;
        relay.hold();
        return new LastStatement(tx`INSERT INTO ${tx(table)} VALUES (2) RETURNING n`.execute());
      });
      const sent = await relay.sentOnceItHas("commit");
      relay.release();
      expect([...(await written)]).toEqual([{ n: 2 }]);
      expect(sent).toContain("INSERT INTO");
      expect(sent).toContain("commit");
      expect([...(await sql`SELECT n FROM ${sql(table)} WHERE n = 2`)]).toEqual([{ n: 2 }]);
    }));

  test("a write whose last statement fails stores nothing of the transaction and fails with that statement's error", () =>
    throughRelay(async (sql) => {
      await sql`INSERT INTO ${sql(table)} VALUES (3)`;
      const written = inWriteTransaction(sql, async (tx) => {
        await tx`INSERT INTO ${tx(table)} VALUES (4)`;
        return new LastStatement(tx`INSERT INTO ${tx(table)} VALUES (3)`.execute());
      });
      expect(written).rejects.toThrow("duplicate key");
      await written.catch(() => {});
      expect([...(await sql`SELECT n FROM ${sql(table)} WHERE n IN (3, 4) ORDER BY n`)]).toEqual([{ n: 3 }]);
    }));
});
