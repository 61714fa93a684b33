-- A content owner (grantor) lets a platform or agent organisation (grantee) read
-- its telemetry. Active while revoked_at is null; revocation keeps the row for audit.
CREATE TABLE delegations (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  grantor_org_id  uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  grantee_org_id  uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  -- Only reads can be delegated; a grant that omits scopes gets telemetry:read.
  scopes          text[] NOT NULL DEFAULT ARRAY['telemetry:read']::text[] CHECK (scopes <@ ARRAY['telemetry:read']::text[]),
  created_at      timestamptz NOT NULL DEFAULT now(),
  revoked_at      timestamptz,
  CHECK (grantor_org_id <> grantee_org_id)
);
-- One active delegation per pair; delegated reads look it up by this index.
CREATE UNIQUE INDEX delegations_active_pair ON delegations (grantor_org_id, grantee_org_id) WHERE revoked_at IS NULL;
CREATE INDEX delegations_grantee ON delegations (grantee_org_id, created_at);
