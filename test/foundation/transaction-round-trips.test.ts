import { afterAll, describe, expect, test } from "bun:test";
import { connect } from "../../src/db/client.ts";
import type { Sql } from "../../src/db/sql.ts";
import { inWriteTransaction, LastStatement } from "../../src/modules/ingest/event-store.ts";
import { testRuntime } from "../support/runtime.ts";

/**
 * A TCP relay between a client and the database that can hold back the
 * database's answers. While it holds them, whatever the client still sends was
 * sent without waiting for an answer: pipelined, a round trip saved.
 */
async function holdingRelay(databaseUrl: string) {
  const target = new URL(databaseUrl);
  let holding = false;
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
        sent += Buffer.from(chunk).toString("latin1");
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
    /** What the client has sent since `hold`, once it contains `text` (or a second after the hold began without it). */
    async sentOnceItHas(text: string): Promise<string> {
      while (!holding) await Bun.sleep(1);
      for (let waited = 0; !sent.includes(text) && waited < 1000; waited += 10) await Bun.sleep(10);
      return sent;
    },
    release() {
      holding = false;
      sent = "";
      for (const deliver of held.splice(0)) deliver();
    },
    stop: () => server.stop(true),
  };
}

describe("round trips of a transaction (patches/README.md)", async () => {
  const { db } = await testRuntime();
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
