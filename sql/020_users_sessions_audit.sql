-- People who sign in, their sessions, organisation membership and the audit trail
-- of every control-plane change.

CREATE TABLE users (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email       text NOT NULL UNIQUE CHECK (email = lower(email) AND char_length(email) BETWEEN 3 AND 254),
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- Single-use sign-in links: only a SHA-256 of the token is kept.
CREATE TABLE magic_link_tokens (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email        text NOT NULL CHECK (email = lower(email)),
  token_hash   bytea NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  consumed_at  timestamptz
);
CREATE INDEX magic_link_tokens_expiry ON magic_link_tokens (expires_at);
CREATE INDEX magic_link_tokens_email ON magic_link_tokens (email, created_at);

-- Sessions are opaque random ids; only a SHA-256 is kept.
CREATE TABLE user_sessions (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token_hash  bytea NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  revoked_at  timestamptz
);
CREATE INDEX user_sessions_user ON user_sessions (user_id);

-- Mail kept by the development transport (no SMTP configured), for the CLI and tests.
CREATE TABLE mail_outbox (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  recipient   text NOT NULL,
  subject     text NOT NULL,
  body        text NOT NULL,
  link        text,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mail_outbox_recipient ON mail_outbox (recipient, created_at);

CREATE TABLE organization_members (
  org_id      uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role        text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, user_id)
);
CREATE INDEX organization_members_user ON organization_members (user_id);

-- Who changed what, when. org_id is null for changes outside any organisation
-- (such as reviews of access requests before an organisation exists).
CREATE TABLE audit_events (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  occurred_at  timestamptz NOT NULL DEFAULT now(),
  org_id       uuid REFERENCES organizations (id) ON DELETE CASCADE,
  actor_type   text NOT NULL CHECK (actor_type IN ('user', 'api_key', 'system')),
  actor_id     text,
  actor_label  text,
  action       text NOT NULL,
  target_type  text NOT NULL,
  target_id    text,
  details      jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX audit_events_org ON audit_events (org_id, occurred_at DESC);
