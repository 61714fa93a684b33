import { describe, expect, test } from "bun:test";
import type { Principal } from "../../src/core/caller.ts";
import { GroupWriter } from "../../src/modules/ingest/group-writer.ts";
import { ingestDocument } from "../../src/modules/ingest/pipeline.ts";
import type { WritePlan } from "../../src/modules/ingest/service.ts";
import { flagUpdatesOn } from "../../src/modules/ingest/service.ts";
import { buildContext } from "../../src/runtime.ts";
import { flagMismatches, storedFlags } from "../support/first-flags.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { testRuntime } from "../support/runtime.ts";
import { ago, batch, validEvents } from "../support/telemetry-events.ts";
import { storedEvents, storedSession } from "../support/telemetry-store.ts";

/** The service's default event-age window. */
const ageLimits = { maxAgeDays: 3650, maxFutureSeconds: 300 };

const writerOf = (orgId: string): Principal => ({
  keyId: "test",
  orgId,
  orgType: "agent",
  scopes: new Set(["telemetry:write"]),
  verifiedDomains: [],
});

const agent = async () => writerOf((await createTestOrg({ type: "agent" })).id);

/**
 * A writer of one transaction at a time, and a way to post through it in a set
 * order: `post` resolves once the request has reached the writer. The first
 * request's session is held by another transaction until `release`, so the
 * requests posted after it queue behind it and share the next transaction.
 */
async function queuedWriter(principal: Principal) {
  const { ctx } = await testRuntime();
  const writer = new GroupWriter(ctx.sql, 1, 2000, flagUpdatesOn(ctx.db.kind));
  const blocked = crypto.randomUUID();
  // On a server the write waits for the session's bound; the embedded engine's one connection is busy.
  const holder = await ctx.sql.reserve();
  await holder`BEGIN`;
  await holder`INSERT INTO session_bounds (session_id, events_from) VALUES (${blocked}::uuid, now())`;
  const results: Promise<number>[] = [];
  const post = (sessionId: string, events: unknown[], as = principal, envelope: Record<string, unknown> = {}) =>
    new Promise<void>((arrived) => {
      const counted = {
        sql: ctx.sql,
        write(plan: WritePlan) {
          arrived();
          return writer.write(plan);
        },
      };
      results.push(
        ingestDocument(counted, as, sessionBatch(sessionId, events, envelope), "events", ageLimits).then(
          (result) => result.eventsCreated,
        ),
      );
    });
  await post(blocked, [validEvents.retrieved("group.example.org")]);
  return {
    post,
    /** Lets the first write go; the outcome of every request, in the order posted. */
    async release() {
      await holder`ROLLBACK`;
      holder.release();
      return Promise.allSettled(results);
    },
  };
}

const sessionBatch = (sessionId: string, events: unknown[], envelope: Record<string, unknown> = {}) =>
  batch(events, { ...envelope, session_id: sessionId });

/** The transactions that inserted an organisation's recent events (their xmin), with how many each inserted. */
async function insertingTransactions(orgId: string): Promise<number[]> {
  const { ctx } = await testRuntime();
  // Compressed chunks have no system columns to read, so xmin is read from the
  // uncompressed chunks that hold the last day, where these tests' events are.
  const chunks = await ctx.sql<{ name: string }[]>`
    SELECT format('%s.%s', chunk_schema, chunk_name) AS name FROM timescaledb_information.chunks
    WHERE hypertable_name = 'events' AND NOT is_compressed AND range_end > now() - INTERVAL '1 day'`;
  const byTransaction = new Map<string, number>();
  for (const { name } of chunks) {
    const rows = await ctx.sql<{ tx: string; events: number }[]>`
      SELECT xmin::text AS tx, count(*)::int AS events FROM ${ctx.sql(name)} WHERE org_id = ${orgId}::uuid GROUP BY 1`;
    for (const row of rows) byTransaction.set(row.tx, (byTransaction.get(row.tx) ?? 0) + row.events);
  }
  return [...byTransaction.values()].sort((a, b) => a - b);
}

