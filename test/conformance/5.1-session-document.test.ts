import { describe, expect, test } from "bun:test";
import { expectAccepted, expectRefused, post, sessionDocument, site } from "../support/conformance.ts";
import { validEvents } from "../support/telemetry-events.ts";
import { storedSession } from "../support/telemetry-store.ts";

// Standard 5.1 and Annex A (telemetry-session.json): the session envelope.
describe("5.1 session document", () => {
  test("started_at is required", async () => {
    await expectRefused(sessionDocument([], { started_at: undefined }), "/started_at", "is required");
  });

  test("started_at must be a date-time", async () => {
    await expectRefused(sessionDocument([], { started_at: "yesterday" }), "/started_at", "ISO 8601");
  });

  test("a session document without session_id gets one generated, and the answer returns it", async () => {
    const { body } = await expectAccepted(sessionDocument([validEvents.grounded(site)], { session_id: undefined }));
    expect(body.session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await storedSession(body.session_id)).toBeDefined();
  });

  test("a sent session_id is returned as sent", async () => {
    const sessionId = crypto.randomUUID();
    const { body } = await expectAccepted(sessionDocument([], { session_id: sessionId }));
    expect(body).toEqual({ status: "ok", events_created: 0, session_id: sessionId });
  });

  test("session_id and parent_session_id must be UUIDs", async () => {
    await expectRefused(sessionDocument([], { session_id: "session-1" }), "/session_id", "UUID");
    await expectRefused(sessionDocument([], { parent_session_id: "parent" }), "/parent_session_id", "UUID");
  });

  test("null is accepted where the schema allows it: agent_id, content_scope, manifest_ref, ended_at, data", async () => {
    const document = sessionDocument([validEvents.grounded(site)], {
      agent_id: null,
      content_scope: null,
      manifest_ref: null,
      ended_at: null,
      data: null,
    });
    const { body } = await expectAccepted(document);
    const session = await storedSession(body.session_id);
    expect(session).toMatchObject({ agent_id: null, content_scope: null, manifest_ref: null, ended_at: null });
  });

  test("null is refused where the schema does not allow it: parent_session_id", async () => {
    await expectRefused(sessionDocument([], { parent_session_id: null }), "/parent_session_id", "UUID");
  });

  test("data.access_context.identifiers is an array of {scheme, value}", async () => {
    const identifiers = [
      { scheme: "ror", value: "https://ror.org/02mhbdp94" },
      { scheme: "x-custom", value: "7" },
    ];
    await expectAccepted(sessionDocument([], { data: { access_context: { identifiers } } }));
    await expectRefused(
      sessionDocument([], { data: { access_context: { identifiers: { scheme: "ror", value: "x" } } } }),
      "/data/access_context/identifiers",
      "an array",
    );
    await expectRefused(
      sessionDocument([], { data: { access_context: { identifiers: [{ scheme: "ror" }] } } }),
      "/data/access_context/identifiers/0/value",
      "is required",
    );
  });

  test("ended_at before started_at is refused", async () => {
    const document = sessionDocument([], { started_at: "2026-01-02T00:00:00Z", ended_at: "2026-01-01T00:00:00Z" });
    const { res } = await post(document);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ path: "/ended_at", message: "is before started_at" }]);
  });
});
