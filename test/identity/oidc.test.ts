import { beforeAll, describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { sha256 } from "../../src/core/secrets.ts";
import { purgeExpiredSignIns } from "../../src/modules/auth/purge.ts";
import { buildIdentityApp, callIdentity, uniqueEmail } from "../support/identity.ts";
import { type ClaimOverrides, startOidcProvider } from "../support/oidc-provider.ts";
import { testRuntime } from "../support/runtime.ts";

const base = "/api/v1/identity/auth";
const client = { id: "telemetry-app", secret: "s3cret" };
let provider: Awaited<ReturnType<typeof startOidcProvider>>;
let app: Awaited<ReturnType<typeof buildIdentityApp>>["app"];

beforeAll(async () => {
  provider = await startOidcProvider(client);
  ({ app } = await buildIdentityApp({
    OIDC_PROVIDERS: JSON.stringify([
      { id: "local", issuer: provider.issuer, client_id: client.id, client_secret: client.secret },
    ]),
  }));
});

/**
 * One browser at the app: it keeps the binding cookie its first sign-in start
 * gave it, and sends it on every later request, as a browser would.
 */
function aBrowser(on = () => app) {
  let cookie: string | undefined;
  const headers = (extra: Record<string, string> = {}) => ({ ...extra, ...(cookie ? { cookie } : {}) });
  return {
    /** Starts a sign-in and returns the provider URL the app redirects to. */
    async start(providerId = "local"): Promise<string> {
      const res = await callIdentity("GET", `${base}/oidc/${providerId}/start`, { app: on(), headers: headers() });
      expect(res.status).toBe(302);
      cookie ??= /^(svc_oidc_browser=[^;]+)/.exec(res.headers.get("set-cookie") ?? "")?.[1];
      return res.headers.get("location") ?? "";
    },
    get: (path: string, extra?: Record<string, string>) =>
      callIdentity("GET", path, { app: on(), headers: headers(extra) }),
  };
}

async function signInWith(options: { claims?: ClaimOverrides; signWithStrangerKey?: boolean } = {}) {
  const browser = aBrowser();
  return browser.get(provider.approve(await browser.start(), options));
}

describe("OAuth / OpenID Connect sign-in", () => {
  test("lists the configured providers", async () => {
    const res = await callIdentity("GET", `${base}/oidc/providers`, { app });
    // At PUBLIC_BASE_URL, where the callback comes back: a start at another host's name would set its cookie there.
    expect(res.body.items).toEqual([
      { id: "local", issuer: provider.issuer, start_url: `http://localhost:3000${base}/oidc/local/start` },
    ]);
  });

  test("start redirects to the provider with PKCE S256, state and nonce", async () => {
    const location = new URL(await aBrowser().start());
    expect(`${location.origin}${location.pathname}`).toBe(`${provider.issuer}/authorize`);
    const params = location.searchParams;
    expect(params.get("response_type")).toBe("code");
    expect(params.get("client_id")).toBe(client.id);
    expect(params.get("redirect_uri")).toBe(`http://localhost:3000${base}/oidc/local/callback`);
    expect(params.get("code_challenge_method")).toBe("S256");
    expect(params.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.get("state")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.get("nonce")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.get("scope")).toBe("openid email");
  });

  test("a verified ID token signs the user in with a session", async () => {
    const email = uniqueEmail("oidc");
    const res = await signInWith({ claims: { email } });
    expect(res.status).toBe(200);
    expect(res.body.user.email).toBe(email);
    expect(res.headers.get("set-cookie")).toContain("HttpOnly");
    const me = await callIdentity("GET", `${base}/session`, { app, session: res.body.session_token });
    expect(me.body.user.email).toBe(email);
  });

  test("a token signed with a key the provider has just rotated in is verified at once, its key set fetched again", async () => {
    expect((await signInWith({ claims: { email: uniqueEmail("before") } })).status).toBe(200);
    await provider.rotateKey();
    const res = await signInWith({ claims: { email: uniqueEmail("after") } });
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
  });

  test("a state is single-use, and deleted with its verifier and nonce once used; unknown states and provider errors are refused", async () => {
    const browser = aBrowser();
    const location = await browser.start();
    const callback = provider.approve(location, { claims: { email: uniqueEmail() } });
    expect((await browser.get(callback)).status).toBe(200);
    expect((await browser.get(callback)).status).toBe(401);
    const state = new URL(location).searchParams.get("state") ?? "";
    const { ctx } = await testRuntime();
    expect((await ctx.sql`SELECT 1 FROM oidc_login_states WHERE state_hash = ${sha256(state)}`).length).toBe(0);
    expect((await browser.get(`${base}/oidc/local/callback?code=x&state=unknown`)).status).toBe(401);
    expect((await browser.get(`${base}/oidc/local/callback?error=access_denied`)).status).toBe(401);
    expect((await browser.get(`${base}/oidc/local/callback`)).status).toBe(401);
  });

  test("the purge deletes states whose ten minutes are over, and keeps the others", async () => {
    const stateOf = async () => sha256(new URL(await aBrowser().start()).searchParams.get("state") ?? "");
    const [expired, live] = [await stateOf(), await stateOf()];
    const { ctx } = await testRuntime();
    await ctx.sql`UPDATE oidc_login_states SET expires_at = now() - interval '1 second' WHERE state_hash = ${expired}`;
    await purgeExpiredSignIns(ctx.sql);
    const left = await ctx.sql<{ state_hash: Uint8Array }[]>`
      SELECT state_hash FROM oidc_login_states WHERE state_hash IN (${expired}, ${live})`;
    expect(left.map((row) => Buffer.from(row.state_hash).toString("hex"))).toEqual([Buffer.from(live).toString("hex")]);
  });

  test("only the browser that started a sign-in can finish it (login CSRF)", async () => {
    // An attacker starts a sign-in with their own account, and has a victim's browser open the callback.
    const attacker = aBrowser();
    const callback = provider.approve(await attacker.start(), { claims: { email: uniqueEmail("attacker") } });
    const victim = aBrowser();
    await victim.start();
    const inVictim = await victim.get(callback);
    expect(inVictim.status).toBe(401);
    expect(inVictim.headers.get("set-cookie")).toBeNull();
    expect(inVictim.body.detail).toContain("started in another browser");
    const withoutCookie = await callIdentity("GET", callback, { app });
    expect(withoutCookie.status).toBe(401);
    expect(withoutCookie.body.detail).toContain("no sign-in cookie");
    // The browser that started it still can, and one browser may have several sign-ins in flight.
    const second = provider.approve(await attacker.start(), { claims: { email: uniqueEmail() } });
    expect((await attacker.get(callback)).status).toBe(200);
    expect((await attacker.get(second)).status).toBe(200);
  });

  test("the binding cookie goes back only to the sign-in routes, for as long as a sign-in may take", async () => {
    const res = await callIdentity("GET", `${base}/oidc/local/start`, { app });
    const cookie = res.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^svc_oidc_browser=[A-Za-z0-9_-]{43}; /);
    for (const part of ["Path=/api/v1/identity/auth/oidc/", "HttpOnly", "SameSite=Lax", "Max-Age=600", "Secure"]) {
      expect(cookie).toContain(part);
    }
  });

  test.each([
    ["a nonce from another sign-in", { claims: { nonce: "other" } }],
    ["another audience", { claims: { aud: "someone-else" } }],
    ["another issuer", { claims: { iss: "http://127.0.0.1:1" } }],
    ["an expired token", { claims: { exp: Math.floor(Date.now() / 1000) - 600 } }],
    ["a key not in the provider's JWKS", { signWithStrangerKey: true }],
    ["an unverified e-mail", { claims: { email_verified: false } }],
    // Users are found by e-mail (and operator admins allowlisted by it): silence is not a guarantee.
    ["an e-mail the provider does not say it verified", { claims: { email_verified: null } }],
    ["no e-mail", { claims: { email: null } }],
    ["no subject", { claims: { sub: null } }],
    ["a subject over OpenID Connect's 255 characters", { claims: { sub: "s".repeat(256) } }],
    ["an e-mail that is no address", { claims: { email: "abc" } }],
    ["an e-mail over 254 characters", { claims: { email: `${"a".repeat(64)}@${"b".repeat(200)}.test` } }],
    ["another audience beside the app, and no authorised party", { claims: { aud: [client.id, "someone-else"] } }],
    ["another authorised party", { claims: { azp: "someone-else" } }],
    ["an issue time in the future", { claims: { iat: Math.floor(Date.now() / 1000) + 3600 } }],
    ["an issue time long past", { claims: { iat: Math.floor(Date.now() / 1000) - 3600 } }],
  ])("refuses an ID token with %s", async (_, options) => {
    const res = await signInWith(options);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("unauthorized");
  });

  test.each([
    ["a not-before a few seconds ahead of the service's clock", { nbf: Math.floor(Date.now() / 1000) + 5 }],
    ["several audiences, the app named as the authorised party", { aud: [client.id, "other"], azp: client.id }],
    ['email_verified sent as the string "true"', { email_verified: "true" }],
  ])("accepts an ID token with %s", async (_, claims) => {
    const res = await signInWith({ claims: { email: uniqueEmail(), ...claims } });
    expect(res.status).toBe(200);
  });

  test("a public client (no secret) signs in with PKCE alone", async () => {
    const publicProvider = await startOidcProvider({ id: "public-app" });
    const { app: publicApp } = await buildIdentityApp({
      OIDC_PROVIDERS: JSON.stringify([{ id: "local", issuer: publicProvider.issuer, client_id: "public-app" }]),
    });
    const browser = aBrowser(() => publicApp);
    const res = await browser.get(publicProvider.approve(await browser.start(), { claims: { email: uniqueEmail() } }));
    expect(res.status).toBe(200);
  });

  test("later sign-ins follow the provider's account (its subject), not the e-mail it now sends", async () => {
    const sub = crypto.randomUUID();
    const email = uniqueEmail("first");
    const first = await signInWith({ claims: { sub, email } });
    expect(first.status).toBe(200);
    const renamed = await signInWith({ claims: { sub, email: uniqueEmail("renamed") } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.user).toEqual(first.body.user);
    expect(renamed.body.user.email).toBe(email);
  });

  test("an e-mail already linked to one account at the provider cannot be claimed by another account", async () => {
    const email = uniqueEmail("taken");
    const ownerSub = crypto.randomUUID();
    const owner = await signInWith({ claims: { sub: ownerSub, email } });
    expect(owner.status).toBe(200);
    const other = await signInWith({ claims: { sub: crypto.randomUUID(), email } });
    expect(other.status).toBe(401);
    expect(other.body.detail).toContain("another account at this provider");
    const again = await signInWith({ claims: { sub: ownerSub, email } });
    expect(again.status).toBe(200);
    expect(again.body.user).toEqual(owner.body.user);
  });

  test("a user can unlink their provider account, so a re-created account with the same e-mail can sign in", async () => {
    const email = uniqueEmail("recreated");
    const first = await signInWith({ claims: { sub: crypto.randomUUID(), email } });
    expect(first.status).toBe(200);
    const recreatedSub = crypto.randomUUID();
    expect((await signInWith({ claims: { sub: recreatedSub, email } })).status).toBe(401);

    // The user signs in another way (a link to the same address) and unlinks.
    const session = first.body.session_token;
    const unlink = () => callIdentity("DELETE", `${base}/oidc/local/link`, { app, session });
    expect((await unlink()).status).toBe(204);
    expect((await unlink()).body).toMatchObject({ status: 404, code: "oidc_link_not_found" });
    expect((await callIdentity("DELETE", `${base}/oidc/local/link`, { app })).status).toBe(401);

    const recreated = await signInWith({ claims: { sub: recreatedSub, email } });
    expect(recreated.status).toBe(200);
    expect(recreated.body.user).toEqual(first.body.user);
  });

  test("a code redeemed with another PKCE verifier is refused by the provider", async () => {
    const browser = aBrowser();
    const first = await browser.start();
    const second = await browser.start();
    // The user approves the first sign-in, but the code comes back with the second's state.
    const callback = new URL(provider.approve(first, { claims: { email: uniqueEmail() } }), "http://x");
    callback.searchParams.set("state", new URL(second).searchParams.get("state") ?? "");
    const res = await browser.get(`${callback.pathname}${callback.search}`);
    expect(res.status).toBe(401);
    expect(res.body.detail).toContain("invalid_grant");
  });

  test("unknown providers are 404", async () => {
    expect((await callIdentity("GET", `${base}/oidc/nope/start`, { app })).status).toBe(404);
    expect((await callIdentity("GET", `${base}/oidc/nope/callback?code=a&state=b`, { app })).status).toBe(404);
    expect((await callIdentity("GET", `${base}/oidc/local/start`)).status).toBe(404);
  });

  test("a malformed OIDC_PROVIDERS setting stops start-up, naming what is wrong", () => {
    for (const value of ["{", '[{"id":"x"}]', '[{"id":"Bad Id","issuer":"https://a","client_id":"c"}]']) {
      expect(() => loadConfig({ OIDC_PROVIDERS: value })).toThrow(ConfigError);
    }
    const provider = { id: "a", issuer: "https://a", client_id: "c" };
    for (const [changes, named] of [
      [{ client_secrett: "s" }, "OIDC_PROVIDERS/0/client_secrett"],
      [{ issuer: "https://" }, "OIDC_PROVIDERS/0/issuer is not a URL"],
      [{ issuer: "https://a b" }, "OIDC_PROVIDERS/0/issuer is not a URL"],
      [{ scopes: "email profile" }, "OIDC_PROVIDERS/0/scopes must include openid"],
    ] as const) {
      expect(() => loadConfig({ OIDC_PROVIDERS: JSON.stringify([{ ...provider, ...changes }]) })).toThrow(named);
    }
    expect(() =>
      loadConfig({ OIDC_PROVIDERS: JSON.stringify([{ ...provider, scopes: "email openid" }]) }),
    ).not.toThrow();
    const twice = JSON.stringify([1, 2].map(() => ({ id: "a", issuer: "https://a", client_id: "c" })));
    expect(() => loadConfig({ OIDC_PROVIDERS: twice })).toThrow(ConfigError);
  });

  test("other identity settings are checked at start too", () => {
    for (const env of [
      { SIGN_IN_PURGE_CRON: "every hour" },
      { PUBLIC_BASE_URL: "localhost:3000" },
      { PUBLIC_BASE_URL: "https://svc.example/path" },
      { SMTP_URL: "http://mail" },
      { SESSION_TTL_HOURS: "0" },
      { MAGIC_LINK_TTL_MINUTES: "61" },
    ]) {
      expect(() => loadConfig(env)).toThrow(ConfigError);
    }
  });
});

describe("a sign-in provider that misbehaves", () => {
  const unreliable = { id: "unreliable-app", secret: "other-s3cret" };
  let misbehaving: Awaited<ReturnType<typeof startOidcProvider>>;
  beforeAll(async () => {
    misbehaving = await startOidcProvider(unreliable);
  });

  /** A new app (nothing discovered yet) with the misbehaving provider, and a browser at it. */
  async function freshApp() {
    const built = await buildIdentityApp({
      OIDC_PROVIDERS: JSON.stringify([
        { id: "local", issuer: misbehaving.issuer, client_id: unreliable.id, client_secret: unreliable.secret },
      ]),
    });
    return aBrowser(() => built.app);
  }

  const discovery = "/.well-known/openid-configuration";
  const usable = () => ({
    issuer: misbehaving.issuer,
    authorization_endpoint: `${misbehaving.issuer}/authorize`,
    token_endpoint: `${misbehaving.issuer}/token`,
    jwks_uri: `${misbehaving.issuer}/jwks`,
  });

  test.each([
    ["JSON null", () => null, "must be an object"],
    ["a key set address that is no URL", () => ({ ...usable(), jwks_uri: "not a url" }), "jwks_uri is not"],
    [
      "an authorization endpoint that is a number",
      () => ({ ...usable(), authorization_endpoint: 5 }),
      "must be an object",
    ],
    ["another issuer", () => ({ ...usable(), issuer: `${misbehaving.issuer}/` }), "not the configured"],
  ])("a discovery document of %s is 503 at the start, and is not kept", async (_, document, why) => {
    const browser = await freshApp();
    misbehaving.replaceAnswer(discovery, () => Response.json(document()));
    try {
      const res = await browser.get(`${base}/oidc/local/start`);
      expect(res.status).toBe(503);
      expect(res.body.code).toBe("oidc_provider_unavailable");
      expect(res.body.detail).toContain(why);
    } finally {
      misbehaving.replaceAnswer(discovery, undefined);
    }
    expect(new URL(await browser.start()).pathname).toBe("/authorize");
  });

  test.each([
    ["a token endpoint answering JSON null", "/token", () => Response.json(null)],
    [
      "a token endpoint answering 503",
      "/token",
      () => Response.json({ error: "temporarily_unavailable" }, { status: 503 }),
    ],
    ["a token endpoint answering a JSON array", "/token", () => Response.json([])],
    ["a key set answering 500", "/jwks", () => new Response("down", { status: 500 })],
    ["a key set that is not one", "/jwks", () => Response.json({ nope: 1 })],
  ])("%s is 503 at the callback", async (_, path, respond) => {
    const browser = await freshApp();
    const callback = misbehaving.approve(await browser.start(), { claims: { email: uniqueEmail() } });
    misbehaving.replaceAnswer(path, respond);
    try {
      const res = await browser.get(callback);
      expect(res.status).toBe(503);
      expect(res.body.code).toBe("oidc_provider_unavailable");
    } finally {
      misbehaving.replaceAnswer(path, undefined);
    }
  });

  test("a token endpoint's 4xx refuses the code, whatever its body: 401", async () => {
    const browser = await freshApp();
    const callback = misbehaving.approve(await browser.start(), { claims: { email: uniqueEmail() } });
    misbehaving.replaceAnswer("/token", () => new Response("<html>bad request</html>", { status: 400 }));
    try {
      const res = await browser.get(callback);
      expect([res.status, res.body.detail]).toEqual([401, "the provider refused the code: 400"]);
    } finally {
      misbehaving.replaceAnswer("/token", undefined);
    }
  });

  test("a person in a browser is told in a page how to start again, at the start and at the callback", async () => {
    const browser = await freshApp();
    const html = { accept: "text/html" };
    misbehaving.replaceAnswer(discovery, () => new Response("down", { status: 502 }));
    try {
      const start = await browser.get(`${base}/oidc/local/start`, html);
      expect(start.status).toBe(503);
      expect(start.headers.get("content-type")).toStartWith("text/html");
      expect(start.body).toContain("This sign-in did not complete");
    } finally {
      misbehaving.replaceAnswer(discovery, undefined);
    }
    const refused = await browser.get(`${base}/oidc/local/callback?code=a&state=b`, html);
    expect(refused.status).toBe(401);
    expect(refused.body).toContain("This sign-in did not complete");
    expect(refused.body).toContain("Start again");
    expect(refused.body).not.toContain("Each link works once");
  });
});
