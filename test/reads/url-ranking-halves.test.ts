import { describe, expect, test } from "bun:test";
import { connect } from "../../src/db/client.ts";
import { refreshAggregates } from "../../src/db/maintenance.ts";
import { ReadCompanion } from "../../src/db/read-companion.ts";
import { withStatementTimeout } from "../../src/db/statement-timeout.ts";
import { testServerUrl } from "../support/databases.ts";
import { insertEvents, type TestEvent } from "../support/events.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { figuresOf, referenceUrls } from "../support/reads-reference.ts";
import { testRuntime } from "../support/runtime.ts";

/**
 * On a server, an owner's URL ranking over a range with day pieces runs in two
 * halves by host, the second on the companion connection (src/db/read-companion.ts).
 * The embedded engine has no companion and always ranks in one statement.
 */
const dayMs = 86_400_000;

async function companionOf(): Promise<ReadCompanion> {
  const { ctx } = await testRuntime();
  const companion = ctx.readReplicas.pick().companion;
  if (!companion) throw new Error("a server runtime has a read companion");
  return companion;
}

/** Runs `work` while another read holds the companion. */
async function whileHeld<T>(work: () => Promise<T>): Promise<T> {
  const { ctx } = await testRuntime();
  const companion = await companionOf();
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let holding = () => {};
  const held = new Promise<void>((resolve) => {
    holding = resolve;
  });
  const holder = withStatementTimeout(ctx.sql, 0, ctx.log, async (tx) => {
    await tx`SELECT 1`;
    return companion.alongside(
      tx,
      () => released,
      async (sql) => {
        holding();
        return sql`SELECT 1`;
      },
    );
  });
  await held;
  try {
    return await work();
  } finally {
    release();
    await holder;
  }
}

/**
 * An owner's events over its apex and three subdomains, in the last 40 days: URL i
 * on host i % 4 with (i % 5) + 1 events, so counts tie across hosts and halves, and
 * two URLs whose order differs between UTF-8 bytes (the database's) and UTF-16.
 */
async function ownerWithFourHosts() {
  const { ctx } = await testRuntime();
  const owner = await createTestOrg();
  const platform = await createTestOrg({ type: "platform" });
  const domain = owner.domain as string;
  const hosts = [domain, `www.${domain}`, `news.${domain}`, `blog.${domain}`];
  const now = Date.now();
  const sessions = Array.from({ length: 12 }, () => crypto.randomUUID());
  const events: TestEvent[] = [];
  const add = (url: string, n: number, i: number) => {
    for (let k = 0; k < n; k++) {
      events.push({
        event_time: new Date(now - ((i * 7 + k * 3) % 39) * dayMs - 3_600_000),
        org_id: platform.id,
        session_id: sessions[(i + k) % sessions.length],
        content_url: url,
      });
    }
  };
  for (let i = 0; i < 60; i++) add(`https://${hosts[i % 4]}/page-${i}`, (i % 5) + 1, i);
  add(`https://${domain}/\u{ff5e}`, 5, 61);
  add(`https://${domain}/\u{1f600}`, 5, 62);
  await insertEvents(ctx.sql, events);
  expect(await refreshAggregates(ctx.sql)).toBe(true);
  const range = { since: new Date(now - 40 * dayMs), until: new Date(now) };
  return { owner, range };
}

