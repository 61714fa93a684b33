import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { auditActorOf } from "../../core/caller.ts";
import { accessPlugin } from "../../http/access.ts";
import { IdParams } from "../../http/id-params.ts";
import { requireObjectBody } from "../../http/object-body.ts";
import { ownProblems } from "../../http/openapi-examples.ts";
import { answerPage, Paged, pageQuery } from "../../http/paging.ts";
import { AccessRequestBody, AccessRequestListQuery, AccessRequestRecord, ReviewBody } from "./model.ts";
import { type AccessRequestType, listAccessRequests, reviewAccessRequest, submitAccessRequest } from "./service.ts";

/** POST and GET of one kind of access request (platform or agent): same body, same record. */
const requestRoutes = <OrgType extends AccessRequestType>(ctx: AppContext, orgType: OrgType) =>
  new Elysia({ name: `identity.access-requests.${orgType}` })
    .use(accessPlugin(ctx))
    .post(
      `/${orgType}-access-requests`,
      async ({ body, user, set }) => {
        set.status = 201;
        return submitAccessRequest(ctx.sql, {
          orgType,
          userId: user.userId,
          orgName: body.org_name,
          adminEmail: body.admin_email,
          useCase: body.use_case,
          actor: auditActorOf({ kind: "session", user }),
        });
      },
      {
        session: true,
        body: AccessRequestBody,
        response: { 201: AccessRequestRecord },
        detail: {
          summary: `Ask for a ${orgType} organisation (status pending until an operator admin reviews it)`,
        },
      },
    )
    .get(
      `/${orgType}-access-requests`,
      ({ user, query }) =>
        answerPage(query, (page) => listAccessRequests(ctx.sql, { userId: user.userId, orgType }, page)),
      {
        session: true,
        query: t.Object(pageQuery()),
        response: Paged(AccessRequestRecord),
        detail: { summary: `The caller's own ${orgType} access requests` },
      },
    );

const reviews = {
  approve: {
    decision: "approved",
    summary: "Approve: creates the organisation and makes the requester its owner (409 if already reviewed)",
  },
  reject: { decision: "rejected", summary: "Reject, with an optional reviewer note (409 if already reviewed)" },
} as const;

/** POST /admin/access-requests/{id}/approve or …/reject: the operator admin's decision, with an optional note. */
const reviewRoute = <Action extends keyof typeof reviews>(ctx: AppContext, action: Action) =>
  new Elysia({ name: `identity.access-requests.${action}` }).use(accessPlugin(ctx)).post(
    `/admin/access-requests/:id/${action}`,
    ({ params, body, user }) =>
      reviewAccessRequest(ctx.sql, {
        id: params.id,
        decision: reviews[action].decision,
        note: body?.note ?? null,
        reviewer: { ...auditActorOf({ kind: "session", user }), label: user.email },
      }),
    {
      session: "operator_admin",
      params: IdParams,
      body: ReviewBody,
      transform: requireObjectBody,
      response: AccessRequestRecord,
      detail: { summary: reviews[action].summary, ...ownProblems("access_request_not_found", "already_reviewed") },
    },
  );

export const accessRequestsModule = (ctx: AppContext) =>
  new Elysia({
    name: "identity.access-requests",
    prefix: "/api/v1/identity",
    detail: { tags: ["Identity: access requests"] },
  })
    .use(accessPlugin(ctx))
    .use(requestRoutes(ctx, "platform"))
    .use(requestRoutes(ctx, "agent"))
    .get(
      "/admin/access-requests",
      async ({ query }) => {
        const filter = { status: query.status ?? ("pending" as const), orgType: query.org_type };
        return answerPage(query, (page) => listAccessRequests(ctx.sql, filter, page));
      },
      {
        session: "operator_admin",
        query: AccessRequestListQuery,
        response: Paged(AccessRequestRecord),
        detail: {
          summary: "Access requests to review (operator admin; pending by default)",
        },
      },
    )
    .use(reviewRoute(ctx, "approve"))
    .use(reviewRoute(ctx, "reject"));
