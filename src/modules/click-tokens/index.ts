import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { invalid, problem } from "../../core/problem.ts";
import { apiKeyAuth } from "../../http/auth.ts";
import { assertStorableJson } from "../ingest/json-safety.ts";
import { ingestLimits } from "../ingest/limits.ts";
import { httpUrlHost } from "../ingest/values.ts";
import { ClickToken, ClickTokenRequest } from "./model.ts";
import { issueClickToken } from "./service.ts";

export const clickTokensModule = (ctx: AppContext) =>
  new Elysia({ name: "click-tokens", detail: { tags: ["Click tokens"] } }).use(apiKeyAuth(ctx)).post(
    "/click-tokens",
    async ({ body, principal }) => {
      if (principal.orgType === "content_owner") {
        throw problem("platform_key_required", "click tokens are issued to platform and agent keys only");
      }
      assertStorableJson(body, ingestLimits.maxJsonDepth);
      const host = httpUrlHost(body.content_url);
      if ("reason" in host) {
        throw invalid(`content_url ${host.reason}`, [{ path: "/content_url", message: host.reason }]);
      }
      const issued = await issueClickToken(ctx.sql, principal.orgId, body.session_id, body.content_url);
      if (!issued) throw problem("session_not_found", "your organisation has no session with this id");
      return issued;
    },
    {
      apiKey: "telemetry:write",
      // Labels the body as JSON for OpenAPI; the global strict JSON reader still parses it.
      parse: "json",
      body: ClickTokenRequest,
      response: ClickToken,
      detail: {
        summary: "Issue a click token for one of the caller's sessions",
        description:
          "Platform or agent key with telemetry:write. The outbound link carries the token in the `ctx` query parameter; it expires after 90 days. 404 when the session is not the caller's.",
        security: [{ apiKey: [] }],
      },
    },
  );
