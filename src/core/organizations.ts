export const orgTypes = ["content_owner", "platform", "agent"] as const;
export type OrgType = (typeof orgTypes)[number];

export function isOrgType(value: string): value is OrgType {
  return (orgTypes as readonly string[]).includes(value);
}

export const memberRoles = ["owner", "admin", "member"] as const;
export type MemberRole = (typeof memberRoles)[number];
