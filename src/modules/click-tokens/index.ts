import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { ingestLimits } from "../../core/ingest-limits.ts";
import { invalid, problem } from "../../core/problem.ts";
import { assertStorableJson } from "../../core/storable-json.ts";
import { httpUrlHost } from "../../core/wire-values.ts";
import { accessPlugin } from "../../http/access.ts";
import { ClickToken, ClickTokenRequest } from "./model.ts";
import { issueClickToken } from "./service.ts";

export const clickTokensModule = (ctx: AppContext) =>
  new Elysia({ name: "click-tokens", detail: { tags: ["Click tokens"] } }).use(accessPlugin(ctx)).post(
    "/click-tokens",
    async ({ body, principal }) => {
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
      key: { scope: "telemetry:write", orgTypes: ["platform", "agent"] },
      // Labels the body as JSON for OpenAPI; the global strict JSON reader still parses it.
      parse: "json",
      body: ClickTokenRequest,
      response: ClickToken,
      detail: {
        summary: "Issue a click token for one of the caller's sessions",
        description:
          "Platform or agent key with telemetry:write. The outbound link carries the token in the `ctx` query parameter; it expires after 90 days. 404 when the session is not the caller's.",
      },
    },
  );
