import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { problem } from "../../core/problem.ts";
import { accessPlugin } from "../../http/access.ts";
import { dashboardAsset, dashboardSecurityHeaders, dashboardShell } from "./service.ts";

/**
 * The dashboard, served by the service itself at /app: a page, its bundled script
 * (web/) and styles. Every figure it shows comes from the API, called with the
 * browser's session cookie.
 */
export const dashboardModule = (ctx: AppContext) =>
  new Elysia({ name: "dashboard", detail: { hide: true } })
    .use(accessPlugin(ctx))
    .get(
      "/app",
      ({ set }) => {
        Object.assign(set.headers, dashboardSecurityHeaders, {
          "content-type": "text/html; charset=utf-8",
          "cache-control": "no-cache",
        });
        return dashboardShell;
      },
      { public: true },
    )
    .get(
      "/app/assets/:name",
      async ({ params, set }) => {
        const asset = await dashboardAsset(params.name);
        if (!asset) throw problem("route_not_found", "the dashboard has no asset by that name");
        Object.assign(set.headers, dashboardSecurityHeaders, {
          "content-type": asset.type,
          "cache-control": "no-cache",
        });
        return asset.body;
      },
      { public: true, params: t.Object({ name: t.String({ maxLength: 40 }) }) },
    );
