import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { problem } from "../../core/problem.ts";
import { accessPlugin } from "../../http/access.ts";
import { noContent } from "../../http/bodiless-answers.ts";
import { IdParams } from "../../http/id-params.ts";
import { ownProblems } from "../../http/openapi-examples.ts";
import { answerPage, Paged } from "../../http/paging.ts";
import {
  BulkBody,
  BulkResult,
  DelegationRecord,
  DelegationRequestBody,
  DelegationRequestRecord,
  GrantBody,
  ListQuery,
  maxBulkDelegationRequests,
} from "./model.ts";
import {
  approveDelegationRequest,
  denyDelegationRequest,
  fileDelegationRequest,
  fileDelegationRequests,
  listDelegationRequests,
} from "./requests.ts";
import { grantDelegation, listDelegations, revokeDelegation } from "./service.ts";

const grantor = { need: "write", orgTypes: ["content_owner"] } as const;
const grantee = { need: "write", orgTypes: ["platform", "agent"] } as const;

/**
 * Delegations (a content owner lets a platform or agent organisation read its
 * telemetry with `delegated_from`) and the requests that ask for them.
 */
export const delegationsModule = (ctx: AppContext) =>
  new Elysia({
    name: "identity.delegations",
    prefix: "/api/v1/identity",
    detail: { tags: ["Identity: delegations"] },
  })
    .use(accessPlugin(ctx))
    .get(
      "/delegations",
      ({ access, query }) => answerPage(query, (page) => listDelegations(ctx.sql, access.orgId, query.role, page)),
      {
        org: "read",
        query: ListQuery,
        response: Paged(DelegationRecord),
        detail: {
          summary: "Active delegations the organisation granted or holds (member session, or identity:read key)",
        },
      },
    )
    .post(
      "/delegations",
      async ({ access, body, set }) => {
        const delegation = await grantDelegation(ctx.sql, {
          grantorOrgId: access.orgId,
          granteeOrgId: body.grantee_org_id,
          scopes: body.scopes,
          actor: access.actor,
          now: ctx.clock(),
        });
        set.status = 201;
        return delegation;
      },
      {
        org: grantor,
        body: GrantBody,
        response: { 201: DelegationRecord },
        detail: {
          summary:
            "Grant a delegation to a platform or agent organisation (content owner: owner/admin, or identity:write key)",
          description:
            'scopes omitted: ["telemetry:read"], the only delegable scope. 404 organization_not_found for an unknown grantee, 422 invalid_grantee for a content owner, 409 delegation_exists when the pair already has an active delegation. A request of the pair still pending is resolved as approved. Writes delegation.created for both organisations.',
          ...ownProblems("organization_not_found", "invalid_grantee", "delegation_exists"),
        },
      },
    )
    .delete(
      "/delegations/:id",
      async ({ access, params }) => {
        const revoked = await revokeDelegation(ctx.sql, {
          id: params.id,
          grantorOrgId: access.orgId,
          actor: access.actor,
          now: ctx.clock(),
        });
        if (!revoked) throw problem("delegation_not_found", "this organisation granted no such delegation");
        return revoked;
      },
      {
        org: grantor,
        params: IdParams,
        response: DelegationRecord,
        detail: {
          summary: "Revoke a delegation (its grantor only); delegated reads are refused from the next one on",
          description:
            "Answers the delegation with revoked_at; repeating it keeps the first time. Writes delegation.revoked for both organisations. Another organisation's delegation is 404.",
        },
      },
    )
    .post(
      "/delegation-requests",
      async ({ access, body, set }) => {
        const request = await fileDelegationRequest(ctx.sql, {
          granteeOrgId: access.orgId,
          domain: body.domain,
          scopes: body.scopes,
          actor: access.actor,
          now: ctx.clock(),
        });
        set.status = 201;
        return request;
      },
      {
        org: grantee,
        body: DelegationRequestBody,
        response: { 201: DelegationRequestRecord },
        detail: {
          summary: "Ask the content owner that verified a domain for a delegation (platform or agent organisation)",
          ...ownProblems(
            "verified_domain_not_found",
            "delegation_exists",
            "delegation_request_pending",
            "invalid_domain",
          ),
          description:
            "404 verified_domain_not_found when no organisation has verified the domain or a parent of it; 409 delegation_exists or delegation_request_pending when the pair already has either. The request stays pending for 30 days; delegation_request.created goes to the grantor.",
        },
      },
    )
    .post(
      "/delegation-requests/bulk",
      ({ access, body }) =>
        fileDelegationRequests(ctx.sql, {
          granteeOrgId: access.orgId,
          items: body,
          actor: access.actor,
          now: ctx.clock(),
        }),
      {
        org: grantee,
        body: BulkBody,
        response: BulkResult,
        detail: {
          summary: `File up to ${maxBulkDelegationRequests} delegation requests at once, each on its own`,
          description:
            "Each item is filed as POST /delegation-requests would file it, in its own transaction, and answered in input order: created (with the request), not_found, conflict or error (with code and reason). A domain an earlier item filed a request for is a conflict (delegation_request_pending) naming that item; a refused item leaves nothing, so a later one for its domain is filed on its own. summary counts the items per status. An empty array or one longer than 100 is 400.",
        },
      },
    )
    .get(
      "/delegation-requests",
      ({ access, query }) =>
        answerPage(query, (page) => listDelegationRequests(ctx.sql, access.orgId, query.role, page, ctx.clock())),
      {
        org: "read",
        query: ListQuery,
        response: Paged(DelegationRequestRecord),
        detail: {
          summary:
            "Pending delegation requests addressed to the organisation or filed by it (member session, or identity:read key)",
        },
      },
    )
    .post(
      "/delegation-requests/:id/approve",
      async ({ access, params, set }) => {
        const delegation = await approveDelegationRequest(ctx.sql, {
          id: params.id,
          grantorOrgId: access.orgId,
          actor: access.actor,
          now: ctx.clock(),
        });
        set.status = 201;
        return delegation;
      },
      {
        org: grantor,
        params: IdParams,
        response: { 201: DelegationRecord },
        detail: {
          summary: "Approve a delegation request (its grantor only): 201 with the delegation",
          ...ownProblems("delegation_request_resolved", "delegation_request_stale", "delegation_request_expired"),
          description:
            "409 delegation_request_resolved when it was already approved or denied, 409 delegation_request_stale when the request's domain no longer resolves to the caller (the most specific verified domain covering it was removed or is another organisation's), 410 delegation_request_expired 30 days after it was filed. A request addressed to another organisation is 404. Writes delegation.created for both organisations.",
        },
      },
    )
    .post(
      "/delegation-requests/:id/deny",
      async ({ access, params, set }) => {
        await denyDelegationRequest(ctx.sql, {
          id: params.id,
          grantorOrgId: access.orgId,
          actor: access.actor,
          now: ctx.clock(),
        });
        set.status = 204;
      },
      {
        org: grantor,
        params: IdParams,
        detail: {
          summary: "Deny a delegation request (its grantor only): 204",
          ...ownProblems("delegation_request_resolved", "delegation_request_expired"),
          description:
            "409 delegation_request_resolved when it was already approved or denied, 410 delegation_request_expired once expired, 404 for a request addressed to another organisation.",
          responses: noContent("denied"),
        },
      },
    );
