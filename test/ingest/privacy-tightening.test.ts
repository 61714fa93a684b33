import { expect, test } from "bun:test";
import { runCompressionPolicies } from "../../src/db/maintenance.ts";
import { tightenStoredConversation } from "../../src/modules/ingest/privacy-tightening.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { testRuntime } from "../support/runtime.ts";
import { ago, validEvents } from "../support/telemetry-events.ts";

const data = {
  scope: "turn",
  query_text: "what is the best espresso machine",
  response_text: "the Gaggia",
  query_intent: "comparison",
  query_tokens: 12,
};
const turn = { privacy_level: "full", query_text: "best espresso?", query_intent: "comparison", query_tokens: 4 };

test("a session document that makes the level stricter strips what its session stored; a looser one brings nothing back", async () => {
  const owner = await createTestOrg();
  const agent = await createTestOrg({ type: "agent" });
  const sessionId = crypto.randomUUID();
  const describe = (privacyLevel: string, events: unknown[] = []) =>
    call("POST", "/sessions/bulk", {
      key: agent.key,
      body: { session_id: sessionId, privacy_level: privacyLevel, events },
    });
  const first = validEvents.grounded(owner.domain as string, { data });
  expect((await describe("full", [first, validEvents.turnStarted({ turn })])).status).toBe(200);
  const ownerData = async (eventId: string) => {
    const events = await call("GET", "/content-owners/events", { key: owner.key });
    const event = events.body.items.find((item: { event_id: string }) => item.event_id === eventId);
    return Object.keys(event.event_data).sort();
  };
  /** What the owner's event list and the agent's session document show of the conversation. */
  const seen = async () => {
    const document = await call("GET", `/sessions/${sessionId}/document`, { key: agent.key });
    const turnEvent = document.body.events.find((event: { type: string }) => event.type === "turn_started");
    return {
      data: await ownerData(first.id),
      turn: turnEvent.turn,
    };
  };
  expect(await seen()).toEqual({ data: Object.keys(data).sort(), turn });

  expect((await describe("intent")).status).toBe(200);
  expect(await seen()).toEqual({
    data: ["query_intent", "query_tokens", "scope"],
    turn: { privacy_level: "intent", query_intent: "comparison", query_tokens: 4 },
  });

  expect((await describe("minimal")).status).toBe(200);
  expect(await seen()).toEqual({
    data: ["query_tokens", "scope"],
    turn: { privacy_level: "minimal", query_tokens: 4 },
  });

  // Looser again: what was stripped is gone, and what arrives now keeps what the level allows.
  const later = validEvents.grounded(owner.domain as string, { data, timestamp: new Date().toISOString() });
  expect((await describe("full", [later])).status).toBe(200);
  expect((await seen()).data).toEqual(["query_tokens", "scope"]);
  expect(await ownerData(later.id)).toEqual(Object.keys(data).sort());
});

test("a stricter document racing one that stores text leaves nothing above the level the session ends at", async () => {
  const { ctx } = await testRuntime();
  const owner = await createTestOrg();
  const agent = await createTestOrg({ type: "agent" });
  for (let round = 0; round < 10; round++) {
    const sessionId = crypto.randomUUID();
    const bulk = (privacyLevel: string, events: unknown[]) =>
      call("POST", "/sessions/bulk", {
        key: agent.key,
        body: { session_id: sessionId, privacy_level: privacyLevel, events },
      });
    const answers = await Promise.all([
      bulk("full", [validEvents.grounded(owner.domain as string, { data }), validEvents.turnStarted({ turn })]),
      bulk("intent", []),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    const [session] = await ctx.sql<{ id: string; privacy_level: string }[]>`
      SELECT id, privacy_level FROM sessions WHERE org_id = ${agent.id}::uuid AND id = ${sessionId}::uuid`;
    const [text] = await ctx.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM events
      WHERE session_id = ${session?.id as string}::uuid AND (data ? 'query_text' OR turn ? 'query_text')`;
    // Whichever document came last decided the level, and what is stored follows it.
    expect([session?.privacy_level, text?.n]).toEqual(session?.privacy_level === "full" ? ["full", 2] : ["intent", 0]);
  }
}, 30_000);

test("stripping a session's events in compressed chunks is not stopped by TimescaleDB's decompression cap", async () => {
  const { ctx } = await testRuntime();
  const agent = await createTestOrg({ type: "agent" });
  const sessionId = crypto.randomUUID();
  const old = (host: string, seconds: number) =>
    validEvents.grounded(host, { data, timestamp: ago(45 * 86_400 + seconds) });
  // Two hosts: two compressed batches, each decompressed whole by the update.
  const events = [old("one.cap.example", 0), old("two.cap.example", 1)];
  const stored = await call("POST", "/sessions/bulk", {
    key: agent.key,
    body: { session_id: sessionId, privacy_level: "full", events },
  });
  expect(stored.status).toBe(200);
  expect(await runCompressionPolicies(ctx.sql)).toBe(true);

  await ctx.sql.begin(async (tx) => {
    // A cap the update would pass at once, unless the strip lifts it for its transaction.
    await tx`SET LOCAL timescaledb.max_tuples_decompressed_per_dml_transaction = 1`;
    await tightenStoredConversation(tx, sessionId, "intent");
  });
  const [text] = await ctx.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM events WHERE session_id = ${sessionId}::uuid AND data ? 'query_text'`;
  expect(text?.n).toBe(0);
}, 30_000);
