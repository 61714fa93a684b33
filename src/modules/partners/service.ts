import type { Static } from "elysia";
import type { AuditActor, Principal } from "../../core/caller.ts";
import { domainAndParents, isWithinDomain, normalizeDomain, subdomainsReversed } from "../../core/hosts.ts";
import { orgTypePhrase } from "../../core/organizations.ts";
import { invalid, problem } from "../../core/problem.ts";
import { pageWithTotal, type Queryable, type Sql } from "../../db/sql.ts";
import { recordAudit } from "../audit/service.ts";
import {
  type Domain,
  DomainConflictError,
  findDomain,
  lockDomainFamilies,
  registerDomain,
  verifyDomain,
} from "../domains/service.ts";
import { createInvite, type Invite } from "../members/service.ts";
import { createOrganization, findOrganization, type Organization } from "../organizations/service.ts";
import type { TrustedPartnerRecord } from "./model.ts";

export type TrustedPartner = Static<typeof TrustedPartnerRecord>;

export async function listTrustedPartners(
  sql: Queryable,
  page: { limit: number; offset: number },
): Promise<{ items: TrustedPartner[]; total: number }> {
  return pageWithTotal(
    sql,
    sql<TrustedPartner[]>`
    SELECT p.org_id, o.name, p.enabled_by, p.enabled_at
    FROM trusted_partners p JOIN organizations o ON o.id = p.org_id
    ORDER BY p.enabled_at, p.org_id LIMIT ${page.limit} OFFSET ${page.offset}`,
    sql`trusted_partners`,
  );
}

export async function enableTrustedPartner(
  sql: Sql,
  orgId: string,
  actor: AuditActor & { label: string },
): Promise<TrustedPartner> {
  const org = await findOrganization(sql, orgId);
  if (!org) throw problem("organization_not_found", "no such organisation");
  if (org.org_type !== "platform") {
    throw invalid(
      "only platform organisations can be trusted partners",
      [{ path: "/org_id", message: `is ${orgTypePhrase(org.org_type)}` }],
      "not_a_platform",
    );
  }
  return sql.begin(async (tx) => {
    const [row] = await tx<{ enabled_by: string; enabled_at: Date; enabled_now: boolean }[]>`
      INSERT INTO trusted_partners (org_id, enabled_by) VALUES (${orgId}::uuid, ${actor.label})
      ON CONFLICT (org_id) DO UPDATE SET org_id = EXCLUDED.org_id
      RETURNING enabled_by, enabled_at, xmax = 0 AS enabled_now`;
    const { enabled_now, ...enabled } = row as { enabled_by: string; enabled_at: Date; enabled_now: boolean };
    // Enabling again changes nothing, so it records nothing.
    if (enabled_now) {
      await recordAudit(tx, {
        actor,
        orgId,
        action: "trusted_partner.enabled",
        targetType: "organization",
        targetId: orgId,
      });
    }
    return { org_id: orgId, name: org.name, ...enabled };
  });
}

export async function disableTrustedPartner(sql: Sql, orgId: string, actor: AuditActor): Promise<void> {
  await sql.begin(async (tx) => {
    const [row] = await tx`DELETE FROM trusted_partners WHERE org_id = ${orgId}::uuid RETURNING org_id`;
    if (!row) throw problem("trusted_partner_not_found", "this organisation is not a trusted partner");
    await recordAudit(tx, {
      actor,
      orgId,
      action: "trusted_partner.disabled",
      targetType: "organization",
      targetId: orgId,
    });
  });
}

/** Whether the operator has enabled this platform organisation as a trusted partner. */
export async function isTrustedPartner(sql: Queryable, principal: Principal): Promise<boolean> {
  if (principal.orgType !== "platform") return false;
  const [enabled] = await sql`SELECT 1 FROM trusted_partners WHERE org_id = ${principal.orgId}::uuid`;
  return enabled !== undefined;
}

export interface Provisioned {
  organization: Organization & { provisioned_by: string };
  domains: Domain[];
  invite: Invite;
}

/**
 * Creates a content owner on a partner's word: its domains verified by
 * attestation and an owner invitation, all or nothing (409 if another
 * organisation holds one of the domains, or a parent or subdomain of one,
 * verified: attest).
 */
