import { problem } from "./problem.ts";

export const orgTypes = ["content_owner", "platform", "agent"] as const;
export type OrgType = (typeof orgTypes)[number];

export function isOrgType(value: string): value is OrgType {
  return (orgTypes as readonly string[]).includes(value);
}

const orgTypePhrases: Record<OrgType, string> = {
  content_owner: "a content-owner organisation",
  platform: "a platform organisation",
  agent: "an agent organisation",
};

/** A type as a sentence names it, article included: "is an agent organisation". */
export function orgTypePhrase(type: OrgType): string {
  return orgTypePhrases[type];
}

export const memberRoles = ["owner", "admin", "member"] as const;
export type MemberRole = (typeof memberRoles)[number];

export function isMemberRole(value: string): value is MemberRole {
  return (memberRoles as readonly string[]).includes(value);
}

/** What a suspended organisation's keys and members' sessions get (CLI `org suspend`, sql/075). */
export const organizationSuspended = () =>
  problem("organization_suspended", "this organisation is suspended by the service's operator; ask them to resume it");
