/**
 * How a sign-in answers: the session as JSON and a cookie, or for a person in a
 * browser a small page saying what happened (sign-in-page.ts).
 */
import type { AppContext } from "../../context.ts";
import { ProblemError } from "../../core/problem.ts";
import { prefersHtml } from "../../http/accept.ts";
import { sessionCookie } from "../../http/credentials.ts";
import type { IssuedSession } from "./sessions.ts";
import { type SignInWay, signedInPage, signInFailedPage } from "./sign-in-page.ts";
import type { User } from "./users.ts";

/** The response of every successful sign-in: the session in the body and as an HttpOnly cookie. */
export function signedIn(
  ctx: AppContext,
  set: { headers: Record<string, unknown> },
  result: { user: User; session: IssuedSession },
) {
  set.headers["set-cookie"] = sessionCookie(
    result.session.token,
    result.session.expires_at,
    ctx.config.SESSION_COOKIE_SECURE,
  );
  set.headers["cache-control"] = "no-store";
  return {
    session_token: result.session.token,
    expires_at: result.session.expires_at,
    user: { id: result.user.id, email: result.user.email },
  };
}

export type SignedInAnswer = ReturnType<typeof signedIn>;

/**
 * A small HTML page as the answer; Elysia sends a Response past the route's JSON
 * schema, and adds the headers `set` holds (the session cookie) itself. The page
 * runs nothing, is framed nowhere, and is kept by no cache. Its address, which
 * carries the link's token, goes to no other site as a referrer; the service's own
 * pages get it, so that a browser without fetch metadata sends the button's post
 * with its real Origin (under `no-referrer` it sends `Origin: null`, refused as
 * cross-site).
 */
const htmlAnswer = (body: string, status: number) =>
  new Response(body, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy":
        "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
      "x-content-type-options": "nosniff",
      "referrer-policy": "same-origin",
      "cache-control": "no-store",
    },
  });

/** A page as a route's whole answer (200). */
export const htmlPage = (body: string) => htmlAnswer(body, 200);

/** How a route answering a page says so in the OpenAPI document. */
export const htmlPageResponse = (description: string) => ({
  200: { description, content: { "text/html": { schema: { type: "string" as const } } } },
});

/** Runs `action` for a person in a browser: a refusal comes as a page saying how to try again, not a problem document. */
export async function refusedAsPage<A>(way: SignInWay, action: () => Promise<A>): Promise<A | Response> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof ProblemError)
      return htmlAnswer(signInFailedPage(error.detail ?? error.title, way), error.status);
    throw error;
  }
}

/**
 * A sign-in answered for whoever asks: JSON for API clients, a small page for a
 * person in a browser (Accept preferring text/html), with the same session cookie.
 */
export async function answeredFor(
  accept: string | undefined,
  way: SignInWay,
  signIn: () => Promise<SignedInAnswer>,
): Promise<SignedInAnswer> {
  if (!prefersHtml(accept)) return signIn();
  const answer = await refusedAsPage(way, async () => {
    const { user, expires_at } = await signIn();
    return htmlAnswer(signedInPage(user.email, new Date(expires_at).toISOString()), 200);
  });
  // The types cannot say that a Response passes the JSON schema by.
  return answer as unknown as SignedInAnswer;
}

/**
 * The Sign in button's answer to a browser: on to the dashboard, signed in (303,
 * so that reloading it does not post the spent link again); a refusal as a page.
 */
export async function signedInToDashboard(signIn: () => Promise<SignedInAnswer>): Promise<SignedInAnswer> {
  const answer = await refusedAsPage("link", async () => {
    await signIn();
    return new Response(null, { status: 303, headers: { location: "/app", "cache-control": "no-store" } });
  });
  // The types cannot say that a Response passes the JSON schema by.
  return answer as unknown as SignedInAnswer;
}
