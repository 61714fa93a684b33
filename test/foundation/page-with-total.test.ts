import { expect, test } from "bun:test";
import { pageWithTotal } from "../../src/db/sql.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { testRuntime } from "../support/runtime.ts";
import { turnWatchingClient } from "../support/statement-turns.ts";

// Every paged list of the control plane (keys, domains, members, invitations,
// delegations, audit, webhooks, partners…) answers through pageWithTotal.
test("a paged list counts its rows beside its page, not after the page's answer", async () => {
  const org = await createTestOrg();
  await org.keyWith(["identity:read"]);
  const { db } = await testRuntime();
  const { sql, secondInFirstsTurn, forget } = turnWatchingClient(
    db.url,
    "SELECT id FROM api_keys WHERE org_id",
    "SELECT count(*)::int AS n FROM api_keys",
  );
  try {
    const page = () =>
      pageWithTotal(
        sql,
        sql<{ id: string }[]>`SELECT id FROM api_keys WHERE org_id = ${org.id}::uuid ORDER BY id LIMIT 1`,
        sql`api_keys WHERE org_id = ${org.id}::uuid`,
      );
    await page();
    forget();
    const { items, total } = await page();
    expect({ items: items.length, total }).toEqual({ items: 1, total: 2 });
    expect(secondInFirstsTurn()).toEqual([true]);
  } finally {
    await sql.end();
  }
});
