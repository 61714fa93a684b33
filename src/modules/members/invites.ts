import type { Static } from "elysia";
import type { AppContext } from "../../context.ts";
import type { AuditActor, OrgAccess } from "../../core/caller.ts";
import { normalizeEmail } from "../../core/email.ts";
import { type MemberRole, organizationSuspended } from "../../core/organizations.ts";
import { ProblemError, problem } from "../../core/problem.ts";
import { pageWithTotal, type Queryable, type Sql, type Transaction } from "../../db/sql.ts";
import { recordAudit } from "../audit/service.ts";
import { findOrganization } from "../organizations/service.ts";
import { enqueueEvent } from "../outbox/service.ts";
import { callerNow, joinWithRole, lockMembership } from "./membership-turn.ts";
import type { InviteRecord, MyInvite } from "./model.ts";
import { assertManages, assertMayAssign } from "./roles.ts";

export type Invite = Static<typeof InviteRecord>;

/** How long an invitation can be claimed. */
export const inviteLifetimeDays = 14;

/**
 * Invitations one address may get in a day, from all organisations together and
 * revoked ones counted: each is a mail that names an organisation its inviter
 * chose, so inviting and revoking in a loop would flood the address.
 */
export const maxInvitationsPerAddressPerDay = 5;

/** Creates an invitation (one open invitation per address and organisation: 409 otherwise). */
export async function createInvite(
  sql: Transaction,
  input: { orgId: string; email: string; role: MemberRole; provisioningOrgId?: string; actor: AuditActor },
): Promise<Invite> {
  const email = normalizeEmail(input.email);
  // Invitations of one address take turns, so a second sees the first (and the day's count) and is refused.
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`invite:${email}`}, 0))`;
  // `frees_in`: seconds until the day's oldest leaves the count, when the next may be sent.
  const [today] = await sql<{ n: number; frees_in: number | null }[]>`
    SELECT count(*)::int AS n, ceil(extract(epoch FROM min(created_at) + interval '1 day' - now()))::int AS frees_in
    FROM invites WHERE email = ${email} AND created_at > now() - interval '1 day'`;
  if ((today?.n ?? 0) >= maxInvitationsPerAddressPerDay) {
    const retryAfterSeconds = Math.max(1, today?.frees_in ?? 1);
    throw problem(
      "too_many_invitations",
      `${email} was invited ${maxInvitationsPerAddressPerDay} times in the last day, revoked invitations included: invite it again in ${retryAfterSeconds} s`,
      { retry_after_seconds: retryAfterSeconds },
      { "retry-after": String(retryAfterSeconds) },
    );
  }
  const [existing] = await sql<{ id: string }[]>`
    SELECT id FROM invites
    WHERE org_id = ${input.orgId}::uuid AND email = ${email} AND claimed_at IS NULL AND revoked_at IS NULL
      AND expires_at > now()`;
  if (existing) throw problem("invite_exists", `${email} already has an open invitation: revoke it first`);
  // An expired, unclaimed invitation no longer blocks a new one.
  await sql`
    UPDATE invites SET revoked_at = now()
    WHERE org_id = ${input.orgId}::uuid AND email = ${email} AND claimed_at IS NULL AND revoked_at IS NULL
      AND expires_at <= now()`;
  const [invite] = await sql<Invite[]>`
    INSERT INTO invites (org_id, email, role, provisioning_org_id, expires_at)
    VALUES (${input.orgId}::uuid, ${email}, ${input.role}, ${input.provisioningOrgId ?? input.orgId}::uuid,
            now() + make_interval(days => ${inviteLifetimeDays}))
    RETURNING *`;
  const created = invite as Invite;
  await recordAudit(sql, {
    actor: input.actor,
    orgId: input.orgId,
    action: "invite.created",
    targetType: "invite",
    targetId: created.id,
    details: { email, role: input.role },
  });
  return created;
}

/** A member's (or key's) invitation, checked against the caller's role as it is now. */
export function inviteAs(sql: Sql, access: OrgAccess, email: string, role: MemberRole): Promise<Invite> {
  return sql.begin(async (tx) => {
    const caller = await callerNow(tx, access);
    assertManages(caller);
    assertMayAssign(caller.role, role);
    return createInvite(tx, { orgId: access.orgId, email, role, actor: access.actor });
  });
}

/** The organisation's open invitations: neither claimed, revoked nor expired. */
export async function listOrgInvites(
  sql: Queryable,
  orgId: string,
  page: { limit: number; offset: number },
): Promise<{ items: Invite[]; total: number }> {
  const open = sql`org_id = ${orgId}::uuid AND claimed_at IS NULL AND revoked_at IS NULL AND expires_at > now()`;
  return pageWithTotal(
    sql,
    sql<Invite[]>`
    SELECT * FROM invites WHERE ${open} ORDER BY created_at, id LIMIT ${page.limit} OFFSET ${page.offset}`,
    sql`invites WHERE ${open}`,
  );
}

/** Open, unexpired invitations addressed to this e-mail, with the inviting organisation's name. */
export async function listInvitesFor(
  sql: Queryable,
  email: string,
  page: { limit: number; offset: number },
): Promise<{ items: Static<typeof MyInvite>[]; total: number }> {
  const open = sql`i.email = ${normalizeEmail(email)} AND i.claimed_at IS NULL AND i.revoked_at IS NULL
    AND i.expires_at > now()`;
  return pageWithTotal(
    sql,
    sql<Static<typeof MyInvite>[]>`
    SELECT i.*, o.name AS organization_name
    FROM invites i JOIN organizations o ON o.id = i.org_id
    WHERE ${open} ORDER BY i.created_at, i.id LIMIT ${page.limit} OFFSET ${page.offset}`,
    sql`invites i WHERE ${open}`,
  );
}

export async function revokeInvite(sql: Sql, access: OrgAccess, inviteId: string): Promise<void> {
  const input = { orgId: access.orgId, inviteId, actor: access.actor };
  await sql.begin(async (tx) => {
    // The invitation before the caller's membership, in the order a claim locks
    // them: an admin revoking an invitation to their own address while claiming
    // it would otherwise deadlock.
    const [invite] = await tx<{ id: string; email: string; role: MemberRole }[]>`
      SELECT id, email, role FROM invites
      WHERE id = ${input.inviteId}::uuid AND org_id = ${input.orgId}::uuid AND claimed_at IS NULL AND revoked_at IS NULL
      FOR UPDATE`;
    const actor = await callerNow(tx, access);
    assertManages(actor);
    if (!invite) throw problem("invite_not_found", "this organisation has no such open invitation");
    // An owner's invitation is an owner in the making: only an owner may undo it, as only one may make it.
    if (invite.role === "owner" && actor.role !== "owner") {
      throw problem("owner_role_required", "only an owner may revoke an owner's invitation");
    }
    await tx`UPDATE invites SET revoked_at = now() WHERE id = ${invite.id}::uuid`;
    await recordAudit(tx, {
      actor: input.actor,
      orgId: input.orgId,
      action: "invite.revoked",
      targetType: "invite",
      targetId: invite.id,
      details: { email: invite.email },
    });
  });
}

/**
 * A signed-in user takes up an invitation addressed to their e-mail: they join
 * with its role (keeping a higher role they already hold), and `invite.claimed`
 * is recorded for the provisioning organisation, all in one transaction.
 */
export async function claimInvite(
  sql: Sql,
  input: { inviteId: string; userId: string; email: string; actor: AuditActor },
): Promise<{ invite: Invite; role: MemberRole }> {
  return sql.begin(async (tx) => {
    const [invite] = await tx<Invite[]>`SELECT * FROM invites WHERE id = ${input.inviteId}::uuid FOR UPDATE`;
    // Another address's invitation answers like none at all, so ids cannot be probed.
    if (!invite || invite.revoked_at || invite.email !== normalizeEmail(input.email)) {
      throw problem("invite_not_found", "you have no such invitation");
    }
    if (invite.claimed_at) throw problem("invite_claimed", "this invitation has already been claimed");
    if (invite.expires_at.getTime() <= Date.now()) throw problem("invite_expired", "this invitation has expired");
    await lockMembership(tx, invite.org_id);
    // Joining is acting for the organisation, which a suspension stops; the invitation stays open.
    const [org] = await tx<{ suspended: boolean }[]>`
      SELECT suspended_at IS NOT NULL AS suspended FROM organizations WHERE id = ${invite.org_id}::uuid`;
    if (org?.suspended) throw organizationSuspended();

    const role = await joinWithRole(tx, invite.org_id, input.userId, invite.role);
    const [claimed] = await tx<Invite[]>`
      UPDATE invites SET claimed_at = now(), claimed_by = ${input.userId}::uuid WHERE id = ${invite.id} RETURNING *`;
    const done = claimed as Invite;
    await enqueueEvent(tx, {
      orgId: invite.provisioning_org_id,
      type: "invite.claimed",
      data: {
        invite: {
          id: done.id,
          organization_id: done.org_id,
          email: done.email,
          role: done.role,
          claimed_at: done.claimed_at,
        },
        user_id: input.userId,
      },
    });
    await recordAudit(tx, {
      actor: input.actor,
      orgId: invite.org_id,
      action: "invite.claimed",
      targetType: "invite",
      targetId: invite.id,
      details: { email: invite.email, role: invite.role },
    });
    return { invite: done, role };
  });
}

/**
 * Tells the invited address about its invitation. The invitation is committed
 * by then and stands without the mail (the invitee finds it in GET /me/invites),
 * so a mail server that cannot take the message is logged, not answered as a
 * failure of a change that was in fact made.
 */
export async function mailInvite(ctx: AppContext, invite: Invite): Promise<void> {
  const org = await findOrganization(ctx.sql, invite.org_id);
  const link = `${ctx.config.PUBLIC_BASE_URL}/api/v1/identity/me/invites`;
  try {
    await ctx.mailer.send({
      to: invite.email,
      subject: `You are invited to ${org?.name ?? "an organisation"} on Content Telemetry`,
      text: `You have been invited to join ${org?.name ?? "an organisation"} as ${invite.role}. Sign in with this address, then claim invitation ${invite.id} (POST /api/v1/identity/invites/${invite.id}/claim). Your open invitations: ${link}`,
      link,
    });
  } catch (error) {
    if (!(error instanceof ProblemError && error.code === "mail_unavailable")) throw error;
    ctx.log.warn("invitation stored but not mailed", { invite_id: invite.id, code: error.code });
  }
}
