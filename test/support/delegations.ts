import { expect } from "bun:test";
import { createApp } from "../../src/app.ts";
import { createTestOrg, type TestOrg } from "./fixtures.ts";
import { callIdentity, identityTestApp } from "./identity.ts";
import { testRuntime } from "./runtime.ts";
import { undocumentedData } from "./webhooks.ts";

export const identityBase = "/api/v1/identity";

export interface Party extends TestOrg {
  /** A key with identity:read and identity:write. */
  writer: string;
}

async function party(type: "content_owner" | "platform" | "agent"): Promise<Party> {
  const org = await createTestOrg({ type });
  return { ...org, writer: await org.keyWith(["identity:read", "identity:write"]) };
}

/** A content owner with a verified domain of its own (the grantor). */
export const contentOwner = async (): Promise<Party & { domain: string }> =>
  (await party("content_owner")) as Party & { domain: string };
/** A platform organisation (the grantee); `agent` makes an agent organisation. */
export const partner = (type: "platform" | "agent" = "platform"): Promise<Party> => party(type);

/** The identity test app with its clock set to `now`: what the service decides "now" is. */
export async function appAt(now: Date) {
  const { ctx } = await identityTestApp();
  return createApp({ ...ctx, clock: () => now });
}

export const days = (n: number) => n * 86_400_000;

export function fileRequest(grantee: Party, body: unknown, app?: Awaited<ReturnType<typeof appAt>>) {
  return callIdentity("POST", `${identityBase}/delegation-requests`, { key: grantee.writer, body, app });
}

export function decide(
  grantor: Party,
  requestId: string,
  decision: "approve" | "deny",
  app?: Awaited<ReturnType<typeof appAt>>,
) {
  return callIdentity("POST", `${identityBase}/delegation-requests/${requestId}/${decision}`, {
    key: grantor.writer,
    app,
  });
}

/** The body of a newly made, active delegation from `grantor` to `grantee` with the default scope. */
export const newDelegation = (grantor: TestOrg, grantee: TestOrg) => ({
  id: expect.any(String),
  grantor_org_id: grantor.id,
  grantee_org_id: grantee.id,
  scopes: ["telemetry:read"],
  created_at: expect.any(String),
  revoked_at: null,
});

export function grant(grantor: Party, body: unknown) {
  return callIdentity("POST", `${identityBase}/delegations`, { key: grantor.writer, body });
}

/** A delegated read of the grantor's summary with the grantee's default key. */
export function delegatedSummary(grantor: TestOrg, grantee: TestOrg) {
  return callIdentity("GET", `/content-owners/summary?delegated_from=${grantor.id}`, { key: grantee.key });
}

export interface OutboxRow {
  org_id: string;
  event_type: string;
  data: Record<string, unknown>;
}

/**
 * Events written for an organisation's webhooks, oldest first; each one's data is
 * checked against what the OpenAPI document promises, so every test that reads
 * the outbox guards the webhooks' documented shapes.
 */
export async function outboxOf(orgId: string): Promise<OutboxRow[]> {
  const { ctx } = await testRuntime();
  const rows = await ctx.sql<OutboxRow[]>`
    SELECT org_id, event_type, data FROM event_outbox WHERE org_id = ${orgId}::uuid ORDER BY created_at, id`;
  const departures = rows.flatMap((row) => undocumentedData(row.event_type, row.data));
  if (departures.length > 0) throw new Error(`webhook data not as documented: ${departures.join("; ")}`);
  return [...rows];
}

/** Audit entries about one target, oldest first. */
export async function auditOf(targetId: string): Promise<AuditRow[]> {
  const { ctx } = await testRuntime();
  const rows = await ctx.sql<AuditRow[]>`
    SELECT org_id, action, actor_type, details FROM audit_events WHERE target_id = ${targetId}
    ORDER BY occurred_at, id`;
  return [...rows];
}

export interface AuditRow {
  org_id: string;
  action: string;
  actor_type: string;
  details: Record<string, unknown>;
}

/** Active delegations between the two organisations (0 or 1, by the unique index). */
export async function activeDelegations(grantorId: string, granteeId: string): Promise<number> {
  const { ctx } = await testRuntime();
  const [row] = await ctx.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM delegations
    WHERE grantor_org_id = ${grantorId}::uuid AND grantee_org_id = ${granteeId}::uuid AND revoked_at IS NULL`;
  return row?.n ?? 0;
}

/** Requests a grantee filed, in any state. */
export async function requestsFiledBy(granteeId: string): Promise<FiledRequest[]> {
  const { ctx } = await testRuntime();
  const rows = await ctx.sql<FiledRequest[]>`
    SELECT id, grantor_org_id, status, resolved_at, expires_at FROM delegation_requests
    WHERE grantee_org_id = ${granteeId}::uuid ORDER BY created_at, id`;
  return [...rows];
}

export interface FiledRequest {
  id: string;
  grantor_org_id: string;
  status: string;
  resolved_at: Date | null;
  expires_at: Date;
}
