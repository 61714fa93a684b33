import { orgTypePhrase } from "../../core/organizations.ts";
import { problem } from "../../core/problem.ts";
import type { Scope } from "../../core/scopes.ts";
import type { Queryable, Sql } from "../../db/sql.ts";
import { pageWithTotal } from "../../db/sql.ts";
import { recordAudit } from "../audit/service.ts";
import { findOrganization } from "../organizations/service.ts";
import type { Delegation } from "./model.ts";
import {
  announceDelegation,
  type Change,
  createDelegation,
  type DelegationRole,
  delegationScopes,
  expireRequests,
  lockPair,
  type Page,
  sideOf,
} from "./pairs.ts";

/**
 * A content owner lets a platform or agent organisation read its telemetry
 * (scopes omitted: telemetry:read). 409 when the pair already has an active delegation.
 */
export async function grantDelegation(
  sql: Sql,
  input: { grantorOrgId: string; granteeOrgId: string; scopes?: readonly string[] } & Change,
): Promise<Delegation> {
  const scopes = delegationScopes(input.scopes);
  const [grantor, grantee] = await Promise.all([
    findOrganization(sql, input.grantorOrgId),
    findOrganization(sql, input.granteeOrgId),
  ]);
  if (!grantor) throw problem("organization_not_found", `organisation ${input.grantorOrgId} does not exist`);
  if (grantor.org_type !== "content_owner") {
    throw problem(
      "content_owner_only",
      `the grantor must be a content owner (${grantor.id} is ${orgTypePhrase(grantor.org_type)})`,
    );
  }
  if (!grantee) throw problem("organization_not_found", `organisation ${input.granteeOrgId} does not exist`);
  if (grantee.org_type === "content_owner") {
    throw problem(
      "invalid_grantee",
      `the grantee must be a platform or agent organisation (${grantee.id} is a content owner)`,
    );
  }
  return sql.begin(async (tx) => {
    await lockPair(tx, grantor.id, grantee.id);
    return createDelegation(tx, {
      grantorOrgId: grantor.id,
      granteeOrgId: grantee.id,
      scopes,
      actor: input.actor,
      now: input.now,
    });
  });
}

/**
 * Revokes a delegation: delegated reads are refused from the next one on (they look
 * the delegation up every time). With `grantorOrgId`, only that grantor's delegation
 * matches. Repeating it answers the delegation as first revoked, announcing nothing
 * new. Undefined when no delegation matches.
 */
export async function revokeDelegation(
  sql: Sql,
  input: { id: string; grantorOrgId?: string } & Change,
): Promise<Delegation | undefined> {
  return sql.begin(async (tx) => {
    const ofGrantor = input.grantorOrgId ? tx`AND grantor_org_id = ${input.grantorOrgId}::uuid` : tx``;
    const [revoked] = await tx<Delegation[]>`
      UPDATE delegations SET revoked_at = ${input.now}
      WHERE id = ${input.id}::uuid AND revoked_at IS NULL ${ofGrantor}
      RETURNING *`;
    if (!revoked) {
      const [earlier] = await tx<Delegation[]>`SELECT * FROM delegations WHERE id = ${input.id}::uuid ${ofGrantor}`;
      return earlier;
    }
    await recordAudit(tx, {
      actor: input.actor,
      orgId: revoked.grantor_org_id,
      action: "delegation.revoked",
      targetType: "delegation",
      targetId: revoked.id,
      details: { grantee_org_id: revoked.grantee_org_id, scopes: revoked.scopes },
    });
    await announceDelegation(tx, "delegation.revoked", revoked);
    return revoked;
  });
}

/** The active delegation from grantor to grantee, if any. */
export async function findActiveDelegation(
  sql: Queryable,
  grantorOrgId: string,
  granteeOrgId: string,
): Promise<Delegation | undefined> {
  const [row] = await sql<Delegation[]>`
    SELECT * FROM delegations
    WHERE grantor_org_id = ${grantorOrgId}::uuid AND grantee_org_id = ${granteeOrgId}::uuid AND revoked_at IS NULL`;
  return row;
}

/**
 * The grantor's verified domains while an active delegation from it to the
 * grantee grants `scope`; undefined otherwise. Both in one statement: every
 * delegated read checks its delegation afresh and then needs those domains.
 */
export async function delegatedDomains(
  sql: Queryable,
  grantorOrgId: string,
  granteeOrgId: string,
  scope: Scope,
): Promise<string[] | undefined> {
  const [row] = await sql<{ domains: string[] }[]>`
    SELECT coalesce(
      (SELECT array_agg(d.domain ORDER BY d.domain) FROM domains d WHERE d.org_id = g.grantor_org_id AND d.state = 'verified'),
      '{}') AS domains
    FROM delegations g
    WHERE g.grantor_org_id = ${grantorOrgId}::uuid AND g.grantee_org_id = ${granteeOrgId}::uuid
      AND g.revoked_at IS NULL AND ${scope} = ANY (g.scopes)`;
  return row?.domains;
}

/** Active delegations the organisation granted or holds, oldest first. */
export async function listDelegations(
  sql: Queryable,
  orgId: string,
  role: DelegationRole,
  page: Page,
): Promise<{ items: Delegation[]; total: number }> {
  const where = sql`revoked_at IS NULL AND ${sideOf(sql, orgId, role)}`;
  return pageWithTotal(
    sql,
    sql<Delegation[]>`
    SELECT * FROM delegations WHERE ${where} ORDER BY created_at, id LIMIT ${page.limit} OFFSET ${page.offset}`,
    sql`delegations WHERE ${where}`,
  );
}

/** The expiry job: marks every pending request past its expiry at `now`. Returns how many. */
export async function expireDelegationRequests(sql: Sql, now: Date): Promise<number> {
  return sql.begin(async (tx) => (await expireRequests(tx, now)).length);
}
