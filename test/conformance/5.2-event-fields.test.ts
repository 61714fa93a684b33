import { describe, expect, test } from "bun:test";
import { expectAccepted, expectRefused, sessionDocument, site } from "../support/conformance.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";

const inBatch = (event: Record<string, unknown>) => batch([event], { session_id: crypto.randomUUID() });

// Standard 5.2 and Annex A (TelemetryEvent): field formats, nulls and placement.
describe("5.2 event field formats", () => {
  const malformed = [
    { field: "id", event: validEvents.grounded(site, { id: "event-1" }), says: "a UUID" },
    { field: "citation_id", event: validEvents.presented(site, { citation_id: "cite-1" }), says: "a UUID" },
    { field: "presentation_id", event: validEvents.engaged(site, { presentation_id: "pres-1" }), says: "a UUID" },
    {
      field: "content_telemetry_id",
      event: validEvents.retrieved(site, { content_telemetry_id: "ctid" }),
      says: "a UUID",
    },
    { field: "output_id", event: validEvents.cited(site, { output_id: "" }), says: "must not be empty" },
    { field: "timestamp", event: validEvents.grounded(site, { timestamp: "2026-13-01T00:00:00Z" }), says: "valid" },
    { field: "content_url", event: validEvents.grounded(site, { content_url: "ftp://x.example/a" }), says: "http" },
  ];
  for (const { field, event, says } of malformed) {
    test(`a malformed ${field} is refused`, async () => {
      await expectRefused(inBatch(event), `/events/0/${field}`, says);
    });
  }

  test("well-formed identifiers are accepted and stored", async () => {
    const ctid = crypto.randomUUID();
    const { stored } = await expectAccepted(inBatch(validEvents.retrieved(site, { content_telemetry_id: ctid })));
    expect(stored[0]?.content_telemetry_id).toBe(ctid);
  });
});

describe("5.2 nulls", () => {
  test("null is accepted for content_id, turn_id, content_url (beside a content_id) and content_telemetry_id", async () => {
    const event = validEvents.cited(site, { content_id: null, turn_id: null, content_telemetry_id: null });
    const { stored } = await expectAccepted(inBatch(event));
    expect(stored[0]).toMatchObject({ content_id: null, turn_id: null, content_telemetry_id: null });
    const byId = validEvents.grounded(site, { content_url: null, content_id: "doi:10.1000/182" });
    expect((await expectAccepted(inBatch(byId))).stored[0]).toMatchObject({
      content_url: null,
      content_id: "doi:10.1000/182",
    });
  });

  test("null is refused for id, output_id, source_role and data", async () => {
    await expectRefused(inBatch(validEvents.grounded(site, { id: null })), "/events/0/id", "a UUID");
    await expectRefused(inBatch(validEvents.cited(site, { output_id: null })), "/events/0/output_id");
    await expectRefused(inBatch(validEvents.retrieved(site, { source_role: null })), "/events/0/source_role");
    await expectRefused(inBatch(validEvents.engaged(site, { data: null })), "/events/0/data", "an object");
  });
});

describe("5.2 field placement", () => {
  test("citation_id belongs on content_presented only", async () => {
    await expectRefused(
      inBatch(validEvents.grounded(site, { citation_id: crypto.randomUUID() })),
      "/events/0/citation_id",
      "only valid on content_presented",
    );
    await expectAccepted(inBatch(validEvents.presented(site, { citation_id: crypto.randomUUID() })));
  });

  test("presentation_id belongs on content_engaged only", async () => {
    await expectRefused(
      inBatch(validEvents.cited(site, { presentation_id: crypto.randomUUID() })),
      "/events/0/presentation_id",
      "only valid on content_engaged",
    );
  });

  test("an event-level ctx_token belongs on content_engaged (and the checkout_completed extension) only", async () => {
    await expectRefused(
      inBatch(validEvents.grounded(site, { ctx_token: `ctx_${"a".repeat(43)}` })),
      "/events/0/ctx_token",
      "only valid on content_engaged and checkout_completed",
    );
  });

  test("turn belongs on turn events only; null turn anywhere is no turn", async () => {
    const turn = { privacy_level: "minimal", query_tokens: 3 };
    await expectRefused(
      inBatch(validEvents.grounded(site, { turn })),
      "/events/0/turn",
      "turn_started and turn_completed",
    );
    await expectAccepted(inBatch(validEvents.grounded(site, { turn: null })));
    const { stored } = await expectAccepted(inBatch(validEvents.turnStarted({ turn })));
    expect(stored[0]?.turn).toEqual(turn);
  });

  test("source_role is required on content_retrieved", async () => {
    await expectRefused(
      inBatch(validEvents.retrieved(site, { source_role: undefined })),
      "/events/0/source_role",
      "is required on content_retrieved",
    );
  });

  test("an event in a session document carries the document's session, not another", async () => {
    const document = sessionDocument([validEvents.grounded(site, { session_id: crypto.randomUUID() })]);
    await expectRefused(document, "/events/0/session_id", "differs from the document's session_id");
  });
});
