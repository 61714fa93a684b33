import { Elysia } from "elysia";
import type { AppContext } from "./context.ts";
import { accessIndex } from "./http/access.ts";
import { openapiPlugin, type RouteWithBody } from "./http/openapi.ts";
import { httpPlugin, type RouteIndex } from "./http/plugin.ts";
import { routeMethodIndex } from "./http/routes.ts";
import { accessRequestsModule } from "./modules/access-requests/index.ts";
import { auditModule } from "./modules/audit/index.ts";
import { authModule } from "./modules/auth/index.ts";
import { clickTokensModule } from "./modules/click-tokens/index.ts";
import { delegationsModule } from "./modules/delegations/index.ts";
import { domainsModule } from "./modules/domains/index.ts";
import { healthModule } from "./modules/health/index.ts";
import { ingestModule } from "./modules/ingest/index.ts";
import { keysModule } from "./modules/keys/index.ts";
import { manifestsModule } from "./modules/manifests/index.ts";
import { membersModule } from "./modules/members/index.ts";
import { organizationsModule } from "./modules/organizations/index.ts";
import { partnersModule } from "./modules/partners/index.ts";
import { readsModule } from "./modules/reads/index.ts";
import { resolveModule } from "./modules/resolve/index.ts";
import { settingsModule } from "./modules/settings/index.ts";
import { webhooksModule } from "./modules/webhooks/index.ts";

/** The whole HTTP surface; `main.ts` serves it, tests call `app.handle()` on it. */
export function createApp(ctx: AppContext) {
  // Both are built from the routes once they are all declared.
  let index: RouteIndex = { allowedMethods: () => [], accessOf: () => undefined };
  let routes: () => readonly RouteWithBody[] = () => [];
  const app = new Elysia()
    .use(
      httpPlugin(ctx, {
        allowedMethods: (path) => index.allowedMethods(path),
        accessOf: (m, r) => index.accessOf(m, r),
      }),
    )
    .use(openapiPlugin(() => routes()))
    .use(healthModule(ctx))
    .use(ingestModule(ctx))
    .use(readsModule(ctx))
    .use(clickTokensModule(ctx))
    .use(authModule(ctx))
    .use(auditModule(ctx))
    .use(organizationsModule(ctx))
    .use(accessRequestsModule(ctx))
    .use(keysModule(ctx))
    .use(domainsModule(ctx))
    .use(membersModule(ctx))
    .use(partnersModule(ctx))
    .use(settingsModule(ctx))
    .use(manifestsModule(ctx))
    .use(delegationsModule(ctx))
    .use(webhooksModule(ctx))
    .use(resolveModule(ctx));
  index = { allowedMethods: routeMethodIndex(app.routes), accessOf: accessIndex(app.routes) };
  routes = () => app.routes;
  return app;
}
