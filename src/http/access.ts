import { Elysia, t } from "elysia";
import type { AppContext } from "../context.ts";
import { auditActorOf, type Caller, type OrgAccess, type Principal, type SessionUser } from "../core/caller.ts";
import { type OrgType, organizationSuspended } from "../core/organizations.ts";
import { invalid, ProblemError, problem } from "../core/problem.ts";
import type { Scope } from "../core/scopes.ts";
import { isUuid } from "../core/uuid.ts";
import { operatorAdminEmails } from "../modules/auth/operator-admins.ts";
import { authenticateSession } from "../modules/auth/sessions.ts";
import { verifiedDomainsOf } from "../modules/domains/service.ts";
import { membershipsOf } from "../modules/organizations/service.ts";
import { isTrustedPartner } from "../modules/partners/service.ts";
import { clearedSessionCookie, presentedSessionToken } from "./credentials.ts";
import {
  admitRequest,
  authenticateCountingFailures,
  clientAddress,
  type RateLimitClass,
  type RequestClient,
} from "./rate-limit.ts";
import { refuseCrossSite } from "./same-origin.ts";
import { SingleFlight } from "./single-flight.ts";

/**
 * What a route needs on the organisation it acts on:
 * - `read`: a member's session, or a key of that organisation with identity:read;
 * - `write`: an owner's or admin's session, or a key of that organisation with identity:write;
 * - `manage`: an owner's or admin's session only (members, invites, audit: keys never reach these).
 */
export type OrgNeed = "read" | "write" | "manage";

/**
 * Who may call a route, declared on the route as data (one of the macros below)
 * and resolved here, in one place. The OpenAPI document shows it as the
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

type KeyDeclaration =
  | Scope
  | true
  | {
      scope: Scope;
      orgTypes?: readonly OrgType[];
      /** counted apart from the scope's class */
      limitClass?: RateLimitClass;
      memberSessions?: true;
    };
type OrgDeclaration =
  | OrgNeed
  | { need: OrgNeed; sessionOnly?: true; orgTypes?: readonly OrgType[]; orgFrom?: "query" | "path" };

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
const documented = (access: Access) => ({ security: security(access), "x-access": access });

/** The credentials a request authenticated with, and the organisation it acts on, resolved once per request. */
interface Admitted {
  principal?: Principal;
  user?: SessionUser;
  org?: OrgAccess;
}

const limitClassOf = (access: Access): RateLimitClass =>
  access.kind === "key" && access.limitClass
    ? access.limitClass
    : access.kind === "key" && access.scope === "telemetry:write"
      ? "ingest"
      : access.kind === "key" && access.scope === "telemetry:read"
        ? "read"
        : "control";

const orgTypeRefusals = {
  content_owner_only: "only content-owner organisations may do this",
  platform_key_required: "only platform and agent organisations may do this",
} as const;

/** The problem code a route for `orgTypes` answers a caller of another type with. */
export const orgTypeRefusalCode = (orgTypes: readonly OrgType[]): keyof typeof orgTypeRefusals =>
  orgTypes.includes("content_owner") ? "content_owner_only" : "platform_key_required";

const orgTypeRefusal = (orgTypes: readonly OrgType[]) => {
  const code = orgTypeRefusalCode(orgTypes);
  return problem(code, orgTypeRefusals[code]);
};

const keyScopeFor: Record<Exclude<OrgNeed, "manage">, Scope> = { read: "identity:read", write: "identity:write" };

function requireScope(principal: Principal, scope: Scope): void {
  if (!principal.scopes.has(scope)) {
    throw problem("missing_scope", `this API key lacks the ${scope} scope`, { required_scope: scope });
  }
}

/** What a request carries: the pieces of Elysia's context this file reads. */
interface RequestParts {
  request: Request;
  server: RequestClient["server"];
  headers: Record<string, string | undefined>;
  set: { headers: Record<string, unknown> };
  query: Record<string, unknown>;
  params: Record<string, unknown>;
}

/** How a request names the organisation it acts on (added to every `org:` route's query). */
const OrgIdQuery = t.Object({
  org_id: t.Optional(
    t.String({
      format: "uuid",
      description: "organisation to act on; optional for API keys and for users who belong to one organisation",
    }),
  ),
});

/** How a member's session names the organisation whose key it stands in for (`key: { memberSessions }`). */
const memberRead: Extract<Access, { kind: "org" }> = {
  kind: "org",
  need: "read",
  sessionOnly: true,
  orgTypes: null,
  orgFrom: "query",
};

