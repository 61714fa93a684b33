import type { OrgAccess } from "../../core/caller.ts";
import type { MemberRole } from "../../core/organizations.ts";
import { problem } from "../../core/problem.ts";

/**
 * Who may change whom. Owners manage everyone; admins manage admins and members
 * but can neither make owners nor touch an owner; members manage no one.
 */
export function assertMayAssign(actorRole: MemberRole | undefined, role: MemberRole): void {
  if (role === "owner" && actorRole !== "owner") {
    throw problem("owner_role_required", "only an owner may make someone an owner");
  }
}

export function assertMayChange(actorRole: MemberRole | undefined, targetRole: MemberRole): void {
  if (targetRole === "owner" && actorRole !== "owner") {
    throw problem("owner_role_required", "only an owner may change or remove an owner");
  }
}

/** Managing members takes the owner or admin role (an API key with the scope acts as an admin). */
export function assertManages(actor: OrgAccess): void {
  if (actor.role === "member") {
    throw problem("role_required", "this needs the owner or admin role in the organisation", {
      required_roles: ["owner", "admin"],
    });
  }
}

/** Anyone may leave; removing someone else takes the owner or admin role (and an owner to remove an owner). */
export function assertMayRemove(actor: OrgAccess, member: { user_id: string; role: MemberRole }): void {
  if (actor.caller.kind === "session" && actor.caller.user.userId === member.user_id) return;
  assertManages(actor);
  assertMayChange(actor.role, member.role);
}
