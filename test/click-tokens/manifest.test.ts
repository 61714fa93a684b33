import { describe, expect, test } from "bun:test";
import { createApp } from "../../src/app.ts";
import { maxManifestEvents } from "../../src/modules/click-tokens/manifest.ts";
import { registerDomain } from "../../src/modules/domains/service.ts";
import { agentSessionWithToken, setFlag, visibleOwner } from "../support/click-manifests.ts";
import { createTestOrg, uniqueDomain } from "../support/fixtures.ts";
import { call, callApp } from "../support/http.ts";
import { recordingLogger } from "../support/logs.ts";
import { msUntil } from "../support/polling.ts";
import { testRuntime } from "../support/runtime.ts";
import { ago, batch, validEvents } from "../support/telemetry-events.ts";

const resolve = (key: string, token: string) => call("GET", `/ctx/${token}`, { key });

/** The events with timestamps a second apart, in the order given. */
const inOrder = (events: Record<string, unknown>[]) =>
  events.map((event, index) => ({ ...event, timestamp: ago(100 - index) }));

describe("GET /ctx/{token}", () => {
  test("the logs keep a resolved token's first characters only: it is a bearer credential", async () => {
    const owner = await visibleOwner();
    const { token } = await agentSessionWithToken({
      clickUrl: `https://${owner.domain}/article`,
      events: [validEvents.presented(owner.domain)],
    });
    const network = await createTestOrg({ type: "platform" });
    const log = recordingLogger();
    const app = createApp({ ...(await testRuntime()).ctx, log });
    for (const method of ["GET", "HEAD"]) {
      expect((await callApp(app, method, `/ctx/${token}`, { key: network.key })).status).toBe(200);
    }
    // Refused as malformed, it is still most of a live token.
    expect((await callApp(app, "GET", `/ctx/${token}x`, { key: network.key })).status).toBe(400);
    const requestLines = () => log.lines.filter((line) => line.msg === "request");
    // The access log is written once each answer is out, after `handle` resolves.
    expect(await msUntil(async () => requestLines().length === 3)).toBeLessThan(Number.POSITIVE_INFINITY);
    const paths = requestLines().map((line) => line.fields?.path);
    expect(paths).toEqual(Array(3).fill(`/ctx/${token.slice(0, 8)}…[redacted]`));
    expect(log.text()).not.toContain(token.slice(8, 24));
  });

  test("worked example: mint a token, report an engaged event carrying it, resolve it", async () => {
    const owner = await visibleOwner();
    const article = `https://${owner.domain}/article`;
    const { token, sessionId } = await agentSessionWithToken({
      clickUrl: article,
      events: inOrder([
        validEvents.retrieved(owner.domain),
        validEvents.grounded(owner.domain),
        validEvents.cited(owner.domain),
        validEvents.presented(owner.domain),
        validEvents.turnStarted({ turn: { privacy_level: "full", query_text: "best headphones?" } }),
      ]),
    });
    const network = await createTestOrg({ type: "platform" });
    const engaged = await call("POST", "/events", {
      key: network.key,
      body: {
        document_type: "event",
        schema_version: "1.0",
        ctx_token: token,
        event: {
          type: "content_engaged",
          timestamp: new Date().toISOString(),
          content_url: article,
          data: { engagement_type: "link_click" },
        },
      },
    });
    expect(engaged.status).toBe(200);

    const res = await resolve(network.key, token);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual([
      "click_content_url",
      "content_urls_cited",
      "content_urls_grounded",
      "content_urls_presented",
      "events",
      "started_at",
      "truncated",
    ]);
    expect(res.body.click_content_url).toBe(article);
    expect(res.body.events.map((e: { type: string }) => e.type)).toEqual([
      "content_grounded",
      "content_cited",
      "content_presented",
    ]);
    expect(res.body.events[1]).toMatchObject({ turn_id: "turn-1", output_id: "out-1", content_url: article });
    expect(res.body.events[0]).not.toHaveProperty("turn_id");
    expect(res.body.content_urls_grounded).toEqual([article]);
    expect(res.body.content_urls_cited).toEqual([article]);
    expect(res.body.content_urls_presented).toEqual([article]);
    expect(res.body.truncated).toBe(false);
    const text = JSON.stringify(res.body);
    expect(text).not.toContain(sessionId);
    expect(text).not.toContain("best headphones");
    expect(text).not.toContain("session_id");
  });

  test("a resolved manifest is not to be stored by any cache: its URL holds a bearer token", async () => {
    const owner = await visibleOwner();
    const article = `https://${owner.domain}/article`;
    const { token } = await agentSessionWithToken({ clickUrl: article, events: [validEvents.cited(owner.domain)] });
    const network = await createTestOrg({ type: "platform" });
    const res = await resolve(network.key, token);
    expect([res.status, res.headers.get("cache-control")]).toEqual([200, "no-store"]);
  });

  test("unknown, expired and not-shared tokens answer the same 404", async () => {
    const owner = await visibleOwner();
    const clickUrl = `https://${owner.domain}/a`;
    const network = await createTestOrg({ type: "platform" });
    const live = await agentSessionWithToken({ clickUrl, events: [validEvents.grounded(owner.domain)] });
    expect((await resolve(network.key, live.token)).status).toBe(200);

    const expired = await agentSessionWithToken({ clickUrl, events: [validEvents.grounded(owner.domain)] });
    const { ctx } = await testRuntime();
    await ctx.sql`UPDATE click_tokens SET expires_at = now() - interval '1 second' WHERE session_id = ${expired.sessionId}::uuid`;
    const notShared = await agentSessionWithToken({
      clickUrl,
      share: false,
      events: [validEvents.grounded(owner.domain)],
    });
    const switchedOff = await agentSessionWithToken({ clickUrl, events: [validEvents.grounded(owner.domain)] });
    await setFlag(switchedOff.agent, "share_sessions_via_click_tokens", false);

    const unknown = `ctx_${"Q".repeat(43)}`;
    const answers = [];
    for (const token of [unknown, expired.token, notShared.token, switchedOff.token]) {
      const res = await resolve(network.key, token);
      answers.push({ status: res.status, code: res.body.code, detail: res.body.detail });
    }
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0]).toEqual({
      status: 404,
      code: "click_token_not_found",
      detail: "no click manifest is available for this token",
    });
  });

  test("a token engagements bound to two presentations is never resolved (standard 7.4.1), in one batch or two", async () => {
    const owner = await visibleOwner();
    const clickUrl = `https://${owner.domain}/a`;
    const network = await createTestOrg({ type: "platform" });
    const engaged = (token: string, presentations: string[]) =>
      call("POST", "/events", {
        key: network.key,
        body: batch(
          presentations.map((presentation_id) =>
            validEvents.engaged(owner.domain as string, { presentation_id, ctx_token: token, content_url: clickUrl }),
          ),
        ),
      });
    const [first, second] = [crypto.randomUUID(), crypto.randomUUID()];

    const together = await agentSessionWithToken({ clickUrl, events: [validEvents.grounded(owner.domain)] });
    expect((await engaged(together.token, [first, second])).status).toBe(200);
    expect((await resolve(network.key, together.token)).status).toBe(404);

    const apart = await agentSessionWithToken({ clickUrl, events: [validEvents.grounded(owner.domain)] });
    expect((await engaged(apart.token, [first])).status).toBe(200);
    expect((await engaged(apart.token, [first.toUpperCase()])).status).toBe(200);
    expect((await resolve(network.key, apart.token)).status).toBe(200);
    expect((await engaged(apart.token, [second])).status).toBe(200);
    const refused = await resolve(network.key, apart.token);
    expect([refused.status, refused.body.code]).toEqual([404, "click_token_not_found"]);

    // One engagement sent twice in a batch (its id in two cases) is stored once, and binds once.
    const twice = await agentSessionWithToken({ clickUrl, events: [validEvents.grounded(owner.domain)] });
    const once = validEvents.engaged(owner.domain as string, {
      presentation_id: first,
      ctx_token: twice.token,
      content_url: clickUrl,
    });
    const doubled = [once, { ...once, id: once.id.toUpperCase(), presentation_id: second }];
    const sent = await call("POST", "/events", { key: network.key, body: batch(doubled) });
    expect(sent.body.events_created).toBe(1);
    expect((await resolve(network.key, twice.token)).status).toBe(200);

    // A resent engagement, stored already, is left out: its presentation binds nothing.
    const resent = await agentSessionWithToken({ clickUrl, events: [validEvents.grounded(owner.domain)] });
    const click = validEvents.engaged(owner.domain as string, {
      presentation_id: first,
      ctx_token: resent.token,
      content_url: clickUrl,
    });
    const report = (event: unknown) => call("POST", "/events", { key: network.key, body: batch([event]) });
    expect((await report(click)).body.events_created).toBe(1);
    expect((await report({ ...click, presentation_id: second })).body.events_created).toBe(0);
    expect((await resolve(network.key, resent.token)).status).toBe(200);
  });

  test("a token a session document binds to one presentation and a batch to another is never resolved, in either order", async () => {
    const owner = await visibleOwner();
    const clickUrl = `https://${owner.domain}/a`;
    const network = await createTestOrg({ type: "platform" });
    const engaged = (token: string, presentation_id: string) =>
      validEvents.engaged(owner.domain, { presentation_id, ctx_token: token, content_url: clickUrl });
    /** The agent's session document: a presentation of the link, and the click on it carrying the token. */
    const recordedByAgent = async (own: Awaited<ReturnType<typeof agentSessionWithToken>>) => {
      const presented = validEvents.presented(owner.domain, { content_url: clickUrl });
      const document = {
        document_type: "session",
        schema_version: "1.0",
        session_id: own.sessionId,
        started_at: ago(3600),
        events: [presented, engaged(own.token, presented.id)],
      };
      expect((await call("POST", "/events", { key: own.agent.key, body: document })).status).toBe(200);
    };
    const reportedByNetwork = async (token: string) => {
      const res = await call("POST", "/events", {
        key: network.key,
        body: batch([engaged(token, crypto.randomUUID())]),
      });
      expect(res.status).toBe(200);
    };

    const documentFirst = await agentSessionWithToken({ clickUrl, events: [validEvents.grounded(owner.domain)] });
    await recordedByAgent(documentFirst);
    expect((await resolve(network.key, documentFirst.token)).status).toBe(200);
    await reportedByNetwork(documentFirst.token);
    expect((await resolve(network.key, documentFirst.token)).status).toBe(404);

    const batchFirst = await agentSessionWithToken({ clickUrl, events: [validEvents.grounded(owner.domain)] });
    await reportedByNetwork(batchFirst.token);
    expect((await resolve(network.key, batchFirst.token)).status).toBe(200);
    await recordedByAgent(batchFirst);
    expect((await resolve(network.key, batchFirst.token)).status).toBe(404);
  });

  test("shows only events on verified domains whose owner is visible in click-token lookups", async () => {
    const visible = await visibleOwner();
    const hidden = await visibleOwner(false);
    const unverified = await createTestOrg({ domain: null });
    const unverifiedDomain = uniqueDomain("unverified");
    const { ctx } = await testRuntime();
    await registerDomain(ctx.sql, unverified.id, unverifiedDomain);
    await setFlag(unverified, "visible_in_click_token_lookups");
    const sub = `https://news.${visible.domain}/story`;
    const { token } = await agentSessionWithToken({
      clickUrl: `https://${visible.domain}/article`,
      events: inOrder([
        validEvents.grounded(visible.domain),
        validEvents.grounded(hidden.domain),
        validEvents.cited(unverifiedDomain),
        validEvents.presented("nobody-registered.example.org"),
        validEvents.presented(`news.${visible.domain}`, { content_url: sub }),
      ]),
    });
    const network = await createTestOrg({ type: "platform" });
    const res = await resolve(network.key, token);
    expect(res.status).toBe(200);
    expect(res.body.events.map((e: { content_url: string }) => e.content_url)).toEqual([
      `https://${visible.domain}/article`,
      sub,
    ]);
    expect(res.body.content_urls_cited).toEqual([]);
    expect(res.body.content_urls_presented).toEqual([sub]);

    // Owner visibility is read at lookup time: switching it off hides the owner's events.
    await setFlag(visible, "visible_in_click_token_lookups", false);
    expect((await resolve(network.key, token)).body.events).toEqual([]);
  });

  test("an event on a subdomain another owner verified shows only when both owners are visible", async () => {
    const parent = await visibleOwner();
    const blog = `blog.${parent.domain}`;
    const child = await createTestOrg({ domain: blog });
    const { token } = await agentSessionWithToken({
      clickUrl: `https://${parent.domain}/article`,
      events: inOrder([validEvents.grounded(parent.domain), validEvents.grounded(blog)]),
    });
    const network = await createTestOrg({ type: "platform" });
    const shown = async () =>
      (await resolve(network.key, token)).body.events.map((e: { content_url: string }) => new URL(e.content_url).host);
    // The child's opt-out holds though the parent's owner opted in.
    expect(await shown()).toEqual([parent.domain]);
    await setFlag(child, "visible_in_click_token_lookups");
    expect(await shown()).toEqual([parent.domain, blog]);
  });

  test("the session's privacy level withholds conversation-derived data; content_url always shows", async () => {
    const owner = await visibleOwner();
    const data = {
      scope: "turn",
      cached: false,
      query_text: "what is the best espresso machine",
      response_text: "the Gaggia",
      query_intent: "comparison",
      topics: ["coffee"],
      query_tokens: 12,
      response_tokens: 80,
    };
    const network = await createTestOrg({ type: "platform" });
    const shown: Record<string, string[]> = {};
    for (const level of ["full", "summary", "intent", "minimal"]) {
      const { token } = await agentSessionWithToken({
        privacyLevel: level,
        clickUrl: `https://${owner.domain}/article`,
        events: [validEvents.grounded(owner.domain, { data })],
      });
      const res = await resolve(network.key, token);
      expect(res.body.events[0].content_url).toBe(`https://${owner.domain}/article`);
      shown[level] = Object.keys(res.body.events[0].data).sort();
    }
    const all = Object.keys(data).sort();
    expect(shown.full).toEqual(all);
    expect(shown.summary).toEqual(all);
    expect(shown.intent).toEqual(all.filter((key) => key !== "query_text" && key !== "response_text"));
    expect(shown.minimal).toEqual(["cached", "query_tokens", "response_tokens", "scope"]);
  });

  test("a malformed token is 400 and another issuer's token 422, each naming the token", async () => {
    const network = await createTestOrg({ type: "platform" });
    const malformed = await resolve(network.key, "ctx_short");
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ code: "validation_failed", errors: [{ path: "/token" }] });
    const foreign = await resolve(network.key, "ct_8fJ2kLmN0pQrStUv");
    expect(foreign.status).toBe(422);
    expect(foreign.body).toMatchObject({ code: "foreign_click_token", errors: [{ path: "/token" }] });
    const huge = await resolve(network.key, `ctx_${"a".repeat(400)}`);
    expect(huge.status).toBe(400);
    // The standard's ct_ pattern needs 16 characters at least (Annex A): a shorter one is no token at all.
    expect((await resolve(network.key, "ct_abcdefgh")).status).toBe(400);
  });

  test("agent keys resolve too; content-owner keys never do", async () => {
    const owner = await visibleOwner();
    const { token } = await agentSessionWithToken({
      clickUrl: `https://${owner.domain}/a`,
      events: [validEvents.grounded(owner.domain)],
    });
    const otherAgent = await createTestOrg({ type: "agent" });
    expect((await resolve(otherAgent.key, token)).status).toBe(200);
    const refused = await resolve(owner.key, token);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("platform_key_required");
  });

  test(`a session with more than ${maxManifestEvents} manifest events shows the first ${maxManifestEvents}, marked truncated`, async () => {
    const owner = await visibleOwner();
    const grounded = (index: number) =>
      validEvents.grounded(owner.domain, {
        content_url: `https://${owner.domain}/a/${index}`,
        timestamp: ago(5000 - index),
      });
    const firstBatch = Array.from({ length: maxManifestEvents }, (_, index) => grounded(index));
    const { agent, sessionId, token } = await agentSessionWithToken({
      clickUrl: `https://${owner.domain}/a/0`,
      events: firstBatch,
    });
    const more = await call("POST", "/events", {
      key: agent.key,
      body: batch([grounded(maxManifestEvents)], { session_id: sessionId }),
    });
    expect(more.status).toBe(200);
    const network = await createTestOrg({ type: "platform" });
    const res = await resolve(network.key, token);
    expect(res.status).toBe(200);
    expect(res.body.truncated).toBe(true);
    expect(res.body.events).toHaveLength(maxManifestEvents);
    expect(res.body.events.at(-1).content_url).toBe(`https://${owner.domain}/a/${maxManifestEvents - 1}`);
    expect(res.body.content_urls_grounded).toHaveLength(maxManifestEvents);
  }, 30_000);
});

