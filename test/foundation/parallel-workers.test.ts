import { expect, test } from "bun:test";
import type { Queryable } from "../../src/db/sql.ts";
import { withStatementTimeout } from "../../src/db/statement-timeout.ts";
import { inWriteTransaction } from "../../src/modules/ingest/write-transaction.ts";
import { insertEvents } from "../support/events.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { testRuntime } from "../support/runtime.ts";

const onServer = Boolean(process.env.TEST_DATABASE_URL);

/** The plan of a count over every event, with parallel workers made free to start, as this transaction would run it. */
async function countPlan(tx: Queryable): Promise<string> {
  await tx`SELECT set_config('parallel_setup_cost', '0', true),
                  set_config('parallel_tuple_cost', '0', true),
                  set_config('min_parallel_table_scan_size', '0', true)`;
  const rows = await tx<{ "QUERY PLAN": string }[]>`EXPLAIN SELECT count(*) FROM events`;
  return rows.map((row) => row["QUERY PLAN"]).join("\n");
}

/** A runtime with an event stored, so that the count has a chunk to scan. */
async function withAnEvent() {
  const { ctx } = await testRuntime();
  const reporter = await createTestOrg({ type: "platform" });
  await insertEvents(ctx.sql, [{ event_time: new Date("2026-03-01T10:00:00Z"), org_id: reporter.id }]);
  // The same statement outside the service's transactions goes parallel, so a plan
  // without workers inside them is their doing.
  expect(await ctx.sql.begin(countPlan)).toContain("Gather");
  return ctx;
}

// The embedded engine runs in one process and never plans workers: the choice is a server's.
test.skipIf(!onServer)("a read's statements plan no parallel workers where the planner would start them", async () => {
  const ctx = await withAnEvent();
  expect(await withStatementTimeout(ctx.sql, 5000, ctx.log, countPlan)).not.toContain("Gather");
});

test.skipIf(!onServer)("a write's statements plan no parallel workers where the planner would start them", async () => {
  const ctx = await withAnEvent();
  expect(await inWriteTransaction(ctx.sql, countPlan)).not.toContain("Gather");
});
