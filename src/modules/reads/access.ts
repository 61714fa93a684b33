import type { Principal } from "../../core/caller.ts";
import { DomainError, isWithinDomain, normalizeDomain } from "../../core/hosts.ts";
import { invalid, problem } from "../../core/problem.ts";
import type { Sql } from "../../db/sql.ts";
import { delegatedDomains } from "../delegations/service.ts";
import type { ReadScope } from "./scope.ts";

/**
 * The owner whose data a /content-owners read shows, and its domains:
 * - a content-owner key: its own organisation and verified domains;
 * - a platform or agent key with `delegated_from`: the grantor's, only while an
 *   active delegation from the grantor to the key's organisation grants telemetry:read.
 * `domain` narrows to one of those domains (or a subdomain of one); any other is 403.
 * The caller has already required telemetry:read on the key.
 */
export async function resolveOwnerScope(
  sql: Sql,
  principal: Principal,
  query: { domain?: string; delegated_from?: string },
): Promise<Extract<ReadScope, { view: "owner" }>> {
  let orgId: string;
  let domains: readonly string[];
  if (query.delegated_from !== undefined) {
    const grantorId = query.delegated_from.toLowerCase();
    if (principal.orgType === "content_owner") {
      throw problem("delegation_not_allowed", "delegated reads are for platform and agent keys");
    }
    const granted = await delegatedDomains(sql, grantorId, principal.orgId, "telemetry:read");
    if (!granted) {
      throw problem(
        "no_active_delegation",
        `no active delegation from ${grantorId} to this organisation grants telemetry:read`,
      );
    }
    orgId = grantorId;
    domains = granted;
  } else {
    if (principal.orgType !== "content_owner") {
      throw problem(
        "delegation_required",
        "platform and agent keys read content-owner data only with delegated_from (an active delegation)",
      );
    }
    orgId = principal.orgId;
    domains = principal.verifiedDomains;
  }
  if (query.domain === undefined) return { view: "owner", orgId, domains };
  const domain = canonicalDomain(query.domain);
  if (!domains.some((verified) => isWithinDomain(domain, verified))) {
    throw problem("domain_not_bound", `${domain} is not a verified domain of this content owner`, {
      domain,
    });
  }
  return { view: "owner", orgId, domains: [domain] };
}

/**
 * `domain` in the form verified domains and event hosts are stored in (lower
 * case, no trailing dot, IDN as punycode), so that it matches them; anything
 * that is not a host name is 400 naming the field.
 */
function canonicalDomain(input: string): string {
  try {
    return normalizeDomain(input);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    throw invalid("the query parameters are invalid: /domain", [{ path: "/domain", message: error.message }]);
  }
}

/** /agent/* reads: the events the key's own organisation reported, optionally of one agent. */
export function resolveReporterScope(principal: Principal, query: { agent_id?: string }): ReadScope {
  return { view: "reporter", orgId: principal.orgId, agentId: query.agent_id ?? null };
}
