-- A platform or agent organisation (grantee) asks the content owner that verified
-- a domain (grantor) for a delegation. A request stays pending until the grantor
-- approves it (which creates the delegation) or denies it, or until it expires
-- 30 days after it was filed. A job marks expired requests; an approval after
-- expires_at is refused whether or not the job has run yet.
CREATE TABLE delegation_requests (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  grantor_org_id  uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  grantee_org_id  uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  -- The domain the grantee named (canonical form); the grantor verified it or a parent of it.
  domain          text NOT NULL CHECK (domain = lower(domain) AND char_length(domain) BETWEEN 1 AND 253),
  scopes          text[] NOT NULL CHECK (cardinality(scopes) > 0 AND scopes <@ ARRAY['telemetry:read']::text[]),
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied', 'expired')),
  created_at      timestamptz NOT NULL,
  expires_at      timestamptz NOT NULL,
  resolved_at     timestamptz,
  -- The delegation the approval created (it may since have been revoked).
  delegation_id   uuid REFERENCES delegations (id) ON DELETE SET NULL,
  CHECK (grantor_org_id <> grantee_org_id),
  CHECK (expires_at > created_at),
  CHECK ((status = 'pending') = (resolved_at IS NULL)),
  CHECK (status = 'approved' OR delegation_id IS NULL)
);
-- One pending request per pair: a second one, however it races the first, is refused here.
CREATE UNIQUE INDEX delegation_requests_pending_pair
  ON delegation_requests (grantor_org_id, grantee_org_id) WHERE status = 'pending';
CREATE INDEX delegation_requests_pending_grantee
  ON delegation_requests (grantee_org_id, created_at) WHERE status = 'pending';
-- The expiry job's scan.
CREATE INDEX delegation_requests_pending_expiry ON delegation_requests (expires_at) WHERE status = 'pending';
