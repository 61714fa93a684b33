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

/**
 * What a route takes as its body: its TypeBox schema, `checkedByHandler` for a
 * document its handler reads and checks itself (ingest: declared to OpenAPI as a
 * required `detail.requestBody`), or undefined for none.
 */
export type RouteBody = TSchema | "checkedByHandler";

/** Route → what it takes as its body, for the checks that run before Elysia validates it. */
export function routeBodyIndex(
  routes: readonly { method: string; path: string; hooks: { body?: unknown; detail?: unknown } }[],
): (method: string, route: string) => RouteBody | undefined {
  const byRoute = new Map<string, RouteBody>();
  for (const route of routes) {
    const { body, detail } = route.hooks;
    const name = `${route.method} ${route.path}`;
    const documented = (detail as { requestBody?: { required?: boolean } } | undefined)?.requestBody;
    // One declaration of the body: a schema Elysia checks, or a document the handler checks and OpenAPI shows.
    if (body && documented) throw new Error(`${name} declares both a body schema and detail.requestBody`);
    if (body && typeof body === "object") byRoute.set(name, body as TSchema);
    else if (documented?.required) byRoute.set(name, "checkedByHandler");
  }
  return (method, route) => byRoute.get(`${method} ${route}`);
}

/**
 * Route → the names of its integer query parameters, which Elysia would read as
 * JavaScript numbers (`0x10` as 16, `1e1` as 10, a blank as 0) before checking them.
 */
export function routeIntegerQueryIndex(
  routes: readonly { method: string; path: string; hooks: { query?: unknown } }[],
): (method: string, route: string) => readonly string[] {
  type Schema = { type?: string; anyOf?: Schema[] };
  // Elysia's t.Integer is an integer or a string of format integer (anyOf).
  const isInteger = (schema: Schema) => schema.type === "integer" || (schema.anyOf ?? []).some(isInteger);
  const byRoute = new Map<string, string[]>();
  for (const route of routes) {
    const properties = (route.hooks.query as { properties?: Record<string, Schema> } | undefined)?.properties;
    const integers = Object.entries(properties ?? {}).flatMap(([name, schema]) => (isInteger(schema) ? [name] : []));
    if (integers.length > 0) byRoute.set(`${route.method} ${route.path}`, integers);
  }
  return (method, route) => byRoute.get(`${method} ${route}`) ?? [];
}

/** Whether a route is one of `routes` (method and route pattern, as Elysia names them). */
export function routeSetIndex(
  routes: readonly { method: string; path: string }[],
): (method: string, route: string) => boolean {
  const members = new Set(routes.map((route) => `${route.method} ${route.path}`));
  return (method, route) => members.has(`${method} ${route}`);
}
