-- Each organisation may register the URL of its participant manifest
-- (/.well-known/content-telemetry.json, standard 8). The service fetches it,
-- checks it and refetches it when its cache time (refresh_at) passes. document
-- holds the last fetch only while it was valid: an invalid or unreachable
-- manifest leaves the participant unverified (8.7), and its keys verify nothing.
CREATE TABLE participant_manifests (
  org_id      uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  url         text NOT NULL,
  status      text NOT NULL CHECK (status IN ('valid', 'invalid', 'unreachable')),
  problem     text,
  document    jsonb,
  fetched_at  timestamptz NOT NULL,
  refresh_at  timestamptz NOT NULL,
  CHECK ((status = 'valid') = (document IS NOT NULL))
);
CREATE INDEX participant_manifests_refresh ON participant_manifests (refresh_at);
