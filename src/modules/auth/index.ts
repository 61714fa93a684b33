import { Elysia, t } from "elysia";
import { parseOidcProviders } from "../../config.ts";
import type { AppContext } from "../../context.ts";
import { prefersHtml } from "../../http/accept.ts";
import { accessPlugin } from "../../http/access.ts";
import { noContent, redirectTo } from "../../http/bodiless-answers.ts";
import { clearedSessionCookie, cookieValue, oidcBrowserCookie, oidcBrowserCookieName } from "../../http/credentials.ts";
import { ownProblems } from "../../http/openapi-examples.ts";
import { refuseCrossSite } from "../../http/same-origin.ts";
import { consumeMagicLink, magicLinkAddress, sendMagicLink } from "./magic-link.ts";
import { MagicLinkRequest, MagicLinkVerify, OidcCallbackQuery, OidcProviderParams, SignedIn, WhoAmI } from "./model.ts";
import { loginLifetimeMinutes, OidcSignIn } from "./oidc.ts";
import { revokeSession } from "./sessions.ts";
import {
  answeredFor,
  htmlPage,
  htmlPageResponse,
  refusedAsPage,
  signedIn,
  signedInToDashboard,
} from "./sign-in-answers.ts";
import { confirmSignInPage } from "./sign-in-page.ts";

