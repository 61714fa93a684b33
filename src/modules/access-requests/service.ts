import type { Static } from "elysia";
import type { AuditActor } from "../../core/caller.ts";
import { normalizeEmail } from "../../core/email.ts";
import { problem } from "../../core/problem.ts";
import { pageWithTotal, type Queryable, type Sql } from "../../db/sql.ts";
import { recordAudit } from "../audit/service.ts";
import { addMember, createOrganization, recordOrganizationCreated } from "../organizations/service.ts";
import type {
  AccessRequestRecord,
  AccessRequestStatus as AccessRequestStatusModel,
  AccessRequestType as AccessRequestTypeModel,
} from "./model.ts";

export type AccessRequestType = Static<typeof AccessRequestTypeModel>;
export type AccessRequestStatus = Static<typeof AccessRequestStatusModel>;
export type AccessRequest = Static<typeof AccessRequestRecord>;

export async function submitAccessRequest(
  sql: Sql,
  input: {
    orgType: AccessRequestType;
    userId: string;
    orgName: string;
    adminEmail: string;
    useCase: string;
    actor: AuditActor;
  },
): Promise<AccessRequest> {
  return sql.begin(async (tx) => {
    const [request] = await tx<AccessRequest[]>`
      INSERT INTO access_requests (org_type, user_id, org_name, admin_email, use_case)
      VALUES (${input.orgType}, ${input.userId}::uuid, ${input.orgName}, ${normalizeEmail(input.adminEmail)}, ${input.useCase})
      RETURNING *`;
    const created = request as AccessRequest;
    await recordAudit(tx, {
      actor: input.actor,
      orgId: null,
      action: "access_request.submitted",
      targetType: "access_request",
      targetId: created.id,
      details: { org_type: created.org_type, org_name: created.org_name },
    });
    return created;
  });
}

export async function listAccessRequests(
  sql: Queryable,
  filter: { userId?: string; orgType?: AccessRequestType; status?: AccessRequestStatus },
  page: { limit: number; offset: number },
): Promise<{ items: AccessRequest[]; total: number }> {
  const where = sql`
    WHERE true
    ${filter.userId === undefined ? sql`` : sql`AND user_id = ${filter.userId}::uuid`}
    ${filter.orgType === undefined ? sql`` : sql`AND org_type = ${filter.orgType}`}
    ${filter.status === undefined ? sql`` : sql`AND status = ${filter.status}`}`;
  return pageWithTotal(
    sql,
    sql<AccessRequest[]>`
    SELECT * FROM access_requests ${where} ORDER BY created_at, id LIMIT ${page.limit} OFFSET ${page.offset}`,
    sql`access_requests ${where}`,
  );
}

/**
 * An operator admin's decision. Approval creates the platform or agent
 * organisation and makes the requester its owner, in one transaction; a request
 * already reviewed is 409 whatever the new decision.
 */
export async function reviewAccessRequest(
  sql: Sql,
  input: {
    id: string;
    decision: "approved" | "rejected";
    note: string | null;
    reviewer: AuditActor & { label: string };
  },
): Promise<AccessRequest> {
  return sql.begin(async (tx) => {
    const [request] = await tx<AccessRequest[]>`SELECT * FROM access_requests WHERE id = ${input.id}::uuid FOR UPDATE`;
    if (!request) throw problem("access_request_not_found", "no such access request");
    if (request.status !== "pending") {
      throw problem("already_reviewed", `this access request was already ${request.status}`);
    }
    let approvedOrgId: string | null = null;
    if (input.decision === "approved") {
      const org = await createOrganization(tx, { name: request.org_name, orgType: request.org_type });
      // As at self-serve sign-up and in the CLI: the new organisation's first audit entry.
      await recordOrganizationCreated(tx, org, null, input.reviewer);
      await addMember(tx, org.id, request.user_id, "owner");
      approvedOrgId = org.id;
    }
    const [reviewed] = await tx<AccessRequest[]>`
      UPDATE access_requests
      SET status = ${input.decision}, reviewed_at = now(), reviewed_by = ${input.reviewer.label},
          reviewer_note = ${input.note}, approved_org_id = ${approvedOrgId}
      WHERE id = ${request.id}
      RETURNING *`;
    await recordAudit(tx, {
      actor: input.reviewer,
      orgId: approvedOrgId,
      action: `access_request.${input.decision}`,
      targetType: "access_request",
      targetId: request.id,
      details: { org_type: request.org_type, org_name: request.org_name, note: input.note },
    });
    return reviewed as AccessRequest;
  });
}
