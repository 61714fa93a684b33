import type { OrgType } from "../core/organizations.ts";
import type { Scope } from "../core/scopes.ts";
import type { RateLimitClass } from "./rate-limit.ts";

/**
 * What a route needs on the organisation it acts on:
 * - `read`: a member's session, or a key of that organisation with identity:read;
 * - `write`: an owner's or admin's session, or a key of that organisation with identity:write;
 * - `manage`: an owner's or admin's session only (members, invites, audit: keys never reach these).
 */
export type OrgNeed = "read" | "write" | "manage";

/**
 * Who may call a route, declared on the route as data (one of the macros of
 * access.ts) and resolved in one place (access-resolver.ts). The OpenAPI document shows it as the
 * operation's `security` and `x-access`; the credential test matrix is built from it.
 */
export type Access =
  | { kind: "public"; limitedBy: "address" | "nothing" }
  | {
      kind: "key";
      scope: Scope | null;
      orgTypes: readonly OrgType[] | null;
      limitClass?: RateLimitClass;
      /** A member's session of the organisation may call it too, as a key of it with `scope` would. */
      memberSessions?: true;
    }
  | { kind: "session"; operatorAdmin: boolean }
  | { kind: "org"; need: OrgNeed; sessionOnly: boolean; orgTypes: readonly OrgType[] | null; orgFrom: "query" | "path" }
  | { kind: "partner" };

export type KeyDeclaration =
  | Scope
  | true
  | {
      scope: Scope;
      orgTypes?: readonly OrgType[];
      /** counted apart from the scope's class */
      limitClass?: RateLimitClass;
      memberSessions?: true;
    };
export type OrgDeclaration =
  | OrgNeed
  | { need: OrgNeed; sessionOnly?: true; orgTypes?: readonly OrgType[]; orgFrom?: "query" | "path" };

export const declaredKey = (declared: KeyDeclaration): Access =>
  declared === true
    ? { kind: "key", scope: null, orgTypes: null }
    : typeof declared === "string"
      ? { kind: "key", scope: declared, orgTypes: null }
      : {
          kind: "key",
          scope: declared.scope,
          orgTypes: declared.orgTypes ?? null,
          ...(declared.limitClass ? { limitClass: declared.limitClass } : {}),
          ...(declared.memberSessions ? { memberSessions: true } : {}),
        };

export const declaredOrg = (declared: OrgDeclaration): Extract<Access, { kind: "org" }> =>
  typeof declared === "string"
    ? { kind: "org", need: declared, sessionOnly: false, orgTypes: null, orgFrom: "query" }
    : {
        kind: "org",
        need: declared.need,
        sessionOnly: declared.sessionOnly ?? false,
        orgTypes: declared.orgTypes ?? null,
        orgFrom: declared.orgFrom ?? "query",
      };

type SecurityRequirement = Record<string, string[]>;
const keySecurity: SecurityRequirement[] = [{ apiKey: [] }];
const sessionSecurity: SecurityRequirement[] = [{ session: [] }, { sessionCookie: [] }];

function security(access: Access): SecurityRequirement[] {
  switch (access.kind) {
    case "public":
      return [];
    case "key":
      return access.memberSessions ? [...keySecurity, ...sessionSecurity] : keySecurity;
    case "partner":
      return keySecurity;
    case "session":
      return sessionSecurity;
    case "org":
      return access.sessionOnly || access.need === "manage" ? sessionSecurity : [...sessionSecurity, ...keySecurity];
  }
}

/** The macro's OpenAPI part: who may call, as `security` and as data in `x-access`. */
export const documented = (access: Access) => ({ security: security(access), "x-access": access });

/** Route → declaration, from the `x-access` each macro wrote into the route's detail. */
export function accessIndex(
  routes: readonly { method: string; path: string; hooks: { detail?: unknown } }[],
): (method: string, route: string) => Access | undefined {
  const byRoute = new Map<string, Access>();
  for (const route of routes) {
    const access = (route.hooks.detail as { "x-access"?: Access } | undefined)?.["x-access"];
    if (access) byRoute.set(`${route.method} ${route.path}`, access);
  }
  return (method, route) => byRoute.get(`${method} ${route}`);
}
