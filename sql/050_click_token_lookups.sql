-- Click-manifest lookups (GET /ctx/{token}), counted per organisation, role and
-- UTC day, so that an agent sees how often its tokens are resolved, a resolver
-- how often it resolved, and a content owner how often its content appeared in
-- a resolved manifest. Only answered lookups count: a refused one (404) names no
-- token, and counting it against an issuer would tell which tokens exist.
CREATE TABLE click_token_lookups (
  org_id   uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  role     text NOT NULL CHECK (role IN ('issuer', 'resolver', 'owner')),
  day      date NOT NULL,
  lookups  bigint NOT NULL CHECK (lookups > 0),
  PRIMARY KEY (org_id, role, day)
);
