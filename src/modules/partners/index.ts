import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { auditActorOf } from "../../core/caller.ts";
import { withDomainInput } from "../../core/hosts.ts";
import { accessPlugin } from "../../http/access.ts";
import { noContent } from "../../http/bodiless-answers.ts";
import { ownProblems } from "../../http/openapi-examples.ts";
import { answerPage, Paged, pageQuery } from "../../http/paging.ts";
import { DomainRecord, domainOnWire } from "../domains/model.ts";
import { mailInvite } from "../members/service.ts";
import {
  AttestParams,
  OrgParams,
  ProvisionBody,
  Provisioned,
  ProvisionedListItem,
  TrustedPartnerRecord,
} from "./model.ts";
import {
  attestDomain,
  disableTrustedPartner,
  enableTrustedPartner,
  listProvisioned,
  listTrustedPartners,
  provisionContentOwner,
} from "./service.ts";

export const partnersModule = (ctx: AppContext) =>
  new Elysia({
    name: "identity.partners",
    prefix: "/api/v1/identity",
    detail: { tags: ["Identity: trusted partners"] },
  })
    .use(accessPlugin(ctx))
    .get("/admin/trusted-partners", ({ query }) => answerPage(query, (page) => listTrustedPartners(ctx.sql, page)), {
      session: "operator_admin",
      query: t.Object(pageQuery()),
      response: Paged(TrustedPartnerRecord),
      detail: { summary: "Trusted partners (operator admin)" },
    })
    .put(
      "/admin/trusted-partners/:org_id",
      ({ params, user }) =>
        enableTrustedPartner(ctx.sql, params.org_id, { ...auditActorOf({ kind: "session", user }), label: user.email }),
      {
        session: "operator_admin",
        params: OrgParams,
        response: TrustedPartnerRecord,
        detail: {
          summary: "Enable a platform organisation as a trusted partner (operator admin; idempotent)",
          ...ownProblems("not_a_platform"),
        },
      },
    )
    .delete(
      "/admin/trusted-partners/:org_id",
      async ({ params, user, set }) => {
        await disableTrustedPartner(ctx.sql, params.org_id, auditActorOf({ kind: "session", user }));
        set.status = 204;
      },
      {
        session: "operator_admin",
        params: OrgParams,
        detail: { summary: "Withdraw trusted-partner status (operator admin)", responses: noContent("withdrawn") },
      },
    )
    .post(
      "/partner/organizations",
      async ({ principal, body, set }) => {
        const provisioned = await withDomainInput("/domains", () =>
          provisionContentOwner(ctx.sql, {
            partnerOrgId: principal.orgId,
            name: body.name,
            domains: body.domains,
            ownerEmail: body.owner_email,
            actor: auditActorOf({ kind: "key", principal }),
          }),
        );
        await mailInvite(ctx, provisioned.invite);
        set.status = 201;
        return { ...provisioned, domains: provisioned.domains.map(domainOnWire) };
      },
      {
        partner: true,
        body: ProvisionBody,
        response: { 201: Provisioned },
        detail: {
          summary: "Provision a content owner with attested (verified) domains and an owner invitation",
          ...ownProblems("domain_taken", "too_many_invitations"),
          description:
            "Key with partner:provision and identity:write of an enabled trusted partner. 409 domain_taken when another organisation holds a domain, or a parent or subdomain of one, verified (a verified domain covers its subdomains, and the most specific answers /resolve); nothing is created then.",
        },
      },
    )
    .get(
      "/partner/organizations",
      ({ principal, query }) => answerPage(query, (page) => listProvisioned(ctx.sql, principal.orgId, page)),
      {
        partner: true,
        query: t.Object(pageQuery()),
        response: Paged(ProvisionedListItem),
        detail: { summary: "Content owners this partner provisioned" },
      },
    )
    .post(
      "/partner/organizations/:org_id/domains/:domain/attest",
      async ({ principal, params }) => {
        const domain = await withDomainInput("/domain", () =>
          attestDomain(ctx.sql, {
            partnerOrgId: principal.orgId,
            orgId: params.org_id,
            domain: params.domain,
            actor: auditActorOf({ kind: "key", principal }),
          }),
        );
        ctx.keys.forget({ orgId: params.org_id });
        return domainOnWire(domain);
      },
      {
        partner: true,
        params: AttestParams,
        response: DomainRecord,
        detail: {
          summary: "Upgrade a registered domain to verified on an owner this partner provisioned (nobody else's)",
          ...ownProblems("invalid_domain", "not_provisioned_by_you", "domain_not_found", "domain_taken"),
          description:
            "403 not_provisioned_by_you for an organisation this partner did not provision, or none; 404 domain_not_found when the owner has not registered the domain; 409 domain_taken when another organisation holds it, or a parent or subdomain of it, verified.",
        },
      },
    );
