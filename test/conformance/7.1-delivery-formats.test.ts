import { describe, expect, test } from "bun:test";
import { expectAccepted, expectRefused, post, site } from "../support/conformance.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";

// Standard 7.1 and 12: the delivery envelopes and their version.
describe("7.1 delivery formats", () => {
  test("an event batch holds at least one event", async () => {
    await expectRefused(batch([], { session_id: crypto.randomUUID() }), "/events", "at least 1 item");
  });

  test("schema_version is required, once per cause", async () => {
    const { res } = await post({ document_type: "event_batch", events: [validEvents.retrieved(site)] });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { path: "/schema_version", message: expect.stringContaining("is required: 1.x, such as 1.0") },
    ]);
  });

  test("schema_version 1.x is read; 0.1 and 2.0 are refused", async () => {
    for (const version of ["1", "1.0", "1.4", "1.2.1"]) {
      await expectAccepted(batch([validEvents.retrieved(site)], { schema_version: version }));
    }
    for (const version of ["0.1", "2.0"]) {
      const body = await expectRefused(
        batch([validEvents.retrieved(site)], { schema_version: version }),
        "/schema_version",
      );
      expect(body.errors).toHaveLength(1);
    }
  });

  test("a standalone event document carries one event", async () => {
    await expectRefused({ document_type: "event", schema_version: "1.0" }, "/event", "is required");
    await expectAccepted({ document_type: "event", schema_version: "1.0", event: validEvents.retrieved(site) });
  });

  test("an envelope ctx_token carries content_engaged (and checkout_completed) events only", async () => {
    const ctx_token = `ctx_${"c".repeat(43)}`;
    await expectRefused(
      batch([validEvents.grounded(site)], { ctx_token }),
      "/events/0/type",
      "cannot be sent under the document's ctx_token",
    );
  });

  test("manifest_ref may be null on a batch; agent_id may not", async () => {
    await expectAccepted(batch([validEvents.retrieved(site)], { manifest_ref: null }));
    await expectRefused(batch([validEvents.retrieved(site)], { agent_id: null }), "/agent_id", "a string");
  });

  test("an unknown document_type is refused naming the three", async () => {
    await expectRefused(
      { document_type: "bundle", schema_version: "1.0" },
      "/document_type",
      "event_batch, event or session",
    );
  });
});
