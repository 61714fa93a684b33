import { expect, test } from "bun:test";
import { ProblemError } from "../../src/core/problem.ts";
import { connect } from "../../src/db/client.ts";
import { ReadCompanion } from "../../src/db/read-companion.ts";
import { withStatementTimeout } from "../../src/db/statement-timeout.ts";
import { problemFor } from "../../src/http/errors.ts";
import { testRuntime } from "../support/runtime.ts";

const onServer = Boolean(process.env.TEST_DATABASE_URL);

// PGlite runs in one WASM thread with no timer to interrupt a statement: the limit is a server's.
test.skipIf(!onServer)(
  "a read past its statement timeout is cancelled and answered 503 query_timeout with Retry-After",
  async () => {
    const { ctx } = await testRuntime();
    const started = performance.now();
    const error = await withStatementTimeout(ctx.sql, 100, ctx.log, (sql) => sql`SELECT pg_sleep(5)`).catch(
      (e: unknown) => e,
    );
    expect(performance.now() - started).toBeLessThan(4000);
    const answered = problemFor({
      code: "UNKNOWN",
      error,
      method: "GET",
      path: "/agent/summary",
      searchParams: new URLSearchParams(),
      allowedMethods: [],
    });
    expect(answered).toBeInstanceOf(ProblemError);
    expect(answered).toMatchObject({ code: "query_timeout", status: 503, headers: { "retry-after": "1" } });
    // The limit was the transaction's own: the connection goes back to the pool without it.
    const [after] = await ctx.sql<{ statement_timeout: string }[]>`SHOW statement_timeout`;
    expect(after?.statement_timeout).toBe("0");
  },
);

// The timeout's setting is sent without waiting for its answer (statement-timeout.ts):
// it must still come before the read's first statement.
test("a read's first statement already runs under the read's timeout", async () => {
  const { ctx } = await testRuntime();
  const [row] = await withStatementTimeout(
    ctx.sql,
    4321,
    ctx.log,
    (sql) => sql<{ timeout: string }[]>`SELECT current_setting('statement_timeout') AS timeout`,
  );
  expect(row?.timeout).toBe("4321ms");
});

// A read whose parameters are refused throws before its first statement: its
// connection must still go back to the pool with no transaction open.
test("a read refused before its first statement leaves its connection outside any transaction", async () => {
  const { db, ctx } = await testRuntime();
  const sql = connect(db.url, 1);
  try {
    const refused = (): Promise<never> => {
      throw new Error("refused before any statement");
    };
    await expect(withStatementTimeout(sql, 1000, ctx.log, refused)).rejects.toThrow("refused before any statement");
    const [after] = await sql<{ read_only: string; timeout: string }[]>`
      SELECT current_setting('transaction_read_only') AS read_only, current_setting('statement_timeout') AS timeout`;
    expect(after).toEqual({ read_only: "off", timeout: "0" });
  } finally {
    await sql.end({ timeout: 5 });
  }
});

// The companion's half of a read runs under the read's timeout too, and a half that
// fails gives the companion back: the next read can use it.
test.skipIf(!onServer)("a read's half on the companion connection is cut off at the read's timeout", async () => {
  const { db, ctx } = await testRuntime();
  const companionSql = connect(db.url, 1);
  try {
    const companion = new ReadCompanion(companionSql, 100);
    const started = performance.now();
    const error = await withStatementTimeout(db.sql, 0, ctx.log, (tx) =>
      companion.alongside(
        tx,
        () => tx`SELECT 1`,
        (sql) => sql`SELECT pg_sleep(5)`,
      ),
    ).catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(4000);
    expect(error).toMatchObject({ code: "57014" });
    const again = await withStatementTimeout(db.sql, 0, ctx.log, (tx) =>
      companion.alongside(
        tx,
        () => tx<{ n: number }[]>`SELECT 1 AS n`,
        (sql) => sql<{ timeout: string }[]>`SELECT current_setting('statement_timeout') AS timeout`,
      ),
    );
    expect(again?.[1][0]?.timeout).toBe("100ms");
    expect(companion.runs).toBe(1);
    // Both settings were the companion transaction's own.
    const [after] = await companionSql<{ timeout: string; workers: string }[]>`
      SELECT current_setting('statement_timeout') AS timeout,
             current_setting('max_parallel_workers_per_gather') AS workers`;
    expect(after?.timeout).toBe("0");
    expect(after?.workers).not.toBe("0");
  } finally {
    await companionSql.end({ timeout: 5 });
  }
});
