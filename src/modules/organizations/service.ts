import type { Queryable } from "../../db/client.ts";

export const orgTypes = ["content_owner", "platform", "agent"] as const;
export type OrgType = (typeof orgTypes)[number];

export interface Organization {
  id: string;
  name: string;
  org_type: OrgType;
  created_at: Date;
}

export function isOrgType(value: string): value is OrgType {
  return (orgTypes as readonly string[]).includes(value);
}

export async function createOrganization(
  sql: Queryable,
  input: { name: string; orgType: OrgType },
): Promise<Organization> {
  const [org] = await sql<Organization[]>`
    INSERT INTO organizations (name, org_type) VALUES (${input.name}, ${input.orgType})
    RETURNING id, name, org_type, created_at`;
  return org as Organization;
}

export async function findOrganization(sql: Queryable, id: string): Promise<Organization | undefined> {
  const [org] = await sql<Organization[]>`
    SELECT id, name, org_type, created_at FROM organizations WHERE id = ${id}::uuid`;
  return org;
}
