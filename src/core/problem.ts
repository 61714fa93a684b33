/**
 * Every error the service answers with: a closed set of stable, machine-readable
 * codes, each with one HTTP status. Bad input (a request wrong in itself: its
 * shape, types, formats, bounds or values) is 400; 422 is for a well-formed request
 * that the current state refuses (a challenge not published, an organisation of the
 * wrong type). Services throw `problem(code, …)`; the HTTP
 * layer turns it into RFC 9457 problem+json (src/http/errors.ts). The codes are
 * listed in the OpenAPI document and the README (a test checks both).
 */
export const problemCodes = {
  malformed_json: { status: 400, meaning: "the body is not valid JSON" },
  malformed_body: { status: 400, meaning: "the body could not be parsed" },
  empty_body: { status: 400, meaning: "a JSON body is required and none was sent" },
  invalid_utf8: { status: 400, meaning: "the body is not valid UTF-8" },
  validation_failed: { status: 400, meaning: "the input breaks the schema or a rule; `errors` names each field" },
  invalid_text: { status: 400, meaning: "a text value contains a NUL character" },
  invalid_domain: { status: 400, meaning: "not a registrable host name (IPs, localhost, public suffixes)" },
  unknown_scope: { status: 400, meaning: "a scope that does not exist" },
  invalid_webhook_url: {
    status: 400,
    meaning: "the webhook URL is not https:// naming a public host (no IP, user name, fragment); `errors` says why",
  },
  unknown_event_type: { status: 400, meaning: "a webhook event type that does not exist (`allowed_event_types`)" },
  unauthorized: { status: 401, meaning: "the API key or session is missing, unknown, revoked or expired" },
  missing_scope: { status: 403, meaning: "the API key lacks the scope the route needs (`required_scope`)" },
  session_required: { status: 403, meaning: "the route needs a signed-in user's session, not an API key" },
  cross_site_request: {
    status: 403,
    meaning:
      "a change authenticated by the session cookie, or a sign-in link's button, came from another site's page (Sec-Fetch-Site or Origin)",
  },
  operator_admin_required: { status: 403, meaning: "the route is for operator admins" },
  organization_mismatch: { status: 403, meaning: "an API key acts only on its own organisation" },
  not_a_member: { status: 403, meaning: "the signed-in user is not a member of the organisation" },
  organization_suspended: {
    status: 403,
    meaning:
      "the organisation is suspended by the operator: its keys and its members' sessions act for it again once resumed",
  },
  role_required: { status: 403, meaning: "the route needs the owner or admin role" },
  owner_role_required: { status: 403, meaning: "only an owner may make, change or remove an owner" },
  scope_escalation: { status: 403, meaning: "a key cannot mint a key with scopes it lacks" },
  content_owner_only: { status: 403, meaning: "only content-owner organisations may do this" },
  platform_key_required: { status: 403, meaning: "only platform and agent keys may do this" },
  partner_not_enabled: { status: 403, meaning: "the organisation is not enabled as a trusted partner" },
  not_provisioned_by_you: { status: 403, meaning: "a partner acts only on owners it provisioned" },
  domain_not_bound: { status: 403, meaning: "the domain is not a verified domain of the content owner" },
  delegation_not_allowed: { status: 403, meaning: "delegated reads are for platform and agent keys" },
  delegation_required: { status: 403, meaning: "platform and agent keys read owner data only with delegated_from" },
  no_active_delegation: { status: 403, meaning: "no active delegation from that owner grants the read" },
  outside_verified_domains: {
    status: 403,
    meaning: "a content-owner key reports only events on its verified domains (`offending_events`)",
  },
  access_request_required: {
    status: 403,
    meaning: "platform and agent organisations are created through an access request",
  },
  route_not_found: { status: 404, meaning: "no route answers this method and path" },
  domain_not_found: { status: 404, meaning: "no such domain on the organisation" },
  organization_not_found: { status: 404, meaning: "no such organisation" },
  session_not_found: { status: 404, meaning: "the caller's organisation has no such session" },
  member_not_found: { status: 404, meaning: "no such member of the organisation" },
  invite_not_found: { status: 404, meaning: "no such open invitation" },
  trusted_partner_not_found: { status: 404, meaning: "the organisation is not a trusted partner" },
  oidc_provider_not_found: { status: 404, meaning: "no such sign-in provider is configured" },
  oidc_link_not_found: { status: 404, meaning: "the user has no account linked at that provider" },
  key_not_found: { status: 404, meaning: "the organisation has no such API key" },
  click_token_not_found: {
    status: 404,
    meaning: "no click manifest for this token (unknown, expired, or its issuer does not share sessions)",
  },
  manifest_not_found: { status: 404, meaning: "the organisation has registered no manifest" },
  access_request_not_found: { status: 404, meaning: "no such access request" },
  verified_domain_not_found: { status: 404, meaning: "no organisation has verified the domain (or a parent of it)" },
  delegation_not_found: { status: 404, meaning: "the organisation granted no such delegation" },
  delegation_request_not_found: { status: 404, meaning: "no such delegation request addressed to the organisation" },
  webhook_not_found: { status: 404, meaning: "the organisation has no such webhook endpoint" },
  delivery_not_found: { status: 404, meaning: "the webhook endpoint has no such delivery" },
  method_not_allowed: { status: 405, meaning: "the path answers other methods (`Allow`)" },
  conflict: { status: 409, meaning: "a record with the same identity already exists" },
  domain_taken: {
    status: 409,
    meaning: "another organisation holds the domain verified (for an attestation: or a parent or subdomain of it)",
  },
  last_owner: { status: 409, meaning: "the last owner can be neither demoted nor removed" },
  invite_exists: { status: 409, meaning: "the address already has an open invitation" },
  invite_claimed: { status: 409, meaning: "the invitation was already claimed" },
  already_reviewed: { status: 409, meaning: "the access request was already reviewed" },
  delegation_exists: { status: 409, meaning: "the pair already has an active delegation" },
  delegation_request_pending: { status: 409, meaning: "a delegation request for the pair is already pending" },
  delegation_request_stale: {
    status: 409,
    meaning:
      "the organisation no longer holds the request's domain verified: only the domain's current owner may grant it (`domain`)",
  },
  delegation_request_resolved: {
    status: 409,
    meaning: "the delegation request was already approved or denied (`request_status` says which)",
  },
  webhook_limit_reached: { status: 409, meaning: "the organisation already has 10 active webhook endpoints (`limit`)" },
  webhook_disabled: { status: 409, meaning: "the webhook endpoint is disabled for failing; enable it first" },
  webhook_deleted: { status: 409, meaning: "the webhook endpoint was deleted; create a new one" },
  delivery_in_flight: { status: 409, meaning: "the delivery is being sent right now; ask again in a moment" },
  body_timeout: { status: 408, meaning: "the body did not arrive within BODY_TIMEOUT_SECONDS" },
  invite_expired: { status: 410, meaning: "the invitation has expired" },
  delegation_request_expired: { status: 410, meaning: "the delegation request expired (30 days after it was filed)" },
  payload_too_large: { status: 413, meaning: "the body is larger than MAX_BODY_BYTES (after decompression)" },
  unsupported_media_type: { status: 415, meaning: "the body is not application/json" },
  unsupported_content_encoding: {
    status: 415,
    meaning: "Content-Encoding is not identity, gzip (or x-gzip), deflate, br or zstd (`accepted_encodings`)",
  },
  foreign_click_token: {
    status: 422,
    meaning: "a standard ct_ click token of another issuer; resolve it at that issuer's ctx_resolution",
  },
  manifest_unusable: {
    status: 422,
    meaning: "the manifest could not be fetched or breaks the standard (`manifest_status`, `detail` says why)",
  },
  verification_failed: { status: 422, meaning: "the domain's challenge was not found (`detail` says what)" },
  not_a_platform: { status: 422, meaning: "only platform organisations can be trusted partners" },
  invalid_grantee: { status: 422, meaning: "a delegation's grantee must be a platform or agent organisation" },
  setting_not_applicable: { status: 422, meaning: "the setting does not apply to this organisation type" },
  organization_required: { status: 422, meaning: "name the organisation with org_id" },
  rate_limited: { status: 429, meaning: "a rate limit is reached (`limit_class`, `Retry-After`)" },
  too_many_sign_in_links: {
    status: 429,
    meaning: "too many sign-in links for this address; ask again after `Retry-After` (`retry_after_seconds`)",
  },
  too_many_invitations: {
    status: 429,
    meaning: "too many invitations to this address today; invite it again after `Retry-After` (`retry_after_seconds`)",
  },
  internal_error: { status: 500, meaning: "a bug: logged with its stack, never returned" },
  database_unavailable: {
    status: 503,
    meaning: "the database is unavailable for the moment: restarting, unreachable or out of connections",
  },
  query_timeout: { status: 503, meaning: "the query took too long; narrow the range or retry" },
  oidc_provider_unavailable: { status: 503, meaning: "the sign-in provider cannot be reached" },
  mail_unavailable: { status: 503, meaning: "the mail server cannot take the message" },
  webhooks_unavailable: {
    status: 503,
    meaning: "webhooks need WEBHOOK_SECRET_KEY on a database server; the operator has not set it",
  },
  ingest_overloaded: {
    status: 503,
    meaning: "ingest is at capacity (more requests waiting than INGEST_QUEUE allows); retry after Retry-After",
  },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ProblemCode = keyof typeof problemCodes;

const titles: Record<number, string> = {
  400: "Bad request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not found",
  405: "Method not allowed",
  408: "Request timeout",
  409: "Conflict",
  410: "Gone",
  413: "Payload too large",
  415: "Unsupported media type",
  422: "Unprocessable content",
  429: "Too many requests",
  500: "Internal server error",
  503: "Service unavailable",
};

/** One failing field of a request, by JSON pointer. */
export interface FieldError {
  path: string;
  message: string;
}

/**
 * Members a problem adds to its body (`errors`, `limit`, …). The members RFC 9457
 * and this service define are set from the code alone: an extension named like one
 * would overwrite it (a `status` of "approved" on a 409).
 */
export type ProblemExtensions = Record<string, unknown> & {
  [member in "type" | "title" | "status" | "code" | "detail" | "instance" | "request_id"]?: never;
};

/** A refusal with a stable code; its status and title follow from the code. */
export class ProblemError extends Error {
  override name = "ProblemError";
  readonly status: number;
  readonly title: string;
  constructor(
    readonly code: ProblemCode,
    readonly detail?: string,
    readonly extensions: ProblemExtensions = {},
    /** Response headers the problem needs (Allow, Retry-After, …). */
    readonly headers: Record<string, string> = {},
  ) {
    super(detail ?? code);
    this.status = problemCodes[code].status;
    this.title = titles[this.status] ?? "Error";
  }
}

export function problem(
  code: ProblemCode,
  detail: string,
  extensions?: ProblemExtensions,
  headers?: Record<string, string>,
): ProblemError {
  return new ProblemError(code, detail, extensions, headers);
}

/** Input that breaks a rule: 400 (unless `code` says otherwise) naming each failing field in `errors`. */
export function invalid(
  detail: string,
  errors: FieldError[],
  code: ProblemCode = "validation_failed",
  extensions?: ProblemExtensions,
): ProblemError {
  return new ProblemError(code, detail, { errors, ...extensions });
}
