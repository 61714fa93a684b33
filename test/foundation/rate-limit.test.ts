import { describe, expect, test } from "bun:test";
import { createApp } from "../../src/app.ts";
import { RateLimiter } from "../../src/http/rate-limit.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { callApp } from "../support/http.ts";
import { signIn } from "../support/identity.ts";
import { testRuntime } from "../support/runtime.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";
import { storedEvents } from "../support/telemetry-store.ts";

/** Every kind of route at 1 request per second, with bursts of 2. */
const onePerSecond = { ingest: 1, read: 1, click_lookup: 1, control: 1, public: 1, failed_auth: 1 };

/** A clock the test moves by hand, in milliseconds. */
function manualClock() {
  let now = 0;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

/**
 * Runs `use` against a listening app (so requests have a client address) whose
 * limits are 1 request per second, with bursts of 2.
 */
async function withLimitedServer(use: (base: string) => Promise<void>): Promise<void> {
  const app = createApp({
    ...(await testRuntime()).ctx,
    rateLimiter: new RateLimiter(onePerSecond, manualClock().now),
  });
  app.listen({ port: 0, hostname: "127.0.0.1" });
  try {
    await use(`http://127.0.0.1:${app.server?.port}`);
  } finally {
    await app.stop();
  }
}

describe("token buckets", () => {
  test("a caller gets a burst of twice the rate, then the rate; refused requests say when to retry", () => {
    const clock = manualClock();
    const limiter = new RateLimiter({ ...onePerSecond, ingest: 5 }, clock.now);
    const taken = Array.from({ length: 10 }, () => limiter.take("ingest", "k")?.allowed);
    expect(taken).toEqual(Array(10).fill(true));
    expect(limiter.take("ingest", "k")).toEqual({
      allowed: false,
      limit: 10,
      remaining: 0,
      resetSeconds: 2,
      retryAfterSeconds: 1,
    });
    clock.advance(200); // one more request's worth at 5 per second
    expect(limiter.take("ingest", "k")?.allowed).toBe(true);
    expect(limiter.take("ingest", "k")?.allowed).toBe(false);
    clock.advance(60_000); // refills to the burst, never past it
    expect(limiter.take("ingest", "k")).toMatchObject({ allowed: true, limit: 10, remaining: 9 });
  });

  test("callers and kinds of route have separate buckets; a rate of 0 is no limit", () => {
    const limiter = new RateLimiter({ ...onePerSecond, control: 0 }, manualClock().now);
    for (let i = 0; i < 2; i++) limiter.take("read", "a");
    expect(limiter.take("read", "a")?.allowed).toBe(false);
    expect(limiter.take("read", "b")?.allowed).toBe(true);
    expect(limiter.take("ingest", "a")?.allowed).toBe(true);
    expect(limiter.take("control", "a")).toBeUndefined();
  });
});

describe("rate limits over HTTP", () => {
  // An app on the shared database whose limits are 1 request per second (bursts of 2).
  const clock = manualClock();
  const limitedApp = testRuntime().then(({ ctx }) =>
    createApp({ ...ctx, rateLimiter: new RateLimiter(onePerSecond, clock.now) }),
  );
  const send = async (method: string, path: string, options: Parameters<typeof callApp>[3] = {}) =>
    callApp(await limitedApp, method, path, options);

  test("ingest past the limit is 429 with Retry-After, and the refused batch is not stored", async () => {
    const org = await createTestOrg();
    const domain = org.domain as string;
    const oneEvent = () => batch([validEvents.retrieved(domain)], { session_id: crypto.randomUUID() });
    for (let i = 0; i < 2; i++) {
      const accepted = await send("POST", "/events", { key: org.key, body: oneEvent() });
      expect(accepted.status).toBe(200);
      expect(accepted.headers.get("ratelimit-limit")).toBe("2");
      expect(accepted.headers.get("ratelimit-remaining")).toBe(String(1 - i));
    }
    const refused = await send("POST", "/events", { key: org.key, body: oneEvent() });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(refused.body).toMatchObject({ status: 429, code: "rate_limited", limit_class: "ingest" });
    expect(refused.body.detail).toContain("1 ingest requests per second");
    expect(await storedEvents(org.id)).toHaveLength(2);

    // Reads count separately from ingest, and another key of the same organisation has its own bucket.
    expect((await send("GET", "/content-owners/summary", { key: org.key })).status).toBe(200);
    const otherKey = await org.keyWith(null);
    expect((await send("POST", "/events", { key: otherKey, body: oneEvent() })).status).toBe(200);

    clock.advance(1000);
    expect((await send("POST", "/events", { key: org.key, body: oneEvent() })).status).toBe(200);
  });

  test("reads and the control plane are limited per credential; a signed-in user per user", async () => {
    const org = await createTestOrg();
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await send("GET", "/content-owners/urls", { key: org.key })).status);
    expect(statuses).toEqual([200, 200, 429]);

    const { session } = await signIn();
    const whoAmI = () =>
      send("GET", "/api/v1/identity/auth/session", { headers: { authorization: `Bearer ${session}` } });
    const sessionStatuses = [(await whoAmI()).status, (await whoAmI()).status, (await whoAmI()).status];
    expect(sessionStatuses).toEqual([200, 200, 429]);
  });

  test("click-manifest lookups are limited per key, apart from reads", async () => {
    const network = await createTestOrg({ type: "platform" });
    const lookup = () => send("GET", `/ctx/ctx_${"a".repeat(43)}`, { key: network.key });
    const statuses = [(await lookup()).status, (await lookup()).status];
    const refused = await lookup();
    expect([...statuses, refused.status]).toEqual([404, 404, 429]);
    expect(refused.body).toMatchObject({ code: "rate_limited", limit_class: "click_lookup" });
    // The key's read bucket is its own, and another key of the network has a bucket of its own.
    expect((await send("GET", "/click-tokens/lookups", { key: network.key })).status).toBe(200);
    expect((await send("GET", `/ctx/ctx_${"a".repeat(43)}`, { key: await network.keyWith(null) })).status).toBe(404);
  });

  test("routes without a credential are limited per client address; health checks are not limited", async () => {
    await withLimitedServer(async (base) => {
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await fetch(`${base}/resolve?domain=example.org`)).status);
      expect(statuses).toEqual([200, 200, 429]);
      const refused = await fetch(`${base}/resolve?domain=example.org`);
      expect(refused.headers.get("retry-after")).toBe("1");
      expect(await refused.json()).toMatchObject({ code: "rate_limited", limit_class: "public" });
      const health = await Promise.all(Array.from({ length: 5 }, () => fetch(`${base}/health`)));
      expect(health.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    });
  });

  test("failed authentications are limited per client address, before the database is asked", async () => {
    const owner = await createTestOrg();
    const { session } = await signIn();
    await withLimitedServer(async (base) => {
      const summaryWith = (key?: string) =>
        fetch(`${base}/content-owners/summary`, { headers: key ? { "x-api-key": key } : {} });
      // A key this process has already authenticated is served from memory.
      expect((await summaryWith(owner.key)).status).toBe(200);
      // Requests without a credential look nothing up and are not counted here.
      const anonymous = await Promise.all([1, 2, 3, 4].map(() => summaryWith()));
      expect(anonymous.map((r) => r.status)).toEqual([401, 401, 401, 401]);
      // Twenty different guesses at once: the bucket (2) lets two reach the database.
      const guess = () => `svc_pub_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url")}`;
      const guesses = await Promise.all(Array.from({ length: 20 }, () => summaryWith(guess())));
      const statuses = guesses.map((r) => r.status).sort();
      expect(statuses).toEqual([...Array(2).fill(401), ...Array(18).fill(429)]);
      expect(await guesses.find((r) => r.status === 429)?.json()).toMatchObject({
        code: "rate_limited",
        limit_class: "failed_auth",
      });
      // Past the limit, any credential that needs a lookup waits too (a session, a
      // key not yet in memory); a cached key does not, and requests without a
      // credential have a bucket of their own.
      const whoAmI = await fetch(`${base}/api/v1/identity/auth/session`, {
        headers: { authorization: `Bearer ${session}` },
      });
      expect(whoAmI.status).toBe(429);
      expect((await summaryWith(await owner.keyWith(null))).status).toBe(429);
      expect((await summaryWith(owner.key)).status).toBe(200);
      expect((await fetch(`${base}/resolve?domain=example.org`)).status).toBe(200);
    });
  });

  test("parallel requests with one credential share a lookup, so a bucket of 2 holds up none of 40", async () => {
    const owner = await createTestOrg();
    const key = await owner.keyWith(null);
    const { session } = await signIn();
    await withLimitedServer(async (base) => {
      const byKey = await Promise.all(
        Array.from({ length: 40 }, () => fetch(`${base}/api/v1/identity/keys`, { headers: { "x-api-key": key } })),
      );
      const bySession = await Promise.all(
        Array.from({ length: 40 }, () =>
          fetch(`${base}/api/v1/identity/auth/session`, { headers: { authorization: `Bearer ${session}` } }),
        ),
      );
      // The control-plane limit (burst 2 per credential) still applies after authentication.
      const statuses = [...byKey, ...bySession].map((r) => r.status);
      expect(statuses.filter((status) => status === 429).length).toBe(76);
      for (const r of [...byKey, ...bySession].filter((r) => r.status === 429)) {
        expect(((await r.json()) as { limit_class: string }).limit_class).toBe("control");
      }
    });
  });

  test("a credential that authenticates gives its failed_auth token back", async () => {
    const owner = await createTestOrg();
    await withLimitedServer(async (base) => {
      // Fresh keys need a database lookup each; the bucket holds 2, yet all pass.
      const keys = await Promise.all([1, 2, 3, 4].map(() => owner.keyWith(null)));
      for (const key of keys) {
        const res = await fetch(`${base}/content-owners/summary`, { headers: { "x-api-key": key } });
        expect(res.status).toBe(200);
      }
    });
  });

  test("a suspended organisation's keys are refused as suspended, costing no failed_auth token", async () => {
    const { ctx } = await testRuntime();
    const owner = await createTestOrg();
    const keys = await Promise.all([1, 2, 3, 4].map(() => owner.keyWith(null)));
    await ctx.sql`UPDATE organizations SET suspended_at = now() WHERE id = ${owner.id}::uuid`;
    await withLimitedServer(async (base) => {
      // Each fresh key needs a lookup; a bucket of 2 would refuse the third with 429.
      for (const key of [...keys, ...keys]) {
        const res = await fetch(`${base}/content-owners/summary`, { headers: { "x-api-key": key } });
        expect([res.status, ((await res.json()) as { code: string }).code]).toEqual([403, "organization_suspended"]);
      }
    });
  });
});
