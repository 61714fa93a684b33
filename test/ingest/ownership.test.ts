import { describe, expect, test } from "bun:test";
import { flagMismatches, storedFlags } from "../support/first-flags.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { testRuntime } from "../support/runtime.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";
import { storedEvents, storedSession } from "../support/telemetry-store.ts";

/** Answers with what may differ between two calls (ids, request ids) left out. */
const shapeOf = (res: { status: number; body: Record<string, unknown> }) => ({
  status: res.status,
  fields: Object.keys(res.body).sort(),
  events_created: res.body.events_created,
});

/**
 * Sessions are named per organisation (sql/067): an id another organisation's
 * session has is, for everyone else, an id like any unused one.
 */
describe("session names across organisations", () => {
  test("naming another organisation's session id is answered as a new id and creates a session of the caller's own", async () => {
    const site = await createTestOrg();
    const [owner, intruder] = [await createTestOrg({ type: "agent" }), await createTestOrg({ type: "agent" })];
    const { body } = await call("POST", "/sessions/start", { key: owner.key, body: { agent_id: "owner-agent" } });
    const theirs = body.session_id as string;
    await call("POST", "/events", {
      key: owner.key,
      body: batch([validEvents.retrieved(site.domain as string)], { session_id: theirs }),
    });

    const { app, ctx } = await testRuntime();
    const boundOf = async (sessionId: string) =>
      (await ctx.sql`SELECT events_from FROM session_bounds WHERE session_id = ${sessionId}::uuid`)[0]?.events_from;
    const ownersBound = await boundOf(theirs);
    // Earlier than the owner's event: bounding the owner's session would move its bound.
    const earlier = new Date(Date.now() - 7_200_000).toISOString();
    const naming = (sessionId: string) =>
      call("POST", "/events", {
        key: intruder.key,
        body: batch([validEvents.retrieved(site.domain as string, { timestamp: earlier })], {
          session_id: sessionId,
          agent_id: "evil",
        }),
      });
    const unusedId = crypto.randomUUID();
    const reused = await naming(theirs);
    const unused = await naming(unusedId);
    expect(reused.status).toBe(200);
    expect(shapeOf(reused)).toEqual(shapeOf(unused));

    // The owner's session, its bound and its events are as they were.
    expect(await boundOf(theirs)).toEqual(ownersBound);
    expect(await storedSession(theirs)).toMatchObject({ org_id: owner.id, agent_id: "owner-agent", wire_id: null });
    expect((await storedEvents(owner.id)).map((event) => event.session_id)).toEqual([theirs]);
    // The intruder's event lies in a session of its own, named as the intruder named it.
    const [intruders] = (await storedEvents(intruder.id)).filter((event) => event.session_id !== unusedId);
    expect(intruders?.session_id).not.toBe(theirs);
    expect(await storedSession(intruders?.session_id as string)).toMatchObject({
      org_id: intruder.id,
      wire_id: theirs,
      agent_id: "evil",
    });

    // Each reads its session by the name it gave it, and sees only its own.
    const ownView = await call("GET", `/sessions/${theirs}/document`, { key: owner.key });
    const intruderView = await call("GET", `/sessions/${theirs}/document`, { key: intruder.key });
    expect(ownView.body).toMatchObject({ session_id: theirs, agent_id: "owner-agent" });
    expect(intruderView.body).toMatchObject({ session_id: theirs, agent_id: "evil" });
    expect(intruderView.body.events).toHaveLength(1);
    const listed = await call("GET", "/agent/events", { key: intruder.key });
    expect(listed.body.items.map((item: { session_id: string }) => item.session_id).sort()).toEqual(
      [theirs, unusedId].sort(),
    );

    const exported = await app.handle(
      new Request("http://test.local/agent/export?format=ndjson", { headers: { "x-api-key": intruder.key } }),
    );
    expect(exported.status).toBe(200);
    const exportedSessions = (await exported.text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line).session_id)
      .sort();
    expect(exportedSessions).toEqual([theirs, unusedId].sort());

    // The site counts three sessions: the owner's, and the intruder's two.
    const summary = await call("GET", "/content-owners/summary", { key: site.key });
    expect(summary.body).toMatchObject({ total_events: 3, total_sessions: 3 });
    expect(flagMismatches(await storedFlags(ctx.sql, [owner.id, intruder.id]))).toEqual([]);
  });

  test("a session document or bulk upload naming another organisation's session describes the caller's own", async () => {
    const [owner, intruder] = [await createTestOrg({ type: "agent" }), await createTestOrg({ type: "agent" })];
    const { body } = await call("POST", "/sessions/start", { key: owner.key, body: { agent_id: "owner-agent" } });
    const bulk = await call("POST", "/sessions/bulk", {
      key: intruder.key,
      body: {
        session_id: body.session_id,
        agent_id: "evil",
        events: [validEvents.retrieved("owned.example.net")],
        outcome: { type: "browse" },
      },
    });
    expect(bulk.status).toBe(200);
    expect(bulk.body.session_id).toBe(body.session_id);
    const doc = await call("POST", "/events", {
      key: intruder.key,
      body: {
        schema_version: "1.0",
        session_id: body.session_id,
        started_at: new Date().toISOString(),
        events: [validEvents.retrieved("owned.example.net")],
      },
    });
    expect(doc.status).toBe(200);
    expect(await storedSession(body.session_id)).toMatchObject({
      org_id: owner.id,
      agent_id: "owner-agent",
      outcome_type: null,
    });
    const intruderView = await call("GET", `/sessions/${body.session_id}/document`, { key: intruder.key });
    expect(intruderView.body).toMatchObject({ session_id: body.session_id, agent_id: "evil" });
    expect(intruderView.body.events).toHaveLength(2);
    expect((await call("GET", `/sessions/${body.session_id}/document`, { key: owner.key })).body.events).toEqual([]);
  });

  test("ending, or issuing a click token for, a name another organisation uses acts on the caller's own session only", async () => {
    const [owner, intruder] = [await createTestOrg({ type: "agent" }), await createTestOrg({ type: "agent" })];
    const { body } = await call("POST", "/sessions/start", { key: owner.key, body: {} });
    const res = await call("POST", "/sessions/end", {
      key: intruder.key,
      body: { session_id: body.session_id, outcome: { type: "abandonment" } },
    });
    expect(res.status).toBe(404);
    expect((await storedSession(body.session_id))?.ended_at).toBeNull();

    await call("POST", "/sessions/bulk", {
      key: intruder.key,
      body: { session_id: body.session_id, events: [validEvents.retrieved("owned.example.net")] },
    });
    const ended = await call("POST", "/sessions/end", { key: intruder.key, body: { session_id: body.session_id } });
    expect(ended.status).toBe(200);
    expect((await storedSession(body.session_id))?.ended_at).toBeNull();
    const token = await call("POST", "/click-tokens", {
      key: intruder.key,
      body: { session_id: body.session_id, content_url: "https://owned.example.net/a" },
    });
    expect(token.status).toBe(200);
    expect(token.body.session_id).toBe(body.session_id);
  });

  test("the owner keeps writing to its session, started explicitly or implicitly", async () => {
    const owner = await createTestOrg({ type: "agent" });
    const { body } = await call("POST", "/sessions/start", { key: owner.key, body: { agent_id: "agent-5" } });
    const res = await call("POST", "/events", {
      key: owner.key,
      body: batch([validEvents.cited("owned.example.net")], { session_id: body.session_id }),
    });
    expect(res.status).toBe(200);
    // The event takes the session's agent when the envelope names none.
    expect((await storedEvents(owner.id))[0]?.agent_id).toBe("agent-5");
  });

  test("concurrent first batches of two organisations for one new name: all land, one session per organisation", async () => {
    const [first, second] = [await createTestOrg({ type: "agent" }), await createTestOrg({ type: "agent" })];
    const name = crypto.randomUUID();
    const send = (key: string) =>
      call("POST", "/events", { key, body: batch([validEvents.retrieved("owned.example.net")], { session_id: name }) });
    const results = await Promise.all([send(first.key), send(first.key), send(second.key), send(first.key)]);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const sessionsOf = async (orgId: string) => new Set((await storedEvents(orgId)).map((e) => e.session_id));
    const [ofFirst, ofSecond] = [await sessionsOf(first.id), await sessionsOf(second.id)];
    expect([ofFirst.size, ofSecond.size]).toEqual([1, 1]);
    expect([...ofFirst][0]).not.toBe([...ofSecond][0]);
    expect([...ofFirst, ...ofSecond]).toContain(name);
  });
});
