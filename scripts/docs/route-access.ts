/**
 * docs/auth.md's generated part: every route and the credential it takes, read
 * from the access each route declares (src/http/access.ts), the same data the
 * credential test matrix and the OpenAPI `security` are built from.
 */
import type { Access } from "../../src/http/access-declarations.ts";
import { describeAccess } from "../../src/http/access-words.ts";
import { cell, code } from "./generated-part.ts";

interface Route {
  method: string;
  path: string;
  hooks: { detail?: unknown };
}

/** The generated part of docs/auth.md: one row per route, in path order. */
export function renderRouteAccess(routes: readonly Route[]): string {
  const rows = routes
    .filter((route) => route.method !== "HEAD" && !route.path.startsWith("/openapi/assets"))
    .map((route) => ({
      route,
      access: (route.hooks.detail as { "x-access"?: Access } | undefined)?.["x-access"],
    }))
    .sort((a, b) => a.route.path.localeCompare(b.route.path) || a.route.method.localeCompare(b.route.method))
    .map(
      ({ route, access }) =>
        `| ${route.method} ${code(route.path)} | ${cell(access ? describeAccess(access) : "anyone")} |`,
    );
  return ["| Route | Who may call it |", "|---|---|", ...rows].join("\n");
}
