import { auditActorOf, type Caller, type OrgAccess, type Principal, type SessionUser } from "../core/caller.ts";
import { type OrgType, organizationSuspended } from "../core/organizations.ts";
import { invalid, problem } from "../core/problem.ts";
import { isUuid } from "../core/uuid.ts";
import type { Queryable } from "../db/sql.ts";
import { membershipsOf } from "../modules/organizations/service.ts";
import type { Access } from "./access-declarations.ts";

const orgTypeRefusals = {
  content_owner_only: "only content-owner organisations may do this",
  platform_key_required: "only platform and agent organisations may do this",
} as const;

/** The problem code a route for `orgTypes` answers a caller of another type with. */
export const orgTypeRefusalCode = (orgTypes: readonly OrgType[]): keyof typeof orgTypeRefusals =>
  orgTypes.includes("content_owner") ? "content_owner_only" : "platform_key_required";

export const orgTypeRefusal = (orgTypes: readonly OrgType[]) => {
  const code = orgTypeRefusalCode(orgTypes);
  return problem(code, orgTypeRefusals[code]);
};

/** How a member's session names the organisation whose key it stands in for (`key: { memberSessions }`). */
export const memberRead: Extract<Access, { kind: "org" }> = {
  kind: "org",
  need: "read",
  sessionOnly: true,
  orgTypes: null,
  orgFrom: "query",
};

/** The organisation id a request names, when it names one well-formed (a malformed one is left to validation). */
export function namedOrgId(
  parts: { query: Record<string, unknown>; params: Record<string, unknown> },
  access: Extract<Access, { kind: "org" }>,
): string | undefined | null {
  const raw = access.orgFrom === "path" ? parts.params.id : parts.query.org_id;
  if (raw === undefined) return undefined;
  return isUuid(raw) ? raw.toLowerCase() : null;
}

/** A key acts on its own organisation alone: one it is told to act on must be that. */
export function refuseOtherOrganization(principal: Principal, orgId: string | undefined | null): void {
  if (orgId && orgId !== principal.orgId) {
    throw problem("organization_mismatch", "an API key acts only on its own organisation");
  }
}

/**
 * The organisation a request acts on and what the caller may do there. A key
 * always acts on its own organisation (`org_id`, when given, must match); a
 * session names it with `org_id`, which may be left out when the user belongs to
 * exactly one organisation.
 */
export async function orgAccessOf(
  sql: Queryable,
  admitted: { principal?: Principal; user?: SessionUser },
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
    const memberships = await membershipsOf(sql, user.userId, orgId);
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
