import type { Domain } from "./service.ts";
import { challengeInstructions } from "./verification.ts";

/** A domain as the API shows it: the challenge instructions only while it is unverified. */
export function domainOnWire(domain: Domain) {
  return {
    id: domain.id,
    organization_id: domain.org_id,
    domain: domain.domain,
    state: domain.state,
    verification_method: domain.verification_method,
    verified_at: domain.verified_at,
    created_at: domain.created_at,
    verification: domain.state === "verified" ? null : challengeInstructions(domain.domain, domain.challenge),
  };
}
