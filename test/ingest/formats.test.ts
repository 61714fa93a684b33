import { describe, expect, test } from "bun:test";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { testRuntime } from "../support/runtime.ts";
import { ago, batch, validEvents } from "../support/telemetry-events.ts";
import { sessionCount, storedEvents, storedSession } from "../support/telemetry-store.ts";

const domain = "publisher.example.net";

describe("POST /events delivery formats", () => {
  test("event_batch with a top-level session_id stores every event under that session", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const sessionId = crypto.randomUUID();
    const events = [validEvents.retrieved(domain), validEvents.cited(domain), validEvents.presented(domain)];
    const res = await call("POST", "/events", {
      key: agent.key,
      body: batch(events, { session_id: sessionId, agent_id: "assistant-7" }),
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ok", events_created: 3 });
    const stored = await storedEvents(agent.id);
    expect(stored.map((e) => e.session_id)).toEqual([sessionId, sessionId, sessionId]);
    expect(stored.every((e) => e.agent_id === "assistant-7" && e.content_host === domain)).toBe(true);
    expect(new Set(stored.map((e) => e.event_id))).toEqual(new Set(events.map((e) => e.id)));
  });

  test("each event takes the envelope's agent_id, else its session's; one without a session keeps the envelope's", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const sessionId = crypto.randomUUID();
    const post = (event: unknown, extra: Record<string, unknown>) =>
      call("POST", "/events", { key: agent.key, body: batch([event], extra) });
    const grounded = (page: string, minutes: number) =>
      validEvents.grounded(domain, { content_url: `https://${domain}/${page}`, timestamp: ago(minutes * 60) });
    expect((await post(grounded("one", 5), { session_id: sessionId, agent_id: "agent-one" })).status).toBe(200);
    expect((await post(grounded("two", 4), { session_id: sessionId, agent_id: "agent-two" })).status).toBe(200);
    expect((await post(grounded("none", 3), { session_id: sessionId })).status).toBe(200);
    expect((await post(validEvents.retrieved(domain, { timestamp: ago(120) }), { agent_id: "crawler-x" })).status).toBe(
      200,
    );

    const stored = await storedEvents(agent.id);
    expect(stored.map((e) => [e.session_id !== null, e.content_url?.split("/").pop(), e.agent_id])).toEqual([
      [true, "one", "agent-one"],
      [true, "two", "agent-two"],
      [true, "none", "agent-one"],
      [false, "article", "crawler-x"],
    ]);
    // The session keeps the agent it was first named with.
    expect(await storedSession(sessionId)).toMatchObject({ agent_id: "agent-one" });
    const summary = await call("GET", "/agent/summary", { key: agent.key });
    expect(summary.body.agents).toEqual([
      { platform_id: agent.id, agent_id: "agent-one", event_count: 2, session_count: 1 },
      { platform_id: agent.id, agent_id: "agent-two", event_count: 1, session_count: 1 },
      { platform_id: agent.id, agent_id: "crawler-x", event_count: 1, session_count: 0 },
    ]);
    expect((await call("GET", "/agent/events?agent_id=agent-two", { key: agent.key })).body.total).toBe(1);
  });

  test("event_batch with per-event session_ids creates each unknown session for the caller", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const [a, b] = [crypto.randomUUID(), crypto.randomUUID()];
    const res = await call("POST", "/events", {
      key: agent.key,
      body: batch([
        validEvents.retrieved(domain, { session_id: a, timestamp: ago(120) }),
        validEvents.retrieved(domain, { session_id: b }),
      ]),
    });
    expect(res.body.events_created).toBe(2);
    for (const id of [a, b]) {
      const session = await storedSession(id);
      expect(session?.org_id).toBe(agent.id);
      expect(session?.privacy_level).toBeNull();
    }
    // The implicit session starts at its earliest event.
    const first = await storedSession(a);
    expect(Math.abs(first?.started_at.getTime() - (Date.now() - 120_000))).toBeLessThan(5_000);
  });

  test("a session_id differing from the batch's is refused", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const res = await call("POST", "/events", {
      key: agent.key,
      body: batch([validEvents.retrieved(domain, { session_id: crypto.randomUUID() })], {
        session_id: crypto.randomUUID(),
      }),
    });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe("/events/0/session_id");
  });

  test("document_type event carries one event", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const res = await call("POST", "/events", {
      key: agent.key,
      body: {
        document_type: "event",
        schema_version: "1.0",
        session_id: crypto.randomUUID(),
        event: validEvents.cited(domain),
      },
    });
    expect(res.body).toEqual({ status: "ok", events_created: 1 });
    expect((await storedEvents(agent.id))[0]?.event_type).toBe("content_cited");
  });

  test("a session document (document_type session or absent) stores the session and its nested events", async () => {
    const agent = await createTestOrg({ type: "agent" });
    for (const documentType of ["session", undefined]) {
      const sessionId = crypto.randomUUID();
      const res = await call("POST", "/events", {
        key: agent.key,
        body: {
          ...(documentType ? { document_type: documentType } : {}),
          schema_version: "1.0",
          session_id: sessionId,
          agent_id: "assistant-9",
          initiator_type: "agent",
          privacy_level: "summary",
          started_at: ago(600),
          ended_at: ago(30),
          events: [validEvents.grounded(domain), validEvents.turnStarted()],
        },
      });
      expect(res.status).toBe(200);
      expect(res.body.events_created).toBe(2);
      const session = await storedSession(sessionId);
      expect(session).toMatchObject({ org_id: agent.id, agent_id: "assistant-9", initiator_type: "agent" });
      expect(session?.privacy_level).toBe("summary");
      expect(session?.ended_at).toBeInstanceOf(Date);
    }
    expect(await sessionCount(agent.id)).toBe(2);
  });

  test("a session document's events may spell its session_id in upper case: one session", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const sessionId = crypto.randomUUID();
    const event = validEvents.retrieved(domain, { source_role: "agent", session_id: sessionId.toUpperCase() });
    const res = await call("POST", "/events", {
      key: agent.key,
      body: { schema_version: "1.0", session_id: sessionId, started_at: ago(600), events: [event] },
    });
    expect([res.status, res.body.events_created]).toEqual([200, 1]);
    expect((await storedEvents(agent.id)).map((stored) => stored.session_id)).toEqual([sessionId]);
    expect(await sessionCount(agent.id)).toBe(1);
  });

  test("a session document without events describes its session (events is optional, standard 5.1)", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const sessionId = crypto.randomUUID();
    const res = await call("POST", "/events", {
      key: agent.key,
      body: { schema_version: "1.0", session_id: sessionId, agent_id: "assistant-3", started_at: ago(600) },
    });
    expect([res.status, res.body.events_created, res.body.session_id]).toEqual([200, 0, sessionId]);
    expect(await storedSession(sessionId)).toMatchObject({ org_id: agent.id, agent_id: "assistant-3" });
  });

  test("an unknown document_type is refused", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const res = await call("POST", "/events", {
      key: agent.key,
      body: { document_type: "telemetry", schema_version: "1.0", events: [] },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe("/document_type");
  });

  test("requires the telemetry:write scope", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const readOnly = await agent.keyWith(["telemetry:read"]);
    const res = await call("POST", "/events", { key: readOnly, body: batch([validEvents.retrieved(domain)]) });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("missing_scope");
    expect((await call("POST", "/events", { body: batch([]) })).status).toBe(401);
  });
});

