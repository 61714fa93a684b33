import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { auditActorOf } from "../../core/caller.ts";
import { ProblemError, problem } from "../../core/problem.ts";
import { Paged, PageQuery, pageOf } from "../../http/paging.ts";
import { sessionAuth, sessionSecurity } from "../../http/session-auth.ts";
import { resolveOrgAccess } from "../organizations/access.ts";
import { OrgIdQuery } from "../organizations/model.ts";
import { findOrganization } from "../organizations/service.ts";
import {
  ClaimResult,
  InviteBody,
  InviteParams,
  InviteRecord,
  MemberRecord,
  MyInvite,
  RoleBody,
  UserParams,
} from "./model.ts";
import { assertMayAssign, assertMayChange } from "./roles.ts";
import {
  changeRole,
  claimInvite,
  createInvite,
  findMember,
  type Invite,
  listInvitesFor,
  listMembers,
  listOrgInvites,
  removeMember,
  revokeInvite,
} from "./service.ts";

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

export const membersModule = (ctx: AppContext) =>
  new Elysia({
    name: "identity.members",
    prefix: "/api/v1/identity",
    detail: { tags: ["Identity: members and invites"] },
  })
    .use(sessionAuth(ctx))
    .get(
      "/members",
      async ({ caller, query }) => {
        // Members' e-mail addresses are for people of the organisation, not for
        // keys deployed on servers and edges (identity:read covers domains, keys, delegations).
        if (caller.kind === "key") {
          throw problem("session_required", "listing members needs a member's session, not an API key");
        }
        const access = await resolveOrgAccess(ctx.sql, caller, query.org_id, "read");
        const page = pageOf(query);
        return { ...(await listMembers(ctx.sql, access.orgId, page)), ...page };
      },
      {
        caller: true,
        query: t.Object({ ...OrgIdQuery, ...PageQuery }),
        response: Paged(MemberRecord),
        detail: {
          summary: "Members and their roles (a member's session)",
          security: sessionSecurity,
        },
      },
    )
    .patch(
      "/members/:user_id",
      async ({ caller, query, params, body }) => {
        const access = await resolveOrgAccess(ctx.sql, caller, query.org_id, "manage");
        const member = await findMember(ctx.sql, access.orgId, params.user_id);
        if (!member) throw problem("member_not_found", "no such member of this organisation");
        assertMayChange(access.role, member.role);
        assertMayAssign(access.role, body.role);
        return changeRole(ctx.sql, { orgId: access.orgId, member, role: body.role, actor: access.actor });
      },
      {
        caller: true,
        query: t.Object(OrgIdQuery),
        params: UserParams,
        body: RoleBody,
        response: MemberRecord,
        detail: {
          summary:
            "Change a member's role (owner/admin session; only owners make or unmake owners; the last owner stays)",
          security: sessionSecurity,
        },
      },
    )
    .delete(
      "/members/:user_id",
      async ({ caller, query, params, set }) => {
        const leaving = caller.kind === "session" && caller.user.userId === params.user_id;
        const access = await resolveOrgAccess(ctx.sql, caller, query.org_id, leaving ? "read" : "manage");
        if (caller.kind === "key") throw problem("session_required", "members are managed with a session");
        const member = await findMember(ctx.sql, access.orgId, params.user_id);
        if (!member) throw problem("member_not_found", "no such member of this organisation");
        if (!leaving) assertMayChange(access.role, member.role);
        await removeMember(ctx.sql, { orgId: access.orgId, member, actor: access.actor });
        set.status = 204;
      },
      {
        caller: true,
        query: t.Object(OrgIdQuery),
        params: UserParams,
        detail: {
          summary: "Remove a member, or leave (any member may remove themselves; the last owner cannot)",
          security: sessionSecurity,
        },
      },
    )
    .post(
      "/invites",
      async ({ caller, query, body, set }) => {
        const access = await resolveOrgAccess(ctx.sql, caller, query.org_id, "manage");
        const role = body.role ?? "member";
        assertMayAssign(access.role, role);
        const invite = await ctx.sql.begin((tx) =>
          createInvite(tx, { orgId: access.orgId, email: body.email, role, actor: access.actor }),
        );
        await mailInvite(ctx, invite);
        set.status = 201;
        return invite;
      },
      {
        caller: true,
        query: t.Object(OrgIdQuery),
        body: InviteBody,
        response: { 201: InviteRecord },
        detail: {
          summary: "Invite an e-mail address (owner/admin session; role defaults to member; 14 days to claim)",
          security: sessionSecurity,
        },
      },
    )
    .get(
      "/invites",
      async ({ caller, query }) => {
        const access = await resolveOrgAccess(ctx.sql, caller, query.org_id, "manage");
        const page = pageOf(query);
        return { ...(await listOrgInvites(ctx.sql, access.orgId, page)), ...page };
      },
      {
        caller: true,
        query: t.Object({ ...OrgIdQuery, ...PageQuery }),
        response: Paged(InviteRecord),
        detail: { summary: "Open invitations of the organisation (owner/admin session)", security: sessionSecurity },
      },
    )
    .delete(
      "/invites/:id",
      async ({ caller, query, params, set }) => {
        const access = await resolveOrgAccess(ctx.sql, caller, query.org_id, "manage");
        await revokeInvite(ctx.sql, { orgId: access.orgId, inviteId: params.id, actor: access.actor });
        set.status = 204;
      },
      {
        caller: true,
        query: t.Object(OrgIdQuery),
        params: InviteParams,
        detail: { summary: "Revoke an open invitation (owner/admin session)", security: sessionSecurity },
      },
    )
    .get("/me/invites", async ({ user }) => ({ items: await listInvitesFor(ctx.sql, user.email) }), {
      session: true,
      response: t.Object({ items: t.Array(MyInvite) }),
      detail: {
        summary: "Open invitations addressed to the signed-in user's e-mail (at most 100)",
        security: sessionSecurity,
      },
    })
    .post(
      "/invites/:id/claim",
      async ({ user, params }) => {
        const claimed = await claimInvite(ctx.sql, {
          inviteId: params.id,
          userId: user.userId,
          email: user.email,
          actor: auditActorOf({ kind: "session", user }),
        });
        return { organization_id: claimed.invite.org_id, role: claimed.role, invite: claimed.invite };
      },
      {
        session: true,
        params: InviteParams,
        response: ClaimResult,
        detail: {
          summary: "Claim an invitation addressed to the signed-in user's e-mail; records invite.claimed",
          description: "403 invite_not_for_you for another address, 409 invite_claimed, 410 invite_expired.",
          security: sessionSecurity,
        },
      },
    );
