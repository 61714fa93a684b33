import { problem } from "../core/problem.ts";

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * A browser sends the session cookie with any request to the service, a form that
 * another site posts included, and SameSite=Lax still lets a sibling subdomain's
 * page do it. So a change authenticated by the cookie must come from the service's
 * own pages: the browser's fetch metadata says where a request comes from, and where
 * it is not sent, the Origin header does. A client that sends neither is no browser
 * and so no forgery; a session sent as `Authorization: Bearer` cannot be forged by
 * a page and is never checked here.
 */
export function refuseCrossSiteCookie(request: Request, publicOrigin: string): void {
  if (safeMethods.has(request.method)) return;
  const site = request.headers.get("sec-fetch-site");
  const origin = request.headers.get("origin");
  const sameOrigin =
    site !== null
      ? site === "same-origin"
      : origin === null || origin === publicOrigin || origin === new URL(request.url).origin;
  if (!sameOrigin) {
    throw problem(
      "cross_site_request",
      `a change signed in by the session cookie must come from the service's own pages (${site !== null ? `Sec-Fetch-Site: ${site}` : `Origin: ${origin}`}); other clients send the session as Authorization: Bearer`,
    );
  }
}
