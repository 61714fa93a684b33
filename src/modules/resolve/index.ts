import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { hostOfUrl, isHostName } from "../../core/hosts.ts";
import { invalid } from "../../core/problem.ts";
import { accessPlugin } from "../../http/access.ts";
import { resolveDomain } from "./service.ts";

const ResolveQuery = t.Object({
  domain: t.Optional(t.String({ minLength: 1, maxLength: 253, description: "a host name" })),
  url: t.Optional(t.String({ minLength: 1, maxLength: 8192, description: "a URL; its host is looked up" })),
});

const Resolution = t.Object({
  domain: t.String(),
  handled: t.Boolean(),
  organization: t.Nullable(t.Object({ id: t.String({ format: "uuid" }), name: t.String() })),
});

/** The host of an http or https URL; null for any other. */
function hostOfHttpUrl(url: string): string | null {
  return /^https?:\/\//i.test(url) ? hostOfUrl(url) : null;
}

/** Host of the `domain` or `url` parameter in canonical form (lower case, punycode, no trailing dot). */
function queriedHost(query: { domain?: string; url?: string }): string {
  if ((query.domain === undefined) === (query.url === undefined)) {
    throw invalid("give exactly one of domain or url", [
      { path: "/domain", message: "exactly one of domain or url is required" },
    ]);
  }
  const host = query.url !== undefined ? hostOfHttpUrl(query.url) : hostOfUrl(`http://${query.domain}/`);
  // The URL parser lets much through (a backslash ends a host, "*" and empty labels pass):
  // only a host name DNS could hold is looked up, which also bounds the lookup's size.
  if (!host || !isHostName(host) || (query.domain !== undefined && /[/:@?#\\*\s]/.test(query.domain))) {
    const path = query.url !== undefined ? "/url" : "/domain";
    const message = query.url !== undefined ? "is not an http or https URL with a host name" : "is not a host name";
    throw invalid("no host name in the query", [{ path, message }]);
  }
  return host;
}

/** Public domain resolution, served at the base address beside the reads (`{base_url}/resolve`). */
export const resolveModule = (ctx: AppContext) =>
  new Elysia({ name: "resolve", detail: { tags: ["Domain resolution"] } })
    .use(accessPlugin(ctx))
    .get("/resolve", ({ query }) => resolveDomain(ctx.sql, queriedHost(query)), {
      public: "by_address",
      query: ResolveQuery,
      response: Resolution,
      detail: {
        summary: "Does a registered content owner handle this domain? (public)",
        description:
          "handled is true when a content owner has verified the host or a parent domain of it; registered-but-unverified domains do not count. Unknown domains answer handled false, organization null.",
      },
    });
