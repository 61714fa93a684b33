import postgres from "postgres";
import type { AuditActor } from "../../core/caller.ts";
import { domainFamily, normalizeDomain } from "../../core/hosts.ts";
import { pageWithTotal, type Queryable, type Transaction } from "../../db/sql.ts";
import { recordAudit } from "../audit/service.ts";

export const verificationMethods = ["dns_txt", "https_file", "manifest", "partner_attestation", "operator"] as const;
export type VerificationMethod = (typeof verificationMethods)[number];

export interface Domain {
  id: string;
  org_id: string;
  domain: string;
  state: "registered" | "verified";
  verification_method: VerificationMethod | null;
  verified_at: Date | null;
  created_at: Date;
  /** The secret the owner publishes to prove control (see verification.ts). */
  challenge: string;
}

export class DomainConflictError extends Error {
  override name = "DomainConflictError";
}

/**
 * Registers a domain on an organisation (idempotent for the same pair);
 * `created` says whether this call made the row (xmax is 0 for a row inserted,
 * not updated), so concurrent registrations agree on which one made it.
 */
export async function registerDomain(
  sql: Queryable,
  orgId: string,
  input: string,
): Promise<Domain & { created: boolean }> {
  const domain = normalizeDomain(input);
  const [row] = await sql<(Domain & { created: boolean })[]>`
    INSERT INTO domains (org_id, domain) VALUES (${orgId}::uuid, ${domain})
    ON CONFLICT (org_id, domain) DO UPDATE SET domain = EXCLUDED.domain
    RETURNING *, xmax = 0 AS created`;
  return row as Domain & { created: boolean };
}

/**
 * Marks a registered domain verified; undefined when the organisation has no
 * such domain still registered (verified meanwhile, or removed). Only one
 * organisation may hold a domain verified (the unique index domains_verified_once
 * decides, so concurrent claims cannot both win); a second claim is a
 * DomainConflictError.
 */
export async function verifyDomain(
  sql: Queryable,
  orgId: string,
  input: string,
  method: VerificationMethod,
): Promise<Domain | undefined> {
  const domain = normalizeDomain(input);
  await lockDomainFamilies(sql, [domain]);
  try {
    const [row] = await sql<Domain[]>`
      UPDATE domains
      SET state = 'verified', verification_method = ${method}, verified_at = now()
      WHERE org_id = ${orgId}::uuid AND domain = ${domain} AND state = 'registered'
      RETURNING *`;
    return row;
  } catch (error) {
    if (error instanceof postgres.PostgresError && error.constraint_name === "domains_verified_once") {
      throw new DomainConflictError(`${domain} is already verified by another organisation`);
    }
    throw error;
  }
}

/**
 * Serialises verifications within each domain family (domainFamily: its
 * shortest parent that is not a public suffix) until
 * the caller's transaction ends, so that a decision on what other organisations
 * hold above or below a domain still holds when it commits. Families are locked
 * in name order, so transactions verifying several wait for each other instead
 * of deadlocking; taking one again in the same transaction is free. Take them
 * before any lock on a row of `domains` in the transaction (a registration's
 * included), as verifyDomain does: one taken after such a lock can deadlock with
 * a verification that holds the family and waits for that row.
 */
export async function lockDomainFamilies(sql: Queryable, domains: readonly string[]): Promise<void> {
  for (const family of [...new Set(domains.map(domainFamily))].sort()) {
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`domain-family:${family}`}, 0))`;
  }
}

/**
 * registerDomain, recorded in the audit trail as `actor`'s (domain.registered),
 * in the caller's transaction. A domain already registered is answered as it is,
 * and nothing is recorded: registering again changes nothing. Whether this call
 * made the row decides, so concurrent registrations record it once.
 */
export async function registerDomainAs(
  sql: Transaction,
  orgId: string,
  input: string,
  actor: AuditActor,
): Promise<Domain> {
  const { created, ...domain } = await registerDomain(sql, orgId, input);
  if (created) {
    await recordAudit(sql, {
      actor,
      orgId,
      action: "domain.registered",
      targetType: "domain",
      targetId: domain.domain,
    });
  }
  return domain;
}

/**
 * verifyDomain, recorded as `actor`'s (domain.verified), in the caller's
 * transaction. A domain already verified keeps how it was verified, and nothing
 * is recorded; one not registered is undefined.
 */
export async function verifyDomainAs(
  sql: Transaction,
  orgId: string,
  input: string,
  method: VerificationMethod,
  actor: AuditActor,
): Promise<Domain | undefined> {
  const domain = await verifyDomain(sql, orgId, input, method);
  if (!domain) return findDomain(sql, orgId, normalizeDomain(input));
  await recordAudit(sql, {
    actor,
    orgId,
    action: "domain.verified",
    targetType: "domain",
    targetId: domain.domain,
    details: { method },
  });
  return domain;
}

export async function listDomains(
  sql: Queryable,
  orgId: string,
  page: { limit: number; offset: number } = { limit: 1000, offset: 0 },
): Promise<Domain[]> {
  return sql<Domain[]>`
    SELECT * FROM domains WHERE org_id = ${orgId}::uuid ORDER BY domain LIMIT ${page.limit} OFFSET ${page.offset}`;
}

/** The organisation's verified domains, in order (each also covers its subdomains). */
export async function verifiedDomainsOf(sql: Queryable, orgId: string): Promise<string[]> {
  const rows = await sql<{ domain: string }[]>`
    SELECT domain FROM domains WHERE org_id = ${orgId}::uuid AND state = 'verified' ORDER BY domain`;
  return rows.map((row) => row.domain);
}

/** A page of the organisation's domains and how many it has. */
export function pageOfDomains(sql: Queryable, orgId: string, page: { limit: number; offset: number }) {
  return pageWithTotal(sql, listDomains(sql, orgId, page), sql`domains WHERE org_id = ${orgId}::uuid`);
}

/** One domain of an organisation, by its canonical name. */
export async function findDomain(sql: Queryable, orgId: string, domain: string): Promise<Domain | undefined> {
  const [row] = await sql<Domain[]>`SELECT * FROM domains WHERE org_id = ${orgId}::uuid AND domain = ${domain}`;
  return row;
}

export async function removeDomain(sql: Queryable, orgId: string, domain: string): Promise<Domain | undefined> {
  const [row] = await sql<
    Domain[]
  >`DELETE FROM domains WHERE org_id = ${orgId}::uuid AND domain = ${domain} RETURNING *`;
  return row;
}

/** The outbound GET of domain verification, for other features that fetch from a participant's site. */
export { getCapped } from "./probe.ts";
