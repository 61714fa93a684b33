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
