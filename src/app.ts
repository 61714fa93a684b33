import { Elysia } from "elysia";
import { serviceRoles } from "./config.ts";
import type { AppContext } from "./context.ts";
import { accessIndex } from "./http/access-declarations.ts";
import { openapiPlugin, type RouteWithBody } from "./http/openapi.ts";
import { httpPlugin, type RouteIndex } from "./http/plugin.ts";
import { routeBodyIndex, routeIntegerQueryIndex, routeMethodIndex, routeSetIndex } from "./http/routes.ts";
import { accessRequestsModule } from "./modules/access-requests/index.ts";
import { auditModule } from "./modules/audit/index.ts";
import { authModule } from "./modules/auth/index.ts";
import { clickTokensModule } from "./modules/click-tokens/index.ts";
import { dashboardModule } from "./modules/dashboard/index.ts";
import { delegationsModule } from "./modules/delegations/index.ts";
import { domainsModule } from "./modules/domains/index.ts";
import { healthModule } from "./modules/health/index.ts";
import { ingestModule } from "./modules/ingest/index.ts";
import { ingestHealthModule } from "./modules/ingest-health/index.ts";
import { keysModule } from "./modules/keys/index.ts";
import { manifestsModule } from "./modules/manifests/index.ts";
import { membersModule } from "./modules/members/index.ts";
import { organizationsModule } from "./modules/organizations/index.ts";
import { partnersModule } from "./modules/partners/index.ts";
import { readsModule } from "./modules/reads/index.ts";
import { resolveModule } from "./modules/resolve/index.ts";
import { settingsModule } from "./modules/settings/index.ts";
import { webhooksModule } from "./modules/webhooks/index.ts";
import { documentedWebhooks } from "./modules/webhooks/model.ts";

/**
 * A feature only some instances serve (SERVICE_ROLES); elsewhere it is never built
 * and its paths answer 404. Typed as the feature either way, so the app's type
 * (and a client derived from it) stays the whole interface.
 */
const servedIf = <Feature>(serves: boolean, feature: () => Feature): Feature =>
  serves ? feature() : (new Elysia() as unknown as Feature);

/**
 * The HTTP surface of this instance's roles (all by default); `main.ts` serves it,
 * tests call `app.handle()` on it. /health and /ready are served by every role.
 */
export function createApp(ctx: AppContext) {
  const roles = serviceRoles(ctx.config.SERVICE_ROLES);
  const api = roles.has("api");
  // Both are built from the routes once they are all declared.
  let index: RouteIndex = {
    allowedMethods: () => [],
    accessOf: () => undefined,
    bodyOf: () => undefined,
    shedsWhenFull: () => false,
    integerQueryOf: () => [],
  };
  // Every POST of the ingest module takes its work through the admission gate (ctx.ingestGate).
  const ingest = servedIf(roles.has("ingest"), () => ingestModule(ctx));
  let routes: () => readonly RouteWithBody[] = () => [];
  const app = new Elysia()
    .use(
      httpPlugin(ctx, {
        allowedMethods: (path) => index.allowedMethods(path),
        accessOf: (m, r) => index.accessOf(m, r),
        bodyOf: (m, r) => index.bodyOf(m, r),
        shedsWhenFull: (m, r) => index.shedsWhenFull(m, r),
        integerQueryOf: (m, r) => index.integerQueryOf(m, r),
      }),
    )
    .use(servedIf(api, () => openapiPlugin(() => routes(), ctx.config, documentedWebhooks())))
    .use(healthModule(ctx))
    .use(ingest)
    .use(servedIf(api, () => readsModule(ctx)))
    .use(servedIf(api, () => clickTokensModule(ctx)))
    .use(servedIf(api, () => authModule(ctx)))
    .use(servedIf(api, () => auditModule(ctx)))
    .use(servedIf(api, () => organizationsModule(ctx)))
    .use(servedIf(api, () => accessRequestsModule(ctx)))
    .use(servedIf(api, () => keysModule(ctx)))
    .use(servedIf(api, () => domainsModule(ctx)))
    .use(servedIf(api, () => membersModule(ctx)))
    .use(servedIf(api, () => partnersModule(ctx)))
    .use(servedIf(api, () => settingsModule(ctx)))
    .use(servedIf(api, () => manifestsModule(ctx)))
    .use(servedIf(api, () => delegationsModule(ctx)))
    .use(servedIf(api, () => webhooksModule(ctx)))
    .use(servedIf(api, () => resolveModule(ctx)))
    .use(servedIf(api, () => ingestHealthModule(ctx)))
    .use(servedIf(api, () => dashboardModule(ctx)));
  index = {
    allowedMethods: routeMethodIndex(app.routes),
    accessOf: accessIndex(app.routes),
    bodyOf: routeBodyIndex(app.routes),
    shedsWhenFull: routeSetIndex(ingest.routes.filter((route) => route.method === "POST")),
    integerQueryOf: routeIntegerQueryIndex(app.routes),
  };
  routes = () => app.routes;
  return app;
}
