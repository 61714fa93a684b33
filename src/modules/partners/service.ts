import type { AuditActor, Principal } from "../../core/caller.ts";
import { normalizeDomain } from "../../core/hosts.ts";
import { invalid, problem } from "../../core/problem.ts";
import type { Queryable, Sql } from "../../db/sql.ts";
import { recordAudit } from "../audit/service.ts";
import { type Domain, DomainConflictError, findDomain, registerDomain, verifyDomain } from "../domains/service.ts";
import { createInvite, type Invite } from "../members/service.ts";
import { createOrganization, findOrganization, type Organization } from "../organizations/service.ts";

export interface TrustedPartner {
  org_id: string;
  name: string;
  enabled_by: string;
  enabled_at: Date;
}

export async function listTrustedPartners(
  sql: Queryable,
  page: { limit: number; offset: number },
): Promise<{ items: TrustedPartner[]; total: number }> {
  const items = await sql<TrustedPartner[]>`
    SELECT p.org_id, o.name, p.enabled_by, p.enabled_at
    FROM trusted_partners p JOIN organizations o ON o.id = p.org_id
    ORDER BY p.enabled_at, p.org_id LIMIT ${page.limit} OFFSET ${page.offset}`;
  const [count] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM trusted_partners`;
  return { items, total: count?.n ?? 0 };
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
      [{ path: "/org_id", message: `is a ${org.org_type} organisation` }],
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
 * organisation holds one of the domains verified).
 */
export async function provisionContentOwner(
  sql: Sql,
  input: { partnerOrgId: string; name: string; domains: string[]; ownerEmail: string; actor: AuditActor },
): Promise<Provisioned> {
  const names = [...new Set(input.domains.map(normalizeDomain))];
  return sql.begin(async (tx) => {
    const org = await createOrganization(tx, { name: input.name, orgType: "content_owner" });
    await tx`UPDATE organizations SET provisioned_by = ${input.partnerOrgId}::uuid WHERE id = ${org.id}`;
    // Verified in one order whatever the caller's, so that two provisionings of
    // the same domains wait for each other instead of deadlocking.
    const verified = new Map<string, Domain>();
    for (const name of names.toSorted()) {
      await registerDomain(tx, org.id, name);
      verified.set(name, (await attest(tx, org.id, name)) as Domain);
    }
    const domains = names.map((name) => verified.get(name) as Domain);
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
 * Verifies a domain on a partner's word, which proves nothing about any part of
 * it that another organisation has proved: a verified domain covers its
 * subdomains, so attesting the parent of another owner's verified domain would
 * hand that owner's telemetry to this one (409 domain_taken). The other
 * organisations' rows under it are locked, so a verification of one of them
 * racing this either commits first and is seen, or waits and comes after, where
 * it verifies a subdomain of a domain held already, as any owner may.
 */
async function attest(sql: Queryable, orgId: string, domain: string): Promise<Domain | undefined> {
  const others = await sql<{ domain: string; state: string }[]>`
    SELECT domain, state FROM domains
    WHERE org_id <> ${orgId}::uuid AND (domain = ${domain} OR right(domain, ${domain.length + 1}) = ${`.${domain}`})
    ORDER BY domain, org_id
    FOR SHARE`;
  const taken = others.find((other) => other.state === "verified");
  if (taken) {
    throw problem(
      "domain_taken",
      taken.domain === domain
        ? `${domain} is already verified by another organisation`
        : `${taken.domain} is verified by another organisation, and ${domain} would cover it`,
    );
  }
  try {
    return await verifyDomain(sql, orgId, domain, "partner_attestation");
  } catch (error) {
    if (error instanceof DomainConflictError) throw problem("domain_taken", error.message);
    throw error;
  }
}

export async function listProvisioned(
  sql: Queryable,
  partnerOrgId: string,
  page: { limit: number; offset: number },
): Promise<{ items: Organization[]; total: number }> {
  const items = await sql<Organization[]>`
    SELECT id, name, org_type, created_at FROM organizations WHERE provisioned_by = ${partnerOrgId}::uuid
    ORDER BY created_at, id LIMIT ${page.limit} OFFSET ${page.offset}`;
  const [count] = await sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM organizations WHERE provisioned_by = ${partnerOrgId}::uuid`;
  return { items, total: count?.n ?? 0 };
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
