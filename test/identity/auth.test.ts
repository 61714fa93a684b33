import { describe, expect, test } from "bun:test";
import { sha256 } from "../../src/core/secrets.ts";
import { insecureSignInWarning } from "../../src/http/credentials.ts";
import { purgeExpiredSignIns } from "../../src/modules/auth/purge.ts";
import { createTestOrg } from "../support/fixtures.ts";
import {
  callIdentity,
  latestMagicToken,
  memberOf,
  signIn,
  signInOperatorAdmin,
  uniqueEmail,
} from "../support/identity.ts";
import { testRuntime } from "../support/runtime.ts";

const base = "/api/v1/identity/auth";

async function requestLink(email: string) {
  const res = await callIdentity("POST", `${base}/magic-link`, { body: { email } });
  expect(res.status).toBe(202);
  return latestMagicToken(email);
}

describe("magic-link sign-in", () => {
  test("mails a single-use link whose token is stored only as a hash", async () => {
    const email = uniqueEmail();
    const token = await requestLink(email);
    expect(token).toMatch(/^ml_[A-Za-z0-9_-]{43}$/);
    const { ctx } = await testRuntime();
    const rows = await ctx.sql`SELECT token_hash FROM magic_link_tokens WHERE email = ${email}`;
    expect(rows).toHaveLength(1);
    expect(Buffer.from(rows[0]?.token_hash).equals(Buffer.from(sha256(token)))).toBe(true);

    const first = await callIdentity("POST", `${base}/magic-link/verify`, { body: { token } });
    expect(first.status).toBe(200);
    expect(first.body.user.email).toBe(email);
    expect(first.body.session_token).toMatch(/^sess_[A-Za-z0-9_-]{43}$/);
    const cookie = first.headers.get("set-cookie") ?? "";
    expect(cookie).toContain(`svc_session=${first.body.session_token}`);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Lax");
    expect(cookie).toContain("Secure");

    const second = await callIdentity("POST", `${base}/magic-link/verify`, { body: { token } });
    expect(second.status).toBe(401);
    expect(second.body.code).toBe("unauthorized");
  });

  test("a client that reads the link signs in with POST /verify, and a returning address is the same user", async () => {
    const email = uniqueEmail();
    const first = await signIn(email);
    const token = await requestLink(email.toUpperCase());
    const res = await callIdentity("POST", `${base}/magic-link/verify`, { body: { token } });
    expect(res.status).toBe(200);
    expect(res.body.user.id).toBe(first.userId);
  });

  test("opening a link spends nothing, whatever the opener asks for (a mail scanner, a preview): it shows its button", async () => {
    const email = uniqueEmail("scanned");
    const token = await requestLink(email);
    const link = `${base}/magic-link/verify?token=${encodeURIComponent(token)}`;
    const scanned = await callIdentity("HEAD", link);
    expect([scanned.status, scanned.headers.get("set-cookie")]).toEqual([200, null]);
    // Scanners and unfurlers built on HTTP clients whose default Accept names JSON among others.
    for (const accept of [undefined, "*/*", "text/html", "application/json", "application/json, text/plain, */*"]) {
      const opened = await callIdentity("GET", link, { headers: accept ? { accept } : {} });
      expect([opened.status, opened.headers.get("content-type"), opened.headers.get("set-cookie")]).toEqual([
        200,
        "text/html; charset=utf-8",
        null,
      ]);
      expect(opened.body).toContain(
        `<form method="post" action="/api/v1/identity/auth/magic-link/sign-in?token=${encodeURIComponent(token)}">`,
      );
      // Named, so that someone sent another person's link can tell before pressing.
      expect(opened.body).toContain(`signs this browser in as <strong>${email}</strong>`);
    }
    const unknown = await callIdentity("GET", `${base}/magic-link/verify?token=ml_unknown`);
    expect([unknown.status, unknown.headers.get("content-type")]).toEqual([401, "text/html; charset=utf-8"]);
    expect(unknown.body).toContain("<h1>This sign-in link cannot be used</h1>");
    const spent = await callIdentity("POST", `${base}/magic-link/verify`, { body: { token } });
    expect([spent.status, spent.body.user?.email]).toEqual([200, email]);
  });

  test("in a browser the link's button signs in and goes on to the dashboard; a spent link says it cannot be used", async () => {
    const email = uniqueEmail("browser");
    const token = await requestLink(email);
    const link = `${base}/magic-link/verify?token=${encodeURIComponent(token)}`;
    const accept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    const landing = await callIdentity("GET", link, { headers: { accept } });
    expect(landing.body).toContain('<button type="submit">Sign in</button>');
    // A page that runs nothing, is framed nowhere, is cached nowhere, and sends its token-bearing address to no other site.
    expect(landing.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(landing.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(landing.headers.get("content-security-policy")).toContain("form-action 'self'");
    expect(landing.headers.get("referrer-policy")).toBe("same-origin");
    expect(landing.headers.get("cache-control")).toBe("no-store");
    expect(landing.headers.get("x-content-type-options")).toBe("nosniff");
    // What the browser sends when the button is pressed: the form's address, no fields.
    const button = `${base}/magic-link/sign-in?token=${encodeURIComponent(token)}`;
    const press = {
      headers: { accept, "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
      body: "",
    };
    const pressed = await callIdentity("POST", button, press);
    // On to the dashboard with a 303, so that reloading it posts nothing again.
    expect([pressed.status, pressed.headers.get("location")]).toEqual([303, "/app"]);
    expect(pressed.headers.getSetCookie()).toHaveLength(1);
    const session = /svc_session=([^;]+)/.exec(pressed.headers.get("set-cookie") ?? "")?.[1];
    expect(session).toMatch(/^sess_/);
    const whoami = await callIdentity("GET", `${base}/session`, { session });
    expect(whoami.body.user.email).toBe(email);

    const again = await callIdentity("POST", button, press);
    expect(again.status).toBe(401);
    expect(again.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(again.body).toContain("<h1>This sign-in link cannot be used</h1>");
    expect(again.body).toContain("the sign-in link is unknown, expired or already used.");
    expect(again.body).toContain('<a href="/app">Ask for a new one</a>');
    // An API client asking for JSON gets the problem document.
    const json = await callIdentity("POST", button, { headers: { accept: "application/json" } });
    expect([json.status, json.body.code]).toEqual([401, "unauthorized"]);
  });

  test("another site's page cannot post a sign-in token: the visitor is not signed in as its author", async () => {
    const token = await requestLink(uniqueEmail("forged"));
    const button = `${base}/magic-link/sign-in?token=${encodeURIComponent(token)}`;
    const body = "";
    const form = { "content-type": "application/x-www-form-urlencoded", accept: "text/html" };
    const elsewhere: Record<string, string>[] = [
      { "sec-fetch-site": "cross-site" },
      { origin: "https://evil.example" },
    ];
    for (const from of elsewhere) {
      const forged = await callIdentity("POST", button, { headers: { ...form, ...from }, body });
      expect([forged.status, forged.headers.get("set-cookie")]).toEqual([403, null]);
      expect(forged.body).toContain("must come from the service&#39;s own pages");
    }
    const own = await callIdentity("POST", button, { headers: { ...form, "sec-fetch-site": "same-origin" }, body });
    expect(own.status).toBe(303);
  });

  test("an address gets at most five links per link lifetime", async () => {
    const email = uniqueEmail();
    for (let i = 0; i < 5; i++) await requestLink(email);
    const res = await callIdentity("POST", `${base}/magic-link`, { body: { email } });
    expect(res.status).toBe(429);
    expect(res.body.code).toBe("too_many_sign_in_links");
    // The first link leaves the window after the link lifetime (15 minutes by default): that is when to ask again.
    const { ctx } = await testRuntime();
    const lifetime = ctx.config.MAGIC_LINK_TTL_MINUTES * 60;
    const retryAfter = Number(res.headers.get("retry-after"));
    expect(retryAfter).toBe(res.body.retry_after_seconds);
    expect(retryAfter).toBeGreaterThan(lifetime - 60);
    expect(retryAfter).toBeLessThanOrEqual(lifetime);
  });

  test("the cap holds when ten requests for one address arrive at once", async () => {
    const email = uniqueEmail();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => callIdentity("POST", `${base}/magic-link`, { body: { email } })),
    );
    expect(answers.filter((res) => res.status === 202)).toHaveLength(5);
    expect(answers.filter((res) => res.body?.code === "too_many_sign_in_links")).toHaveLength(5);
    const { ctx } = await testRuntime();
    expect(await ctx.sql`SELECT 1 FROM magic_link_tokens WHERE email = ${email}`).toHaveLength(5);
  });

  test("an expired link is refused", async () => {
    const email = uniqueEmail();
    const token = await requestLink(email);
    const { ctx } = await testRuntime();
    await ctx.sql`UPDATE magic_link_tokens SET expires_at = now() - interval '1 second' WHERE email = ${email}`;
    const res = await callIdentity("POST", `${base}/magic-link/verify`, { body: { token } });
    expect(res.status).toBe(401);
  });

  test("unknown or malformed tokens are 401", async () => {
    for (const token of [`ml_${"A".repeat(43)}`, "nonsense", `sess_${"A".repeat(43)}`]) {
      const res = await callIdentity("POST", `${base}/magic-link/verify`, { body: { token } });
      expect(res.status).toBe(401);
    }
  });

  test("bad bodies are 400 or 4xx problems", async () => {
    for (const body of [{}, { email: "not-an-address" }, { email: 5 }]) {
      const res = await callIdentity("POST", `${base}/magic-link`, { body });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("validation_failed");
    }
    expect((await callIdentity("POST", `${base}/magic-link`, { body: "{" })).status).toBe(400);
    expect((await callIdentity("POST", `${base}/magic-link/verify`, { body: {} })).status).toBe(400);
    expect((await callIdentity("GET", `${base}/magic-link/verify`)).status).toBe(400);
  });
});

describe("sessions", () => {
  test("are accepted as a Bearer token or as the cookie", async () => {
    const user = await signIn();
    const bearer = await callIdentity("GET", `${base}/session`, { session: user.session });
    expect(bearer.status).toBe(200);
    expect(bearer.body.user).toEqual({ id: user.userId, email: user.email });
    expect(bearer.body.is_operator_admin).toBe(false);
    const cookie = await callIdentity("GET", `${base}/session`, {
      headers: { cookie: `a=b; svc_session=${user.session}` },
    });
    expect(cookie.status).toBe(200);
    expect(cookie.body.user.id).toBe(user.userId);
  });

  test("no session, an unknown one or an API key alone are refused", async () => {
    expect((await callIdentity("GET", `${base}/session`)).status).toBe(401);
    expect((await callIdentity("GET", `${base}/session`, { session: `sess_${"x".repeat(43)}` })).status).toBe(401);
    expect((await callIdentity("GET", `${base}/session`, { headers: { authorization: "Basic abc" } })).status).toBe(
      401,
    );
    const org = await createTestOrg();
    const withKey = await callIdentity("GET", `${base}/session`, { key: org.key });
    expect(withKey.status).toBe(403);
    expect(withKey.body.code).toBe("session_required");
    expect((await callIdentity("GET", `${base}/session`, { key: `svc_pub_${"z".repeat(43)}` })).status).toBe(401);
  });

  test("expire", async () => {
    const user = await signIn();
    const { ctx } = await testRuntime();
    await ctx.sql`UPDATE user_sessions SET expires_at = now() - interval '1 second' WHERE token_hash = ${sha256(user.session)}`;
    expect((await callIdentity("GET", `${base}/session`, { session: user.session })).status).toBe(401);
  });

  test("sign-out ends the session and clears the cookie", async () => {
    const user = await signIn();
    const other = await signIn(user.email);
    const out = await callIdentity("POST", `${base}/sign-out`, { session: user.session });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await callIdentity("GET", `${base}/session`, { session: user.session })).status).toBe(401);
    expect((await callIdentity("POST", `${base}/sign-out`, { session: user.session })).status).toBe(401);
    // Other sessions of the same person stay signed in.
    expect((await callIdentity("GET", `${base}/session`, { session: other.session })).status).toBe(200);
  });

  test("a refused cookie is cleared, an empty cookie does not hide the session's, a Bearer token is left alone", async () => {
    const user = await signIn();
    const cookie = { cookie: `svc_session=; svc_session=${user.session}` };
    expect((await callIdentity("GET", `${base}/session`, { headers: cookie })).status).toBe(200);
    expect((await callIdentity("POST", `${base}/sign-out`, { session: user.session })).status).toBe(204);
    // The browser still holds the ended session's cookie: every refusal asks it to drop it.
    const ended = await callIdentity("POST", `${base}/sign-out`, { headers: cookie });
    expect(ended.status).toBe(401);
    expect(ended.headers.get("set-cookie")).toStartWith("svc_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0");
    const byBearer = await callIdentity("GET", `${base}/session`, { session: user.session });
    expect([byBearer.status, byBearer.headers.get("set-cookie")]).toEqual([401, null]);
  });

  test("a change signed in by the cookie must come from the service's own pages", async () => {
    const owner = await createTestOrg();
    const user = await memberOf(owner.id, "owner");
    const mint = (headers: Record<string, string>, session?: string) =>
      callIdentity("POST", `/api/v1/identity/keys?org_id=${owner.id}`, {
        headers: session ? headers : { cookie: `svc_session=${user.session}`, ...headers },
        session,
        body: { name: "from a page" },
      });
    const foreign: Record<string, string>[] = [
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
      { origin: "https://evil.example" },
      { origin: "null" },
    ];
    for (const headers of foreign) {
      const refused = await mint(headers);
      expect([refused.status, refused.body.code]).toEqual([403, "cross_site_request"]);
    }
    // The dashboard's own requests, clients that are no browser, and a session sent as Bearer.
    expect((await mint({ "sec-fetch-site": "same-origin" })).status).toBe(201);
    expect((await mint({ origin: "http://test.local" })).status).toBe(201);
    expect((await mint({})).status).toBe(201);
    expect((await mint({ "sec-fetch-site": "cross-site" }, user.session)).status).toBe(201);
    // Reading is not a change.
    const read = await callIdentity("GET", `/api/v1/identity/keys?org_id=${owner.id}`, {
      headers: { cookie: `svc_session=${user.session}`, "sec-fetch-site": "cross-site" },
    });
    const minted = read.body.items.filter((key: { name: string }) => key.name === "from a page");
    expect([read.status, minted.length]).toEqual([200, 4]);
  });

  test("operator admins are the allowlisted addresses", async () => {
    const admin = await signInOperatorAdmin();
    const res = await callIdentity("GET", `${base}/session`, { session: admin.session });
    expect(res.body.is_operator_admin).toBe(true);
  });
});

