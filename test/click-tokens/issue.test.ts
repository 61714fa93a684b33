import { describe, expect, test } from "bun:test";
import { sha256 } from "../../src/core/secrets.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { testRuntime } from "../support/runtime.ts";
import { ago, batch, validEvents } from "../support/telemetry-events.ts";
import { storedEvents } from "../support/telemetry-store.ts";

const contentUrl = "https://shop.example.net/product/42";

async function agentWithToken() {
  const agent = await createTestOrg({ type: "agent" });
  const { body: session } = await call("POST", "/sessions/start", {
    key: agent.key,
    body: { agent_id: "assistant-3" },
  });
  const res = await call("POST", "/click-tokens", {
    key: agent.key,
    body: { session_id: session.session_id, content_url: contentUrl },
  });
  return { agent, sessionId: session.session_id as string, res, token: res.body.token as string };
}

describe("POST /click-tokens", () => {
  test("issues a high-entropy url-safe ctx_ token stored only as a hash, expiring after 90 days", async () => {
    const { res, sessionId, token } = await agentWithToken();
    expect(res.status).toBe(200);
    expect(token).toMatch(/^ctx_[A-Za-z0-9_-]{43}$/);
    expect(res.body).toMatchObject({ session_id: sessionId, content_url: contentUrl });
    const days = (Date.parse(res.body.expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(89.99);
    expect(days).toBeLessThan(90.01);
    const { ctx } = await testRuntime();
    const rows = await ctx.sql`SELECT token_hash FROM click_tokens WHERE session_id = ${sessionId}::uuid`;
    expect(rows).toHaveLength(1);
    expect(Buffer.from(rows[0]?.token_hash).equals(Buffer.from(sha256(token)))).toBe(true);
  });

  test("the token is shown once: its answer is not to be stored by any cache", async () => {
    const { res } = await agentWithToken();
    expect([res.status, res.headers.get("cache-control")]).toEqual([200, "no-store"]);
  });

  test("two tokens for the same session differ", async () => {
    const { agent, sessionId, token } = await agentWithToken();
    const again = await call("POST", "/click-tokens", {
      key: agent.key,
      body: { session_id: sessionId, content_url: contentUrl },
    });
    expect(again.body.token).not.toBe(token);
  });

  test("only for the caller's own session", async () => {
    const { sessionId } = await agentWithToken();
    const other = await createTestOrg({ type: "platform" });
    for (const session_id of [sessionId, crypto.randomUUID()]) {
      const res = await call("POST", "/click-tokens", {
        key: other.key,
        body: { session_id, content_url: contentUrl },
      });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("session_not_found");
    }
  });

  test("content-owner keys cannot issue tokens", async () => {
    const owner = await createTestOrg();
    const res = await call("POST", "/click-tokens", {
      key: owner.key,
      body: { session_id: crypto.randomUUID(), content_url: contentUrl },
    });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("platform_key_required");
  });

  test("content_url must be an http(s) URL as written, without credentials", async () => {
    const { agent, sessionId } = await agentWithToken();
    for (const content_url of [
      "javascript:alert(1)",
      "https://user:pw@news.example.com/x",
      " https://news.example.com/x",
      "https:\\\\evil.example\\x",
    ]) {
      const res = await call("POST", "/click-tokens", { key: agent.key, body: { session_id: sessionId, content_url } });
      expect([res.status, res.body.errors?.[0]?.path]).toEqual([400, "/content_url"]);
    }
  });
});

describe("ctx_token on events", () => {
  test("an engagement reported by another organisation resolves to the token's session", async () => {
    const { sessionId, token } = await agentWithToken();
    const network = await createTestOrg({ type: "platform" });
    const res = await call("POST", "/events", {
      key: network.key,
      body: batch([
        validEvents.engaged("shop.example.net", { presentation_id: undefined, ctx_token: token }),
        validEvents.checkout({ ctx_token: token }),
      ]),
    });
    expect(res.status).toBe(200);
    expect(res.body.events_created).toBe(2);
    const stored = await storedEvents(network.id);
    expect(stored.map((e) => e.session_id)).toEqual([sessionId, sessionId]);
    expect(stored.every((e) => e.org_id === network.id && e.agent_id === "assistant-3")).toBe(true);
  });

  test("a token of a session whose name another organisation's session has carries engagement to the right session", async () => {
    const first = await createTestOrg({ type: "agent" });
    const name = (await call("POST", "/sessions/start", { key: first.key, body: {} })).body.session_id as string;
    const agent = await createTestOrg({ type: "agent" });
    await call("POST", "/events", {
      key: agent.key,
      body: batch([validEvents.retrieved("shop.example.net")], { session_id: name, agent_id: "assistant-7" }),
    });
    const issued = await call("POST", "/click-tokens", {
      key: agent.key,
      body: { session_id: name, content_url: contentUrl },
    });
    expect(issued.body.session_id).toBe(name);
    const network = await createTestOrg({ type: "platform" });
    const res = await call("POST", "/events", {
      key: network.key,
      body: batch([validEvents.checkout({ ctx_token: issued.body.token })]),
    });
    expect(res.status).toBe(200);
    // The issuer may name its session as well as the token: by the name it gave it.
    const own = await call("POST", "/events", {
      key: agent.key,
      body: batch([validEvents.checkout({ ctx_token: issued.body.token, session_id: name })]),
    });
    expect(own.status).toBe(200);
    const [agentsEvent, ownCheckout] = await storedEvents(agent.id);
    const [engagement] = await storedEvents(network.id);
    expect(agentsEvent?.session_id).not.toBe(name);
    expect(engagement).toMatchObject({ session_id: agentsEvent?.session_id, agent_id: "assistant-7" });
    expect(ownCheckout?.session_id).toBe(agentsEvent?.session_id as string);
  });

  test("a token's holder learns nothing of its session id: with the token, any session_id of its own is refused alike", async () => {
    const { agent, sessionId, token } = await agentWithToken();
    const network = await createTestOrg({ type: "platform" });
    const answer = async (session_id: string) => {
      const res = await call("POST", "/events", {
        key: network.key,
        body: batch([validEvents.checkout({ ctx_token: token, session_id })]),
      });
      const { code, detail, errors, invalid_events } = res.body;
      return { status: res.status, code, detail, errors, invalid_events };
    };
    const guesses = [await answer(crypto.randomUUID()), await answer(sessionId), await answer(sessionId.toUpperCase())];
    expect(guesses[0]?.status).toBe(400);
    expect(guesses[0]?.errors).toEqual([
      { path: "/events/0/ctx_token", message: "belongs to a different session than session_id" },
    ]);
    expect(guesses.slice(1)).toEqual([guesses[0], guesses[0]] as typeof guesses);
    expect(await storedEvents(network.id)).toEqual([]);
    // The token's issuer names its own session.
    const own = await call("POST", "/events", {
      key: agent.key,
      body: batch([validEvents.checkout({ ctx_token: token, session_id: sessionId })]),
    });
    expect(own.status).toBe(200);
  });

  test("the network that reports a click never reads the agent's session id back; the agent does", async () => {
    const { agent, sessionId, token } = await agentWithToken();
    const network = await createTestOrg({ type: "platform" });
    const sent = await call("POST", "/events", {
      key: network.key,
      body: batch([validEvents.checkout()], { ctx_token: token }),
    });
    expect(sent.status).toBe(200);
    const listed = async (key: string) => {
      const page = await call("GET", "/agent/events", { key });
      const exported = await call("GET", "/agent/export?format=ndjson", { key });
      // One NDJSON line reads as one JSON document.
      const lines =
        typeof exported.body === "string"
          ? exported.body
              .trim()
              .split("\n")
              .map((line) => JSON.parse(line))
          : [exported.body];
      const exportedIds = lines.map((line: { session_id: string | null }) => line.session_id);
      return { page: page.body.items.map((item: { session_id: string | null }) => item.session_id), exportedIds };
    };
    expect(await listed(network.key)).toEqual({ page: [null], exportedIds: [null] });
    // The click is stored in the agent's session all the same: the agent's own events name it.
    await call("POST", "/events", {
      key: agent.key,
      body: batch([validEvents.retrieved("shop.example.net", { source_role: "agent" })], { session_id: sessionId }),
    });
    expect(await listed(agent.key)).toEqual({ page: [sessionId], exportedIds: [sessionId] });
  });

  test("an envelope ctx_token applies to every event of the batch", async () => {
    const { sessionId, token } = await agentWithToken();
    const network = await createTestOrg({ type: "platform" });
    const res = await call("POST", "/events", {
      key: network.key,
      body: batch([validEvents.checkout()], { ctx_token: token }),
    });
    expect(res.status).toBe(200);
    expect((await storedEvents(network.id))[0]?.session_id).toBe(sessionId);
  });

  test("an unknown, malformed or expired token is an error for that event", async () => {
    const { token } = await agentWithToken();
    const { ctx } = await testRuntime();
    const expired = await agentWithToken();
    await ctx.sql`UPDATE click_tokens SET expires_at = now() - interval '1 second' WHERE token_hash = ${sha256(expired.token)}`;
    const network = await createTestOrg({ type: "platform" });
    const res = await call("POST", "/events", {
      key: network.key,
      body: batch([
        validEvents.checkout({ ctx_token: token }),
        validEvents.checkout({ ctx_token: `ctx_${"q".repeat(43)}` }),
        validEvents.checkout({ ctx_token: "ctx_short" }),
        validEvents.checkout({ ctx_token: expired.token }),
        // Empty is no token at all, not a token that binds nothing.
        validEvents.checkout({ ctx_token: "" }),
      ]),
    });
    expect(res.status).toBe(400);
    expect(res.body.invalid_events).toEqual([1, 2, 3, 4]);
    const malformed = "must be a click token: ctx_ and 43 characters of A-Z, a-z, 0-9, _ or -";
    expect(res.body.errors.map((e: { path: string; message: string }) => [e.path, e.message])).toEqual([
      ["/events/1/ctx_token", "unknown or expired click token"],
      ["/events/2/ctx_token", malformed],
      ["/events/3/ctx_token", "unknown or expired click token"],
      ["/events/4/ctx_token", malformed],
    ]);
    expect(await storedEvents(network.id)).toEqual([]);
    const emptyEnvelope = await call("POST", "/events", {
      key: network.key,
      body: batch([validEvents.checkout({})], { ctx_token: "" }),
    });
    expect([emptyEnvelope.status, emptyEnvelope.body.errors]).toEqual([
      400,
      [{ path: "/ctx_token", message: malformed }],
    ]);
  });

  test("an engagement reported with a token lies on the site of the token's link, or is refused at content_url", async () => {
    const { sessionId, token } = await agentWithToken();
    const network = await createTestOrg({ type: "platform" });
    const click = (content_url: string) =>
      validEvents.engaged("shop.example.net", { presentation_id: undefined, ctx_token: token, content_url });
    const offSite = await call("POST", "/events", {
      key: network.key,
      body: batch([
        click("https://other.probe-example.org/z"),
        click("https://example.org/product/42"),
        click("https://shop.example.net.probe-example.org/product/42"),
      ]),
    });
    expect([offSite.status, offSite.body.invalid_events]).toEqual([400, [0, 1, 2]]);
    expect(offSite.body.errors.map((e: { path: string }) => e.path)).toEqual([
      "/events/0/content_url",
      "/events/1/content_url",
      "/events/2/content_url",
    ]);
    expect(offSite.body.errors[0].message).toContain("another site than the link the ctx_token was issued for");
    // The link itself, with its ctx parameter, or where a redirect within its site led.
    const onSite = await call("POST", "/events", {
      key: network.key,
      body: batch([
        click(`${contentUrl}?ctx=${token}`),
        click("https://www.example.net/product/42"),
        click("http://SHOP.example.net:8080/p"),
      ]),
    });
    expect([onSite.status, onSite.body.events_created]).toEqual([200, 3]);
    expect((await storedEvents(network.id)).map((e) => e.session_id)).toEqual(Array(3).fill(sessionId));
  });

  test("each report of a click is stored and counted; only a retry (same id and timestamp) is not", async () => {
    const { sessionId, token } = await agentWithToken();
    const network = await createTestOrg({ type: "platform" });
    const report = async (extra: Record<string, unknown>) =>
      (
        await call("POST", "/events", {
          key: network.key,
          body: batch([validEvents.engaged("shop.example.net", { presentation_id: undefined, ...extra })], {
            ctx_token: token,
          }),
        })
      ).body.events_created;
    const click = { id: crypto.randomUUID(), timestamp: ago(30) };
    const counted = [
      await report({ id: undefined }),
      await report({ id: undefined }),
      await report(click),
      await report(click),
      await report({ ...click, timestamp: ago(20) }),
    ];
    expect(counted).toEqual([1, 1, 1, 0, 1]);
    const stored = await storedEvents(network.id);
    expect(stored.map((e) => e.session_id)).toEqual(Array(4).fill(sessionId));
  });

  test("a content owner reports the clicks of tokens issued for its own site, not another site's", async () => {
    const owner = await createTestOrg();
    const agent = await createTestOrg({ type: "agent" });
    const { body: session } = await call("POST", "/sessions/start", { key: agent.key, body: {} });
    const mint = async (content_url: string) =>
      (await call("POST", "/click-tokens", { key: agent.key, body: { session_id: session.session_id, content_url } }))
        .body.token as string;
    const ownLanding = `https://${owner.domain}/landing`;
    const report = async (token: string) =>
      call("POST", "/events", {
        key: owner.key,
        body: batch(
          [validEvents.engaged(owner.domain as string, { presentation_id: undefined, content_url: ownLanding })],
          { ctx_token: token },
        ),
      });
    expect((await report(await mint(ownLanding))).status).toBe(200);
    const foreign = await report(await mint(contentUrl));
    expect([foreign.status, foreign.body.errors?.[0]?.path]).toEqual([400, "/events/0/content_url"]);
  });

  test("a ctx_token and a session_id naming different sessions are refused", async () => {
    const { agent, token } = await agentWithToken();
    const res = await call("POST", "/events", {
      key: agent.key,
      body: batch([validEvents.checkout({ ctx_token: token, session_id: crypto.randomUUID() })]),
    });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].path).toBe("/events/0/ctx_token");
  });
});
