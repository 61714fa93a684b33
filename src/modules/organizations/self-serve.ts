import type { AuditActor } from "../../core/caller.ts";
import type { Sql } from "../../db/sql.ts";
import { type Domain, registerDomain } from "../domains/service.ts";
import { addMember, createOrganization, type Organization, recordOrganizationCreated } from "./service.ts";

/**
 * Self-serve sign-up of a content owner: the organisation, its domain (registered,
 * not verified: verification is a separate step) and the caller as owner, all or nothing.
 */
export async function createContentOwner(
  sql: Sql,
  input: { name: string; domain: string; ownerUserId: string; actor: AuditActor },
): Promise<{ org: Organization; domain: Domain }> {
  return sql.begin(async (tx) => {
    const org = await createOrganization(tx, { name: input.name, orgType: "content_owner" });
    const domain = await registerDomain(tx, org.id, input.domain);
    await addMember(tx, org.id, input.ownerUserId, "owner");
    await recordOrganizationCreated(tx, org, domain.domain, input.actor);
    return { org, domain };
  });
}
