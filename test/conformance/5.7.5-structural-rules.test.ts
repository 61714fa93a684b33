import { describe, test } from "bun:test";
import { expectAccepted, expectRefused, sessionDocument, site } from "../support/conformance.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";

const inBatch = (event: Record<string, unknown>) => batch([event], { session_id: crypto.randomUUID() });

// Standard 5.7.5: what every v1 event carries, by type.
describe("5.7.5 structural rules", () => {
  for (const type of ["retrieved", "grounded", "cited", "presented", "engaged"] as const) {
    test(`content_${type} needs content_url or content_id`, async () => {
      const event = validEvents[type](site, { content_url: undefined });
      await expectRefused(inBatch(event), "/events/0/content_url", "needs content_url or content_id");
      await expectAccepted(
        inBatch(validEvents[type](site, { content_url: undefined, content_id: "isbn:9780141036144" })),
      );
    });
  }

  test("content_url and content_id both null count as missing", async () => {
    const event = validEvents.grounded(site, { content_url: null, content_id: null });
    await expectRefused(inBatch(event), "/events/0/content_url", "needs content_url or content_id");
  });

  for (const type of ["cited", "presented"] as const) {
    test(`content_${type} needs id and output_id`, async () => {
      await expectRefused(inBatch(validEvents[type](site, { id: undefined })), "/events/0/id", "is required");
      await expectRefused(
        inBatch(validEvents[type](site, { output_id: undefined })),
        "/events/0/output_id",
        "is required",
      );
    });
  }

  test("content_cited needs data", async () => {
    await expectRefused(inBatch(validEvents.cited(site, { data: undefined })), "/events/0/data", "is required");
  });

  test("content_engaged needs presentation_id unless a ctx_token stands in (batches and standalone events)", async () => {
    await expectRefused(
      inBatch(validEvents.engaged(site, { presentation_id: undefined })),
      "/events/0/presentation_id",
      "unless it carries a ctx_token",
    );
  });

  test("content_engaged in a session document always needs presentation_id", async () => {
    const engaged = validEvents.engaged(site, { presentation_id: undefined, ctx_token: `ctx_${"b".repeat(43)}` });
    await expectRefused(sessionDocument([engaged]), "/events/0/presentation_id", "in a session document");
  });

  test("every event but content_retrieved needs session_id or ctx_token", async () => {
    await expectRefused(batch([validEvents.grounded(site)]), "/events/0/session_id", "needs session_id or ctx_token");
    await expectRefused(
      { document_type: "event", schema_version: "1.0", event: validEvents.cited(site) },
      "/event/session_id",
    );
    await expectAccepted(batch([validEvents.retrieved(site, { source_role: "edge" })]));
  });

  test("a batch mixing a retrieval with other events still needs a session", async () => {
    await expectRefused(
      batch([validEvents.retrieved(site, { source_role: "edge" }), validEvents.grounded(site)]),
      "/events/1/session_id",
    );
  });
});
