import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { ingestLimits } from "../../core/ingest-limits.ts";
import { invalid, problem } from "../../core/problem.ts";
import { assertStorableJson } from "../../core/storable-json.ts";
import { httpUrlHost } from "../../core/wire-values.ts";
import { accessPlugin } from "../../http/access.ts";
import { ownProblems } from "../../http/openapi-examples.ts";
import { answerPage, Paged, pageQuery } from "../../http/paging.ts";
import { countLookup, listLookups } from "./lookups.ts";
import { maxManifestEvents, resolveClickManifest } from "./manifest.ts";
import { ClickManifest, ClickToken, ClickTokenParams, ClickTokenRequest, LookupCount } from "./model.ts";
import { issueClickToken, refuseForeignToken } from "./service.ts";

export const clickTokensModule = (ctx: AppContext) =>
  new Elysia({ name: "click-tokens", detail: { tags: ["Click tokens"] } })
    .use(accessPlugin(ctx))
    .post(
      "/click-tokens",
      async ({ body, principal, set }) => {
        assertStorableJson(body, ingestLimits.maxJsonDepth);
        const host = httpUrlHost(body.content_url);
        if ("reason" in host) {
          throw invalid(`content_url ${host.reason}`, [{ path: "/content_url", message: host.reason }]);
        }
        const issued = await issueClickToken(ctx.sql, principal.orgId, body.session_id, body.content_url);
        if (!issued) throw problem("session_not_found", "your organisation has no session with this id");
        // The token is shown in this answer only, and resolves its session's manifest.
        set.headers["cache-control"] = "no-store";
        return issued;
      },
      {
        key: { scope: "telemetry:write", orgTypes: ["platform", "agent"] },
        // Labels the body as JSON for OpenAPI; the global strict JSON reader still parses it.
        parse: "json",
        body: ClickTokenRequest,
        response: ClickToken,
        detail: {
          summary: "Issue a click token for one of the caller's sessions",
          description:
            "Platform or agent key with telemetry:write. The outbound link carries the token in the `ctx` query parameter; it expires after 90 days. The token is in this answer only (Cache-Control: no-store). 404 when the session is not the caller's.",
          ...ownProblems("session_not_found"),
        },
      },
    )
    .get(
      "/ctx/:token",
      async ({ params, principal, set }) => {
        refuseForeignToken(params.token);
        const resolved = await resolveClickManifest(ctx.sql, params.token);
        if (!resolved) {
          throw problem("click_token_not_found", "no click manifest is available for this token");
        }
        await countLookup(ctx.sql, {
          issuerOrgId: resolved.issuerOrgId,
          resolverOrgId: principal.orgId,
          ownerOrgIds: resolved.ownerOrgIds,
        });
        // Keyed by a bearer token, and what it shows follows the owners' opt-ins at lookup time.
        set.headers["cache-control"] = "no-store";
        return resolved.manifest;
      },
      {
        key: { scope: "telemetry:read", orgTypes: ["platform", "agent"], limitClass: "click_lookup" },
        params: ClickTokenParams,
        response: ClickManifest,
        detail: {
          summary: "Resolve a click token to its click manifest",
          description: `Platform or agent key with telemetry:read, rate-limited per key (RATE_LIMIT_CLICK_LOOKUP_PER_SECOND). 404 click_token_not_found alike for an unknown or expired token, for a token whose issuing organisation has not enabled share_sessions_via_click_tokens, and for a token engagements have bound to two presentations (standard 7.4.1: never resolved). The manifest holds only content_grounded, content_cited and content_presented events whose content_url lies on a verified domain whose owner enabled visible_in_click_token_lookups; never turn objects, never the session id. Conversation-derived data fields follow the session's privacy_level; content_url is always visible. At most ${maxManifestEvents} events. Answered with Cache-Control: no-store. A malformed token is 400 validation_failed, a standard ct_ token of another issuer 422 foreign_click_token. Each answered lookup is counted (GET /click-tokens/lookups), a HEAD of this path too, since it answers the same status.`,
          ...ownProblems("click_token_not_found", "foreign_click_token"),
        },
      },
    )
    .get(
      "/click-tokens/lookups",
      ({ principal, query }) => answerPage(query, (page) => listLookups(ctx.sql, principal.orgId, page)),
      {
        key: "telemetry:read",
        query: t.Object(pageQuery()),
        response: Paged(LookupCount),
        detail: {
          summary: "How often click manifests were resolved, per UTC day and role",
          description:
            "Any key with telemetry:read, for its own organisation: `issuer` counts lookups of the tokens it issued, `resolver` the lookups it made, `owner` the manifests that showed its content. Only answered lookups are counted.",
        },
      },
    );