describe("lookup counts", () => {
  test("each answered lookup counts for the issuer, the resolver and each owner shown; refusals do not", async () => {
    const owner = await visibleOwner();
    const hidden = await visibleOwner(false);
    const { token, agent } = await agentSessionWithToken({
      clickUrl: `https://${owner.domain}/a`,
      events: [validEvents.grounded(owner.domain), validEvents.grounded(hidden.domain)],
    });
    const network = await createTestOrg({ type: "platform" });
    for (let i = 0; i < 2; i++) expect((await resolve(network.key, token)).status).toBe(200);
    expect((await resolve(network.key, `ctx_${"Z".repeat(43)}`)).status).toBe(404);
    await setFlag(agent, "share_sessions_via_click_tokens", false);
    expect((await resolve(network.key, token)).status).toBe(404);

    const today = new Date().toISOString().slice(0, 10);
    const countsOf = async (key: string) => (await call("GET", "/click-tokens/lookups", { key })).body;
    expect(await countsOf(agent.key)).toEqual({
      items: [{ day: today, role: "issuer", lookups: 2 }],
      total: 1,
      limit: 50,
      offset: 0,
    });
    expect((await countsOf(network.key)).items).toEqual([{ day: today, role: "resolver", lookups: 2 }]);
    expect((await countsOf(owner.key)).items).toEqual([{ day: today, role: "owner", lookups: 2 }]);
    expect((await countsOf(hidden.key)).items).toEqual([]);
  });

  test("over HTTP a HEAD is the GET without its body: the same answer, and counted as a lookup", async () => {
    const owner = await visibleOwner();
    const { token, agent } = await agentSessionWithToken({
      clickUrl: `https://${owner.domain}/a`,
      events: [validEvents.grounded(owner.domain)],
    });
    const network = await createTestOrg({ type: "platform" });
    // Bun's server, not Elysia, answers HEAD with the GET route, so only a listening app shows it.
    const app = createApp((await testRuntime()).ctx).listen({ hostname: "127.0.0.1", port: 0 });
    try {
      const head = (path: string, key?: string) =>
        fetch(`http://127.0.0.1:${app.server?.port}${path}`, {
          method: "HEAD",
          headers: key ? { "x-api-key": key } : {},
        });
      const answered = await head(`/ctx/${token}`, network.key);
      expect(answered.status).toBe(200);
      expect(await answered.text()).toBe("");
      expect((await head(`/ctx/${token}`)).status).toBe(401);
      expect((await head(`/ctx/ctx_${"Z".repeat(43)}`, network.key)).status).toBe(404);
    } finally {
      await app.stop();
    }
    const today = new Date().toISOString().slice(0, 10);
    const counted = await call("GET", "/click-tokens/lookups", { key: agent.key });
    expect(counted.body.items).toEqual([{ day: today, role: "issuer", lookups: 1 }]);
  });
});
