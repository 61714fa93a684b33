import type { AppContext } from "../context.ts";
import type { OrgAccess, Principal, SessionUser } from "../core/caller.ts";
import { invalid, ProblemError, problem } from "../core/problem.ts";
import type { Scope } from "../core/scopes.ts";
import { operatorAdminEmails } from "../modules/auth/operator-admins.ts";
import { authenticateSession } from "../modules/auth/sessions.ts";
import { verifiedDomainsOf } from "../modules/domains/service.ts";
import { isTrustedPartner } from "../modules/partners/service.ts";
import type { Access, OrgNeed } from "./access-declarations.ts";
import { clearedSessionCookie, presentedSessionToken } from "./credentials.ts";
import { memberRead, namedOrgId, orgAccessOf, orgTypeRefusal, refuseOtherOrganization } from "./org-access.ts";
import {
  admitRequest,
  authenticateCountingFailures,
  clientAddress,
  type RateLimitClass,
  type RequestClient,
} from "./rate-limit.ts";
import { refuseCrossSite } from "./same-origin.ts";
import { SingleFlight } from "./single-flight.ts";

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
        return orgId === null
          ? admitted
          : { ...admitted, org: await orgAccessOf(this.ctx.sql, admitted, access, orgId) };
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
    // An organisation named by org_id (as the dashboard names it) has its domains read
    // beside the membership, not after it. The membership decides first all the same: a
    // refusal is the answer even when the domains read failed, whichever settled first.
    const [membership, domains] = await Promise.allSettled([
      orgAccessOf(this.ctx.sql, { user }, memberRead, orgId),
      orgId === undefined ? undefined : verifiedDomainsOf(this.ctx.sql, orgId),
    ]);
    if (membership.status === "rejected") throw membership.reason;
    const org = membership.value;
    if (access.orgTypes && !access.orgTypes.includes(org.orgType)) throw orgTypeRefusal(access.orgTypes);
    if (domains.status === "rejected") throw domains.reason;
    const principal: Principal = {
      keyId: `user:${user.userId}`,
      orgId: org.orgId,
      orgType: org.orgType,
      scopes: new Set(access.scope ? [access.scope] : []),
      verifiedDomains: domains.value ?? (await verifiedDomainsOf(this.ctx.sql, org.orgId)),
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
}
