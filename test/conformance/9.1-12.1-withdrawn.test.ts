import { describe, expect, test } from "bun:test";
import { expectAccepted, expectRefused, sessionDocument, site } from "../support/conformance.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";

// Standard 9.1 and 12.1: what v1 withdrew from v0.x.
describe("9.1 ip_hash", () => {
  test("data.ip_hash is stripped, never stored, and the answer says so", async () => {
    const event = validEvents.retrieved(site, { data: { user_agent: "Bot", ip_hash: "abc" } });
    const { body, stored } = await expectAccepted(batch([event], { session_id: crypto.randomUUID() }));
    expect(stored[0]?.data).toEqual({ user_agent: "Bot" });
    expect(body.stripped).toEqual([
      { path: "/events/0/data/ip_hash", reason: "personal data withdrawn in v1 (section 9.1); never stored" },
    ]);
  });
});

describe("12.1 withdrawn v0.x names", () => {
  test("content_displayed is refused naming content_presented", async () => {
    await expectRefused(
      sessionDocument([validEvents.presented(site, { type: "content_displayed" })]),
      "/events/0/type",
      "report it as content_presented",
    );
  });

  test("content_fingerprint.preserved_in_output is refused", async () => {
    const data = { scope: "turn", content_fingerprint: { scheme: "c2pa", detected: true, preserved_in_output: true } };
    await expectRefused(
      sessionDocument([validEvents.grounded(site, { data })]),
      "/events/0/data/content_fingerprint/preserved_in_output",
      "withdrawn",
    );
  });
});
