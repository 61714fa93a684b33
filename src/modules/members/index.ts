import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { auditActorOf } from "../../core/caller.ts";
import { accessPlugin } from "../../http/access.ts";
import { noContent } from "../../http/bodiless-answers.ts";
import { IdParams } from "../../http/id-params.ts";
import { ownProblems } from "../../http/openapi-examples.ts";
import { answerPage, Paged, pageQuery } from "../../http/paging.ts";
import { claimInvite, inviteAs, listInvitesFor, listOrgInvites, mailInvite, revokeInvite } from "./invites.ts";
import { ClaimResult, InviteBody, InviteRecord, MemberRecord, MyInvite, RoleBody, UserParams } from "./model.ts";
import { changeRole, listMembers, removeMember } from "./service.ts";

export const membersModule = (ctx: AppContext) =>
  new Elysia({
    name: "identity.members",
    prefix: "/api/v1/identity",
    detail: { tags: ["Identity: members and invites"] },
  })
    .use(accessPlugin(ctx))
    .get("/members", ({ access, query }) => answerPage(query, (page) => listMembers(ctx.sql, access.orgId, page)), {
      // Members' e-mail addresses are for people of the organisation, not for
      // keys deployed on servers and edges (identity:read covers domains, keys, delegations).
      org: { need: "read", sessionOnly: true },
      query: t.Object(pageQuery()),
      response: Paged(MemberRecord),
      detail: {
        summary: "Members and their roles (a member's session)",
      },
    })
    .patch("/members/:user_id", ({ access, params, body }) => changeRole(ctx.sql, access, params.user_id, body.role), {
      org: "manage",
      params: UserParams,
      body: RoleBody,
      response: MemberRecord,
      detail: {
        summary:
          "Change a member's role (owner/admin session; only owners make or unmake owners; the last owner stays)",
        ...ownProblems("owner_role_required", "last_owner"),
      },
    })
    .delete(
      "/members/:user_id",
      async ({ access, params, set }) => {
        await removeMember(ctx.sql, access, params.user_id);
        set.status = 204;
      },
      {
        // Any member may leave; removing someone else needs the role (members/roles.ts).
        org: { need: "read", sessionOnly: true },
        params: UserParams,
        detail: {
          summary: "Remove a member, or leave (any member may remove themselves; the last owner cannot)",
          ...ownProblems("owner_role_required", "last_owner"),
          responses: noContent("removed"),
        },
      },
    )
    .post(
      "/invites",
      async ({ access, body, set }) => {
        const invite = await inviteAs(ctx.sql, access, body.email, body.role ?? "member");
        await mailInvite(ctx, invite);
        set.status = 201;
        return invite;
      },
      {
        org: "manage",
        body: InviteBody,
        response: { 201: InviteRecord },
        detail: {
          summary: "Invite an e-mail address (owner/admin session; role defaults to member; 14 days to claim)",
          ...ownProblems("owner_role_required", "invite_exists", "too_many_invitations"),
        },
      },
    )
    .get("/invites", ({ access, query }) => answerPage(query, (page) => listOrgInvites(ctx.sql, access.orgId, page)), {
      org: "manage",
      query: t.Object(pageQuery()),
      response: Paged(InviteRecord),
      detail: { summary: "Open invitations of the organisation (owner/admin session)" },
    })
    .delete(
      "/invites/:id",
      async ({ access, params, set }) => {
        await revokeInvite(ctx.sql, access, params.id);
        set.status = 204;
      },
      {
        org: "manage",
        params: IdParams,
        detail: {
          summary: "Revoke an open invitation (owner/admin session; an owner's invitation, an owner only)",
          ...ownProblems("owner_role_required"),
          responses: noContent("revoked"),
        },
      },
    )
    .get("/me/invites", ({ user, query }) => answerPage(query, (page) => listInvitesFor(ctx.sql, user.email, page)), {
      session: true,
      query: t.Object(pageQuery()),
      response: Paged(MyInvite),
      detail: { summary: "Open invitations addressed to the signed-in user's e-mail, oldest first" },
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
        params: IdParams,
        response: ClaimResult,
        detail: {
          summary: "Claim an invitation addressed to the signed-in user's e-mail; records invite.claimed",
          ...ownProblems("invite_claimed", "invite_expired", "organization_suspended"),
          description:
            "404 invite_not_found for an invitation addressed to another address (as for none at all), 409 invite_claimed, 410 invite_expired, 403 organization_suspended while the organisation is suspended (the invitation stays open).",
        },
      },
    );
