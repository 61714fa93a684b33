-- Organisations, their domains and their API keys: what authentication needs.

CREATE TABLE organizations (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name        text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
  org_type    text NOT NULL CHECK (org_type IN ('content_owner', 'platform', 'agent')),
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- A domain is registered by an organisation and later verified. Verified domains
-- (and their subdomains) decide which events an owner sees, so only one
-- organisation may hold a given domain verified.
CREATE TABLE domains (
  id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id               uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  domain               text NOT NULL CHECK (domain = lower(domain) AND char_length(domain) BETWEEN 1 AND 253),
  state                text NOT NULL DEFAULT 'registered' CHECK (state IN ('registered', 'verified')),
  verification_method  text CHECK (verification_method IN ('dns_txt', 'https_file', 'partner_attestation', 'operator')),
  verified_at          timestamptz,
  created_at           timestamptz NOT NULL DEFAULT now(),
  UNIQUE (org_id, domain),
  CHECK ((state = 'verified') = (verified_at IS NOT NULL AND verification_method IS NOT NULL))
);
CREATE UNIQUE INDEX domains_verified_once ON domains (domain) WHERE state = 'verified';

-- Keys are `svc_pub_…` / `svc_pk_…` followed by 43 url-safe characters. The first
-- 12 of those are a non-secret lookup id (indexed); only a SHA-256 of the whole
-- key is stored and it is compared in constant time after the lookup.
CREATE TABLE api_keys (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id          uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  lookup_id       text NOT NULL UNIQUE,
  secret_hash     bytea NOT NULL CHECK (octet_length(secret_hash) = 32),
  display_prefix  text NOT NULL,
  scopes          text[] NOT NULL CHECK (
    scopes <@ ARRAY['telemetry:read', 'telemetry:write', 'identity:read', 'identity:write', 'partner:provision']::text[]
  ),
  name            text CHECK (char_length(name) <= 200),
  created_at      timestamptz NOT NULL DEFAULT now(),
  last_used_at    timestamptz,
  revoked_at      timestamptz
);
CREATE INDEX api_keys_org ON api_keys (org_id, created_at);
