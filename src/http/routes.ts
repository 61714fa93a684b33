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
