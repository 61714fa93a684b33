import { describe, expect, test } from "bun:test";
import { expectAccepted, expectRefused, sessionDocument, site } from "../support/conformance.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";

// Standard 11 (extensibility) with Annex A's closed EventType list: what is tolerated and what is not.
describe("11 extensibility", () => {
  test("an unknown event type is refused listing the known ones (the v1 type list is closed)", async () => {
    const body = await expectRefused(
      sessionDocument([validEvents.grounded(site, { type: "content_summarised" })]),
      "/events/0/type",
      "content_retrieved, content_grounded, content_cited, content_presented, content_engaged, turn_started, turn_completed, checkout_completed",
    );
    expect(body.errors).toHaveLength(1);
  });

  test("checkout_completed, the commerce extension, is registered and accepted", async () => {
    await expectAccepted(batch([validEvents.checkout()], { session_id: crypto.randomUUID() }));
  });

  test("unknown fields on the envelope, events and data are tolerated; unknown data keys are stored", async () => {
    const event = validEvents.grounded(site, { x_vendor: 1, data: { scope: "turn", "com.example/score": 0.4 } });
    const { stored } = await expectAccepted(sessionDocument([event], { x_envelope: { a: 1 } }));
    expect(stored[0]?.data).toEqual({ scope: "turn", "com.example/score": 0.4 });
  });

  test("open vocabularies take custom values: media_type, response_mode, query_intent", async () => {
    const turn = { privacy_level: "full", response_mode: "voice_agent", query_intent: "price_check" };
    const grounded = validEvents.grounded(site, { data: { scope: "turn", media_type: "3d" } });
    const { stored } = await expectAccepted(
      sessionDocument([grounded, validEvents.turnStarted({ turn })], { privacy_level: "full" }),
    );
    expect(stored.map((event) => event.event_type).sort()).toEqual(["content_grounded", "turn_started"]);
  });
});
