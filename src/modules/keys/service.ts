import type { Static } from "elysia";
import type { AuditActor } from "../../core/caller.ts";
import { effectiveScopes } from "../../core/scopes.ts";
import { pageWithTotal, type Queryable, type Transaction } from "../../db/sql.ts";
import { recordAudit } from "../audit/service.ts";
import { findOrganization } from "../organizations/service.ts";
import { mintRawKey } from "./key-format.ts";
import type { KeyRecord } from "./model.ts";

/** A key as it is listed: never the secret, only its display prefix. */
export type ApiKeyRecord = Static<typeof KeyRecord>;

export class OrganizationNotFoundError extends Error {
  override name = "OrganizationNotFoundError";
}

const listed = (sql: Queryable) =>
  sql`id, org_id, display_prefix AS prefix, name, scopes, created_at, last_used_at, revoked_at`;

/** Mints a key for an organisation; the raw key is returned here and never again. */
export async function createApiKey(
  sql: Queryable,
  input: { orgId: string; scopes?: readonly string[] | null; name?: string | null },
): Promise<{ key: string; record: ApiKeyRecord }> {
  const scopes = effectiveScopes(input.scopes);
  const org = await findOrganization(sql, input.orgId);
  if (!org) throw new OrganizationNotFoundError(`organisation ${input.orgId} does not exist`);
  const minted = mintRawKey(org.org_type);
  const [record] = await sql<ApiKeyRecord[]>`
    INSERT INTO api_keys (org_id, lookup_id, secret_hash, display_prefix, scopes, name)
    VALUES (${org.id}, ${minted.lookupId}, ${minted.hash}, ${minted.displayPrefix}, ${scopes}, ${input.name ?? null})
    RETURNING ${listed(sql)}`;
  return { key: minted.raw, record: record as ApiKeyRecord };
}

export async function listApiKeys(
  sql: Queryable,
  orgId: string,
  page: { limit: number; offset: number } = { limit: 1000, offset: 0 },
): Promise<ApiKeyRecord[]> {
  return sql<ApiKeyRecord[]>`
    SELECT ${listed(sql)} FROM api_keys WHERE org_id = ${orgId}::uuid
    ORDER BY created_at, id LIMIT ${page.limit} OFFSET ${page.offset}`;
}

/** A page of the organisation's keys and how many it has. */
export function pageOfApiKeys(sql: Queryable, orgId: string, page: { limit: number; offset: number }) {
  return pageWithTotal(sql, listApiKeys(sql, orgId, page), sql`api_keys WHERE org_id = ${orgId}::uuid`);
}

/**
 * Revokes a key (idempotent: the first revocation time is kept). Undefined when
 * no such key; `revokedNow` says whether this call revoked it. The key is read
 * FOR UPDATE first, which waits for a concurrent revocation and then sees it, so
 * of several at once exactly one revokes.
 */
export async function revokeApiKey(
  sql: Queryable,
  keyId: string,
  orgId?: string,
): Promise<(ApiKeyRecord & { revokedNow: boolean }) | undefined> {
  const [record] = await sql<(ApiKeyRecord & { revokedNow: boolean })[]>`
    WITH before AS (
      SELECT id AS key_id, revoked_at AS revoked_before FROM api_keys
      WHERE id = ${keyId}::uuid ${orgId ? sql`AND org_id = ${orgId}::uuid` : sql``}
      FOR UPDATE
    )
    UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())
    FROM before
    WHERE id = before.key_id
    RETURNING ${listed(sql)}, revoked_before IS NULL AS "revokedNow"`;
  return record;
}

/** createApiKey, recorded in the audit trail as `actor`'s (api_key.created); in the caller's transaction. */
export async function createApiKeyAs(
  sql: Transaction,
  input: { orgId: string; scopes?: readonly string[] | null; name?: string | null },
  actor: AuditActor,
): Promise<{ key: string; record: ApiKeyRecord }> {
  const minted = await createApiKey(sql, input);
  const { record } = minted;
  await recordAudit(sql, {
    actor,
    orgId: record.org_id,
    action: "api_key.created",
    targetType: "api_key",
    targetId: record.id,
    details: { prefix: record.prefix, scopes: record.scopes, name: record.name },
  });
  return minted;
}

/**
 * revokeApiKey, recorded as `actor`'s (api_key.revoked) when this call revoked
 * the key, so revoking again records nothing; in the caller's transaction.
 */
export async function revokeApiKeyAs(
  sql: Transaction,
  keyId: string,
  actor: AuditActor,
  orgId?: string,
): Promise<ApiKeyRecord | undefined> {
  const revoked = await revokeApiKey(sql, keyId, orgId);
  if (!revoked) return undefined;
  const { revokedNow, ...record } = revoked;
  if (revokedNow) {
    await recordAudit(sql, {
      actor,
      orgId: record.org_id,
      action: "api_key.revoked",
      targetType: "api_key",
      targetId: record.id,
      details: { prefix: record.prefix },
    });
  }
  return record;
}
