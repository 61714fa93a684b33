import { expect, test } from "bun:test";
import { testRuntime } from "../support/runtime.ts";

test("a 5,000-row insert goes through the embedded engine in one statement", async () => {
  const { ctx } = await testRuntime();
  const orgId = crypto.randomUUID();
  const count = 5000;
  const now = Date.now();
  const ids = Array.from({ length: count }, () => crypto.randomUUID());
  const times = ids.map((_, i) => new Date(now - i * 1000).toISOString());
  const urls = ids.map((_, i) => `https://bulk.example.com/article/${i}?utm=${"x".repeat(40)}`);
  const inserted = await ctx.sql`
    INSERT INTO events (event_time, event_id, org_id, event_type, source_role, content_url, content_host)
    SELECT t, id, ${orgId}::uuid, 'content_retrieved', 'edge', u, 'bulk.example.com'
    FROM unnest(${times}::timestamptz[], ${ids}::uuid[], ${urls}::text[]) AS x(t, id, u)`;
  expect(inserted.count).toBe(count);
  const [row] = await ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM events WHERE org_id = ${orgId}::uuid`;
  expect(row?.n).toBe(count);
});