/** The organisation id a request names, when it names one well-formed (a malformed one is left to validation). */
function namedOrgId(parts: RequestParts, access: Extract<Access, { kind: "org" }>): string | undefined | null {
  const raw = access.orgFrom === "path" ? parts.params.id : parts.query.org_id;
  if (raw === undefined) return undefined;
  return isUuid(raw) ? raw.toLowerCase() : null;
}

/** A key acts on its own organisation alone: one it is told to act on must be that. */
function refuseOtherOrganization(principal: Principal, orgId: string | undefined | null): void {
  if (orgId && orgId !== principal.orgId) {
    throw problem("organization_mismatch", "an API key acts only on its own organisation");
  }
}

/** Each request is authenticated once, whichever of the early hook and the route's macro asks first. */
const admittedRequests = new WeakMap<Request, Promise<Admitted>>();
/** Parallel requests with one session (a dashboard loading) make one lookup between them. */
const sessionLookups = new SingleFlight<SessionUser>();

/**
 * The key a request was admitted with, for a feature's own macro that builds on a
 * `key:` declaration (the reads' data scope). The declaration has admitted it by then.
 */
export async function admittedPrincipal(request: Request): Promise<Principal> {
  const principal = (await admittedRequests.get(request))?.principal;
  if (!principal) throw new Error("the route reads the admitted key but declares no `key:` access");
  return principal;
}

/** The key a request was admitted with, if it got that far (for what happens after a refusal). */
export async function admittedPrincipalOf(request: Request): Promise<Principal | undefined> {
  return (await admittedRequests.get(request)?.catch(() => undefined))?.principal;
}

/**
 * Authenticates requests against route declarations. `admit` runs as early as the
 * request allows (before its body is read, from src/http/plugin.ts) and again from
 * the route's macro, which gets the same memoised answer.
 */
export class AccessResolver {
  readonly #admins: ReadonlySet<string>;
  readonly #publicOrigin: string;

  constructor(private readonly ctx: AppContext) {
    this.#admins = operatorAdminEmails(ctx.config.OPERATOR_ADMIN_EMAILS);
    this.#publicOrigin = new URL(ctx.config.PUBLIC_BASE_URL).origin;
  }

  admit(parts: RequestParts, access: Access): Promise<Admitted> {
    let admitted = admittedRequests.get(parts.request);
    if (!admitted) {
      admitted = this.#authenticate(parts, access);
      admittedRequests.set(parts.request, admitted);
    }
    return admitted;
  }

