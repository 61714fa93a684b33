-- Which account at which OpenID provider signs in as which user.
--
-- The first sign-in with an account links it to the user of its verified e-mail;
-- later sign-ins follow the provider's subject, which never changes, rather than
-- the e-mail, which can. A user is linked to at most one account per provider, so
-- an address the provider later hands to another account cannot take the user over.
CREATE TABLE user_oidc_identities (
  issuer      text NOT NULL,
  subject     text NOT NULL,
  user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (issuer, subject),
  UNIQUE (user_id, issuer)
);
