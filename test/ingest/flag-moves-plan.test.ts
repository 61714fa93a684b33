import { expect, test } from "bun:test";
import type { Queryable, Sql } from "../../src/db/sql.ts";
import { storeCounted, storedEventsOf } from "../../src/modules/ingest/event-store.ts";
import { eventRowOf, insertEvents } from "../support/events.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { testRuntime } from "../support/runtime.ts";

const dayMs = 86_400_000;

/**
 * 06:00 UTC of a day years back whose chunk of `events` does not exist yet. Chunks
 * span 7 days from midnight UTC, so the two hours from then on lie in that one chunk.
 */
async function timeOfNewChunk(sql: Sql): Promise<number> {
  for (;;) {
    const day = Math.floor(Date.now() / dayMs) - 1000 - Math.floor(Math.random() * 2000);
    const time = day * dayMs + 6 * 3_600_000;
    const [found] = await sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM timescaledb_information.chunks
      WHERE hypertable_name = 'events' AND range_start <= ${new Date(time)} AND range_end > ${new Date(time + 2 * 3_600_000)}`;
    if (found?.n === 0) return time;
  }
}

/** Rows of the chunk read so far in this transaction: scanned, or fetched through an index. */
async function rowsRead(tx: Queryable, chunk: string): Promise<number> {
  const [row] = await tx<{ n: number }[]>`
    SELECT (coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::int AS n
    FROM pg_stat_xact_user_tables WHERE relid = ${chunk}::regclass`;
  return row?.n ?? 0;
}

test("a write that moves flags looks the moved events up, not every event of a chunk never analysed", async () => {
  const { sql } = (await testRuntime()).ctx;
  const reporter = await createTestOrg({ type: "platform" });
  const sessionId = crypto.randomUUID();
  const start = await timeOfNewChunk(sql);
  const urls = Array.from({ length: 50 }, (_, i) => `https://moves.example/p${i}`);
  const event = (at: number, url: string) => ({
    event_time: new Date(at),
    org_id: reporter.id,
    session_id: sessionId,
    content_url: url,
  });

  // The chunk is made by one event, then kept from autovacuum, so its statistics stay missing.
  await insertEvents(sql, [event(start + 3_600_000, "https://moves.example/first")]);
  const [created] = await sql<{ chunk: string }[]>`
    SELECT format('%s.%s', chunk_schema, chunk_name) AS chunk FROM timescaledb_information.chunks
    WHERE hypertable_name = 'events' AND range_start <= ${new Date(start)} AND range_end > ${new Date(start)}`;
  const chunk = created?.chunk as string;
  await sql`ALTER TABLE ${sql(chunk)} SET (autovacuum_enabled = false)`;
  // 30,000 events outside any session over the hour, then the session's 1,000, each URL's in a block of its own.
  const hourOf = (i: number, of: number) => start + 60_000 + Math.floor((i * 3_540_000) / of);
  await insertEvents(
    sql,
    Array.from({ length: 30_000 }, (_, i) => ({ event_time: new Date(hourOf(i, 30_000)), org_id: reporter.id })),
  );
  await insertEvents(
    sql,
    Array.from({ length: 1000 }, (_, i) => event(hourOf(i, 1000), urls[Math.floor(i / 20)] as string)),
  );

  // Earlier events on stored URLs: each takes its URL's flags, and the first the session's, from a stored event.
  const arriving = urls.map((url, i) => eventRowOf(event(start + i * 1000, url)));
  await sql.begin(async (tx) => {
    const held = await storedEventsOf(tx, [sessionId], new Date(start).toISOString(), {
      flagsTakenBy: arriving.map((row) => row.contentUrl),
    });
    const before = await rowsRead(tx, chunk);
    await storeCounted(tx, arriving, held, "refuse").answer;
    const read = (await rowsRead(tx, chunk)) - before;
    const holders = await tx<{ earlier: boolean }[]>`
      SELECT event_time < ${new Date(start + 60_000)} AS earlier FROM events
      WHERE session_id = ${sessionId}::uuid AND (first_in & 1) <> 0 AND content_url = ANY (${urls}::text[])`;
    // Every URL's flags moved from a stored event to an arriving one.
    expect(holders.map((row) => row.earlier)).toEqual(Array(urls.length).fill(true));
    // The stored holders looked up one by one; a join by sorting or hashing read the hour's 31,000 events.
    expect(read).toBeLessThanOrEqual(2 * arriving.length);
  });
});
