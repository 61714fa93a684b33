import type { AuditActor } from "../../core/caller.ts";
import { invalid, problem } from "../../core/problem.ts";
import type { Fragment, Queryable } from "../../db/sql.ts";
import { recordAudit } from "../audit/service.ts";
import { enqueueEvent } from "../outbox/service.ts";
import {
  type DelegableScope,
  type Delegation,
  type DelegationRequest,
  type DelegationRequestStatus,
  delegableScopes,
} from "./model.ts";

// What grants (service.ts) and requests (requests.ts) share: creating a delegation
// resolves its pair's pending request, and approving a request creates a delegation.

/** What a grant or request that omits scopes gets (the spec leaves the default "not shown"). */
export const defaultDelegationScopes: readonly DelegableScope[] = ["telemetry:read"];

/** Which side of a delegation (or request) a list shows; undefined: both. */
export type DelegationRole = "grantor" | "grantee" | undefined;

export interface Page {
  limit: number;
  offset: number;
}

/** What a change is attributed to, and the time it happens at (the service's clock). */
export interface Change {
  actor: AuditActor;
  now: Date;
}

export function delegationScopes(requested: readonly string[] | undefined): DelegableScope[] {
  if (requested === undefined) return [...defaultDelegationScopes];
  const refuse = (message: string) => invalid(`scopes: ${message}`, [{ path: "/scopes", message }]);
  const undelegable = requested.filter((scope) => !(delegableScopes as readonly string[]).includes(scope));
  if (undelegable.length > 0) {
    throw refuse(`${undelegable.join(", ")} cannot be delegated (delegable: ${delegableScopes.join(", ")})`);
  }
  if (requested.length === 0) throw refuse("a delegation must grant at least one scope");
  return delegableScopes.filter((scope) => requested.includes(scope));
}

/** The filter of a list: the organisation on the given side, or on either. */
export function sideOf(sql: Queryable, orgId: string, role: DelegationRole): Fragment {
  if (role === "grantor") return sql`grantor_org_id = ${orgId}::uuid`;
  if (role === "grantee") return sql`grantee_org_id = ${orgId}::uuid`;
  return sql`(grantor_org_id = ${orgId}::uuid OR grantee_org_id = ${orgId}::uuid)`;
}

/**
 * Serialises every change to one grantor → grantee pair (grant, request, approval)
 * until the transaction ends, so a grant racing a request, or two approvals, meet
 * one at a time and see each other's result. The unique indexes on active
 * delegations and pending requests stay the last word.
 */
export async function lockPair(sql: Queryable, grantorOrgId: string, granteeOrgId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`delegation:${grantorOrgId}:${granteeOrgId}`}, 0))`;
}

/** `delegation.created` or `delegation.revoked`, to both organisations, in the change's transaction. */
export async function announceDelegation(
  sql: Queryable,
  type: "delegation.created" | "delegation.revoked",
  delegation: Delegation,
): Promise<void> {
  const { id, grantor_org_id, grantee_org_id, scopes } = delegation;
  const data = { delegation: { id, grantor_org_id, grantee_org_id, scopes } };
  await enqueueEvent(sql, { orgId: grantor_org_id, type, data });
  await enqueueEvent(sql, { orgId: grantee_org_id, type, data });
}

/**
 * Resolves requests (all pending ones matching `where`): records the new status
 * and, for each, an audit entry on the grantor's log. Returns the resolved requests.
 */
export async function resolveRequests(
  sql: Queryable,
  where: Fragment,
  resolution: { status: Exclude<DelegationRequestStatus, "pending">; delegationId?: string } & Change,
): Promise<DelegationRequest[]> {
  // An expired request was resolved when it expired, not when it was noticed.
  const resolvedAt = resolution.status === "expired" ? sql`expires_at` : sql`${resolution.now}::timestamptz`;
  const resolved = await sql<DelegationRequest[]>`
    UPDATE delegation_requests
    SET status = ${resolution.status}, resolved_at = ${resolvedAt}, delegation_id = ${resolution.delegationId ?? null}
    WHERE status = 'pending' AND ${where}
    RETURNING *`;
  for (const request of resolved) {
    await recordAudit(sql, {
      actor: resolution.actor,
      orgId: request.grantor_org_id,
      action: `delegation_request.${resolution.status}`,
      targetType: "delegation_request",
      targetId: request.id,
      details: { grantee_org_id: request.grantee_org_id, domain: request.domain, delegation_id: request.delegation_id },
    });
  }
  return resolved;
}

/** Marks pending requests past their expiry as expired (those of one pair, or all). */
export function expireRequests(
  sql: Queryable,
  now: Date,
  pair?: { grantorOrgId: string; granteeOrgId: string },
): Promise<DelegationRequest[]> {
  const ofPair = pair
    ? sql`AND grantor_org_id = ${pair.grantorOrgId}::uuid AND grantee_org_id = ${pair.granteeOrgId}::uuid`
    : sql``;
  return resolveRequests(sql, sql`expires_at <= ${now} ${ofPair}`, {
    status: "expired",
    actor: { type: "system", id: null, label: "delegation request expiry" },
    now,
  });
}

/**
 * Creates the active delegation of a pair whose lock the transaction holds, with
 * its audit entry and `delegation.created` for both organisations. A request of
 * the pair still pending is resolved as approved by it.
 */
export async function createDelegation(
  sql: Queryable,
  input: { grantorOrgId: string; granteeOrgId: string; scopes: DelegableScope[] } & Change,
): Promise<Delegation> {
  const [delegation] = await sql<Delegation[]>`
    INSERT INTO delegations (grantor_org_id, grantee_org_id, scopes, created_at)
    VALUES (${input.grantorOrgId}::uuid, ${input.granteeOrgId}::uuid, ${input.scopes}, ${input.now})
    ON CONFLICT (grantor_org_id, grantee_org_id) WHERE revoked_at IS NULL DO NOTHING
    RETURNING *`;
  if (!delegation) {
    throw problem(
      "delegation_exists",
      `${input.grantorOrgId} already has an active delegation to ${input.granteeOrgId}`,
    );
  }
  const pair = { grantorOrgId: input.grantorOrgId, granteeOrgId: input.granteeOrgId };
  await expireRequests(sql, input.now, pair);
  const [request] = await resolveRequests(
    sql,
    sql`grantor_org_id = ${pair.grantorOrgId}::uuid AND grantee_org_id = ${pair.granteeOrgId}::uuid`,
    { status: "approved", delegationId: delegation.id, actor: input.actor, now: input.now },
  );
  await recordAudit(sql, {
    actor: input.actor,
    orgId: delegation.grantor_org_id,
    action: "delegation.created",
    targetType: "delegation",
    targetId: delegation.id,
    details: {
      grantee_org_id: delegation.grantee_org_id,
      scopes: delegation.scopes,
      delegation_request_id: request?.id ?? null,
    },
  });
  await announceDelegation(sql, "delegation.created", delegation);
  return delegation;
}
