import { describe, expect, test } from "bun:test";
import { refreshAggregates } from "../../src/db/maintenance.ts";
import type { Sql } from "../../src/db/sql.ts";
import { withStatementTimeout } from "../../src/db/statement-timeout.ts";
import { listEvents } from "../../src/modules/reads/service.ts";
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

  // The page's oldest time is looked for in windows growing back from the range's
  // end (events.ts): a page found in the newest day plans, and so locks until the
  // read ends, none of the chunks of the months before it; one deeper in the range
  // steps back through the windows and still equals the raw order.
  test("a page over months reads only the chunks of the windows it needs, and equals the raw order", async () => {
    const { sql, ownerScope, reporterScope, range, olderChunksLocked } = await monthsOfEvents();
    expect(await olderChunksLocked((tx) => listEvents(tx, ownerScope, range, {}, 25, 0))).toEqual([]);
    for (const scope of [ownerScope, reporterScope]) {
      for (const [limit, offset] of [
        [25, 0],
        [25, 30],
        [100, 0],
        [10, 95],
        [20, 100],
      ] as const) {
        const page = await listEvents(sql, scope, range, {}, limit, offset);
        expect({ view: scope.view, limit, offset, page }).toEqual({
          view: scope.view,
          limit,
          offset,
          page: await referenceEvents(sql, scope, range, limit, offset),
        });
      }
    }
  }, 60_000);

  // A read's statements take their times as parameters. Left to itself, PostgreSQL
  // may keep one generic plan for a prepared statement after five runs: a plan over
  // every chunk, all of them locked and set up on every run (statement-timeout.ts).
  test("a read run again and again still plans for its own range", async () => {
    const { ownerScope, range, olderChunksLocked } = await monthsOfEvents();
    const lastDay = { since: new Date((range.until as Date).getTime() - dayMs), until: range.until };
    for (let run = 0; run < 12; run++) {
      const [limit, offset] = [5 + (run % 3) * 10, (run % 4) * 3];
      const locked = await olderChunksLocked((tx) => listEvents(tx, ownerScope, lastDay, {}, limit, offset));
      expect({ run, locked }).toEqual({ run, locked: [] });
    }
  }, 60_000);

  test("a range without events gives an empty page and a total of 0", async () => {
    const owner = await createTestOrg();
    const query = "since=2020-01-01T00:00:00Z&until=2020-02-01T00:00:00Z&limit=25";
    const page = await call("GET", `/content-owners/events?${query}`, { key: owner.key });
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ items: [], total: 0, limit: 25, offset: 0 });
  });
});

const dayMs = 86_400_000;

/**
 * An owner's events over 200 days: one every three days or so, then 40 in the
 * range's last day; the rollups refreshed, so that a read's total comes from them
 * (its raw pieces: the range's first and last hours). `olderChunksLocked` runs a
 * read as the service does and names the chunks of `events` between the range's
 * first and last weeks that it locked (planning a statement over a chunk locks it
 * until the read ends).
 */
async function monthsOfEvents() {
  const { ctx } = await testRuntime();
  const sql = ctx.sql;
  const owner = await createTestOrg();
  const reporter = await createTestOrg({ type: "platform" });
  const domain = owner.domain as string;
  const end = Date.UTC(2024, 7, 1);
  const since = new Date(end - 200 * dayMs);
  const event = (ms: number, i: number): TestEvent => ({
    event_time: new Date(ms),
    org_id: reporter.id,
    content_url: `https://${domain}/page-${i % 5}`,
  });
  await insertEvents(sql, [
    ...Array.from({ length: 64 }, (_, i) => event(since.getTime() + i * 3 * dayMs + (i % 7) * 3_600_000, i)),
    ...Array.from({ length: 40 }, (_, i) => event(end - dayMs + 60_000 + i * 1_800_000, i)),
  ]);
  expect(await refreshAggregates(sql)).toBe(true);
  const olderChunksLocked = (read: (tx: Sql) => Promise<unknown>) =>
    withStatementTimeout(sql, 0, ctx.log, async (tx) => {
      await read(tx);
      // The embedded engine shows its one backend's locks without a pid.
      const locked = await tx<{ chunk: string }[]>`
        SELECT format('%s.%s', c.chunk_schema, c.chunk_name) AS chunk
        FROM timescaledb_information.chunks c
        JOIN pg_locks l ON l.relation = format('%I.%I', c.chunk_schema, c.chunk_name)::regclass
        WHERE c.hypertable_name = 'events' AND (l.pid = pg_backend_pid() OR l.pid IS NULL)
          AND c.range_start >= ${new Date(since.getTime() + 8 * dayMs)} AND c.range_end <= ${new Date(end - 8 * dayMs)}`;
      return locked.map((row) => row.chunk);
    });
  return {
    sql,
    ownerScope: { view: "owner" as const, orgId: owner.id, domains: [domain] },
    reporterScope: { view: "reporter" as const, orgId: reporter.id, agentId: null },
    range: { since, until: new Date(end) },
    olderChunksLocked,
  };
}
