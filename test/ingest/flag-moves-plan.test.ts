import { expect, test } from "bun:test";
import { connect } from "../../src/db/client.ts";
import { migrate } from "../../src/db/migrate.ts";
import type { Queryable, Sql } from "../../src/db/sql.ts";
import { createLogger } from "../../src/log.ts";
import { storeCounted, storedEventsOf } from "../../src/modules/ingest/event-store.ts";
import { inWriteTransaction } from "../../src/modules/ingest/write-transaction.ts";
import { createOrganization } from "../../src/modules/organizations/service.ts";
import { scratchDatabase, testServerUrl } from "../support/databases.ts";
import { eventRowOf, insertEvents, testFlagUpdates } from "../support/events.ts";
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

// It loads 31,000 events first: on a busy machine that alone can pass the default 5 s.
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
    await storeCounted(tx, arriving, held, testFlagUpdates).answer;
    const read = (await rowsRead(tx, chunk)) - before;
    const holders = await tx<{ earlier: boolean }[]>`
      SELECT event_time < ${new Date(start + 60_000)} AS earlier FROM events
      WHERE session_id = ${sessionId}::uuid AND (first_in & 1) <> 0 AND content_url = ANY (${urls}::text[])`;
    // Every URL's flags moved from a stored event to an arriving one.
    expect(holders.map((row) => row.earlier)).toEqual(Array(urls.length).fill(true));
    // The stored holders looked up one by one; a join by sorting or hashing read the hour's 31,000 events.
    expect(read).toBeLessThanOrEqual(2 * arriving.length);
  });
}, 30_000);

test("a write that moves flags keeps looking the moved events up as its chunk grows under a kept plan", async () => {
  // A database of its own: a plan for `events` covers every chunk, and other tests' chunks would change it.
  const db = await scratchDatabase();
  // One connection, so that every write meets the plans its earlier writes left.
  const writer = connect(db.url, 1);
  try {
    await migrate(db.sql, createLogger("error"));
    // PostgreSQL keeps one plan for a prepared statement once it judges it no
    // dearer than planning each run afresh, as it does while `events` has few
    // chunks. Forced, so that the test does not hang on that judgement.
    await writer`SET plan_cache_mode = force_generic_plan`;
    const reporter = await createOrganization(writer, { name: "Grows", orgType: "platform" });
    const sessionId = crypto.randomUUID();
    const start = await timeOfNewChunk(writer);
    const first = start + 3_600_000;
    const event = (at: number, page: string) => ({
      event_time: new Date(at),
      org_id: reporter.id,
      session_id: sessionId,
      content_url: `https://grows.example/${page}`,
    });

    await insertEvents(writer, [event(first, "first")]);
    const [created] = await writer<{ chunk: string }[]>`
      SELECT format('%s.%s', chunk_schema, chunk_name) AS chunk FROM timescaledb_information.chunks
      WHERE hypertable_name = 'events'`;
    const chunk = created?.chunk as string;
    // No ANALYZE of the chunk, which would make PostgreSQL plan the statements again.
    await writer`ALTER TABLE ${writer(chunk)} SET (autovacuum_enabled = false)`;

    // Each write takes the session's flags with an event earlier than every event stored (a move),
    // and brings 99 events later than all of them, each on a URL of its own.
    let earliest = first;
    let latest = first + 1000;
    let writes = 0;
    /** Writes 100 events through the write path; returns the rows of the chunk its last statement read. */
    const write = () =>
      inWriteTransaction(writer, async (tx) => {
        writes++;
        earliest -= 1000;
        const late = Array.from({ length: 99 }, (_, i) => event(latest + 10 * (i + 1), `w${writes}-${i}`));
        latest += 1000;
        const arriving = [event(earliest, "first"), ...late].map(eventRowOf);
        const held = await storedEventsOf(tx, [sessionId], new Date(start).toISOString(), {
          flagsTakenBy: arriving.map((row) => row.contentUrl),
        });
        const before = await rowsRead(tx, chunk);
        await storeCounted(tx, arriving, held, testFlagUpdates).answer;
        return (await rowsRead(tx, chunk)) - before;
      });
    // The statements are planned while the chunk holds a single event.
    await write();
    // The chunk grows from 101 events to over 30,000, none of them in the session.
    await writer`
      INSERT INTO events (event_time, event_id, org_id, event_type, source_role)
      SELECT ${new Date(start)}::timestamptz + g * interval '200 milliseconds', gen_random_uuid(), ${reporter.id}::uuid,
             'content_retrieved', 'agent'
      FROM generate_series(1, 30000) g`;
    // The moved event looked up through an index; the plan made for the small chunk scanned all of it.
    expect(await write()).toBeLessThanOrEqual(10);
  } finally {
    await writer.end({ timeout: 5 });
    await db.close();
  }
  // A database of its own is migrated first, which takes seconds on a busy server.
}, 60_000);

// A server updates moved flags through each event's own chunk (FlagUpdates): an
// UPDATE of the hypertable locks, and so plans, every chunk (54 on the benchmark's
// year of data). The embedded engine updates the hypertable, since it leaves a
// compressed chunk's rows alone when the chunk itself is named.
test.skipIf(!testServerUrl)(
  "on a server, a write that moves flags writes to the moved events' chunk alone",
  async () => {
    const { sql } = (await testRuntime()).ctx;
    const reporter = await createTestOrg({ type: "platform" });
    const sessionId = crypto.randomUUID();
    const start = await timeOfNewChunk(sql);
    const event = (at: number, url: string) => ({
      event_time: new Date(at),
      org_id: reporter.id,
      session_id: sessionId,
      content_url: url,
    });
    // Another chunk of the same reporter, long before: a write later on must not touch it.
    await insertEvents(sql, [{ event_time: new Date(start - 400 * dayMs), org_id: reporter.id }]);
    await insertEvents(sql, [event(start + 3_600_000, "https://chunks.example/a")]);

    // Earlier on the same URL: the stored event's flags move to it.
    const arriving = [eventRowOf(event(start + 60_000, "https://chunks.example/a"))];
    await sql.begin(async (tx) => {
      const held = await storedEventsOf(tx, [sessionId], new Date(start).toISOString(), {
        flagsTakenBy: arriving.map((row) => row.contentUrl),
      });
      await storeCounted(tx, arriving, held, testFlagUpdates).answer;
      const written = await tx<{ chunk: string }[]>`
        SELECT format('%s.%s', c.chunk_schema, c.chunk_name) AS chunk
        FROM timescaledb_information.chunks c
        JOIN pg_locks l ON l.relation = format('%I.%I', c.chunk_schema, c.chunk_name)::regclass
        WHERE c.hypertable_name = 'events' AND l.pid = pg_backend_pid() AND l.mode = 'RowExclusiveLock'`;
      const [moved] = await tx<{ chunk: string; first_in: number }[]>`
        SELECT tableoid::regclass::text AS chunk, first_in FROM events
        WHERE session_id = ${sessionId}::uuid AND event_time = ${new Date(start + 3_600_000)}`;
      // The flags did move, through the one chunk both events are in.
      expect(moved?.first_in).toBe(0);
      expect(written.map((row) => row.chunk)).toEqual([moved?.chunk as string]);
    });
  },
);
