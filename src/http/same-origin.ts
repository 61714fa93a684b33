import { problem } from "../core/problem.ts";

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Refuses a request that a page of another site made the browser send. A browser
 * sends the session cookie with any request to the service, a form another site
 * posts included (SameSite=Lax still lets a sibling subdomain's page do it); and
 * another site's form could post a sign-in token its author holds, signing the
 * visitor in as that author. The browser's fetch metadata says where a request
 * comes from, and where it is not sent, the Origin header does. A client that
 * sends neither is no browser and so no forgery. `what` names what must come from
 * the service's own pages; `advice`, if any, what other clients do instead.
 */
export function refuseCrossSite(request: Request, publicOrigin: string, what: string, advice?: string): void {
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
      `${what} must come from the service's own pages (${site !== null ? `Sec-Fetch-Site: ${site}` : `Origin: ${origin}`})${advice ? `; ${advice}` : ""}`,
    );
  }
}
