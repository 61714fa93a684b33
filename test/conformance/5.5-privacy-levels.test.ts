import { describe, expect, test } from "bun:test";
import { expectAccepted, expectRefused, sessionDocument } from "../support/conformance.ts";
import { validEvents } from "../support/telemetry-events.ts";

const withTurn = (turn: unknown, extra: Record<string, unknown> = {}) =>
  sessionDocument([validEvents.turnStarted({ turn })], { privacy_level: "full", ...extra });

// Standard 5.4, 5.5 and Annex A (ConversationTurn): the turn object and its privacy gate.
describe("5.5 privacy levels", () => {
  test("privacy_level is required on a turn", async () => {
    await expectRefused(withTurn({ query_tokens: 4 }), "/events/0/turn/privacy_level", "is required");
  });

  test("privacy_level is one of the four levels, and the error lists them", async () => {
    await expectRefused(
      withTurn({ privacy_level: "everything" }),
      "/events/0/turn/privacy_level",
      '"full", "summary", "intent" or "minimal"',
    );
  });

  test("fields above the level are stripped, not refused, and the answer lists them", async () => {
    const turn = { privacy_level: "minimal", query_text: "hi", model_id: "m-1", query_tokens: 2, response_tokens: 9 };
    const { body, stored } = await expectAccepted(withTurn(turn));
    expect(stored[0]?.turn).toEqual({ privacy_level: "minimal", query_tokens: 2, response_tokens: 9 });
    expect(body.stripped.map((s: { path: string }) => s.path)).toEqual([
      "/events/0/turn/query_text",
      "/events/0/turn/model_id",
    ]);
  });

  test("nullable turn fields accept null: response_tokens, query_text, query_intent, ad_rendered", async () => {
    const turn = {
      privacy_level: "full",
      response_tokens: null,
      query_text: null,
      query_intent: null,
      ad_rendered: null,
    };
    const { body, stored } = await expectAccepted(withTurn(turn));
    expect(stored[0]?.turn).toMatchObject({ privacy_level: "full", response_tokens: null });
    expect(body.stripped).toBeUndefined();
  });

  test("token counts are non-negative integers", async () => {
    await expectRefused(
      withTurn({ privacy_level: "full", query_tokens: -1 }),
      "/events/0/turn/query_tokens",
      "0 or more",
    );
    await expectRefused(withTurn({ privacy_level: "full", query_tokens: "12" }), "/events/0/turn/query_tokens");
  });

  test("content_urls_cited is an array of URLs", async () => {
    await expectRefused(
      withTurn({ privacy_level: "minimal", content_urls_cited: "https://a.example/x" }),
      "/events/0/turn/content_urls_cited",
      "an array",
    );
    await expectRefused(
      withTurn({ privacy_level: "minimal", content_urls_cited: [42] }),
      "/events/0/turn/content_urls_cited/0",
      "a string",
    );
    const urls = ["https://a.example/x"];
    const { stored } = await expectAccepted(withTurn({ privacy_level: "minimal", content_urls_cited: urls }));
    expect(stored[0]?.turn).toMatchObject({ content_urls_cited: urls });
  });
});
