import { Value } from "@sinclair/typebox/value";
import { domainInput } from "../../core/hosts.ts";
import { type ProblemCode, ProblemError, problem } from "../../core/problem.ts";
import { describeErrors } from "../../core/schema-errors.ts";
import { pageWithTotal, type Queryable, type Sql } from "../../db/sql.ts";
import { recordAudit } from "../audit/service.ts";
import { enqueueEvent } from "../outbox/service.ts";
import { resolveDomain } from "../resolve/service.ts";
import { type BulkItemStatus, type Delegation, type DelegationRequest, DelegationRequestBody } from "./model.ts";
import {
  type Change,
  createDelegation,
  type DelegationRole,
  delegationScopes,
  expireRequests,
  lockPair,
  type Page,
  resolveRequests,
  sideOf,
} from "./pairs.ts";
import { findActiveDelegation } from "./service.ts";

/** How long a delegation request waits for the grantor. */
export const delegationRequestLifetimeDays = 30;

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
  return pageWithTotal(
    sql,
    sql<DelegationRequest[]>`
    SELECT * FROM delegation_requests WHERE ${where}
    ORDER BY created_at, id LIMIT ${page.limit} OFFSET ${page.offset}`,
    sql`delegation_requests WHERE ${where}`,
  );
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
