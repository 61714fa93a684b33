import { Value } from "@sinclair/typebox/value";
import type { Static } from "elysia";
import type { AuditActor } from "../../core/caller.ts";
import { domainInput } from "../../core/hosts.ts";
import { orgTypePhrase } from "../../core/organizations.ts";
import { invalid, type ProblemCode, ProblemError, problem } from "../../core/problem.ts";
import { describeErrors } from "../../core/schema-errors.ts";
import { countRows, type Fragment, type Queryable, type Sql } from "../../db/sql.ts";
import { recordAudit } from "../audit/service.ts";
import { findOrganization } from "../organizations/service.ts";
import { enqueueEvent } from "../outbox/service.ts";
import { resolveDomain } from "../resolve/service.ts";
import {
  type BulkItemStatus,
  type DelegableScope,
  type DelegationRecord,
  DelegationRequestBody,
  type DelegationRequestRecord,
  type DelegationRequestStatus,
  delegableScopes,
} from "./model.ts";

/** What a grant or request that omits scopes gets (the spec leaves the default "not shown"). */
export const defaultDelegationScopes: readonly DelegableScope[] = ["telemetry:read"];
/** How long a delegation request waits for the grantor. */
export const delegationRequestLifetimeDays = 30;

export type Delegation = Static<typeof DelegationRecord>;
export type DelegationRequest = Static<typeof DelegationRequestRecord>;

/** Which side of a delegation (or request) a list shows; undefined: both. */
export type DelegationRole = "grantor" | "grantee" | undefined;

interface Page {
  limit: number;
  offset: number;
}

/** What a change is attributed to, and the time it happens at (the service's clock). */
interface Change {
  actor: AuditActor;
  now: Date;
}

