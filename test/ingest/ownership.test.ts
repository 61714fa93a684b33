import { describe, expect, test } from "bun:test";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";
import { sessionCount, storedEvents, storedSession } from "../support/telemetry-store.ts";

const domain = "owned.example.net";

describe("session ownership across organisations", () => {
  test("events naming another organisation's session are refused and nothing is stored", async () => {
    const [owner, intruder] = [await createTestOrg({ type: "agent" }), await createTestOrg({ type: "agent" })];
    const { body } = await call("POST", "/sessions/start", { key: owner.key, body: { agent_id: "a" } });
    const fresh = crypto.randomUUID();
    const res = await call("POST", "/events", {
      key: intruder.key,
      body: batch([
        validEvents.retrieved(domain, { session_id: fresh }),
        validEvents.retrieved(domain, { session_id: body.session_id }),
      ]),
    });
    expect(res.status).toBe(400);
    expect(res.body.invalid_events).toEqual([1]);
    expect(res.body.errors).toEqual([
      { path: "/events/1/session_id", message: "is a session of another organisation" },
    ]);
    expect(await storedEvents(intruder.id)).toEqual([]);
    // The new session named by the refused batch was not created either.
    expect(await storedSession(fresh)).toBeUndefined();
    expect(await sessionCount(intruder.id)).toBe(0);
  });

  test("a session document or bulk upload for another organisation's session is refused", async () => {
    const [owner, intruder] = [await createTestOrg({ type: "agent" }), await createTestOrg({ type: "agent" })];
    const { body } = await call("POST", "/sessions/start", { key: owner.key, body: { agent_id: "owner-agent" } });
    const bulk = await call("POST", "/sessions/bulk", {
      key: intruder.key,
      body: {
        session_id: body.session_id,
        agent_id: "evil",
        events: [validEvents.retrieved(domain)],
        outcome: { type: "browse" },
      },
    });
    expect(bulk.status).toBe(400);
    expect(bulk.body.errors[0].path).toBe("/session_id");
    const doc = await call("POST", "/events", {
      key: intruder.key,
      body: { schema_version: "1.0", session_id: body.session_id, events: [validEvents.retrieved(domain)] },
    });
    expect(doc.status).toBe(400);
    expect(await storedSession(body.session_id)).toMatchObject({
      org_id: owner.id,
      agent_id: "owner-agent",
      outcome_type: null,
    });
  });

  test("another organisation cannot end the session", async () => {
    const [owner, intruder] = [await createTestOrg({ type: "agent" }), await createTestOrg({ type: "agent" })];
    const { body } = await call("POST", "/sessions/start", { key: owner.key, body: {} });
    const res = await call("POST", "/sessions/end", {
      key: intruder.key,
      body: { session_id: body.session_id, outcome: { type: "abandonment" } },
    });
    expect(res.status).toBe(404);
    expect((await storedSession(body.session_id))?.ended_at).toBeNull();
  });

  test("the owner keeps writing to its session, started explicitly or implicitly", async () => {
    const owner = await createTestOrg({ type: "agent" });
    const { body } = await call("POST", "/sessions/start", { key: owner.key, body: { agent_id: "agent-5" } });
    const res = await call("POST", "/events", {
      key: owner.key,
      body: batch([validEvents.cited(domain)], { session_id: body.session_id }),
    });
    expect(res.status).toBe(200);
    // The event takes the session's agent when the envelope names none.
    expect((await storedEvents(owner.id))[0]?.agent_id).toBe("agent-5");
  });

  test("concurrent first batches for one new session: the same organisation's all land, another's is refused", async () => {
    const [owner, other] = [await createTestOrg({ type: "agent" }), await createTestOrg({ type: "agent" })];
    const sessionId = crypto.randomUUID();
    const send = (key: string) =>
      call("POST", "/events", { key, body: batch([validEvents.retrieved(domain)], { session_id: sessionId }) });
    const results = await Promise.all([send(owner.key), send(owner.key), send(other.key), send(owner.key)]);
    const winner = (await storedSession(sessionId))?.org_id;
    const statuses = results.map((r) => r.status);
    if (winner === owner.id) expect(statuses).toEqual([200, 200, 400, 200]);
    else expect(statuses).toEqual([400, 400, 200, 400]);
    const stored = [...(await storedEvents(owner.id)), ...(await storedEvents(other.id))];
    expect(stored.every((e) => e.org_id === winner)).toBe(true);
  });
});
