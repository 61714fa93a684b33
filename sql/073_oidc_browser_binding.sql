-- An OAuth sign-in may be finished only by the browser that started it (login
-- CSRF, RFC 6749 section 10.12): each state keeps the hash of the binding cookie
-- that browser holds. A state is now spent by deleting it, so its PKCE verifier
-- and nonce do not outlive their one use. Sign-ins in flight (ten minutes at
-- most) have no binding and are dropped: their users start again.
DELETE FROM oidc_login_states;
ALTER TABLE oidc_login_states
  ADD COLUMN browser_hash bytea NOT NULL CHECK (octet_length(browser_hash) = 32),
  DROP COLUMN consumed_at;
