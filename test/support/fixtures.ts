import type { AuditActor } from "../../src/core/caller.ts";
import type { OrgType } from "../../src/core/organizations.ts";
import type { Sql } from "../../src/db/sql.ts";
import { registerDomain, verifyDomain } from "../../src/modules/domains/service.ts";
import { createApiKey } from "../../src/modules/keys/service.ts";
import { createOrganization } from "../../src/modules/organizations/service.ts";
import { testRuntime } from "./runtime.ts";

/** A host name no other test will use. */
export function uniqueDomain(label = "site"): string {
  return `${label}-${crypto.randomUUID().slice(0, 8)}.example.com`;
}

export interface TestOrg {
  id: string;
  type: OrgType;
  domain: string | null;
  /** A key with the default scopes (telemetry:read, telemetry:write, identity:read). */
  key: string;
  /** Mints another key for this organisation with exactly these scopes (null: the defaults). */
  keyWith(scopes: string[] | null): Promise<string>;
}

/**
 * Creates an isolated organisation for one test: a content owner gets a verified
 * domain of its own by default; platforms and agents get none unless asked.
 */
export async function createTestOrg(
  options: { type?: OrgType; domain?: string | null; verified?: boolean; name?: string } = {},
): Promise<TestOrg> {
  const { ctx } = await testRuntime();
  const sql: Sql = ctx.sql;
  const type = options.type ?? "content_owner";
  const domain = options.domain === undefined ? (type === "content_owner" ? uniqueDomain() : null) : options.domain;
  const org = await createOrganization(sql, { name: options.name ?? `Test ${type}`, orgType: type });
  if (domain) {
    await registerDomain(sql, org.id, domain);
    if (options.verified ?? true) await verifyDomain(sql, org.id, domain, "operator");
  }
  const keyWith = async (scopes: string[] | null) => (await createApiKey(sql, { orgId: org.id, scopes })).key;
  return { id: org.id, type, domain, key: await keyWith(null), keyWith };
}

/** Who a change a test makes through a service is attributed to, and when it happens (now, unless given). */
export function testChange(now = new Date()): { actor: AuditActor; now: Date } {
  return { actor: { type: "system", id: null, label: "test" }, now };
}