  async #authenticate(parts: RequestParts, access: Access): Promise<Admitted> {
    const { ctx } = this;
    const client = { server: parts.server, request: parts.request };
    const apiKey = parts.headers["x-api-key"];
    switch (access.kind) {
      case "public":
        if (access.limitedBy === "address") {
          admitRequest(ctx.rateLimiter, "public", clientAddress(client), parts.set.headers);
        }
        return {};
      case "key":
      case "partner": {
        const token = access.kind === "key" && access.memberSessions && !apiKey && presentedSessionToken(parts.headers);
        if (token && access.kind === "key") return this.#memberAsKey(client, parts, access, token);
        const principal = await this.#key(client, apiKey);
        if (access.kind === "partner") {
          requireScope(principal, "partner:provision");
          requireScope(principal, "identity:write");
          if (!(await isTrustedPartner(ctx.sql, principal))) {
            throw problem("partner_not_enabled", "this organisation is not enabled as a trusted partner");
          }
        } else {
          if (access.scope) requireScope(principal, access.scope);
          if (access.orgTypes && !access.orgTypes.includes(principal.orgType)) throw orgTypeRefusal(access.orgTypes);
          // Where a member's session names its organisation with org_id, a key may name only its own.
          if (access.memberSessions) refuseOtherOrganization(principal, namedOrgId(parts, memberRead));
        }
        admitRequest(ctx.rateLimiter, limitClassOf(access), principal.keyId, parts.set.headers);
        return { principal };
      }
      case "session": {
        const token = presentedSessionToken(parts.headers);
        if (!token && apiKey) {
          await this.#key(client, apiKey);
          throw problem("session_required", "this endpoint needs a signed-in user session, not an API key");
        }
        const user = await this.#session(client, token);
        if (access.operatorAdmin && !user.isOperatorAdmin) {
          throw problem("operator_admin_required", "this endpoint is for operator admins");
        }
        admitRequest(ctx.rateLimiter, "control", `user:${user.userId}`, parts.set.headers);
        return { user };
      }
      case "org": {
        const admitted = await this.#orgCaller(client, parts, access);
        // Membership and role too, before the body is read, unless the organisation
        // id is malformed: then validation names it, and the route's macro decides after.
        const orgId = namedOrgId(parts, access);
        return orgId === null ? admitted : { ...admitted, org: await this.orgAccess(admitted, access, orgId) };
      }
    }
  }

  /** A key or a session; when both are sent, the key is used. */
  async #orgCaller(client: RequestClient, parts: RequestParts, access: Extract<Access, { kind: "org" }>) {
    const apiKey = parts.headers["x-api-key"];
    if (apiKey) {
      const principal = await this.#key(client, apiKey);
      if (access.sessionOnly || access.need === "manage") {
        throw problem("session_required", "this endpoint needs a member's session, not an API key");
      }
      requireScope(principal, keyScopeFor[access.need]);
      admitRequest(this.ctx.rateLimiter, "control", principal.keyId, parts.set.headers);
      return { principal };
    }
    const token = presentedSessionToken(parts.headers);
    if (!token) {
      throw problem(
        "unauthorized",
        "send an API key in X-API-Key, or a user session (Authorization: Bearer or cookie)",
      );
    }
    const user = await this.#session(client, token);
    admitRequest(this.ctx.rateLimiter, "control", `user:${user.userId}`, parts.set.headers);
    return { user };
  }

  /**
   * A member's session where a key with `access.scope` is declared: the organisation
   * named by `org_id` (or the user's only one), acting as a key of it with that
   * scope alone. Dashboards read telemetry this way without minting a key.
   */
  async #memberAsKey(
    client: RequestClient,
    parts: RequestParts,
    access: Extract<Access, { kind: "key" }>,
    token: string,
  ): Promise<Admitted> {
    const user = await this.#session(client, token);
    const orgId = namedOrgId(parts, memberRead);
    if (orgId === null) {
      throw invalid("the query parameters are invalid: /org_id", [{ path: "/org_id", message: "must be a UUID" }]);
    }
    const org = await this.orgAccess({ user }, memberRead, orgId);
    if (access.orgTypes && !access.orgTypes.includes(org.orgType)) throw orgTypeRefusal(access.orgTypes);
    const principal: Principal = {
      keyId: `user:${user.userId}`,
      orgId: org.orgId,
      orgType: org.orgType,
      scopes: new Set(access.scope ? [access.scope] : []),
      verifiedDomains: await verifiedDomainsOf(this.ctx.sql, org.orgId),
    };
    admitRequest(this.ctx.rateLimiter, limitClassOf(access), principal.keyId, parts.set.headers);
    return { principal, user, org };
  }

  /** A failed lookup counts against the client's address (rate-limit.ts). */
  #key(client: RequestClient, key: string | undefined): Promise<Principal> {
    return authenticateCountingFailures(this.ctx.rateLimiter, client, (beforeLookup) =>
      this.ctx.keys.authenticate(key, beforeLookup),
    );
  }

  async #session(client: RequestClient, token: string | undefined): Promise<SessionUser> {
    // Without an Authorization header, the token is the cookie's (presentedSessionToken).
    const fromCookie = token !== undefined && !client.request.headers.has("authorization");
    if (fromCookie) {
      refuseCrossSite(
        client.request,
        this.#publicOrigin,
        "a change signed in by the session cookie",
        "other clients send the session as Authorization: Bearer",
      );
    }
    try {
      return await authenticateCountingFailures(this.ctx.rateLimiter, client, (beforeLookup) =>
        token
          ? sessionLookups.run(token, () => authenticateSession(this.ctx.sql, token, this.#admins, beforeLookup))
          : authenticateSession(this.ctx.sql, token, this.#admins),
      );
    } catch (error) {
      // A browser sends a dead cookie with every request, each a failed credential: the refusal clears it.
      if (!fromCookie || !(error instanceof ProblemError) || error.code !== "unauthorized") throw error;
      const cleared = clearedSessionCookie(this.ctx.config.SESSION_COOKIE_SECURE);
      throw problem("unauthorized", error.message, error.extensions, { ...error.headers, "set-cookie": cleared });
    }
  }

  /**
   * The organisation a request acts on and what the caller may do there. A key
   * always acts on its own organisation (`org_id`, when given, must match); a
   * session names it with `org_id`, which may be left out when the user belongs to
   * exactly one organisation.
   */
  async orgAccess(
    admitted: Admitted,
    access: Extract<Access, { kind: "org" }>,
    orgId: string | undefined,
  ): Promise<OrgAccess> {
    let resolved: OrgAccess;
    if (admitted.principal) {
      const { principal } = admitted;
      refuseOtherOrganization(principal, orgId);
      const caller: Caller = { kind: "key", principal };
      resolved = { orgId: principal.orgId, orgType: principal.orgType, caller, actor: auditActorOf(caller) };
    } else {
      const user = admitted.user as SessionUser;
      const memberships = await membershipsOf(this.ctx.sql, user.userId, orgId);
      if (orgId === undefined && memberships.length !== 1) {
        throw invalid(
          "name the organisation with the org_id query parameter",
          [
            {
              path: "/org_id",
              message:
                memberships.length === 0
                  ? "you belong to no organisation"
                  : "is required when you belong to several organisations",
            },
          ],
          "organization_required",
        );
      }
      const membership = memberships[0];
      if (!membership) throw problem("not_a_member", "you are not a member of this organisation");
      if (membership.suspended) throw organizationSuspended();
      if (access.need !== "read" && membership.role === "member") {
        throw problem("role_required", "this needs the owner or admin role in the organisation", {
          required_roles: ["owner", "admin"],
        });
      }
      const caller: Caller = { kind: "session", user };
      resolved = {
        orgId: membership.org_id,
        orgType: membership.org_type,
        caller,
        actor: auditActorOf(caller),
        role: membership.role,
      };
    }
    if (access.orgTypes && !access.orgTypes.includes(resolved.orgType)) throw orgTypeRefusal(access.orgTypes);
    return resolved;
  }
}

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

/**
 * The macros a route declares who may call it with:
 * - `public: true | "by_address"`: anyone (`by_address`: counted per client address);
 * - `key: <scope> | true | { scope, orgTypes, limitClass? }`: an API key (`principal`);
 * - `session: true | "operator_admin"`: a signed-in user (`user`);
 * - `org: <need> | { need, sessionOnly?, orgTypes?, orgFrom? }`: a key or a member's
 *   session acting on an organisation (`access`), named by `org_id` (or the `:id` path segment);
 * - `partner: true`: a trusted partner's key (`principal`).
 */
export const accessPlugin = (ctx: AppContext) => {
  const resolver = new AccessResolver(ctx);
  return new Elysia({ name: "access" }).macro({
    public: (limitedBy: true | "by_address") => {
      const access: Access = { kind: "public", limitedBy: limitedBy === "by_address" ? "address" : "nothing" };
      return {
        detail: documented(access),
        async resolve(parts) {
          await resolver.admit(parts, access);
          return {};
        },
      };
    },
    key: (declared: KeyDeclaration) => {
      const access = declaredKey(declared);
      return {
        detail: documented(access),
        async resolve(parts) {
          const { principal } = await resolver.admit(parts, access);
          return { principal: principal as Principal };
        },
      };
    },
    session: (declared: true | "operator_admin") => {
      const access: Access = { kind: "session", operatorAdmin: declared === "operator_admin" };
      return {
        detail: documented(access),
        async resolve(parts) {
          const { user } = await resolver.admit(parts, access);
          return { user: user as SessionUser };
        },
      };
    },
    org: (declared: OrgDeclaration) => {
      const access = declaredOrg(declared);
      return {
        detail: documented(access),
        // Typed as always there, so that typed clients (the dashboard's Eden Treaty) may pass
        // org_id; the one route naming its organisation in the path (GET /organizations/:id) has none.
        ...((access.orgFrom === "query" ? { query: OrgIdQuery } : {}) as { query: typeof OrgIdQuery }),
        async resolve(parts) {
          const admitted = await resolver.admit(parts, access);
          // Validation has passed by now, so the organisation id is well-formed.
          return {
            access:
              admitted.org ?? (await resolver.orgAccess(admitted, access, namedOrgId(parts, access) ?? undefined)),
          };
        },
      };
    },
    partner: (_declared: true) => {
      const access: Access = { kind: "partner" };
      return {
        detail: documented(access),
        async resolve(parts) {
          const { principal } = await resolver.admit(parts, access);
          return { principal: principal as Principal };
        },
      };
    },
  });
};

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
