/**
 * docs/auth.md's generated part: every route and the credential it takes, read
 * from the access each route declares (src/http/access.ts), the same data the
 * credential test matrix and the OpenAPI `security` are built from.
 */
import type { Access } from "../../src/http/access.ts";
import { cell, code } from "./generated-part.ts";

interface Route {
  method: string;
  path: string;
  hooks: { detail?: unknown };
}

const orgTypes = (types: readonly string[] | null) => (types ? ` of a ${types.join(" or ")} organisation` : "");

const orgNeeds = {
  read: "a member's session, or an API key of the organisation with `identity:read`",
  write: "an owner's or admin's session, or an API key of the organisation with `identity:write`",
  manage: "an owner's or admin's session",
} as const;

/** Who may call, in words. */
function who(access: Access): string {
  switch (access.kind) {
    case "public":
      return access.limitedBy === "address" ? "anyone (limited per client address)" : "anyone";
    case "key":
      return `an API key${access.scope ? ` with ${code(access.scope)}` : ""}${orgTypes(access.orgTypes)}`;
    case "session":
      return access.operatorAdmin ? "an operator admin's session" : "a signed-in user's session";
    case "org":
      return `${access.sessionOnly && access.need !== "manage" ? orgNeeds[access.need].replace(/, or an API key.*$/, "") : orgNeeds[access.need]}${orgTypes(access.orgTypes)}`;
    case "partner":
      return "a trusted partner's API key with `partner:provision`";
  }
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
    .map(({ route, access }) => `| ${route.method} ${code(route.path)} | ${cell(access ? who(access) : "anyone")} |`);
  return ["| Route | Who may call it |", "|---|---|", ...rows].join("\n");
}