describe("POST /sessions/start and /sessions/end", () => {
  test("start returns a session of the caller, which declares no privacy_level unless given one", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const res = await call("POST", "/sessions/start", {
      key: agent.key,
      body: {
        agent_id: "assistant-1",
        manifest_ref: "https://agent.example.com/.well-known/content-telemetry.json",
        content_scope: "scope-a",
        external_session_id: "ext-1",
        prior_session_ids: [crypto.randomUUID()],
      },
    });
    expect(res.status).toBe(200);
    const session = await storedSession(res.body.session_id);
    expect(session).toMatchObject({
      org_id: agent.id,
      initiator_type: "user",
      agent_id: "assistant-1",
      privacy_level: null,
      external_session_id: "ext-1",
    });
  });

  test("start refuses a manifest_ref that is not a content-telemetry manifest URL", async () => {
    const agent = await createTestOrg({ type: "agent" });
    for (const manifest_ref of [
      "https://agent.example.com/manifest.json",
      "ftp://agent.example.com/.well-known/content-telemetry.json",
    ]) {
      const res = await call("POST", "/sessions/start", { key: agent.key, body: { manifest_ref } });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].path).toBe("/manifest_ref");
    }
  });

  test("end never sets an end before the start, even a start ahead within the allowed clock skew", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const startsAhead = new Date(Date.now() + 120_000);
    const { body } = await call("POST", "/sessions/bulk", {
      key: agent.key,
      body: { started_at: startsAhead.toISOString(), events: [] },
    });
    const ended = await call("POST", "/sessions/end", { key: agent.key, body: { session_id: body.session_id } });
    expect(ended.status).toBe(200);
    expect(new Date(ended.body.ended_at).getTime()).toBe(startsAhead.getTime());
  });

  test("end records the outcome; a later end keeps the first end time", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const { body } = await call("POST", "/sessions/start", { key: agent.key, body: { privacy_level: "full" } });
    // A session's state is its ended_at (README, decisions): started while it has none, ended once set.
    const document = () => call("GET", `/sessions/${body.session_id}/document`, { key: agent.key });
    expect((await document()).body.ended_at).toBeUndefined();
    const outcome = { type: "conversion", value_amount: 1299, currency: "EUR" };
    const first = await call("POST", "/sessions/end", {
      key: agent.key,
      body: { session_id: body.session_id, outcome },
    });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ session_id: body.session_id, outcome_recorded: true });
    expect(Date.parse((await document()).body.ended_at)).toBe(Date.parse(first.body.ended_at));
    const again = await call("POST", "/sessions/end", { key: agent.key, body: { session_id: body.session_id } });
    expect(again.body.ended_at).toBe(first.body.ended_at);
    expect(again.body.outcome_recorded).toBe(false);
    const session = await storedSession(body.session_id);
    expect(session).toMatchObject({ outcome_type: "conversion", outcome_currency: "EUR", privacy_level: "full" });
    expect(Number(session?.outcome_value_amount)).toBe(1299);
  });

  test("end refuses a value without a currency and an unknown outcome type", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const { body } = await call("POST", "/sessions/start", { key: agent.key, body: {} });
    for (const outcome of [{ type: "conversion", value_amount: 5 }, { type: "refund" }]) {
      const res = await call("POST", "/sessions/end", {
        key: agent.key,
        body: { session_id: body.session_id, outcome },
      });
      expect(res.status).toBe(400);
    }
  });

  test("end of an unknown session is 404", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const res = await call("POST", "/sessions/end", { key: agent.key, body: { session_id: crypto.randomUUID() } });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("session_not_found");
  });
});

