import type { Static } from "elysia";
import type { AuditActor, OrgAccess } from "../../core/caller.ts";
import type { MemberRole } from "../../core/organizations.ts";
import { problem } from "../../core/problem.ts";
import { pageWithTotal, type Queryable, type Sql, type Transaction } from "../../db/sql.ts";
import { recordAudit } from "../audit/service.ts";
import { callerNow, joinWithRole, lockMembership } from "./membership-turn.ts";
import type { MemberRecord } from "./model.ts";
import { assertManages, assertMayAssign, assertMayChange, assertMayRemove } from "./roles.ts";

// Partners provision an owner by invitation, through this front door.
export { createInvite, type Invite, mailInvite } from "./invites.ts";

export type Member = Static<typeof MemberRecord>;

export async function listMembers(
  sql: Queryable,
  orgId: string,
  page: { limit: number; offset: number },
): Promise<{ items: Member[]; total: number }> {
  return pageWithTotal(
    sql,
    sql<Member[]>`
    SELECT m.user_id, u.email, m.role, m.created_at
    FROM organization_members m JOIN users u ON u.id = m.user_id
    WHERE m.org_id = ${orgId}::uuid
    ORDER BY m.created_at, u.email LIMIT ${page.limit} OFFSET ${page.offset}`,
    sql`organization_members WHERE org_id = ${orgId}::uuid`,
  );
}

export async function findMember(sql: Queryable, orgId: string, userId: string): Promise<Member | undefined> {
  const [member] = await sql<Member[]>`
    SELECT m.user_id, u.email, m.role, m.created_at
    FROM organization_members m JOIN users u ON u.id = m.user_id
    WHERE m.org_id = ${orgId}::uuid AND m.user_id = ${userId}::uuid`;
  return member;
}

/** Refuses a change that would leave the organisation without an owner (409). */
async function assertOwnerRemains(sql: Queryable, orgId: string, leavingUserId: string): Promise<void> {
  const owners = await sql<{ user_id: string }[]>`
    SELECT user_id FROM organization_members WHERE org_id = ${orgId}::uuid AND role = 'owner'`;
  if (owners.every((owner) => owner.user_id === leavingUserId)) {
    throw problem("last_owner", "an organisation keeps at least one owner: make someone else owner first");
  }
}

/**
 * Runs `change` in a transaction that holds the organisation's membership turn,
 * with the member and the acting user's role as they are now (404 or 403 when
 * either has left meanwhile).
 */
async function changingMember<T>(
  sql: Sql,
  access: OrgAccess,
  userId: string,
  change: (tx: Transaction, member: Member, actor: OrgAccess) => Promise<T>,
): Promise<T> {
  const changed = await sql.begin(async (tx) => {
    await lockMembership(tx, access.orgId);
    const member = await findMember(tx, access.orgId, userId);
    if (!member) throw problem("member_not_found", "no such member of this organisation");
    return change(tx, member, await callerNow(tx, access));
  });
  // postgres.js types a transaction's result as an unwrapped array, which T is not.
  return changed as T;
}

/** `member.role_changed`, in the change's transaction. */
function recordRoleChanged(tx: Transaction, actor: AuditActor, orgId: string, member: Member, to: MemberRole) {
  return recordAudit(tx, {
    actor,
    orgId,
    action: "member.role_changed",
    targetType: "user",
    targetId: member.user_id,
    details: { email: member.email, from: member.role, to },
  });
}

/**
 * The operator's way to give an organisation its people (CLI `member add`): the
 * user joins with `role` as by a claimed invitation, keeping a higher role they
 * hold, in the organisation's membership turn. Recorded as `member.added`, or
 * `member.role_changed` when it raised their role; nothing when it changed
 * nothing. Answers the member with the role held before (null: none).
 */
export async function addMemberAs(
  tx: Transaction,
  input: { orgId: string; userId: string; role: MemberRole; actor: AuditActor },
): Promise<Member & { previous_role: MemberRole | null }> {
  await lockMembership(tx, input.orgId);
  const before = await findMember(tx, input.orgId, input.userId);
  const role = await joinWithRole(tx, input.orgId, input.userId, input.role);
  const member = (await findMember(tx, input.orgId, input.userId)) as Member;
  if (!before) {
    await recordAudit(tx, {
      actor: input.actor,
      orgId: input.orgId,
      action: "member.added",
      targetType: "user",
      targetId: member.user_id,
      details: { email: member.email, role },
    });
  } else if (before.role !== role) {
    await recordRoleChanged(tx, input.actor, input.orgId, before, role);
  }
  return { ...member, previous_role: before?.role ?? null };
}

export function changeRole(sql: Sql, access: OrgAccess, userId: string, role: MemberRole): Promise<Member> {
  return changingMember(sql, access, userId, async (tx, member, actor) => {
    assertManages(actor);
    assertMayChange(actor.role, member.role);
    assertMayAssign(actor.role, role);
    // The role it has already: nothing changes, so nothing is recorded.
    if (member.role === role) return member;
    if (member.role === "owner") await assertOwnerRemains(tx, access.orgId, member.user_id);
    await tx`
      UPDATE organization_members SET role = ${role}
      WHERE org_id = ${access.orgId}::uuid AND user_id = ${member.user_id}::uuid`;
    await recordRoleChanged(tx, access.actor, access.orgId, member, role);
    return { ...member, role };
  });
}

export async function removeMember(sql: Sql, access: OrgAccess, userId: string): Promise<void> {
  await changingMember(sql, access, userId, async (tx, member, actor) => {
    assertMayRemove(actor, member);
    if (member.role === "owner") await assertOwnerRemains(tx, access.orgId, member.user_id);
    await tx`
      DELETE FROM organization_members WHERE org_id = ${access.orgId}::uuid AND user_id = ${member.user_id}::uuid`;
    await recordAudit(tx, {
      actor: access.actor,
      orgId: access.orgId,
      action: "member.removed",
      targetType: "user",
      targetId: member.user_id,
      details: { email: member.email, role: member.role },
    });
  });
}
