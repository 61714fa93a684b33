-- Ingest health, for the dashboard (issue 17): per reporting organisation and
-- hour, the events accepted and the requests refused (with the events they
-- carried), and the latest refusals with their exact errors, so that an emitter
-- can debug its integration. Each process adds up its own in memory and writes
-- it every few seconds (src/modules/ingest-health/service.ts): never in an
-- ingest transaction, so ingest pays nothing for it, and several instances add
-- up. Refusals are kept 7 days, hours 90 (the same flush purges them).
CREATE TABLE ingest_hours (
  org_id            uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  hour              timestamptz NOT NULL,
  accepted_events   bigint NOT NULL DEFAULT 0,
  refused_requests  bigint NOT NULL DEFAULT 0,
  refused_events    bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (org_id, hour)
);

CREATE TABLE ingest_refusals (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id       uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  received_at  timestamptz NOT NULL,
  path         text NOT NULL,
  status       smallint NOT NULL,
  code         text NOT NULL,
  detail       text,
  -- The problem's field errors as sent ({path, message}), at most the first 20.
  errors       jsonb NOT NULL DEFAULT '[]',
  events       integer NOT NULL,
  request_id   text
);
CREATE INDEX ingest_refusals_org ON ingest_refusals (org_id, received_at DESC);