describe("POST /sessions/bulk", () => {
  test("uploads a session, its events and outcome in one request; a replay stores nothing new", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const sessionId = crypto.randomUUID();
    const upload = {
      session_id: sessionId,
      agent_id: "assistant-2",
      started_at: ago(900),
      ended_at: ago(10),
      events: [
        validEvents.retrieved(domain),
        validEvents.cited(domain),
        validEvents.checkout({ source_role: "agent" }),
      ],
      outcome: { type: "conversion", value_amount: 4999, currency: "USD" },
    };
    const res = await call("POST", "/sessions/bulk", { key: agent.key, body: upload });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ session_id: sessionId, events_created: 3, outcome_recorded: true });
    const replay = await call("POST", "/sessions/bulk", { key: agent.key, body: upload });
    expect(replay.body).toEqual({ session_id: sessionId, events_created: 0, outcome_recorded: true });
    expect(await storedSession(sessionId)).toMatchObject({ agent_id: "assistant-2", outcome_type: "conversion" });
    expect((await storedEvents(agent.id)).every((e) => e.agent_id === "assistant-2")).toBe(true);
  });

  test("generates the session id when absent and records no outcome when none is sent", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const res = await call("POST", "/sessions/bulk", {
      key: agent.key,
      body: { agent_id: "a", events: [validEvents.retrieved(domain, { timestamp: ago(300) })] },
    });
    expect(res.status).toBe(200);
    expect(res.body.outcome_recorded).toBe(false);
    const session = await storedSession(res.body.session_id);
    expect(session?.org_id).toBe(agent.id);
    // Without started_at the session starts at its earliest event.
    expect(Math.abs(session?.started_at.getTime() - (Date.now() - 300_000))).toBeLessThan(5_000);
  });

  test("refuses ended_at before started_at", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const res = await call("POST", "/sessions/bulk", {
      key: agent.key,
      body: { started_at: ago(10), ended_at: ago(100), events: [] },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe("/ended_at");
  });

  // A session document must carry started_at (standard 5.1; test/conformance); a bulk upload need not.
  test("without started_at, refuses ended_at before the session's first event and stores nothing", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const body = { ended_at: ago(3600), events: [validEvents.retrieved(domain, { timestamp: ago(60) })] };
    const res = await call("POST", "/sessions/bulk", { key: agent.key, body });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual(["/ended_at"]);
    expect(await sessionCount(agent.id)).toBe(0);
    expect(await storedEvents(agent.id)).toEqual([]);
  });

  test("a new session described with only a past end starts no later than it ends", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const endedAt = ago(600);
    const res = await call("POST", "/sessions/bulk", { key: agent.key, body: { ended_at: endedAt, events: [] } });
    expect(res.status).toBe(200);
    const [row] = await (await testRuntime()).ctx.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM sessions WHERE org_id = ${agent.id} AND started_at = ${endedAt} AND ended_at = ${endedAt}`;
    expect(row?.n).toBe(1);
  });

  test("a partly retried upload starts its session at the events it writes, not at the one skipped", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const stored = validEvents.retrieved(domain, { timestamp: ago(7200) });
    const upload = (session_id: string, events: unknown[]) =>
      call("POST", "/sessions/bulk", { key: agent.key, body: { session_id, events } });
    expect((await upload(crypto.randomUUID(), [stored])).body.events_created).toBe(1);
    const sessionId = crypto.randomUUID();
    const cited = validEvents.cited(domain, { timestamp: ago(60) });
    expect((await upload(sessionId, [cited])).body.events_created).toBe(1);
    const before = await storedSession(sessionId);
    const again = await upload(sessionId, [stored, cited, validEvents.presented(domain, { timestamp: ago(30) })]);
    expect([again.status, again.body.events_created]).toEqual([200, 1]);
    expect((await storedSession(sessionId))?.started_at).toEqual(before?.started_at);
  });

  test("a later document cannot end a session before the start already stored", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const started = await call("POST", "/sessions/start", { key: agent.key, body: {} });
    const sessionId = started.body.session_id;
    // (A session document carries started_at, which moves the stored start back, so only a bulk upload can hit this.)
    const body = { session_id: sessionId, ended_at: ago(600), events: [] };
    const res = await call("POST", "/sessions/bulk", { key: agent.key, body });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { path: "/ended_at", message: "is before the start already stored for this session" },
    ]);
    expect((await storedSession(sessionId))?.ended_at).toBeNull();
  });
});