const fulfilled = (outcomes: PromiseSettledResult<number>[]) =>
  outcomes.map((outcome) => (outcome.status === "fulfilled" ? outcome.value : outcome.status));

describe("group commit", () => {
  test("requests arriving while a write runs share the next transaction, each acknowledged with its own count", async () => {
    const reporter = await agent();
    const writes = await queuedWriter(reporter);
    for (const count of [2, 3, 4]) {
      await writes.post(
        crypto.randomUUID(),
        Array.from({ length: count }, () => validEvents.retrieved("group.example.org")),
      );
    }
    expect(fulfilled(await writes.release())).toEqual([1, 2, 3, 4]);
    // The first alone; the three that queued behind it in one transaction.
    expect(await insertingTransactions(reporter.orgId)).toEqual([1, 9]);
    expect(flagMismatches(await storedFlags((await testRuntime()).ctx.sql, [reporter.orgId]))).toEqual([]);
  });

  test("an event in two requests of one transaction is stored once and counted for the first", async () => {
    const reporter = await agent();
    const writes = await queuedWriter(reporter);
    const sessionId = crypto.randomUUID();
    const shared = validEvents.retrieved("group.example.org");
    await writes.post(sessionId, [shared, validEvents.cited("group.example.org", { source_role: "agent" })]);
    await writes.post(sessionId, [shared]);
    expect(fulfilled(await writes.release())).toEqual([1, 2, 0]);
    expect(await insertingTransactions(reporter.orgId)).toEqual([1, 2]);
  });

  test("a request resending stored events in a shared transaction: the group is written again skipping them", async () => {
    const org = await createTestOrg({ type: "agent" });
    const reporter = writerOf(org.id);
    const sessionId = crypto.randomUUID();
    const sent = [
      validEvents.retrieved("group.example.org"),
      validEvents.cited("group.example.org", { source_role: "agent" }),
    ];
    expect(
      (await call("POST", "/events", { key: org.key, body: sessionBatch(sessionId, sent) })).body.events_created,
    ).toBe(2);
    const writes = await queuedWriter(reporter);
    await writes.post(sessionId, [...sent, validEvents.presented("group.example.org")]);
    await writes.post(crypto.randomUUID(), [validEvents.retrieved("group.example.org")]);
    expect(fulfilled(await writes.release())).toEqual([1, 1, 1]);
    // The earlier request's two; the blocked first alone; the group's two new events together.
    expect(await insertingTransactions(reporter.orgId)).toEqual([1, 2, 2]);
    expect(flagMismatches(await storedFlags((await testRuntime()).ctx.sql, [reporter.orgId]))).toEqual([]);
  });

  test("a session named by two requests of one transaction starts as it would were they written one by one", async () => {
    const reporter = await agent();
    const writes = await queuedWriter(reporter);
    const sessionId = crypto.randomUUID();
    // One request declares its start, after its own event; the other declares none.
    const declared = ago(7200);
    await writes.post(sessionId, [validEvents.retrieved("group.example.org", { timestamp: ago(18000) })], reporter, {
      started_at: declared,
    });
    await writes.post(sessionId, [validEvents.retrieved("group.example.org", { timestamp: ago(3600) })]);
    expect(fulfilled(await writes.release())).toEqual([1, 1, 1]);
    expect((await storedSession(sessionId))?.started_at).toEqual(new Date(declared));
  });

  test("a request of a shared transaction whose events are all stored gives their session no agent or start", async () => {
    const org = await createTestOrg({ type: "agent" });
    const reporter = writerOf(org.id);
    const stored = validEvents.retrieved("group.example.org", { timestamp: ago(36000) });
    const first = await call("POST", "/events", { key: org.key, body: sessionBatch(crypto.randomUUID(), [stored]) });
    expect(first.body.events_created).toBe(1);
    const writes = await queuedWriter(reporter);
    const sessionId = crypto.randomUUID();
    await writes.post(sessionId, [stored], reporter, { agent_id: "agent-z", started_at: ago(36000) });
    const fresh = validEvents.retrieved("group.example.org", { timestamp: ago(60) });
    await writes.post(sessionId, [fresh]);
    expect(fulfilled(await writes.release())).toEqual([1, 0, 1]);
    const session = await storedSession(sessionId);
    expect([session?.agent_id, session?.started_at]).toEqual([null, new Date(fresh.timestamp)]);
  });

  test("a shared transaction that fails is written again request by request: two organisations naming one new session", async () => {
    const reporter = await agent();
    const other = await agent();
    const name = crypto.randomUUID();
    const writes = await queuedWriter(reporter);
    await writes.post(name, [validEvents.retrieved("group.example.org")]);
    await writes.post(name, [validEvents.retrieved("group.example.org")], other);
    await writes.post(crypto.randomUUID(), [validEvents.retrieved("group.example.org")]);
    const outcomes = await writes.release();
    // Both took the name as the new session's id in one statement; written alone,
    // the later one finds it taken and gets a session of its own (sql/067).
    expect(fulfilled(outcomes)).toEqual([1, 1, 1, 1]);
    expect(await insertingTransactions(reporter.orgId)).toEqual([1, 1, 1]);
    const { ctx } = await testRuntime();
    const sessions = await ctx.sql<{ org_id: string; wire_id: string | null }[]>`
      SELECT org_id, wire_id FROM sessions WHERE coalesce(wire_id, id) = ${name}::uuid ORDER BY wire_id NULLS FIRST`;
    expect([...sessions]).toEqual([
      { org_id: reporter.orgId, wire_id: null },
      { org_id: other.orgId, wire_id: name },
    ]);
  });

  test("turns in one transaction keep what the stored level of their own organisation's session allows, where two organisations use one name", async () => {
    const declaredFull = await createTestOrg({ type: "agent" });
    const other = await createTestOrg({ type: "agent" });
    const started = await call("POST", "/sessions/start", { key: declaredFull.key, body: { privacy_level: "full" } });
    const name = started.body.session_id as string;
    const turn = () =>
      validEvents.turnStarted({
        turn: { privacy_level: "full", query_text: "q", query_intent: "how_to", query_tokens: 3 },
      });
    // The other organisation's use of the name: a session of its own (sql/067), declared minimal.
    const described = { schema_version: "1.0", session_id: name, started_at: ago(60), privacy_level: "minimal" };
    expect((await call("POST", "/events", { key: other.key, body: described })).status).toBe(200);
    const writes = await queuedWriter(writerOf(declaredFull.id));
    await writes.post(name, [turn()]);
    await writes.post(name, [turn()], writerOf(other.id));
    expect(fulfilled(await writes.release())).toEqual([1, 1, 1]);
    const turnOf = async (orgId: string) => (await storedEvents(orgId)).find((event) => event.turn)?.turn;
    expect(await turnOf(declaredFull.id)).toMatchObject({ privacy_level: "full", query_text: "q" });
    const stripped = await turnOf(other.id);
    expect(stripped).toMatchObject({ privacy_level: "minimal", query_tokens: 3 });
    expect(stripped).not.toHaveProperty("query_text");
  });
});

describe("ingest transactions at once", () => {
  test("unset, four on a server and two on the embedded engine; INGEST_TRANSACTIONS set, as set", async () => {
    const { ctx, db } = await testRuntime();
    expect(ctx.ingestWriter.transactions).toBe(db.kind === "server" ? 4 : 2);
    for (const kind of ["server", "embedded"] as const) {
      const configured = buildContext({ ...ctx.config, INGEST_TRANSACTIONS: 3 }, ctx.log, { ...db, kind });
      expect(configured.ingestWriter.transactions).toBe(3);
      const unset = buildContext({ ...ctx.config, INGEST_TRANSACTIONS: undefined }, ctx.log, { ...db, kind });
      expect(unset.ingestWriter.transactions).toBe(kind === "server" ? 4 : 2);
    }
  });
});
