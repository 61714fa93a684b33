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
-- A late event that is earlier than its session's first in a scope takes the flag
-- over: the event that had it is updated (ingest does both in one transaction).
-- Owners with several unrelated verified domains count the union of their domains
-- from session_domain_firsts, one row per session, domain, role and reporter.

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

-- The domains a host belongs to for owner scopes: the host and each parent
-- domain of at least two labels, with its number of labels.
CREATE FUNCTION domain_suffixes(host text) RETURNS TABLE (labels smallint, domain text)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT (cardinality(parts) - i + 1)::smallint, array_to_string(parts[i:], '.')
  FROM (SELECT string_to_array(host, '.') AS parts) AS split,
       generate_series(1, cardinality(parts) - 1) AS i
$$;

-- The flags of every event of a pool that holds ALL events of its sessions (ingest
-- passes a batch's sessions' stored events with the new ones). Ties at one time are
-- broken by organisation, then event id, so exactly one event of a session is first
-- in a scope.
CREATE FUNCTION session_first_flags(
  p_event_time timestamptz[],
  p_event_id uuid[],
  p_org_id uuid[],
  p_session_id uuid[],
  p_content_url text[],
  p_content_host text[],
  p_source_role text[],
  p_agent_id text[]
) RETURNS TABLE (
  event_time timestamptz,
  event_id uuid,
  org_id uuid,
  first_in smallint,
  first_domain smallint,
  first_domain_role smallint,
  first_domain_reporter smallint
) LANGUAGE sql STABLE AS $$
  WITH pool AS (
    SELECT *
    FROM unnest(p_event_time, p_event_id, p_org_id, p_session_id, p_content_url, p_content_host, p_source_role, p_agent_id)
      AS p (event_time, event_id, org_id, session_id, content_url, content_host, source_role, agent_id)
  ),
  flat AS (
    SELECT event_time, event_id, org_id,
           (CASE WHEN content_url IS NULL THEN 0 ELSE
              (CASE WHEN row_number() OVER by_url = 1 THEN 1 ELSE 0 END)
            | (CASE WHEN row_number() OVER by_reporter_url = 1 THEN 2 ELSE 0 END)
            | (CASE WHEN row_number() OVER by_agent_url = 1 THEN 4 ELSE 0 END) END)
         | (CASE WHEN row_number() OVER by_reporter = 1 THEN 8 ELSE 0 END)
         | (CASE WHEN row_number() OVER by_agent = 1 THEN 16 ELSE 0 END)
         | (CASE WHEN row_number() OVER by_reporter_role = 1 THEN 32 ELSE 0 END)
         | (CASE WHEN row_number() OVER by_agent_role = 1 THEN 64 ELSE 0 END) AS first_in
    FROM pool
    WINDOW by_url AS (PARTITION BY session_id, content_url ORDER BY event_time, org_id, event_id),
           by_reporter_url AS (PARTITION BY session_id, org_id, content_url ORDER BY event_time, org_id, event_id),
           by_agent_url AS (PARTITION BY session_id, org_id, agent_id, content_url ORDER BY event_time, org_id, event_id),
           by_reporter AS (PARTITION BY session_id, org_id ORDER BY event_time, org_id, event_id),
           by_agent AS (PARTITION BY session_id, org_id, agent_id ORDER BY event_time, org_id, event_id),
           by_reporter_role AS (PARTITION BY session_id, org_id, source_role ORDER BY event_time, org_id, event_id),
           by_agent_role AS (PARTITION BY session_id, org_id, agent_id, source_role ORDER BY event_time, org_id, event_id)
  ),
  domains AS (
    SELECT p.event_time, p.event_id, p.org_id, d.labels,
           row_number() OVER (PARTITION BY p.session_id, d.domain ORDER BY p.event_time, p.org_id, p.event_id) = 1 AS owner,
           row_number() OVER (PARTITION BY p.session_id, d.domain, p.source_role
                              ORDER BY p.event_time, p.org_id, p.event_id) = 1 AS owner_role,
           row_number() OVER (PARTITION BY p.session_id, d.domain, p.org_id, p.agent_id
                              ORDER BY p.event_time, p.org_id, p.event_id) = 1 AS owner_reporter
    FROM pool p CROSS JOIN LATERAL domain_suffixes(p.content_host) d
  ),
  coarsest AS (
    SELECT event_time, event_id, org_id,
           min(labels) FILTER (WHERE owner) AS first_domain,
           min(labels) FILTER (WHERE owner_role) AS first_domain_role,
           min(labels) FILTER (WHERE owner_reporter) AS first_domain_reporter
    FROM domains
    GROUP BY event_time, event_id, org_id
  )
  SELECT f.event_time, f.event_id, f.org_id, f.first_in::smallint,
         coalesce(c.first_domain, 0)::smallint, coalesce(c.first_domain_role, 0)::smallint,
         coalesce(c.first_domain_reporter, 0)::smallint
  FROM flat f LEFT JOIN coarsest c USING (event_time, event_id, org_id)
$$;

-- Owners with several unrelated verified domains count the union of them: a
-- session once, at its earliest first among them. One row per session and domain
-- (every parent domain of a host, as above), role, reporter and agent.
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

-- Events already stored get their flags, their sessions' bounds, and their domain firsts.
INSERT INTO session_bounds (session_id, events_from)
SELECT session_id, min(event_time) FROM events WHERE session_id IS NOT NULL GROUP BY session_id;

DO $$
DECLARE
  group_ids uuid[];
BEGIN
  FOR group_ids IN
    SELECT array_agg(id) FROM (
      SELECT session_id AS id, (row_number() OVER (ORDER BY session_id) - 1) / 1000 AS n FROM session_bounds
    ) numbered GROUP BY n
  LOOP
    UPDATE events e
    SET first_in = f.first_in, first_domain = f.first_domain, first_domain_role = f.first_domain_role,
        first_domain_reporter = f.first_domain_reporter
    FROM (
      SELECT flags.*
      FROM (
        SELECT array_agg(event_time) AS t, array_agg(event_id) AS i, array_agg(org_id) AS o, array_agg(session_id) AS s,
               array_agg(content_url) AS u, array_agg(content_host) AS h, array_agg(source_role) AS r, array_agg(agent_id) AS a
        FROM events WHERE session_id = ANY (group_ids)
      ) AS pool
      CROSS JOIN LATERAL session_first_flags(pool.t, pool.i, pool.o, pool.s, pool.u, pool.h, pool.r, pool.a) AS flags
    ) AS f
    WHERE e.session_id = ANY (group_ids) AND e.event_time = f.event_time AND e.event_id = f.event_id AND e.org_id = f.org_id;
  END LOOP;
END $$;

INSERT INTO session_domain_firsts (domain, session_id, source_role, org_id, agent_id, first_seen)
SELECT d.domain, e.session_id, e.source_role, e.org_id, coalesce(e.agent_id, ''), min(e.event_time)
FROM events e CROSS JOIN LATERAL domain_suffixes(e.content_host) d
WHERE e.session_id IS NOT NULL
GROUP BY d.domain, e.session_id, e.source_role, e.org_id, coalesce(e.agent_id, '');
