import type { Sql } from "../../db/sql.ts";
import { OrganizationNotFoundError } from "../keys/service.ts";
import { findOrganization } from "../organizations/service.ts";

/** Scopes a delegation can carry: only reads are delegated. */
export const delegableScopes = ["telemetry:read"] as const;
export type DelegableScope = (typeof delegableScopes)[number];
/** What a grant that omits scopes gets (the spec leaves the default "not shown"). */
export const defaultDelegationScopes: readonly DelegableScope[] = ["telemetry:read"];

export interface Delegation {
  id: string;
  grantor_org_id: string;
  grantee_org_id: string;
  scopes: DelegableScope[];
  created_at: Date;
  revoked_at: Date | null;
}

/** A grant that cannot exist: wrong organisation types, self-delegation, or scopes that cannot be delegated. */
export class InvalidDelegationError extends Error {
  override name = "InvalidDelegationError";
}

/** The pair already has an active delegation. */
export class DelegationConflictError extends Error {
  override name = "DelegationConflictError";
}

function delegationScopes(requested: readonly string[] | null | undefined): DelegableScope[] {
  if (requested === null || requested === undefined) return [...defaultDelegationScopes];
  const unknown = requested.filter((scope) => !(delegableScopes as readonly string[]).includes(scope));
  if (unknown.length > 0) {
    throw new InvalidDelegationError(
      `scope${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")} cannot be delegated (delegable: ${delegableScopes.join(", ")})`,
    );
  }
  if (requested.length === 0) throw new InvalidDelegationError("a delegation must grant at least one scope");
  return delegableScopes.filter((scope) => requested.includes(scope));
}

/**
 * Grants a delegation from a content owner to a platform or agent organisation.
 * Scopes omitted or null: telemetry:read.
 */
export async function grantDelegation(
  sql: Sql,
  input: { grantorOrgId: string; granteeOrgId: string; scopes?: readonly string[] | null },
): Promise<Delegation> {
  const scopes = delegationScopes(input.scopes);
  if (input.grantorOrgId === input.granteeOrgId)
    throw new InvalidDelegationError("an organisation cannot delegate to itself");
  const [grantor, grantee] = await Promise.all([
    findOrganization(sql, input.grantorOrgId),
    findOrganization(sql, input.granteeOrgId),
  ]);
  if (!grantor) throw new OrganizationNotFoundError(`organisation ${input.grantorOrgId} does not exist`);
  if (!grantee) throw new OrganizationNotFoundError(`organisation ${input.granteeOrgId} does not exist`);
  if (grantor.org_type !== "content_owner") {
    throw new InvalidDelegationError(`the grantor must be a content owner (${grantor.id} is a ${grantor.org_type})`);
  }
  if (grantee.org_type === "content_owner") {
    throw new InvalidDelegationError(
      `the grantee must be a platform or agent organisation (${grantee.id} is a content owner)`,
    );
  }
  const [row] = await sql<Delegation[]>`
    INSERT INTO delegations (grantor_org_id, grantee_org_id, scopes)
    VALUES (${grantor.id}, ${grantee.id}, ${scopes})
    ON CONFLICT (grantor_org_id, grantee_org_id) WHERE revoked_at IS NULL DO NOTHING
    RETURNING *`;
  if (!row) throw new DelegationConflictError(`${grantor.id} already has an active delegation to ${grantee.id}`);
  return row;
}

/**
 * Revokes a delegation (idempotent: the first revocation time is kept). With
 * `grantorOrgId`, only that grantor's delegation matches. Undefined when none matches.
 */
export async function revokeDelegation(sql: Sql, id: string, grantorOrgId?: string): Promise<Delegation | undefined> {
  const [row] = await sql<Delegation[]>`
    UPDATE delegations SET revoked_at = coalesce(revoked_at, now())
    WHERE id = ${id}::uuid ${grantorOrgId ? sql`AND grantor_org_id = ${grantorOrgId}::uuid` : sql``}
    RETURNING *`;
  return row;
}

/** The active delegation from grantor to grantee, if any. */
export async function findActiveDelegation(
  sql: Sql,
  grantorOrgId: string,
  granteeOrgId: string,
): Promise<Delegation | undefined> {
  const [row] = await sql<Delegation[]>`
    SELECT * FROM delegations
    WHERE grantor_org_id = ${grantorOrgId}::uuid AND grantee_org_id = ${granteeOrgId}::uuid AND revoked_at IS NULL`;
  return row;
}
