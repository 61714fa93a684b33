import { expect, test } from "bun:test";
import { createTestOrg } from "../support/fixtures.ts";
import { seededRandom } from "../support/random.ts";
import { testRuntime } from "../support/runtime.ts";
import { validEvents } from "../support/telemetry-events.ts";
import { type StoredEvent, storedEvents } from "../support/telemetry-store.ts";

type Random = ReturnType<typeof seededRandom>;

const domain = "fuzz.example.net";
const junk: unknown[] = [
  null,
  true,
  0,
  -1,
  1.5,
  Number.MAX_SAFE_INTEGER * 4,
  "",
  "x".repeat(3000),
  "a\u0000b",
  "\ud800",
  [],
  {},
  [[[[[[[[[[[[[[[["deep"]]]]]]]]]]]]]]]],
  "content_displayed",
  "content_cited",
  "turn_completed",
  "checkout_completed",
  "origin",
  "index",
  "crawler",
  "https://",
  "javascript:alert(1)",
  "https://other.example.org/page",
  "2999-01-01T00:00:00Z",
  "1999-01-01T00:00:00Z",
  "2026-02-30T00:00:00Z",
  "00000000-0000-0000-0000-000000000000",
  `ctx_${"A".repeat(43)}`,
  "2.0",
  "event",
  "session",
  { privacy_level: "full", query_text: "secret question" },
  { ip_hash: "abc", citation_type: "nonsense", scope: "galaxy", presentation_kind: "content" },
];

function baseBody(rng: Random) {
  const makers = [
    () => validEvents.retrieved(domain),
    () => validEvents.retrieved(domain, { source_role: rng.pick(["origin", "edge", "index"]), data: { ip_hash: "h" } }),
    () => validEvents.grounded(domain),
    () => validEvents.cited(domain),
    () => validEvents.presented(domain),
    () => validEvents.engaged(domain),
    () => validEvents.turnStarted({ turn: { privacy_level: "intent", query_text: "q", query_tokens: 4 } }),
    () => validEvents.checkout(),
  ];
  const events = Array.from({ length: 1 + rng.int(0, 4) }, () => rng.pick(makers)());
  const documentType = rng.pick(["event_batch", "event", "session"]);
  const sessionId = crypto.randomUUID();
  if (documentType === "event")
    return { document_type: "event", schema_version: "1.0", session_id: sessionId, event: events[0] };
  return { document_type: documentType, schema_version: "1.0", session_id: sessionId, events };
}

/** Every (container, key) pair in a JSON value. */
function slots(value: unknown, out: [Record<string, unknown> | unknown[], string | number][] = []) {
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      out.push([value, index]);
      slots(item, out);
    });
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      out.push([value as Record<string, unknown>, key]);
      slots(item, out);
    }
  }
  return out;
}

function mutate(body: Record<string, unknown>, rng: Random): string {
  const rounds = rng.int(0, 3);
  for (let round = 0; round < rounds; round++) {
    const all = slots(body);
    const [container, key] = rng.pick(all);
    const op = rng.int(0, 2);
    if (op === 0 && !Array.isArray(container)) delete container[key as string];
    else if (op === 1 && Array.isArray(container)) container.push(structuredClone(container[key as number]));
    else (container as Record<string | number, unknown>)[key] = structuredClone(rng.pick(junk));
  }
  let text = JSON.stringify(body);
  const byteLevel = rng.int(0, 19);
  if (byteLevel === 0) text = text.slice(0, rng.int(0, text.length - 1));
  else if (byteLevel === 1) text = text.replace(/"views":\d+|\d+(?=[,}])/, "1e400");
  return text;
}

const closedCitation = ["direct_quote", "paraphrase", "reference", "contradiction", "unclassified"];
const agentOnly = [
  "content_grounded",
  "content_cited",
  "content_presented",
  "content_engaged",
  "turn_started",
  "turn_completed",
];

/** What every stored event must satisfy, whatever was sent. */
function assertValidStored(event: StoredEvent) {
  const where = JSON.stringify(event);
  const type = event.event_type;
  expect(type === "content_retrieved" || type === "checkout_completed" || agentOnly.includes(type), where).toBe(true);
  if (agentOnly.includes(type)) expect(event.source_role, where).toBe("agent");
  if (type === "checkout_completed") expect(["index", "agent"], where).toContain(event.source_role);
  if (type.startsWith("content_")) expect(event.content_url !== null || event.content_id !== null, where).toBe(true);
  if (event.content_url !== null) {
    expect(event.content_url, where).toMatch(/^https?:\/\//i);
    expect(event.content_host, where).toBe(new URL(event.content_url).hostname.replace(/\.$/, ""));
  }
  if (type === "content_cited") expect(closedCitation, where).toContain(event.data.citation_type as string);
  if (type === "content_cited" || type === "content_presented") expect(event.output_id, where).not.toBeNull();
  expect(event.data, where).not.toHaveProperty("ip_hash");
  if (event.turn) {
    const level = event.turn.privacy_level;
    if (level !== "full" && level !== "summary") expect(event.turn, where).not.toHaveProperty("query_text");
  }
  if (event.session_id === null) expect(type, where).toBe("content_retrieved");
  expect(event.event_time.getTime(), where).toBeLessThan(Date.now() + 5 * 60_000);
  expect(event.event_time.getTime(), where).toBeGreaterThanOrEqual(Date.parse("2000-01-01T00:00:00Z"));
}

test("thousands of randomly mutated bodies: never a 5xx, never anything invalid stored", async () => {
  const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000);
  const rng = seededRandom(seed);
  const agent = await createTestOrg({ type: "agent" });
  const { app, ctx } = await testRuntime();
  const count = async () =>
    (await ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM events WHERE org_id = ${agent.id}::uuid`)[0]?.n ?? 0;
  let stored = 0;
  const statuses = new Map<number, number>();
  for (let i = 0; i < 2000; i++) {
    const text = mutate(baseBody(rng), rng);
    const response = await app.handle(
      new Request("http://test.local/events", {
        method: "POST",
        headers: { "x-api-key": agent.key, "content-type": "application/json" },
        body: text,
      }),
    );
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    expect(response.status, `seed ${seed}, body ${text.slice(0, 500)}`).toBeLessThan(500);
    if (response.status === 200) {
      stored += ((await response.json()) as { events_created: number }).events_created;
    } else {
      await response.arrayBuffer();
      // A refused body stores nothing: the running total only moves on success.
      if (i % 50 === 0) expect(await count(), `seed ${seed}`).toBe(stored);
    }
  }
  expect(await count()).toBe(stored);
  // Both outcomes must actually occur, or the test would prove nothing.
  expect(statuses.get(200) ?? 0).toBeGreaterThan(100);
  expect(statuses.get(400) ?? 0).toBeGreaterThan(100);
  for (const event of await storedEvents(agent.id)) assertValidStored(event);
}, 30_000);