describe.skipIf(!testServerUrl)("URL ranking in two halves (server)", () => {
  test("gives the page and total one statement gives, at every offset and either sort", async () => {
    const { ctx } = await testRuntime();
    const companion = await companionOf();
    const { owner, range } = await ownerWithFourHosts();
    const scope = { view: "owner" as const, orgId: owner.id, domains: [owner.domain as string] };
    for (const [limit, offset] of [
      [200, 0],
      [5, 0],
      [5, 7],
      [3, 60],
      [10, 100],
    ] as const) {
      for (const sort of ["events", "sessions"] as const) {
        const query = new URLSearchParams({
          since: range.since.toISOString(),
          until: range.until.toISOString(),
          limit: String(limit),
          offset: String(offset),
          sort,
        });
        const path = `/content-owners/urls?${query}`;
        const runsBefore = companion.runs;
        const inHalves = await call("GET", path, { key: owner.key });
        expect(inHalves.status).toBe(200);
        expect(companion.runs).toBe(runsBefore + 1);
        const whole = await whileHeld(() => call("GET", path, { key: owner.key }));
        // The holder's own run counts once; the read while it was held ran whole.
        expect(companion.runs).toBe(runsBefore + 2);
        const where = { limit, offset, sort };
        expect({ where, body: figuresOf(inHalves.body) }).toEqual({ where, body: figuresOf(whole.body) });
        if (limit === 200) {
          const urls = (inHalves.body.items as { content_url: string }[]).map((item) => item.content_url);
          // The database's byte order: U+FF5E (EF BD 9E) before U+1F600 (F0 9F 98 80), both with 5 events.
          expect(urls.indexOf(`https://${owner.domain}/\u{ff5e}`)).toBeLessThan(
            urls.indexOf(`https://${owner.domain}/\u{1f600}`),
          );
        } else {
          expect({ where, body: figuresOf(inHalves.body) }).toEqual({
            where,
            body: await referenceUrls(ctx.sql, scope, range, limit, offset, { sort }),
          });
        }
      }
    }
  }, 60_000);

  test("a page deeper than 1,000 URLs ranks in one statement", async () => {
    const { ctx } = await testRuntime();
    const companion = await companionOf();
    const { owner, range } = await ownerWithFourHosts();
    const scope = { view: "owner" as const, orgId: owner.id, domains: [owner.domain as string] };
    const query = new URLSearchParams({
      since: range.since.toISOString(),
      until: range.until.toISOString(),
      limit: "10",
      offset: "995",
    });
    const runsBefore = companion.runs;
    const deep = await call("GET", `/content-owners/urls?${query}`, { key: owner.key });
    expect(companion.runs).toBe(runsBefore);
    expect(figuresOf(deep.body)).toEqual(await referenceUrls(ctx.sql, scope, range, 10, 995));
    expect(deep.body.total).toBe(62);
  }, 30_000);

  test("a companion that cannot connect costs the read time, not its answer", async () => {
    const { ctx } = await testRuntime();
    // Nothing listens on port 1: the companion's connection is refused.
    const unreachable = connect("postgres://postgres@127.0.0.1:1/none", 1);
    try {
      const companion = new ReadCompanion(unreachable, 1000);
      const answered = await withStatementTimeout(ctx.sql, 0, ctx.log, (tx) =>
        companion.alongside(
          tx,
          () => tx<{ n: number }[]>`SELECT 1 AS n`,
          (sql) => sql<{ n: number }[]>`SELECT 2 AS n`,
        ),
      );
      expect(answered?.map(([row]) => row?.n)).toEqual([1, 2]);
      expect(companion.runs).toBe(0);
    } finally {
      await unreachable.end({ timeout: 1 });
    }
  });

  test("the companion's half reads the snapshot of the read's own transaction", async () => {
    const { ctx } = await testRuntime();
    const companion = await companionOf();
    const platform = await createTestOrg({ type: "platform" });
    const countOf = (sql: typeof ctx.sql) =>
      sql<{ n: number }[]>`SELECT count(*)::int AS n FROM events WHERE org_id = ${platform.id}::uuid`.then(
        ([row]) => row?.n,
      );
    const event = (minutesAgo: number): TestEvent => ({
      event_time: new Date(Date.now() - minutesAgo * 60_000),
      org_id: platform.id,
      content_url: "https://snapshot.example.com/page",
    });
    await insertEvents(ctx.sql, [event(3)]);
    const counts = await withStatementTimeout(ctx.sql, 0, ctx.log, async (tx) => {
      const before = await countOf(tx);
      // Committed by another connection after the read's snapshot was taken.
      await insertEvents(ctx.sql, [event(2)]);
      return { before, halves: await companion.alongside(tx, () => countOf(tx), countOf) };
    });
    expect(counts).toEqual({ before: 1, halves: [1, 1] });
    expect(await countOf(ctx.sql)).toBe(2);
  });
});
