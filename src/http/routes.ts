import type { TSchema } from "@sinclair/typebox";

/** Which methods a path answers to, from the app's registered routes (for 405 responses). */
export function routeMethodIndex(routes: readonly { method: string; path: string }[]): (path: string) => string[] {
  const patterns = routes
    .filter((route) => route.method !== "ALL")
    .map((route) => ({
      method: route.method,
      pattern: new RegExp(
        `^${route.path
          .split("/")
          .map((segment) =>
            segment.startsWith(":") ? "[^/]+" : segment === "*" ? ".*" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
          )
          .join("/")}/?$`,
      ),
    }));
  return (path) => [...new Set(patterns.filter((p) => p.pattern.test(path)).map((p) => p.method))];
}

/** Route → its body schema (TypeBox), for checks that run before Elysia validates the body. */
export function routeBodySchemaIndex(
  routes: readonly { method: string; path: string; hooks: { body?: unknown } }[],
): (method: string, route: string) => TSchema | undefined {
  const byRoute = new Map<string, TSchema>();
  for (const route of routes) {
    const body = route.hooks.body;
    if (body && typeof body === "object") byRoute.set(`${route.method} ${route.path}`, body as TSchema);
  }
  return (method, route) => byRoute.get(`${method} ${route}`);
}

/** Whether a route is one of `routes` (method and route pattern, as Elysia names them). */
export function routeSetIndex(
  routes: readonly { method: string; path: string }[],
): (method: string, route: string) => boolean {
  const members = new Set(routes.map((route) => `${route.method} ${route.path}`));
  return (method, route) => members.has(`${method} ${route}`);
}
