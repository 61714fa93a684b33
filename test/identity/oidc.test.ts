import { beforeAll, describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { buildIdentityApp, callIdentity, uniqueEmail } from "../support/identity.ts";
import { type ClaimOverrides, startOidcProvider } from "../support/oidc-provider.ts";

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

/** Starts a sign-in at the app and returns the provider URL it redirects to. */
async function start(): Promise<string> {
  const res = await callIdentity("GET", `${base}/oidc/local/start`, { app });
  expect(res.status).toBe(302);
  return res.headers.get("location") ?? "";
}

async function signInWith(options: { claims?: ClaimOverrides; signWithStrangerKey?: boolean } = {}) {
  return callIdentity("GET", provider.approve(await start(), options), { app });
}

describe("OAuth / OpenID Connect sign-in", () => {
  test("lists the configured providers", async () => {
    const res = await callIdentity("GET", `${base}/oidc/providers`, { app });
    expect(res.body.items).toEqual([{ id: "local", issuer: provider.issuer, start_url: `${base}/oidc/local/start` }]);
  });

  test("start redirects to the provider with PKCE S256, state and nonce", async () => {
    const location = new URL(await start());
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

  test("a state is single-use; unknown states and provider errors are refused", async () => {
    const callback = provider.approve(await start(), { claims: { email: uniqueEmail() } });
    expect((await callIdentity("GET", callback, { app })).status).toBe(200);
    expect((await callIdentity("GET", callback, { app })).status).toBe(401);
    expect((await callIdentity("GET", `${base}/oidc/local/callback?code=x&state=unknown`, { app })).status).toBe(401);
    expect((await callIdentity("GET", `${base}/oidc/local/callback?error=access_denied`, { app })).status).toBe(401);
    expect((await callIdentity("GET", `${base}/oidc/local/callback`, { app })).status).toBe(401);
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
  ])("refuses an ID token with %s", async (_, options) => {
    const res = await signInWith(options);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("unauthorized");
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
    const first = await start();
    const second = await start();
    // The user approves the first sign-in, but the code comes back with the second's state.
    const callback = new URL(provider.approve(first, { claims: { email: uniqueEmail() } }), "http://x");
    callback.searchParams.set("state", new URL(second).searchParams.get("state") ?? "");
    const res = await callIdentity("GET", `${callback.pathname}${callback.search}`, { app });
    expect(res.status).toBe(401);
  });

  test("unknown providers are 404", async () => {
    expect((await callIdentity("GET", `${base}/oidc/nope/start`, { app })).status).toBe(404);
    expect((await callIdentity("GET", `${base}/oidc/nope/callback?code=a&state=b`, { app })).status).toBe(404);
    expect((await callIdentity("GET", `${base}/oidc/local/start`)).status).toBe(404);
  });

  test("a malformed OIDC_PROVIDERS setting stops start-up", () => {
    for (const value of ["{", '[{"id":"x"}]', '[{"id":"Bad Id","issuer":"https://a","client_id":"c"}]']) {
      expect(() => loadConfig({ OIDC_PROVIDERS: value })).toThrow(ConfigError);
    }
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
