import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { auditActorOf } from "../../core/caller.ts";
import { withDomainInput } from "../../core/hosts.ts";
import { invalid, problem } from "../../core/problem.ts";
import { accessPlugin } from "../../http/access.ts";
import { IdParams } from "../../http/id-params.ts";
import { ownProblems } from "../../http/openapi-examples.ts";
import { answerPage, Paged, pageQuery } from "../../http/paging.ts";
import { domainOnWire } from "../domains/model.ts";
import { listDomains } from "../domains/service.ts";
import {
  AdminOrganizationRecord,
  AdminOrganizationsQuery,
  CreatedOrganization,
  CreateOrganization,
  MemberOrganizationRecord,
  OrganizationDetail,
} from "./model.ts";
import { createContentOwner } from "./self-serve.ts";
import { findOrganization, listAllOrganizations, listUserOrganizations } from "./service.ts";

const accessRequestEndpoints = {
  platform: "/api/v1/identity/platform-access-requests",
  agent: "/api/v1/identity/agent-access-requests",
} as const;

export const organizationsModule = (ctx: AppContext) =>
  new Elysia({
    name: "identity.organizations",
    prefix: "/api/v1/identity",
    detail: { tags: ["Identity: organisations"] },
  })
    .use(accessPlugin(ctx))
    .post(
      "/organizations",
      async ({ body, user, set }) => {
        if (body.org_type !== "content_owner") {
          const endpoint = accessRequestEndpoints[body.org_type];
          throw problem(
            "access_request_required",
            `${body.org_type} organisations are not self-serve: submit an access request at POST ${endpoint}`,
            { access_request_endpoint: endpoint },
          );
        }
        if (body.domain === undefined) {
          throw invalid("a content owner needs a domain", [
            { path: "/domain", message: "is required for content_owner" },
          ]);
        }
        const domain = body.domain;
        const created = await withDomainInput("/domain", () =>
          createContentOwner(ctx.sql, {
            name: body.name,
            domain,
            ownerUserId: user.userId,
            actor: auditActorOf({ kind: "session", user }),
          }),
        );
        set.status = 201;
        return {
          ...created.org,
          role: "owner" as const,
          domains: [{ domain: created.domain.domain, state: created.domain.state }],
        };
      },
      {
        session: true,
        body: CreateOrganization,
        response: { 201: CreatedOrganization },
        detail: {
          summary: "Create a content-owner organisation (self-serve; platform and agent go through access requests)",
          ...ownProblems("access_request_required", "invalid_domain"),
          description:
            "The caller becomes its owner; the domain is registered, not verified. org_type platform or agent answers 403 `access_request_required` with `access_request_endpoint`.",
        },
      },
    )
    .get(
      "/organizations",
      ({ user, query }) => answerPage(query, (page) => listUserOrganizations(ctx.sql, user.userId, page)),
      {
        session: true,
        query: t.Object(pageQuery()),
        response: Paged(MemberOrganizationRecord),
        detail: { summary: "The caller's organisations, with the caller's role and suspended_at" },
      },
    )
    .get(
      "/organizations/:id",
      async ({ access }) => {
        const org = await findOrganization(ctx.sql, access.orgId);
        if (!org) throw problem("organization_not_found", "no such organisation");
        const domains = (await listDomains(ctx.sql, org.id, { limit: 100, offset: 0 })).map(domainOnWire);
        return { ...org, role: access.role ?? null, domains };
      },
      {
        org: { need: "read", orgFrom: "path" },
        params: IdParams,
        response: OrganizationDetail,
        detail: {
          summary: "One organisation with its domains (member session, or identity:read key of that organisation)",
          description:
            "`role` is the signed-in caller's role, null for API keys; at most 100 domains (see GET /domains).",
        },
      },
    )
    .get(
      "/admin/organizations",
      ({ query }) => answerPage(query, (page) => listAllOrganizations(ctx.sql, { orgType: query.org_type }, page)),
      {
        session: "operator_admin",
        query: AdminOrganizationsQuery,
        response: Paged(AdminOrganizationRecord),
        detail: {
          summary:
            "Every organisation, newest first, with its verified domains, member count and suspended_at (operator admin)",
        },
      },
    );