export async function provisionContentOwner(
  sql: Sql,
  input: { partnerOrgId: string; name: string; domains: string[]; ownerEmail: string; actor: AuditActor },
): Promise<Provisioned> {
  const names = [...new Set(input.domains.map(normalizeDomain))];
  return sql.begin(async (tx) => {
    const org = await createOrganization(tx, { name: input.name, orgType: "content_owner" });
    await tx`UPDATE organizations SET provisioned_by = ${input.partnerOrgId}::uuid WHERE id = ${org.id}`;
    // Every family at once, in one order: two provisionings wait for each other instead of deadlocking.
    await lockDomainFamilies(tx, names);
    const domains: Domain[] = [];
    for (const name of names) {
      await registerDomain(tx, org.id, name);
      domains.push((await attest(tx, org.id, name)) as Domain);
    }
    const invite = await createInvite(tx, {
      orgId: org.id,
      email: input.ownerEmail,
      role: "owner",
      provisioningOrgId: input.partnerOrgId,
      actor: input.actor,
    });
    for (const orgId of [org.id, input.partnerOrgId]) {
      await recordAudit(tx, {
        actor: input.actor,
        orgId,
        action: "organization.provisioned",
        targetType: "organization",
        targetId: org.id,
        details: { partner_org_id: input.partnerOrgId, domains: names, owner_email: invite.email },
      });
    }
    return { organization: { ...org, provisioned_by: input.partnerOrgId }, domains, invite };
  });
}

/**
 * Verifies a domain on a partner's word, which proves nothing about a part of a
 * domain another organisation has proved (409 domain_taken): a verified domain
 * covers its subdomains, so attesting a parent of another owner's verified
 * domain would hand it that owner's telemetry, and attesting a subdomain of one
 * would take over its resolution. The family lock keeps the answer true until
 * the attestation commits. Undefined, as verifyDomain's, when the organisation
 * holds the domain verified already or has not registered it.
 */
async function attest(sql: Queryable, orgId: string, domain: string): Promise<Domain | undefined> {
  await lockDomainFamilies(sql, [domain]);
  // Only a registration still waiting is the partner's to decide; the others' holdings do not change it.
  const [own] = await sql<{ state: Domain["state"] }[]>`
    SELECT state FROM domains WHERE org_id = ${orgId}::uuid AND domain = ${domain} FOR UPDATE`;
  if (own?.state !== "registered") return undefined;
  // Its subdomains are one range of the index of reversed verified names (sql/078).
  const subdomains = subdomainsReversed(domain);
  const [held] = await sql<{ domain: string }[]>`
    SELECT domain FROM domains
    WHERE state = 'verified' AND org_id <> ${orgId}::uuid
      AND (domain IN ${sql(domainAndParents(domain))}
           OR (reverse(domain) COLLATE "C" >= ${subdomains.low} COLLATE "C"
               AND reverse(domain) COLLATE "C" < ${subdomains.high} COLLATE "C"))
    ORDER BY char_length(domain), domain
    LIMIT 1`;
  if (held) throw problem("domain_taken", takenBecause(domain, held.domain));
  try {
    return await verifyDomain(sql, orgId, domain, "partner_attestation");
  } catch (error) {
    // The check above under the family lock leaves the unique index nothing to
    // refuse; should it still, the answer is the same conflict, not a 500.
    if (error instanceof DomainConflictError) throw problem("domain_taken", error.message);
    throw error;
  }
}

function takenBecause(domain: string, held: string): string {
  if (held === domain) return `${domain} is already verified by another organisation`;
  if (isWithinDomain(domain, held)) return `${domain} lies under ${held}, which another organisation has verified`;
  return `${held} is verified by another organisation, and ${domain} would cover it`;
}

export async function listProvisioned(
  sql: Queryable,
  partnerOrgId: string,
  page: { limit: number; offset: number },
): Promise<{ items: Organization[]; total: number }> {
  return pageWithTotal(
    sql,
    sql<Organization[]>`
    SELECT id, name, org_type, created_at FROM organizations WHERE provisioned_by = ${partnerOrgId}::uuid
    ORDER BY created_at, id LIMIT ${page.limit} OFFSET ${page.offset}`,
    sql`organizations WHERE provisioned_by = ${partnerOrgId}::uuid`,
  );
}

/** Upgrades a registered domain to verified on an owner this partner provisioned, and only such an owner. */
export async function attestDomain(
  sql: Sql,
  input: { partnerOrgId: string; orgId: string; domain: string; actor: AuditActor },
): Promise<Domain> {
  const name = normalizeDomain(input.domain);
  return sql.begin(async (tx) => {
    const [org] = await tx<{ provisioned_by: string | null }[]>`
      SELECT provisioned_by FROM organizations WHERE id = ${input.orgId}::uuid`;
    // No organisation and another's are one answer: a partner learns nothing of ids it did not provision.
    if (org?.provisioned_by !== input.partnerOrgId) {
      throw problem("not_provisioned_by_you", "a partner attests domains only of owners it provisioned");
    }
    const verified = await attest(tx, input.orgId, name);
    if (!verified) {
      // Nothing changed: the domain was verified already (its answer), or is not registered.
      const existing = await findDomain(tx, input.orgId, name);
      if (!existing) throw problem("domain_not_found", "the organisation has not registered that domain");
      return existing;
    }
    for (const orgId of [input.orgId, input.partnerOrgId]) {
      await recordAudit(tx, {
        actor: input.actor,
        orgId,
        action: "domain.attested",
        targetType: "domain",
        targetId: name,
        details: { partner_org_id: input.partnerOrgId, organization_id: input.orgId },
      });
    }
    return verified;
  });
}
