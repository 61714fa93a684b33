import { describe, expect, test } from "bun:test";
import { sessionDocument, site } from "../support/conformance.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { ago, batch, validEvents } from "../support/telemetry-events.ts";

describe("GET /sessions/{id}/document", () => {
  test("returns a stored session as a session document that round-trips", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const cited = validEvents.cited(site, { timestamp: "2026-01-05T10:00:00.123456Z" });
    const presented = validEvents.presented(site, { citation_id: cited.id, timestamp: "2026-01-05T10:00:01Z" });
    const engaged = validEvents.engaged(site, {
      presentation_id: presented.id,
      data: { engagement_type: "copy" },
      timestamp: "2026-01-05T10:00:02+01:00",
    });
    const turn = validEvents.turnStarted({
      turn: { privacy_level: "intent", query_text: "q", query_intent: "how_to" },
      timestamp: "2026-01-05T10:00:03Z",
    });
    const sent = sessionDocument([cited, presented, engaged, turn], {
      started_at: "2026-01-05T08:59:00.001Z",
      ended_at: ago(10),
      agent_id: "agent-7",
      content_scope: "scope-1",
      privacy_level: "summary",
      external_session_id: "ext-1",
    });
    const first = await call("POST", "/events", { key: agent.key, body: sent });
    expect(first.body).toMatchObject({ status: "ok", events_created: 4, session_id: sent.session_id });

    const read = await call("GET", `/sessions/${sent.session_id}/document`, { key: agent.key });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      document_type: "session",
      schema_version: "1.0",
      session_id: sent.session_id,
      started_at: "2026-01-05T08:59:00.001000Z",
      agent_id: "agent-7",
      content_scope: "scope-1",
      privacy_level: "summary",
      external_session_id: "ext-1",
    });
    // Oldest first (the engagement's +01:00 puts it before the citation), in UTC.
    expect(read.body.events.map((event: { id: string }) => event.id)).toEqual([
      engaged.id,
      cited.id,
      presented.id,
      turn.id,
    ]);
    expect(read.body.events[0].timestamp).toBe("2026-01-05T09:00:02.000000Z");
    // Event times are stored to the millisecond (as before this endpoint), and printed as stored.
    expect(read.body.events[1]).toMatchObject({ timestamp: "2026-01-05T10:00:00.123000Z", data: cited.data });
    expect(read.body.events[3].turn).toEqual({ privacy_level: "intent", query_intent: "how_to" });

    const again = await call("POST", "/events", { key: agent.key, body: read.body });
    expect(again.body).toEqual({ status: "ok", events_created: 0, session_id: sent.session_id });
    const reread = await call("GET", `/sessions/${sent.session_id}/document`, { key: agent.key });
    expect(reread.body).toEqual(read.body);
  });

  test("a session started and reported by batches reads back too", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const started = await call("POST", "/sessions/start", { key: agent.key, body: {} });
    const sessionId = started.body.session_id;
    await call("POST", "/events", {
      key: agent.key,
      body: batch([validEvents.grounded(site, { content_id: null })], { session_id: sessionId }),
    });
    const read = await call("GET", `/sessions/${sessionId}/document`, { key: agent.key });
    expect(read.body.events).toHaveLength(1);
    expect(read.body.events[0]).not.toHaveProperty("content_id");
    const again = await call("POST", "/events", { key: agent.key, body: read.body });
    expect(again.body.events_created).toBe(0);
  });

  test("another organisation's session, or none, is 404; a malformed id is 400", async () => {
    const owner = await createTestOrg({ type: "agent" });
    const other = await createTestOrg({ type: "agent" });
    const sent = sessionDocument([validEvents.grounded(site)]);
    await call("POST", "/events", { key: owner.key, body: sent });
    const foreign = await call("GET", `/sessions/${sent.session_id}/document`, { key: other.key });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe("session_not_found");
    expect((await call("GET", `/sessions/${crypto.randomUUID()}/document`, { key: owner.key })).status).toBe(404);
    const malformed = await call("GET", "/sessions/abc/document", { key: owner.key });
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors).toEqual([{ path: "/id", message: "must be a UUID" }]);
  });
});
