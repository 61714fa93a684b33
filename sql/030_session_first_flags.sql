-- Session counting moves onto the events themselves (issue 11).
--
-- DESIGN "Counting": a session counts once per scope, in the period that holds its
-- first event in that scope. Until now every inserted event wrote about four scope
-- rows and as many +1/-1 delta rows (sql/010, sql/013): 85% of the cost of ingest.
-- Instead, each event now carries which scopes it is its session's first event in
-- (ties broken by organisation and event id), computed when it is written, and the
-- continuous aggregates count sessions by summing those flags beside the events.
--
--   first_in               bits, for scopes without a hierarchy:
--                          1 URL · 2 (reporter, URL) · 4 (reporter, agent, URL)
--                          8 reporter · 16 (reporter, agent) · 32 (reporter, role)
--                          64 (reporter, agent, role)
--   first_domain           the coarsest domain the event is its session's first in,
--   first_domain_role      by its number of labels (0: none): the scopes owner, (owner,
--   first_domain_reporter  role) and (owner, reporter, agent). Owners are resolved at
--                          read time from verified domains, so owner scopes are keyed
--                          by every parent domain of at least two labels of the host;
--                          first in a domain means first in every subdomain holding
--                          the event, so one number says it for all of them.
--
-- The service computes the flags when it writes events (src/modules/ingest/
-- first-flags.ts, event-store.ts). A late event that is earlier than its
-- session's first in a scope takes the flag over: the event that had it is
-- updated in the same transaction. Owners with several unrelated verified domains
-- count the union of their domains from session_domain_firsts, one row per
-- session, domain, role and reporter.

ALTER TABLE events
  ADD COLUMN first_in smallint NOT NULL DEFAULT 0,
  ADD COLUMN first_domain smallint NOT NULL DEFAULT 0,
  ADD COLUMN first_domain_role smallint NOT NULL DEFAULT 0,
  ADD COLUMN first_domain_reporter smallint NOT NULL DEFAULT 0;

-- The time of each session's earliest event, from any reporter: the lower bound
-- that lets a write find a session's stored events in the chunks that can hold
-- them. Writers upsert it, in session order, before they write a session's
-- events: the row lock this takes makes concurrent writes of one session
-- compute their flags one after the other, each seeing the other's events.
CREATE TABLE session_bounds (
  session_id   uuid PRIMARY KEY,
  events_from  timestamptz NOT NULL
);

-- Owners with several unrelated verified domains count the union of them: a
-- session once, at its earliest first among them. One row per session and domain
-- (the host and every parent domain of at least two labels), role, reporter and agent.
CREATE TABLE session_domain_firsts (
  domain       text NOT NULL,
  session_id   uuid NOT NULL,
  source_role  text NOT NULL,
  org_id       uuid NOT NULL,
  agent_id     text NOT NULL DEFAULT '',
  first_seen   timestamptz NOT NULL,
  PRIMARY KEY (domain, session_id, source_role, org_id, agent_id)
);
CREATE INDEX session_domain_firsts_time ON session_domain_firsts (domain, first_seen);

-- The machinery this replaces.
DROP MATERIALIZED VIEW session_firsts_hour;
DROP MATERIALIZED VIEW session_firsts_day;
DROP MATERIALIZED VIEW session_firsts_month;
DROP FUNCTION record_session_firsts(timestamptz[], uuid[], text[], text[], text[], uuid[], text[]);
DROP TABLE session_first_deltas;
DROP TABLE session_scope_firsts, session_fine_firsts;

-- Sessions whose flags, bound and domain firsts the service must (re)compute from
-- their stored events; it works through them at start, before it serves.
CREATE TABLE session_recounts (session_id uuid PRIMARY KEY);

-- Events already stored: every session of them is recounted.
INSERT INTO session_recounts (session_id) SELECT DISTINCT session_id FROM events WHERE session_id IS NOT NULL;
