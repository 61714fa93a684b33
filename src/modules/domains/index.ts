import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { domainInput, withDomainInput } from "../../core/hosts.ts";
import { invalid, problem } from "../../core/problem.ts";
import { accessPlugin } from "../../http/access.ts";
import { noContent } from "../../http/bodiless-answers.ts";
import { ownProblems } from "../../http/openapi-examples.ts";
import { answerPage, Paged, pageQuery } from "../../http/paging.ts";
import { recordAudit } from "../audit/service.ts";
import { checkManifestClaim } from "../manifests/service.ts";
import { DomainBody, DomainParams, DomainRecord, domainOnWire, VerifyBody } from "./model.ts";
import {
  DomainConflictError,
  findDomain,
  pageOfDomains,
  registerDomainAs,
  removeDomain,
  verifyDomainAs,
} from "./service.ts";
import { checkChallenge } from "./verification.ts";

export const domainsModule = (ctx: AppContext) =>
  new Elysia({ name: "identity.domains", prefix: "/api/v1/identity", detail: { tags: ["Identity: domains"] } })
    .use(accessPlugin(ctx))
    .post(
      "/domains",
      async ({ access, body, set }) => {
        const domain = await withDomainInput("/domain", () =>
          ctx.sql.begin((tx) => registerDomainAs(tx, access.orgId, body.domain, access.actor)),
        );
        set.status = 201;
        return domainOnWire(domain);
      },
      {
        org: { need: "write", orgTypes: ["content_owner"] },
        body: DomainBody,
        response: { 201: DomainRecord },
        detail: {
          summary: "Register a domain (registered, not verified; repeating it answers the same record)",
          ...ownProblems("invalid_domain"),
          description:
            "Owner/admin session or identity:write key of a content owner. IPs, localhost and public suffixes are refused (400 invalid_domain).",
        },
      },
    )
    .get(
      "/domains",
      ({ access, query }) =>
        answerPage(query, async (page) => {
          const { items, total } = await pageOfDomains(ctx.sql, access.orgId, page);
          return { items: items.map(domainOnWire), total };
        }),
      {
        org: "read",
        query: t.Object(pageQuery()),
        response: Paged(DomainRecord),
        detail: {
          summary: "The organisation's domains (member session or identity:read key)",
        },
      },
    )
    .get(
      "/domains/:domain",
      async ({ access, params }) => {
        const domain = await findDomain(ctx.sql, access.orgId, await domainInput(params.domain));
        if (!domain) throw problem("domain_not_found", "this organisation has not registered that domain");
        return domainOnWire(domain);
      },
      {
        org: "read",
        params: DomainParams,
        response: DomainRecord,
        detail: {
          summary: "One domain, with its verification challenge while unverified",
          ...ownProblems("invalid_domain", "domain_not_found"),
        },
      },
    )
    .post(
      "/domains/:domain/verify",
      async ({ access, params, body }) => {
        const name = await domainInput(params.domain);
        const domain = await findDomain(ctx.sql, access.orgId, name);
        if (!domain) throw problem("domain_not_found", "this organisation has not registered that domain");
        if (domain.state === "verified") return domainOnWire(domain);
        // The probe talks to the outside world: never while holding a transaction.
        const failure =
          body.method === "manifest"
            ? await checkManifestClaim(ctx, access.orgId, name, domain.challenge, body.signature)
            : await checkChallenge(ctx.domainProbe, name, domain.challenge, body.method);
        if (failure) {
          throw invalid(failure, [{ path: "/method", message: failure }], "verification_failed");
        }
        const verified = await ctx.sql
          .begin((tx) => verifyDomainAs(tx, access.orgId, name, body.method, access.actor))
          .catch((error: unknown) => {
            if (error instanceof DomainConflictError) throw problem("domain_taken", error.message);
            throw error;
          });
        ctx.keys.forget({ orgId: access.orgId });
        if (!verified) throw problem("domain_not_found", "this organisation has not registered that domain");
        return domainOnWire(verified);
      },
      {
        org: "write",
        params: DomainParams,
        body: VerifyBody,
        response: DomainRecord,
        detail: {
          summary: "Verify a registered domain by its DNS TXT record, HTTPS file or participant manifest",
          ...ownProblems("invalid_domain", "domain_not_found", "verification_failed", "domain_taken"),
          description:
            "422 verification_failed says what was missing; 409 domain_taken when another organisation holds the domain verified. A verified domain covers its subdomains.",
        },
      },
    )
    .delete(
      "/domains/:domain",
      async ({ access, params, set }) => {
        const name = await domainInput(params.domain);
        await ctx.sql.begin(async (tx) => {
          const removed = await removeDomain(tx, access.orgId, name);
          if (!removed) throw problem("domain_not_found", "this organisation has not registered that domain");
          await recordAudit(tx, {
            actor: access.actor,
            orgId: access.orgId,
            action: "domain.removed",
            targetType: "domain",
            targetId: name,
          });
        });
        ctx.keys.forget({ orgId: access.orgId });
        set.status = 204;
      },
      {
        org: "write",
        params: DomainParams,
        detail: {
          summary: "Remove a domain (its data stops being visible to the organisation)",
          responses: noContent("removed"),
          ...ownProblems("invalid_domain", "domain_not_found"),
        },
      },
    );
