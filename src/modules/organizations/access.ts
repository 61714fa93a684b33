import type { OrgAccess } from "../../core/caller.ts";
import { type AuditActor, auditActorOf, type Caller } from "../../core/caller.ts";
import type { MemberRole, OrgType } from "../../core/organizations.ts";
import { invalid, problem } from "../../core/problem.ts";
import type { Scope } from "../../core/scopes.ts";
import type { Queryable } from "../../db/sql.ts";

/**
 * What a route needs on an organisation:
 * - `read`: a member's session, or a key of that organisation with identity:read;
 * - `write`: an owner's or admin's session, or a key of that organisation with identity:write;
 * - `manage`: an owner's or admin's session only (members, invites, audit: keys never reach these).
 */
export type OrgNeed = "read" | "write" | "manage";

const keyScopeFor: Record<Exclude<OrgNeed, "manage">, Scope> = { read: "identity:read", write: "identity:write" };

/**
 * Resolves which organisation a request acts on and whether the caller may.
 * A key always acts on its own organisation (`org_id`, when given, must match);
 * a session names it with `org_id`, which may be left out when the user belongs
 * to exactly one organisation.
 */
export async function resolveOrgAccess(
  sql: Queryable,
  caller: Caller,
  requestedOrgId: string | undefined,
  need: OrgNeed,
): Promise<OrgAccess> {
  if (caller.kind === "key") {
    const { principal } = caller;
    if (need === "manage") {
      throw problem("session_required", "this endpoint needs an owner's or admin's session, not an API key");
    }
    if (requestedOrgId !== undefined && requestedOrgId !== principal.orgId) {
      throw problem("organization_mismatch", "an API key acts only on its own organisation");
    }
    const scope = keyScopeFor[need];
    if (!principal.scopes.has(scope)) {
      throw problem("missing_scope", `this API key lacks the ${scope} scope`, { required_scope: scope });
    }
    return { orgId: principal.orgId, orgType: principal.orgType, caller, actor: auditActorOf(caller) };
  }

  const memberships = await sql<{ org_id: string; org_type: OrgType; role: MemberRole }[]>`
    SELECT m.org_id, o.org_type, m.role
    FROM organization_members m JOIN organizations o ON o.id = m.org_id
    WHERE m.user_id = ${caller.user.userId}::uuid
      ${requestedOrgId === undefined ? sql`` : sql`AND m.org_id = ${requestedOrgId}::uuid`}
    LIMIT 2`;
  if (requestedOrgId === undefined && memberships.length !== 1) {
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
  if (need !== "read" && membership.role === "member") {
    throw problem("role_required", "this needs the owner or admin role in the organisation", {
      required_roles: ["owner", "admin"],
    });
  }
  return {
    orgId: membership.org_id,
    orgType: membership.org_type,
    caller,
    actor: auditActorOf(caller),
    role: membership.role,
  };
}
