import { describe, expect, test } from "bun:test";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { ago, batch, validEvents } from "../support/telemetry-events.ts";
import { sessionCount, storedEvents, storedSession } from "../support/telemetry-store.ts";

const domain = "atomic.example.net";

describe("idempotent retry", () => {
  test("a retried batch stores nothing again and counts only new events", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const sessionId = crypto.randomUUID();
    const first = [validEvents.retrieved(domain), validEvents.cited(domain)];
    const body = batch(first, { session_id: sessionId });
    expect((await call("POST", "/events", { key: agent.key, body })).body.events_created).toBe(2);
    expect((await call("POST", "/events", { key: agent.key, body })).body.events_created).toBe(0);
    const grown = batch([...first, validEvents.presented(domain)], { session_id: sessionId });
    expect((await call("POST", "/events", { key: agent.key, body: grown })).body.events_created).toBe(1);
    expect(await storedEvents(agent.id)).toHaveLength(3);
  });

  test("a retried event naming another session changes nothing: no session made, no agent or start given", async () => {
    const platform = await createTestOrg({ type: "platform" });
    const post = (events: unknown[], extra: Record<string, unknown>) =>
      call("POST", "/events", { key: platform.key, body: batch(events, extra) });
    const [first, second, unused] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    const retried = validEvents.retrieved(domain, { timestamp: ago(7200) });
    expect((await post([retried], { session_id: first, agent_id: "agent-a" })).body.events_created).toBe(1);
    expect((await post([validEvents.cited(domain, { timestamp: ago(60) })], { session_id: second })).status).toBe(200);
    const before = await storedSession(second);
    expect(before?.agent_id).toBeNull();
    for (const session_id of [second, unused]) {
      const again = await post([retried], { session_id, agent_id: "agent-z" });
      expect([again.status, again.body.events_created]).toEqual([200, 0]);
    }
    const after = await storedSession(second);
    expect([after?.agent_id, after?.started_at]).toEqual([null, before?.started_at]);
    expect(await storedSession(unused)).toBeUndefined();
    expect(await sessionCount(platform.id)).toBe(2);
  });

  test("a partly retried request starts the session it names at its written events only", async () => {
    const platform = await createTestOrg({ type: "platform" });
    const post = (events: unknown[], session_id: string) =>
      call("POST", "/events", { key: platform.key, body: batch(events, { session_id }) });
    const [first, second] = [crypto.randomUUID(), crypto.randomUUID()];
    const retried = validEvents.retrieved(domain, { timestamp: ago(7200) });
    expect((await post([retried], first)).body.events_created).toBe(1);
    expect((await post([validEvents.cited(domain, { timestamp: ago(60) })], second)).status).toBe(200);
    const before = await storedSession(second);
    const again = await post([retried, validEvents.cited(domain, { timestamp: ago(30) })], second);
    expect([again.status, again.body.events_created]).toEqual([200, 1]);
    expect((await storedSession(second))?.started_at).toEqual(before?.started_at);
  });

  test("the same id sent again at another timestamp is another event (an event is its id and time)", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const cited = validEvents.cited(domain, { timestamp: ago(100) });
    const post = (event: unknown) =>
      call("POST", "/events", { key: agent.key, body: batch([event], { session_id: crypto.randomUUID() }) });
    expect((await post(cited)).body.events_created).toBe(1);
    expect((await post({ ...cited, timestamp: ago(50) })).body.events_created).toBe(1);
    expect((await storedEvents(agent.id)).map((event) => event.event_id)).toEqual([cited.id, cited.id]);
  });

  test("the same id twice in one batch is stored once", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const event = validEvents.retrieved(domain);
    const res = await call("POST", "/events", {
      key: agent.key,
      body: batch([event, event], { session_id: crypto.randomUUID() }),
    });
    expect(res.body.events_created).toBe(1);
  });

  test("the same batch sent twice at once is stored once and counted once between the two answers", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const body = batch([validEvents.retrieved(domain), validEvents.cited(domain)], { session_id: crypto.randomUUID() });
    const answers = await Promise.all([1, 2].map(() => call("POST", "/events", { key: agent.key, body })));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    expect(answers.map((answer) => answer.body.events_created).sort()).toEqual([0, 2]);
    expect(await storedEvents(agent.id)).toHaveLength(2);
    expect(await sessionCount(agent.id)).toBe(1);
  });

  test("dedupe is per reporting organisation: another reporter's identical event is its own", async () => {
    const [a, b] = [await createTestOrg({ type: "agent" }), await createTestOrg({ type: "platform" })];
    const event = validEvents.retrieved(domain, { source_role: "edge" });
    for (const org of [a, b]) {
      const res = await call("POST", "/events", { key: org.key, body: batch([event]) });
      expect(res.body.events_created).toBe(1);
    }
  });
});

describe("atomic refusal", () => {
  test("one 400 lists every invalid event by index, path and reason; nothing is stored", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const events = [
      validEvents.retrieved(domain),
      { ...validEvents.cited(domain), output_id: undefined },
      validEvents.grounded(domain),
      { ...validEvents.retrieved(domain), timestamp: 12 },
      { ...validEvents.presented(domain), type: "content_displayed" },
      validEvents.engaged(domain, { ctx_token: `ctx_${"Z".repeat(43)}`, presentation_id: undefined }),
    ];
    const sessionId = crypto.randomUUID();
    const res = await call("POST", "/events", { key: agent.key, body: batch(events, { session_id: sessionId }) });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(res.body.invalid_events).toEqual([1, 3, 4, 5]);
    const paths = res.body.errors.map((e: { path: string }) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining(["/events/1/output_id", "/events/3/timestamp", "/events/4/type", "/events/5/ctx_token"]),
    );
    for (const error of res.body.errors) expect(typeof error.message).toBe("string");
    expect(await storedEvents(agent.id)).toEqual([]);
    expect(await sessionCount(agent.id)).toBe(0);
  });

  test("a batch over the event limit is refused", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const events = Array.from({ length: 1001 }, () => validEvents.retrieved(domain, { timestamp: ago(10) }));
    const res = await call("POST", "/events", {
      key: agent.key,
      body: batch(events, { session_id: crypto.randomUUID() }),
    });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe("/events");
    expect(await storedEvents(agent.id)).toEqual([]);
  });

  test("an empty event_batch is refused", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const res = await call("POST", "/events", { key: agent.key, body: batch([]) });
    expect(res.status).toBe(400);
  });
});