export const authModule = (ctx: AppContext) => {
  const oidc = new OidcSignIn(parseOidcProviders(ctx.config.OIDC_PROVIDERS), ctx.config);
  const publicOrigin = new URL(ctx.config.PUBLIC_BASE_URL).origin;
  // The link's GET for JSON clients and the POST (its page's button, or a client) spend the token alike.
  const spendMagicLink = async (token: string, set: { headers: Record<string, unknown> }) =>
    signedIn(ctx, set, await consumeMagicLink(ctx.sql, token, ctx.config.SESSION_TTL_HOURS));
  return new Elysia({ name: "identity.auth", prefix: "/api/v1/identity/auth", detail: { tags: ["Identity: sign-in"] } })
    .use(accessPlugin(ctx))
    .post(
      "/magic-link",
      async ({ body, set }) => {
        await sendMagicLink(ctx.sql, ctx.mailer, ctx.config, body.email);
        set.status = 202;
        return { status: "sent" as const };
      },
      {
        public: "by_address",
        body: MagicLinkRequest,
        response: { 202: t.Object({ status: t.Literal("sent") }) },
        detail: {
          summary: "Send a single-use sign-in link by e-mail",
          description:
            "Always 202, whether or not the address has signed in before; the link is valid once, for MAGIC_LINK_TTL_MINUTES. At most 5 links per address per link lifetime: past that, 429 too_many_sign_in_links with Retry-After (and retry_after_seconds) saying when the oldest leaves the count.",
        },
      },
    )
    .get(
      "/magic-link/verify",
      // Opening the link spends nothing, whoever opens it: see confirmSignInPage.
      async ({ query, request }) =>
        request.method === "HEAD"
          ? htmlPage("")
          : refusedAsPage("link", async () =>
              htmlPage(confirmSignInPage(query.token, await magicLinkAddress(ctx.sql, query.token))),
            ),
      {
        public: "by_address",
        query: MagicLinkVerify,
        detail: {
          summary: "Follow a sign-in link: a page whose Sign in button spends the token",
          description:
            "Spends nothing, whoever opens it: a small HTML page naming the address the link signs in as, whose Sign in button posts the token to POST /magic-link/sign-in (401, a page saying so, for a link unknown, expired or used). Mail scanners and link previews open the links in the mail they pass on before its reader does, and only a person presses the button. A HEAD looks nothing up: 200 whatever the token. Clients that read the link themselves send the token to POST /magic-link/verify.",
          responses: htmlPageResponse("the page with the Sign in button"),
          ...ownProblems("unauthorized"),
        },
      },
    )
    .post("/magic-link/verify", ({ body, set }) => spendMagicLink(body.token, set), {
      public: "by_address",
      body: MagicLinkVerify,
      response: SignedIn,
      // A public route lists no 401 of its own access: an unknown, spent or expired token is one.
      detail: {
        summary: "Spend a sign-in token (for clients that read the link themselves)",
        ...ownProblems("unauthorized"),
      },
    })
    .post(
      "/magic-link/sign-in",
      ({ query, set, headers, request }) => {
        const signIn = async () => {
          refuseCrossSite(request, publicOrigin, "a sign-in from a browser");
          return spendMagicLink(query.token, set);
        };
        return prefersHtml(headers.accept) ? signedInToDashboard(signIn) : signIn();
      },
      {
        public: "by_address",
        query: MagicLinkVerify,
        response: SignedIn,
        detail: {
          summary: "The Sign in button of a sign-in link's page: spends the token and starts a session",
          description:
            "The form on the page GET /magic-link/verify shows posts here, with no body. A browser (Accept preferring text/html) is sent on to the dashboard (303 to /app) with the session cookie set, so that reloading does not post the spent link again, or gets a page saying why not; other clients get the JSON below. A browser's post must come from the service's own page (403 cross_site_request otherwise), so that no other site's form can sign a visitor in as someone else.",
          responses: redirectTo("a browser, signed in, to the dashboard (/app)", 303),
          ...ownProblems("unauthorized", "cross_site_request"),
        },
      },
    )
    .get(
      "/session",
      ({ user }) => ({
        user: { id: user.userId, email: user.email },
        is_operator_admin: user.isOperatorAdmin,
        expires_at: user.expiresAt,
      }),
      {
        session: true,
        response: WhoAmI,
        detail: { summary: "The signed-in user" },
      },
    )
    .post(
      "/sign-out",
      async ({ user, set }) => {
        await revokeSession(ctx.sql, user.sessionId);
        set.headers["set-cookie"] = clearedSessionCookie(ctx.config.SESSION_COOKIE_SECURE);
        set.status = 204;
      },
      {
        session: true,
        detail: { summary: "End the current session", responses: noContent("signed out; the cookie is cleared") },
      },
    )
    .get(
      "/oidc/providers",
      // At PUBLIC_BASE_URL, the host the provider sends the browser back to: the start's
      // binding cookie is set for the host it is started at, and must come back with the callback.
      () => ({
        items: oidc
          .list()
          .map((p) => ({ ...p, start_url: `${ctx.config.PUBLIC_BASE_URL}/api/v1/identity/auth/oidc/${p.id}/start` })),
      }),
      {
        public: "by_address",
        response: t.Object({ items: t.Array(t.Object({ id: t.String(), issuer: t.String(), start_url: t.String() })) }),
        detail: { summary: "Configured OAuth/OpenID Connect sign-in providers" },
      },
    )
    .get(
      "/oidc/:provider/start",
      async ({ params, set, headers }) => {
        const redirect = async () => {
          const started = await oidc.start(
            ctx.sql,
            params.provider,
            cookieValue(headers.cookie, oidcBrowserCookieName),
          );
          set.status = 302;
          set.headers.location = started.location;
          set.headers["set-cookie"] = oidcBrowserCookie(
            started.browser,
            loginLifetimeMinutes * 60,
            ctx.config.SESSION_COOKIE_SECURE,
          );
          set.headers["cache-control"] = "no-store";
        };
        return prefersHtml(headers.accept) ? refusedAsPage("provider", redirect) : redirect();
      },
      {
        public: "by_address",
        params: OidcProviderParams,
        detail: {
          summary: "Start OAuth sign-in: redirects to the provider (authorization code + PKCE, state, nonce)",
          description:
            "Sets the cookie svc_oidc_browser (HttpOnly, SameSite=Lax, path /api/v1/identity/auth/oidc/, 10 minutes; kept when the browser already holds one): the callback signs in only the browser that started the sign-in. A browser (Accept preferring text/html) gets a refusal (an unreachable provider: 503 oidc_provider_unavailable) as a small HTML page.",
          responses: redirectTo("to the provider's authorization endpoint"),
        },
      },
    )
    .delete(
      "/oidc/:provider/link",
      async ({ params, user, set }) => {
        await oidc.unlink(ctx.sql, params.provider, user.userId);
        set.status = 204;
      },
      {
        session: true,
        params: OidcProviderParams,
        detail: {
          summary: "Unlink the signed-in user from their account at a provider",
          description:
            "After this, the next account at that provider that presents the user's verified e-mail is linked instead (a re-created account). 404 oidc_link_not_found when none is linked.",
          responses: noContent("unlinked"),
        },
      },
    )
    .get(
      "/oidc/:provider/callback",
      ({ params, query, set, headers }) =>
        answeredFor(headers.accept, "provider", async () =>
          signedIn(
            ctx,
            set,
            await oidc.finish(ctx.sql, params.provider, query, cookieValue(headers.cookie, oidcBrowserCookieName)),
          ),
        ),
      {
        public: "by_address",
        params: OidcProviderParams,
        query: OidcCallbackQuery,
        response: SignedIn,
        detail: {
          summary:
            "The provider's redirect back: verifies the ID token against the provider's JWKS and starts a session",
          description:
            "Needs the svc_oidc_browser cookie that the start set in the same browser (401 without it, or with another browser's). The state is spent on first use. 503 oidc_provider_unavailable when the provider's token endpoint or signing keys cannot be reached or read. A browser (Accept preferring text/html) gets a small HTML page (text/html) saying what happened, with the session cookie set; API clients get the JSON below.",
        },
      },
    );
};
