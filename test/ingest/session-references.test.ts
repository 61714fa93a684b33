import { describe, expect, test } from "bun:test";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";
import { storedSession } from "../support/telemetry-store.ts";

/** Answers with what may differ between two calls (ids, request ids) left out. */
const shapeOf = (res: { status: number; body: Record<string, unknown> }) => ({
  status: res.status,
  fields: Object.keys(res.body).sort(),
});

/** References are session names in the caller's own namespace (sql/067): they can name nothing of another organisation. */
describe("parent_session_id and prior_session_ids name only the caller's sessions", () => {
  test("another organisation's session id is kept as given, answered exactly like an unknown id", async () => {
    const other = await createTestOrg({ type: "agent" });
    const theirs = (await call("POST", "/sessions/start", { key: other.key, body: {} })).body.session_id as string;
    const agent = await createTestOrg({ type: "agent" });
    const mine = (await call("POST", "/sessions/start", { key: agent.key, body: {} })).body.session_id as string;
    const unknown = crypto.randomUUID();

    const naming = (parent: string) =>
      call("POST", "/sessions/start", {
        key: agent.key,
        body: { parent_session_id: parent, prior_session_ids: [mine, parent, unknown] },
      });
    const foreign = await naming(theirs);
    const nobodys = await naming(crypto.randomUUID());
    expect(shapeOf(foreign)).toEqual(shapeOf(nobodys));
    expect(foreign.status).toBe(200);
    const stored = await storedSession(foreign.body.session_id);
    expect(stored?.parent_session_id).toBe(theirs);
    expect(stored?.prior_session_ids).toEqual([mine, theirs, unknown]);
    // The reference stays a name of the caller's: reading the other organisation's session shows no link.
    const document = await call("GET", `/sessions/${foreign.body.session_id}/document`, { key: agent.key });
    expect(document.body.parent_session_id).toBe(theirs);
    expect((await call("GET", `/sessions/${theirs}/document`, { key: agent.key })).status).toBe(404);

    const own = await call("POST", "/sessions/start", {
      key: agent.key,
      body: { parent_session_id: mine, prior_session_ids: [mine] },
    });
    expect(await storedSession(own.body.session_id)).toMatchObject({
      parent_session_id: mine,
      prior_session_ids: [mine],
    });
  });

  test("a batch's parent_session_id naming another organisation's session is stored as given", async () => {
    const other = await createTestOrg({ type: "agent" });
    const theirs = (await call("POST", "/sessions/start", { key: other.key, body: {} })).body.session_id as string;
    const agent = await createTestOrg({ type: "agent" });
    const sessionId = crypto.randomUUID();
    const res = await call("POST", "/events", {
      key: agent.key,
      body: batch([validEvents.retrieved("refs.example.net")], { session_id: sessionId, parent_session_id: theirs }),
    });
    expect(res.status).toBe(200);
    expect((await storedSession(sessionId))?.parent_session_id).toBe(theirs);
    // The same batch naming the caller's own session links it.
    const child = crypto.randomUUID();
    await call("POST", "/events", {
      key: agent.key,
      body: batch([validEvents.retrieved("refs.example.net")], { session_id: child, parent_session_id: sessionId }),
    });
    expect((await storedSession(child))?.parent_session_id).toBe(sessionId);
  });
});
