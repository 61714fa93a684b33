import { expect, test } from "bun:test";
import postgres from "postgres";
import { storedEventsOf } from "../../src/modules/ingest/event-store.ts";
import { insertEvents } from "../support/events.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { testRuntime } from "../support/runtime.ts";

/**
 * A write reads the stored flag holders of its sessions among the events on its
 * URLs (event-store.ts, storedEventsOf), hundreds of URLs in a busy write. Given
 * as an array constant, PostgreSQL estimates each URL on its own against the
 * column's statistics, in every analysed chunk it plans.
 */
test("the flag holders' read gives the planner its URLs as one subquery, not a constant to estimate URL by URL", async () => {
  const { ctx, db } = await testRuntime();
  const reporter = await createTestOrg({ type: "platform" });
  const sessionId = crypto.randomUUID();
  const at = Date.now() - 3_600_000;
  const urls = Array.from({ length: 50 }, (_, i) => `https://holders.example/p${i}`);
  await insertEvents(
    ctx.sql,
    urls.map((url, i) => ({
      event_time: new Date(at + i),
      org_id: reporter.id,
      session_id: sessionId,
      content_url: url,
    })),
  );
  const sent: { text: string; parameters: unknown[] }[] = [];
  const watched = postgres(db.url, {
    max: 1,
    onnotice: () => {},
    debug: (_connection: number, text: string, parameters: unknown[]) => sent.push({ text, parameters }),
  });
  try {
    const held = await storedEventsOf(watched, [sessionId], new Date(at - 1000).toISOString(), { flagsTakenBy: urls });
    // Each event is the first on its URL, so each holds its URL's flags.
    expect(held.map((event) => event.contentUrl).sort()).toEqual([...urls].sort());

    const read = sent.find((statement) => statement.text.includes("FROM events"));
    if (!read) throw new Error("the holder read was not sent");
    const plan = await watched.unsafe<{ "QUERY PLAN": string }[]>(
      `EXPLAIN ${read.text}`,
      read.parameters as postgres.ParameterOrJSON<never>[],
    );
    const planText = plan.map((row) => row["QUERY PLAN"]).join("\n");
    // Hashed: an unhashed subplan would unnest the URLs again for every stored event it filters.
    expect(planText).toContain("hashed SubPlan");
    expect(planText).not.toMatch(/content_url = ANY \('\{/);
  } finally {
    await watched.end({ timeout: 5 });
  }
});
