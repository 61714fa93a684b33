import type { Static } from "elysia";
import type { AuditActor } from "../../core/caller.ts";
import type { MemberRole, OrgType } from "../../core/organizations.ts";
import { pageWithTotal, type Queryable, type Transaction } from "../../db/sql.ts";
import { recordAudit } from "../audit/service.ts";
import type { AdminOrganizationRecord, MemberOrganizationRecord, Organization as OrganizationModel } from "./model.ts";

export type Organization = Static<typeof OrganizationModel>;

export async function createOrganization(
  sql: Queryable,
  input: { name: string; orgType: OrgType },
): Promise<Organization> {
  const [org] = await sql<Organization[]>`
    INSERT INTO organizations (name, org_type) VALUES (${input.name}, ${input.orgType})
    RETURNING id, name, org_type, created_at`;
  return org as Organization;
}

/** Records a new organisation in the audit trail (organization.created) as `actor`'s, with the domain registered on it. */
export async function recordOrganizationCreated(
  sql: Transaction,
  org: Organization,
  domain: string | null,
  actor: AuditActor,
): Promise<void> {
  await recordAudit(sql, {
    actor,
    orgId: org.id,
    action: "organization.created",
    targetType: "organization",
    targetId: org.id,
    details: { name: org.name, org_type: org.org_type, domain },
  });
}

export async function findOrganization(sql: Queryable, id: string): Promise<Organization | undefined> {
  const [org] = await sql<Organization[]>`
    SELECT id, name, org_type, created_at FROM organizations WHERE id = ${id}::uuid`;
  return org;
}

export type MemberOrganization = Static<typeof MemberOrganizationRecord>;

export async function addMember(sql: Queryable, orgId: string, userId: string, role: MemberRole): Promise<void> {
  await sql`
    INSERT INTO organization_members (org_id, user_id, role) VALUES (${orgId}::uuid, ${userId}::uuid, ${role})
    ON CONFLICT (org_id, user_id) DO NOTHING`;
}

export async function listUserOrganizations(
  sql: Queryable,
  userId: string,
  page: { limit: number; offset: number },
): Promise<{ items: MemberOrganization[]; total: number }> {
  return pageWithTotal(
    sql,
    sql<MemberOrganization[]>`
      SELECT o.id, o.name, o.org_type, o.created_at, m.role, o.suspended_at
      FROM organization_members m JOIN organizations o ON o.id = m.org_id
      WHERE m.user_id = ${userId}::uuid
      ORDER BY o.created_at, o.id
      LIMIT ${page.limit} OFFSET ${page.offset}`,
    sql`organization_members WHERE user_id = ${userId}::uuid`,
  );
}

export type AdminOrganization = Static<typeof AdminOrganizationRecord>;

/** Every organisation, newest first, with its verified domains and member count (operator admins). */
export async function listAllOrganizations(
  sql: Queryable,
  filter: { orgType: OrgType | undefined },
  page: { limit: number; offset: number },
): Promise<{ items: AdminOrganization[]; total: number }> {
  const ofType = filter.orgType ? sql`WHERE o.org_type = ${filter.orgType}` : sql``;
  return pageWithTotal(
    sql,
    sql<AdminOrganization[]>`
    SELECT o.id, o.name, o.org_type, o.created_at, o.suspended_at,
           ARRAY(SELECT d.domain FROM domains d WHERE d.org_id = o.id AND d.state = 'verified' ORDER BY d.domain)
             AS verified_domains,
           (SELECT count(*)::int FROM organization_members m WHERE m.org_id = o.id) AS members
    FROM organizations o ${ofType}
    ORDER BY o.created_at DESC, o.id
    LIMIT ${page.limit} OFFSET ${page.offset}`,
    sql`organizations o ${ofType}`,
  );
}

/**
 * The user's memberships: the one in `orgId`, or (without it) up to two, enough
 * to tell whether the user belongs to exactly one organisation.
 */
export async function membershipsOf(
  sql: Queryable,
  userId: string,
  orgId: string | undefined,
): Promise<{ org_id: string; org_type: OrgType; role: MemberRole; suspended: boolean }[]> {
  return sql<{ org_id: string; org_type: OrgType; role: MemberRole; suspended: boolean }[]>`
    SELECT m.org_id, o.org_type, m.role, o.suspended_at IS NOT NULL AS suspended
    FROM organization_members m JOIN organizations o ON o.id = m.org_id
    WHERE m.user_id = ${userId}::uuid ${orgId === undefined ? sql`` : sql`AND m.org_id = ${orgId}::uuid`}
    ORDER BY m.org_id
    LIMIT 2`;
}

/**
 * Suspends an organisation (or resumes it): its keys and its members' sessions
 * are refused for it meanwhile (sql/075). Recorded as `actor`'s only when it
 * changes anything; undefined when there is no such organisation.
 */
export async function setSuspended(
  sql: Transaction,
  orgId: string,
  suspended: boolean,
  actor: AuditActor,
): Promise<(Organization & { suspended_at: Date | null }) | undefined> {
  const [before] = await sql<{ suspended_at: Date | null }[]>`
    SELECT suspended_at FROM organizations WHERE id = ${orgId}::uuid FOR UPDATE`;
  if (!before) return undefined;
  const [org] = await sql<(Organization & { suspended_at: Date | null })[]>`
    UPDATE organizations
    SET suspended_at = ${suspended ? sql`coalesce(suspended_at, now())` : null}
    WHERE id = ${orgId}::uuid
    RETURNING id, name, org_type, created_at, suspended_at`;
  if ((before.suspended_at !== null) !== suspended) {
    await recordAudit(sql, {
      actor,
      orgId,
      action: suspended ? "organization.suspended" : "organization.resumed",
      targetType: "organization",
      targetId: orgId,
    });
  }
  return org;
}
