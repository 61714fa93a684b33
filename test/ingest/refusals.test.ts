import { describe, expect, test } from "bun:test";
import { post, sessionDocument, site } from "../support/conformance.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";
import { storedEvents } from "../support/telemetry-store.ts";

// Issue 15, "errors a person can act on": pointer, rule and allowed values; one error per cause; a cap.
describe("refusals", () => {
  test("a union names its options", async () => {
    const { res } = await post(batch([validEvents.retrieved(site, { source_role: "robot" })]));
    expect(res.body.errors).toEqual([
      { path: "/events/0/source_role", message: 'must be "origin", "edge", "index" or "agent"' },
    ]);
  });

  test("a nullable object reports what is wrong inside it, not the union", async () => {
    const event = validEvents.turnStarted({ turn: { privacy_level: "full", query_tokens: -2 } });
    const { res } = await post(sessionDocument([event]));
    expect(res.body.errors).toEqual([{ path: "/events/0/turn/query_tokens", message: "must be 0 or more" }]);
  });

  test("one error per field: a missing required field is not also reported as the wrong type", async () => {
    const { res } = await post(
      batch([validEvents.cited(site, { output_id: undefined })], { session_id: crypto.randomUUID() }),
    );
    expect(res.body.errors).toEqual([{ path: "/events/0/output_id", message: "is required: a string" }]);
  });

  test("the detail is plain grammar for one event and for several", async () => {
    const one = await post(batch([validEvents.grounded(site, { id: "x" })], { session_id: crypto.randomUUID() }));
    expect(one.res.body.detail).toBe("1 of 1 event is invalid; nothing was stored");
    const two = await post(
      batch([validEvents.grounded(site, { id: "x" }), validEvents.grounded(site)], { session_id: crypto.randomUUID() }),
    );
    expect(two.res.body.detail).toBe("1 of 2 events are invalid; nothing was stored");
  });

  test("a content-owner key outside its domains is told which event, in the singular", async () => {
    const owner = await createTestOrg();
    const res = await call("POST", "/events", {
      key: owner.key,
      body: batch([validEvents.retrieved("elsewhere.example.net", { source_role: "origin" })]),
    });
    expect(res.status).toBe(403);
    expect(res.body.detail).toEndWith("event 0 does not");
  });

  test("at most 100 errors are listed; errors_truncated and error_count say how many there were", async () => {
    const events = Array.from({ length: 150 }, () => validEvents.grounded(site, { id: "not-a-uuid" }));
    const { res, agent } = await post(batch(events, { session_id: crypto.randomUUID() }));
    expect(res.status).toBe(400);
    expect(res.body.errors).toHaveLength(100);
    expect(res.body.errors_truncated).toBe(true);
    expect(res.body.error_count).toBe(150);
    expect(res.body.invalid_events).toHaveLength(150);
    expect(await storedEvents(agent.id)).toEqual([]);
  });

  test("one invalid event refuses the whole batch; nothing is stored", async () => {
    const { res, agent } = await post(
      batch([validEvents.grounded(site), validEvents.grounded(site, { data: { scope: "x" } })], {
        session_id: crypto.randomUUID(),
      }),
    );
    expect(res.status).toBe(400);
    expect(res.body.invalid_events).toEqual([1]);
    expect(await storedEvents(agent.id)).toEqual([]);
  });

  test("session start fields name their options too", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const res = await call("POST", "/sessions/start", { key: agent.key, body: { initiator_type: "robot" } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ path: "/initiator_type", message: 'must be "user" or "agent"' }]);
  });
});
