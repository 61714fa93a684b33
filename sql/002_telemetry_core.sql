-- Sessions, events and click tokens: the write side's storage, read by the read side.

CREATE TABLE sessions (
  id                   uuid PRIMARY KEY,
  org_id               uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  initiator_type       text NOT NULL DEFAULT 'user' CHECK (initiator_type IN ('user', 'agent')),
  agent_id             text,
  manifest_ref         text,
  content_scope        text,
  external_session_id  text,
  parent_session_id    uuid,
  prior_session_ids    uuid[] NOT NULL DEFAULT '{}',
  -- Fail closed: a session that declares nothing is treated as `minimal`.
  privacy_level        text NOT NULL DEFAULT 'minimal' CHECK (privacy_level IN ('full', 'summary', 'intent', 'minimal')),
  started_at           timestamptz NOT NULL DEFAULT now(),
  ended_at             timestamptz,
  outcome_type         text CHECK (outcome_type IN ('conversion', 'abandonment', 'browse')),
  outcome_value_amount bigint,
  outcome_currency     text,
  created_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sessions_org ON sessions (org_id, started_at);

-- One row per reported event. Everything the read side filters or groups on is
-- a column, so reads never parse JSON; `data` keeps the type-specific details.
CREATE TABLE events (
  event_time            timestamptz NOT NULL,
  event_id              uuid NOT NULL,
  org_id                uuid NOT NULL,   -- reporting organisation (platform_id on the read side)
  event_type            text NOT NULL,
  source_role           text NOT NULL,
  content_url           text,
  content_host          text,            -- lower-case host of content_url, no port, no trailing dot
  agent_id              text,
  session_id            uuid,
  content_id            text,
  content_telemetry_id  text,
  turn_id               text,
  output_id             text,
  data                  jsonb NOT NULL DEFAULT '{}',
  received_at           timestamptz NOT NULL DEFAULT now()
);

-- Chunk interval 7 days: a year is ~52 chunks, few enough that a 365-day query
-- plans quickly, and at tens of millions of events a year one chunk (a few
-- hundred thousand rows plus indexes) stays well inside memory while it is hot.
SELECT create_hypertable('events', by_range('event_time', INTERVAL '7 days'));

-- Retries are idempotent per reporter: the same event id at the same time from the
-- same organisation is stored once (ON CONFLICT DO NOTHING needs this index, and
-- a hypertable's unique index must include the time column).
CREATE UNIQUE INDEX events_dedupe ON events (org_id, event_id, event_time);
CREATE INDEX events_host_time ON events (content_host, event_time DESC);
CREATE INDEX events_session ON events (session_id, event_time) WHERE session_id IS NOT NULL;

-- Click tokens: only a SHA-256 of the raw `ctx_…` token is stored.
CREATE TABLE click_tokens (
  token_hash   bytea PRIMARY KEY CHECK (octet_length(token_hash) = 32),
  session_id   uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  org_id       uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  content_url  text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL
);
CREATE INDEX click_tokens_session ON click_tokens (session_id);
