import { Elysia } from "elysia";
import type { AppContext } from "./context.ts";
import { openapiPlugin } from "./http/openapi.ts";
import { httpPlugin } from "./http/plugin.ts";
import { routeMethodIndex } from "./http/routes.ts";
import { healthModule } from "./modules/health/index.ts";
import { readsModule } from "./modules/reads/index.ts";

/** The whole HTTP surface; `main.ts` serves it, tests call `app.handle()` on it. */
export function createApp(ctx: AppContext) {
  let allowedMethods: (path: string) => string[] = () => [];
  const app = new Elysia()
    .use(httpPlugin(ctx, (path) => allowedMethods(path)))
    .use(openapiPlugin())
    .use(healthModule(ctx))
    .use(readsModule(ctx));
  allowedMethods = routeMethodIndex(app.routes);
  return app;
}

export type App = ReturnType<typeof createApp>;