function delegationScopes(requested: readonly string[] | undefined): DelegableScope[] {
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
function sideOf(sql: Queryable, orgId: string, role: DelegationRole): Fragment {
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
async function lockPair(sql: Queryable, grantorOrgId: string, granteeOrgId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`delegation:${grantorOrgId}:${granteeOrgId}`}, 0))`;
}

/** `delegation.created` or `delegation.revoked`, to both organisations, in the change's transaction. */
async function announceDelegation(
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
async function resolveRequests(
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
function expireRequests(
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
async function createDelegation(
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

/** Active delegations the organisation granted or holds, oldest first. */
export async function listDelegations(
  sql: Queryable,
  orgId: string,
  role: DelegationRole,
  page: Page,
): Promise<{ items: Delegation[]; total: number }> {
  const where = sql`revoked_at IS NULL AND ${sideOf(sql, orgId, role)}`;
  const items = await sql<Delegation[]>`
    SELECT * FROM delegations WHERE ${where} ORDER BY created_at, id LIMIT ${page.limit} OFFSET ${page.offset}`;
  return { items, total: await countRows(sql, sql`delegations WHERE ${where}`) };
}

/**
 * A grantee asks the content owner that verified `domain` (or a parent of it) for
 * a delegation: 404 when no organisation has, 409 when the pair has an active
 * delegation or a pending request. Otherwise the request is pending for 30 days and
 * `delegation_request.created` goes to the grantor.
 */
export async function fileDelegationRequest(
  sql: Sql,
  input: { granteeOrgId: string; domain: string; scopes?: readonly string[] } & Change,
): Promise<DelegationRequest> {
  const scopes = delegationScopes(input.scopes);
  const domain = await domainInput(input.domain);
  // Only content owners verify domains, and the caller is not one: never its own domain.
  const { organization: grantor } = await resolveDomain(sql, domain);
  if (!grantor) throw problem("verified_domain_not_found", `no organisation has verified ${domain}`, { domain });
  const pair = { grantorOrgId: grantor.id, granteeOrgId: input.granteeOrgId };
  return sql.begin(async (tx) => {
    await lockPair(tx, pair.grantorOrgId, pair.granteeOrgId);
    if (await findActiveDelegation(tx, pair.grantorOrgId, pair.granteeOrgId)) {
      throw problem("delegation_exists", `${grantor.id} already delegates to this organisation`, {
        grantor_org_id: grantor.id,
      });
    }
    // A request past its expiry no longer blocks a new one, whether or not the job has marked it.
    await expireRequests(tx, input.now, pair);
    const [request] = await tx<DelegationRequest[]>`
      INSERT INTO delegation_requests (grantor_org_id, grantee_org_id, domain, scopes, created_at, expires_at)
      VALUES (${pair.grantorOrgId}::uuid, ${pair.granteeOrgId}::uuid, ${domain}, ${scopes}, ${input.now},
              ${input.now}::timestamptz + make_interval(days => ${delegationRequestLifetimeDays}))
      ON CONFLICT (grantor_org_id, grantee_org_id) WHERE status = 'pending' DO NOTHING
      RETURNING *`;
    if (!request) {
      throw problem("delegation_request_pending", `a request to ${grantor.id} is already pending`, {
        grantor_org_id: grantor.id,
      });
    }
    await recordAudit(tx, {
      actor: input.actor,
      orgId: request.grantee_org_id,
      action: "delegation_request.created",
      targetType: "delegation_request",
      targetId: request.id,
      details: { grantor_org_id: request.grantor_org_id, domain: request.domain, scopes: request.scopes },
    });
    const { id, grantor_org_id, grantee_org_id, created_at, expires_at } = request;
    await enqueueEvent(tx, {
      orgId: grantor_org_id,
      type: "delegation_request.created",
      data: { delegation_request: { id, grantor_org_id, grantee_org_id, domain, scopes, created_at, expires_at } },
    });
    return request;
  });
}

export interface BulkItemResult {
  index: number;
  domain: string | null;
  status: BulkItemStatus;
  delegation_request?: DelegationRequest;
  code?: ProblemCode;
  reason?: string;
}

/** How a refusal of one request reads in a bulk answer; failures that are no refusal are thrown on. */
function bulkStatusOf(error: unknown): BulkItemStatus {
  if (!(error instanceof ProblemError) || error.status >= 500) throw error;
  if (error.status === 404) return "not_found";
  if (error.status === 409) return "conflict";
  return "error";
}

/**
 * Files each request as `fileDelegationRequest` would, one transaction each, in
 * input order: one refused item leaves the others as they are. A domain an
 * earlier item created a request for meets it (409 delegation_request_pending),
 * told which item; a refused item left nothing, so a later one is filed on its own.
 */
export async function fileDelegationRequests(
  sql: Sql,
  input: { granteeOrgId: string; items: readonly unknown[] } & Change,
): Promise<{ items: BulkItemResult[]; summary: Record<BulkItemStatus, number> }> {
  const createdBy = new Map<string, number>();
  const items: BulkItemResult[] = [];
  for (const [index, item] of input.items.entries()) {
    const sent = (item as { domain?: unknown } | null)?.domain;
    const domain = typeof sent === "string" ? sent : null;
    // The first failure only: a hostile item's array would otherwise be reported element by element.
    const firstFailure = Value.Errors(DelegationRequestBody, item).First();
    const [schemaError] = firstFailure ? describeErrors([firstFailure]) : [];
    if (schemaError) {
      const reason = `${schemaError.path} ${schemaError.message}`;
      items.push({ index, domain, status: "error", code: "validation_failed", reason });
      continue;
    }
    const body = item as { domain: string; scopes?: string[] };
    try {
      // Checked in the order the request alone would be: its scopes come before its domain.
      delegationScopes(body.scopes);
      const canonical = await domainInput(body.domain);
      const earlier = createdBy.get(canonical);
      if (earlier !== undefined) {
        const reason = `item ${earlier} filed a request for ${canonical}, pending now`;
        items.push({ index, domain, status: "conflict", code: "delegation_request_pending", reason });
        continue;
      }
      const request = await fileDelegationRequest(sql, {
        granteeOrgId: input.granteeOrgId,
        domain: body.domain,
        scopes: body.scopes,
        actor: input.actor,
        now: input.now,
      });
      createdBy.set(canonical, index);
      items.push({ index, domain, status: "created", delegation_request: request });
    } catch (error) {
      const status = bulkStatusOf(error);
      const refusal = error as ProblemError;
      items.push({ index, domain, status, code: refusal.code, reason: refusal.detail ?? refusal.code });
    }
  }
  const summary = { created: 0, not_found: 0, conflict: 0, error: 0 };
  for (const item of items) summary[item.status] += 1;
  return { items, summary };
}

/** Pending, unexpired requests addressed to the organisation or filed by it, oldest first. */
export async function listDelegationRequests(
  sql: Queryable,
  orgId: string,
  role: DelegationRole,
  page: Page,
  now: Date,
): Promise<{ items: DelegationRequest[]; total: number }> {
  const where = sql`status = 'pending' AND expires_at > ${now} AND ${sideOf(sql, orgId, role)}`;
  const items = await sql<DelegationRequest[]>`
    SELECT * FROM delegation_requests WHERE ${where}
    ORDER BY created_at, id LIMIT ${page.limit} OFFSET ${page.offset}`;
  return { items, total: await countRows(sql, sql`delegation_requests WHERE ${where}`) };
}

/**
 * The grantor's pending request `id`, locked with its pair for a decision: 404 when
 * the organisation is not its grantor (its existence is not revealed), 409 when it
 * was approved or denied, 410 once it has expired (whether or not the job marked it).
 */
async function pendingRequestFor(
  sql: Queryable,
  input: { id: string; grantorOrgId: string; now: Date },
): Promise<DelegationRequest> {
  const [pair] = await sql<{ grantee_org_id: string }[]>`
    SELECT grantee_org_id FROM delegation_requests
    WHERE id = ${input.id}::uuid AND grantor_org_id = ${input.grantorOrgId}::uuid`;
  if (!pair) throw problem("delegation_request_not_found", "no such delegation request addressed to this organisation");
  await lockPair(sql, input.grantorOrgId, pair.grantee_org_id);
  const [locked] = await sql<DelegationRequest[]>`
    SELECT * FROM delegation_requests WHERE id = ${input.id}::uuid FOR UPDATE`;
  const request = locked as DelegationRequest;
  if (request.status === "approved" || request.status === "denied") {
    throw problem("delegation_request_resolved", `this delegation request was already ${request.status}`, {
      request_status: request.status,
    });
  }
  if (request.status === "expired" || request.expires_at.getTime() <= input.now.getTime()) {
    throw problem(
      "delegation_request_expired",
      `this delegation request expired at ${request.expires_at.toISOString()}`,
      {
        expires_at: request.expires_at.toISOString(),
      },
    );
  }
  return request;
}

/**
 * The grantor approves: the delegation is created (and announced to both
 * organisations). 409 when the request's domain has gone to another owner (or to
 * none) since it was filed: the requester asked for that domain's data, which
 * this grantor no longer holds.
 */
export async function approveDelegationRequest(
  sql: Sql,
  input: { id: string; grantorOrgId: string } & Change,
): Promise<Delegation> {
  return sql.begin(async (tx) => {
    const request = await pendingRequestFor(tx, input);
    const { organization: holder } = await resolveDomain(tx, request.domain, true);
    if (holder?.id !== request.grantor_org_id) {
      throw problem(
        "delegation_request_stale",
        `your organisation no longer holds ${request.domain} verified; the requester must ask its current owner`,
        { domain: request.domain },
      );
    }
    return createDelegation(tx, {
      grantorOrgId: request.grantor_org_id,
      granteeOrgId: request.grantee_org_id,
      scopes: request.scopes,
      actor: input.actor,
      now: input.now,
    });
  });
}

/** The grantor denies: the request is resolved, nothing else changes. */
export async function denyDelegationRequest(
  sql: Sql,
  input: { id: string; grantorOrgId: string } & Change,
): Promise<void> {
  await sql.begin(async (tx) => {
    const request = await pendingRequestFor(tx, input);
    await resolveRequests(tx, tx`id = ${request.id}::uuid`, { status: "denied", actor: input.actor, now: input.now });
  });
}

/** The expiry job: marks every pending request past its expiry at `now`. Returns how many. */
export async function expireDelegationRequests(sql: Sql, now: Date): Promise<number> {
  return sql.begin(async (tx) => (await expireRequests(tx, now)).length);
}
