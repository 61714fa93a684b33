import { describe, expect, test } from "bun:test";
import { insertEvents, type TestEvent } from "../support/events.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { figuresOf, referenceEvents } from "../support/reads-reference.ts";
import { testRuntime } from "../support/runtime.ts";

describe("events pages", () => {
  // The page reads from the time of its oldest possible event on (events.ts): events
  // sharing that time must all be in reach, however the page boundary cuts them.
  test("pages through events that share a time equal the raw order, ties at every page boundary", async () => {
    const { ctx } = await testRuntime();
    const owner = await createTestOrg();
    const reporter = await createTestOrg({ type: "platform" });
    const domain = owner.domain as string;
    const tied = Date.UTC(2026, 2, 10, 12);
    const at = (ms: number, n: number): TestEvent[] =>
      Array.from({ length: n }, (_, i) => ({
        event_time: new Date(ms),
        org_id: reporter.id,
        content_url: `https://${i % 2 ? `www.${domain}` : domain}/page-${i % 7}`,
      }));
    await insertEvents(ctx.sql, [
      ...at(tied + 1, 12),
      ...at(tied, 40),
      ...at(tied - 1, 12),
      ...at(tied - 86_400_000, 6),
    ]);
    const since = new Date(tied - 2 * 86_400_000);
    const until = new Date(tied + 86_400_000);
    const scope = { view: "owner" as const, orgId: owner.id, domains: [domain] };

    for (const [limit, offset] of [
      [25, 0],
      [25, 10],
      [25, 30],
      [25, 50],
      [5, 47],
      [1, 63],
      [100, 0],
      [25, 70],
    ] as const) {
      const query = `since=${since.toISOString()}&until=${until.toISOString()}&limit=${limit}&offset=${offset}`;
      const page = await call("GET", `/content-owners/events?${query}`, { key: owner.key });
      expect(page.status).toBe(200);
      expect({ limit, offset, body: figuresOf(page.body) }).toEqual({
        limit,
        offset,
        body: await referenceEvents(ctx.sql, scope, { since, until }, limit, offset),
      });
    }
  });

  test("a range without events gives an empty page and a total of 0", async () => {
    const owner = await createTestOrg();
    const query = "since=2020-01-01T00:00:00Z&until=2020-02-01T00:00:00Z&limit=25";
    const page = await call("GET", `/content-owners/events?${query}`, { key: owner.key });
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ items: [], total: 0, limit: 25, offset: 0 });
  });
});
