import type { OrgAccess } from "../../core/caller.ts";
import type { MemberRole } from "../../core/organizations.ts";
import { problem } from "../../core/problem.ts";
import type { Transaction } from "../../db/sql.ts";
import { addMember } from "../organizations/service.ts";

// Shared by member changes (service.ts) and invitations (invites.ts): claiming one joins the organisation.

/**
 * Changes to an organisation's members take turns, so that each is checked
 * against the roles the one before it left: two changes checked at once could
 * together remove the last owner, or let an admin remove someone just made owner.
 */
export async function lockMembership(tx: Transaction, orgId: string): Promise<void> {
  await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`members:${orgId}`}, 0))`;
}

/**
 * The caller as it is now: a session's role read again, and held (FOR SHARE)
 * until the transaction ends, so a demotion or removal made meanwhile is seen or
 * waits (403 when the user has left). An API key acts as admitted.
 */
export async function callerNow(tx: Transaction, access: OrgAccess): Promise<OrgAccess> {
  if (access.caller.kind !== "session") return access;
  const [self] = await tx<{ role: MemberRole }[]>`
    SELECT role FROM organization_members
    WHERE org_id = ${access.orgId}::uuid AND user_id = ${access.caller.user.userId}::uuid
    FOR SHARE`;
  if (!self) throw problem("not_a_member", "you are not a member of this organisation");
  return { ...access, role: self.role };
}

/**
 * Adds the user with `role`, or raises a lower role they hold to it: a higher
 * one is kept. Answers the role they hold now; the caller holds the
 * organisation's membership turn.
 */
export async function joinWithRole(
  tx: Transaction,
  orgId: string,
  userId: string,
  role: MemberRole,
): Promise<MemberRole> {
  await addMember(tx, orgId, userId, role);
  const [member] = await tx<{ role: MemberRole }[]>`
    UPDATE organization_members
    SET role = CASE WHEN ${role} = 'owner' OR (${role} = 'admin' AND role = 'member') THEN ${role} ELSE role END
    WHERE org_id = ${orgId}::uuid AND user_id = ${userId}::uuid
    RETURNING role`;
  return (member as { role: MemberRole }).role;
}
