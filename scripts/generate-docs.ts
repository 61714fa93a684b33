/**
 * Rewrites the generated parts of the guides in docs/ (scripts/docs/):
 *
 *   bun run docs:generate
 */

import { createApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import { createLogger } from "../src/log.ts";
import { startRuntime } from "../src/runtime.ts";
import { docPath, withGeneratedPart } from "./docs/generated-part.ts";
import { renderRouteAccess } from "./docs/route-access.ts";
import { renderWireFormat } from "./docs/wire-format.ts";

/** Each guide with a generated part, and how to render it from the app's routes. */
export const generatedGuides = {
  "wire-format.md": () => renderWireFormat(),
  "auth.md": (routes: Parameters<typeof renderRouteAccess>[0]) => renderRouteAccess(routes),
} as const;

if (import.meta.main) {
  // The routes as the service declares them, from an app on a throwaway in-memory database.
  const config = loadConfig({ LOG_LEVEL: "error" });
  const { ctx, db } = await startRuntime(config, createLogger("error", {}), { inMemory: true });
  const routes = createApp(ctx).routes;
  for (const [name, render] of Object.entries(generatedGuides)) {
    const path = docPath(name);
    await Bun.write(path, withGeneratedPart(await Bun.file(path).text(), render(routes), path));
    console.log(`wrote ${path}`);
  }
  await db.close();
}
