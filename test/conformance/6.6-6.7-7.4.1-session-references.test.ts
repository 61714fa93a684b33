import { describe, expect, test } from "bun:test";
import { agentSessionWithToken } from "../support/click-manifests.ts";
import { contentUrl, expectAccepted, expectRefused, sessionDocument, site } from "../support/conformance.ts";
import type { TestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";
import { storedEvents } from "../support/telemetry-store.ts";

// Standard 6.6, 6.7 and 7.4.1: references between the events of one session document.
describe("6.6 distinct event ids", () => {
  test("the same event id twice in a session document is refused", async () => {
    const presented = validEvents.presented(site);
    await expectRefused(
      sessionDocument([presented, { ...presented, output_id: "out-2" }]),
      "/events/1/id",
      "repeats the id of /events/0",
    );
  });

  test("ids differing only in case are one id (RFC 9562): refused twice, matched as a reference", async () => {
    const presented = validEvents.presented(site);
    await expectRefused(
      sessionDocument([presented, { ...presented, id: presented.id.toUpperCase(), output_id: "out-2" }]),
      "/events/1/id",
      "repeats the id of /events/0",
    );
    const engaged = validEvents.engaged(site, { presentation_id: presented.id.toUpperCase() });
    await expectAccepted(sessionDocument([presented, engaged]));
  });

  test("the same event id twice in a batch is stored once", async () => {
    const grounded = validEvents.grounded(site);
    const { body, stored } = await expectAccepted(
      batch([grounded, { ...grounded, timestamp: new Date().toISOString() }], { session_id: crypto.randomUUID() }),
    );
    expect(body.events_created).toBe(1);
    expect(stored.map((event) => event.event_id)).toEqual([grounded.id]);
  });
});

describe("6.6 presentation to citation", () => {
  test("citation_id names a content_cited event of the document", async () => {
    const cited = validEvents.cited(site);
    await expectAccepted(sessionDocument([cited, validEvents.presented(site, { citation_id: cited.id })]));
    await expectRefused(
      sessionDocument([cited, validEvents.presented(site, { citation_id: crypto.randomUUID() })]),
      "/events/1/citation_id",
      "matches no content_cited event",
    );
  });

  test("the citation is about the same content", async () => {
    const cited = validEvents.cited(site, { content_url: `https://${site}/other` });
    await expectRefused(
      sessionDocument([cited, validEvents.presented(site, { citation_id: cited.id })]),
      "/events/1/citation_id",
      "about different content",
    );
  });
});

describe("6.7 engagement to presentation", () => {
  test("presentation_id names a content_presented event of the document", async () => {
    const presented = validEvents.presented(site);
    await expectAccepted(sessionDocument([presented, validEvents.engaged(site, { presentation_id: presented.id })]));
    await expectRefused(
      sessionDocument([presented, validEvents.engaged(site)]),
      "/events/1/presentation_id",
      "matches no content_presented event",
    );
  });

  test("a session document with no presentations cannot hold an engagement", async () => {
    await expectRefused(sessionDocument([validEvents.engaged(site)]), "/events/0/presentation_id");
  });

  test("presentation_id naming an event of another type is refused", async () => {
    const cited = validEvents.cited(site);
    await expectRefused(
      sessionDocument([cited, validEvents.engaged(site, { presentation_id: cited.id })]),
      "/events/1/presentation_id",
      "matches no content_presented event",
    );
  });

  test("the engagement is about the same content as its presentation", async () => {
    const presented = validEvents.presented(site);
    const engaged = validEvents.engaged(site, { presentation_id: presented.id, content_url: `${contentUrl}-2` });
    await expectRefused(sessionDocument([presented, engaged]), "/events/1/presentation_id", "about different content");
  });

  test("batches may refer to presentations delivered elsewhere", async () => {
    await expectAccepted(batch([validEvents.engaged(site)], { session_id: crypto.randomUUID() }));
  });
});

describe("7.4.1 one click token, one presentation", () => {
  /** The agent's own session document, holding `events`, posted as the session a token was issued for. */
  const postOwn = async (own: { agent: TestOrg; sessionId: string }, events: unknown[], extra = {}) =>
    call("POST", "/events", {
      key: own.agent.key,
      body: sessionDocument(events, { session_id: own.sessionId, ...extra }),
    });

  test("a ctx_token on engagements of two presentations is refused", async () => {
    const own = await agentSessionWithToken({ events: [], clickUrl: contentUrl });
    const [first, second] = [validEvents.presented(site), validEvents.presented(site, { output_id: "out-2" })];
    const engaged = (presented: { id: string }) =>
      validEvents.engaged(site, { presentation_id: presented.id, ctx_token: own.token });
    const res = await postOwn(own, [first, second, engaged(first), engaged(second)]);
    expect([res.status, res.body.errors]).toEqual([
      400,
      [
        {
          path: "/events/3/ctx_token",
          message:
            "is already bound to another presentation by /events/2; one click token belongs to one presentation (section 7.4.1)",
        },
      ],
    ]);
  });

  test("a ctx_token on two engagements of one presentation is accepted", async () => {
    const own = await agentSessionWithToken({ events: [], clickUrl: contentUrl });
    const presented = validEvents.presented(site);
    const engaged = () => validEvents.engaged(site, { presentation_id: presented.id, ctx_token: own.token });
    // The session was started by assistant-1; the document names its agent anew, for all its events.
    const res = await postOwn(own, [presented, engaged(), engaged()], { agent_id: "assistant-2" });
    expect(res.status).toBe(200);
    const stored = await storedEvents(own.agent.id);
    expect(stored.map((event) => [event.session_id, event.agent_id])).toEqual(
      Array(3).fill([own.sessionId, "assistant-2"]),
    );
  });

  test("a session document's ctx_token is checked as any event's: a live token issued for the document's session", async () => {
    const own = await agentSessionWithToken({ events: [], clickUrl: contentUrl });
    const other = await agentSessionWithToken({ events: [], clickUrl: contentUrl });
    const presented = validEvents.presented(site);
    const engaged = (ctx_token: string) => validEvents.engaged(site, { presentation_id: presented.id, ctx_token });
    const refusals = [];
    const neverIssued = `ctx_${"t".repeat(43)}`;
    for (const ctx_token of [neverIssued, other.token]) {
      const res = await postOwn(own, [presented, engaged(ctx_token)]);
      refusals.push([res.status, res.body.errors]);
    }
    // A session document of another session, even of the same agent, is not the token's either.
    const elsewhere = await call("POST", "/events", {
      key: own.agent.key,
      body: sessionDocument([presented, engaged(own.token)]),
    });
    refusals.push([elsewhere.status, elsewhere.body.errors]);
    expect(refusals).toEqual([
      [400, [{ path: "/events/1/ctx_token", message: "unknown or expired click token" }]],
      [400, [{ path: "/events/1/ctx_token", message: "belongs to a different session than session_id" }]],
      [400, [{ path: "/events/1/ctx_token", message: "belongs to a different session than session_id" }]],
    ]);
    expect(await storedEvents(own.agent.id)).toEqual([]);
  });
});
