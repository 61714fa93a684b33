-- One row per OAuth sign-in in flight: the state (hashed; it is the lookup key),
-- the PKCE verifier and the nonce to check in the ID token. Single use, short-lived.
CREATE TABLE oidc_login_states (
  id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  state_hash     bytea NOT NULL UNIQUE CHECK (octet_length(state_hash) = 32),
  provider       text NOT NULL,
  code_verifier  text NOT NULL,
  nonce          text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  expires_at     timestamptz NOT NULL,
  consumed_at    timestamptz
);
CREATE INDEX oidc_login_states_expiry ON oidc_login_states (expires_at);
