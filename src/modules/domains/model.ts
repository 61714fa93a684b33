import { t } from "elysia";
import { manifestClaimInstructions } from "../manifests/service.ts";
import type { Domain } from "./service.ts";
import { challengeInstructions } from "./verification.ts";

export const DomainBody = t.Object({
  domain: t.String({ minLength: 1, maxLength: 253, description: "host name; normalised (case, trailing dot, IDN)" }),
});

export const DomainParams = t.Object({ domain: t.String({ minLength: 1, maxLength: 253 }) });

export const VerifyBody = t.Object({
  method: t.Union([t.Literal("dns_txt"), t.Literal("https_file"), t.Literal("manifest")], {
    description:
      "dns_txt: TXT record at _content-telemetry.{domain}; https_file: https://{domain}/.well-known/content-telemetry-verification.txt; manifest: the organisation's registered participant manifest, served at the root of the domain or a parent of it, lists the domain in `domains`, and `signature` signs the challenge with one of its keys",
  }),
  signature: t.Optional(
    t.String({
      minLength: 1,
      maxLength: 4096,
      description:
        "method manifest only: a detached compact JWS (`<header>..<signature>`, alg EdDSA, kid of a manifest key) over the UTF-8 bytes of the challenge",
    }),
  ),
});

export const DomainRecord = t.Object({
  id: t.String({ format: "uuid" }),
  organization_id: t.String({ format: "uuid" }),
  domain: t.String(),
  state: t.Union([t.Literal("registered"), t.Literal("verified")]),
  verification_method: t.Nullable(t.String()),
  verified_at: t.Nullable(t.Date()),
  created_at: t.Date(),
  verification: t.Nullable(
    t.Object(
      {
        dns_txt: t.Object({ name: t.String(), value: t.String() }),
        https_file: t.Object({ url: t.String(), body: t.String() }),
        manifest: t.Object({ manifest_url: t.String(), domains_entry: t.String(), sign: t.String() }),
      },
      { description: "what to publish to verify; null once verified" },
    ),
  ),
});

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
    verification:
      domain.state === "verified"
        ? null
        : {
            ...challengeInstructions(domain.domain, domain.challenge),
            manifest: manifestClaimInstructions(domain.domain, domain.challenge),
          },
  };
}
