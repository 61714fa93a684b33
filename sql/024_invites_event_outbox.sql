-- Invitations to join an organisation, claimed by a signed-in user with the
-- invited address. provisioning_org_id is the trusted partner that provisioned
-- the organisation (its owner invite), else the inviting organisation itself:
-- it is the one told about the claim (invite.claimed).
CREATE TABLE invites (
  id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id               uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  email                text NOT NULL CHECK (email = lower(email) AND char_length(email) BETWEEN 3 AND 254),
  role                 text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  provisioning_org_id  uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  created_at           timestamptz NOT NULL DEFAULT now(),
  expires_at           timestamptz NOT NULL,
  claimed_at           timestamptz,
  claimed_by           uuid REFERENCES users (id) ON DELETE SET NULL,
  revoked_at           timestamptz
);
CREATE UNIQUE INDEX invites_open_once ON invites (org_id, email) WHERE claimed_at IS NULL AND revoked_at IS NULL;
CREATE INDEX invites_email ON invites (email) WHERE claimed_at IS NULL AND revoked_at IS NULL;

-- Identity events written in the same transaction as the change they announce
-- (transactional outbox). Webhook delivery reads from here.
CREATE TABLE event_outbox (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id      uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  event_type  text NOT NULL,
  data        jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX event_outbox_org ON event_outbox (org_id, created_at);