describe("purging expired sign-in records", () => {
  test("removes long-expired links and ended sessions, keeps live ones", async () => {
    const { ctx } = await testRuntime();
    const live = await signIn();
    const ended = await signIn();
    await ctx.sql`UPDATE user_sessions SET revoked_at = now() - interval '8 days' WHERE token_hash = ${sha256(ended.session)}`;
    const email = uniqueEmail();
    await requestLink(email);
    await ctx.sql`UPDATE magic_link_tokens SET expires_at = now() - interval '2 days' WHERE email = ${email}`;
    const deleted = await purgeExpiredSignIns(ctx.sql);
    expect(deleted).toBeGreaterThanOrEqual(2);
    expect(await ctx.sql`SELECT 1 FROM magic_link_tokens WHERE email = ${email}`).toHaveLength(0);
    expect(await ctx.sql`SELECT 1 FROM user_sessions WHERE token_hash = ${sha256(ended.session)}`).toHaveLength(0);
    expect((await callIdentity("GET", `${base}/session`, { session: live.session })).status).toBe(200);
  });
});

describe("a plain-HTTP address with Secure cookies", () => {
  test("is warned about at start, since sign-in would not stick; HTTPS, localhost and SESSION_COOKIE_SECURE=false are not", () => {
    expect(insecureSignInWarning("http://svc.internal:3000", true)).toContain("sign-in will not stick");
    for (const [url, secure] of [
      ["https://svc.example.com", true],
      ["http://localhost:3000", true],
      ["http://127.0.0.1:3000", true],
      ["http://svc.internal:3000", false],
    ] as const) {
      expect({ url, secure, warning: insecureSignInWarning(url, secure) }).toEqual({ url, secure, warning: undefined });
    }
  });
});
