-- Exact session counting for the read side.
--
-- DESIGN "Counting": a session counts once per scope, in the period that holds
-- its first event in that scope. Owners are resolved at read time from verified
-- domains, so nothing here is keyed by owner: owner scopes are keyed by every
-- parent domain (of at least two labels) of the event's host, which is exactly
-- the set of domains whose owner would see the event.
--
-- A row trigger on `events` keeps, per scope and session, the time of the first
-- event (`session_scope_firsts`, the state) and appends +1/-1 deltas to a
-- hypertable (`session_first_deltas`) whenever that first time appears or moves
-- earlier (a late event). Continuous aggregates sum the deltas per bucket, so the
-- sessions of any union of whole buckets are a sum, and a late event only
-- touches the buckets it moves a session between.
--
-- Scope kinds (k1, k2, k3; '' when unused; a missing agent_id is ''):
--   O   owner domain             (domain)
--   OR  owner domain, role       (domain, source_role)
--   OA  owner domain, reporter   (domain, org_id, agent_id)
--   U   URL                      (md5 of content_url)
--   P   reporting org            (org_id)
--   PA  reporting org, agent     (org_id, agent_id)
--   PR  reporting org, role      (org_id, source_role)
--   PAR reporting org, agent, role (org_id, agent_id, source_role)
--   PU  reporting org, URL       (org_id, '', md5 of content_url)
--   PAU reporting org, agent, URL (org_id, agent_id, md5 of content_url)
-- URLs are keyed by their md5 so that arbitrarily long URLs fit in a btree key.

-- Every host ever seen, so an owner's hosts are found without scanning events.
CREATE TABLE content_hosts (
  host           text PRIMARY KEY,
  first_seen_at  timestamptz NOT NULL DEFAULT now()
);

-- Agent dashboards read the events their own organisation reported, newest first.
CREATE INDEX events_reporter_time ON events (org_id, agent_id, event_time DESC);

-- The finest scope a session can be counted in. An event that does not make its
-- session earlier here cannot change any coarser scope, so the trigger stops
-- after one primary-key probe for most events.
CREATE TABLE session_fine_firsts (
  session_id    uuid NOT NULL,
  content_host  text NOT NULL,
  url_md5       text NOT NULL,
  source_role   text NOT NULL,
  org_id        uuid NOT NULL,
  agent_id      text NOT NULL,
  first_seen    timestamptz NOT NULL,
  PRIMARY KEY (session_id, content_host, url_md5, source_role, org_id, agent_id)
);

CREATE TABLE session_scope_firsts (
  kind        text NOT NULL,
  k1          text NOT NULL,
  k2          text NOT NULL DEFAULT '',
  k3          text NOT NULL DEFAULT '',
  session_id  uuid NOT NULL,
  first_seen  timestamptz NOT NULL,
  -- The first_seen this row had before its last move earlier (null when never
  -- moved); lets one upsert return what it replaced.
  previous_first_seen  timestamptz,
  PRIMARY KEY (kind, k1, k2, k3, session_id)
);
-- Owners with several unrelated verified domains count the union of sessions here.
CREATE INDEX session_scope_firsts_time ON session_scope_firsts (kind, k1, first_seen);

CREATE TABLE session_first_deltas (
  first_seen  timestamptz NOT NULL,
  kind        text NOT NULL,
  k1          text NOT NULL,
  k2          text NOT NULL DEFAULT '',
  k3          text NOT NULL DEFAULT '',
  delta       smallint NOT NULL CHECK (delta IN (-1, 1))
);
SELECT create_hypertable('session_first_deltas', by_range('first_seen', INTERVAL '7 days'));
CREATE INDEX session_first_deltas_scope ON session_first_deltas (kind, k1, first_seen DESC);

CREATE FUNCTION events_track_session_firsts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_org text := NEW.org_id::text;
  v_agent text := coalesce(NEW.agent_id, '');
  v_domain text := NEW.content_host;
  v_url text := md5(NEW.content_url);
  v_changed boolean;
  v_kinds text[] := '{}';
  v_k1 text[] := '{}';
  v_k2 text[] := '{}';
  v_k3 text[] := '{}';
BEGIN
  IF NEW.content_host IS NOT NULL THEN
    INSERT INTO content_hosts (host) VALUES (NEW.content_host) ON CONFLICT DO NOTHING;
  END IF;
  IF NEW.session_id IS NULL THEN
    RETURN NULL;
  END IF;

  INSERT INTO session_fine_firsts AS f (session_id, content_host, url_md5, source_role, org_id, agent_id, first_seen)
  VALUES (NEW.session_id, coalesce(NEW.content_host, ''), coalesce(v_url, ''), NEW.source_role, NEW.org_id,
          v_agent, NEW.event_time)
  ON CONFLICT (session_id, content_host, url_md5, source_role, org_id, agent_id)
  DO UPDATE SET first_seen = EXCLUDED.first_seen WHERE EXCLUDED.first_seen < f.first_seen
  RETURNING true INTO v_changed;
  IF v_changed IS NULL THEN
    RETURN NULL;
  END IF;

  -- Owner side: the host and each parent domain of at least two labels.
  WHILE v_domain IS NOT NULL AND position('.' IN v_domain) > 0 LOOP
    v_kinds := v_kinds || ARRAY['O', 'OR', 'OA'];
    v_k1 := v_k1 || ARRAY[v_domain, v_domain, v_domain];
    v_k2 := v_k2 || ARRAY['', NEW.source_role, v_org];
    v_k3 := v_k3 || ARRAY['', '', v_agent];
    v_domain := substr(v_domain, position('.' IN v_domain) + 1);
  END LOOP;
  IF v_url IS NOT NULL THEN
    v_kinds := v_kinds || ARRAY['U', 'PU', 'PAU'];
    v_k1 := v_k1 || ARRAY[v_url, v_org, v_org];
    v_k2 := v_k2 || ARRAY['', '', v_agent];
    v_k3 := v_k3 || ARRAY['', v_url, v_url];
  END IF;
  -- Reporter side (agent dashboards).
  v_kinds := v_kinds || ARRAY['P', 'PA', 'PR', 'PAR'];
  v_k1 := v_k1 || ARRAY[v_org, v_org, v_org, v_org];
  v_k2 := v_k2 || ARRAY['', v_agent, NEW.source_role, v_agent];
  v_k3 := v_k3 || ARRAY['', '', '', NEW.source_role];

  -- One upsert for every scope: a new row is +1 at this time; a row moved
  -- earlier is -1 at its previous time and +1 at this one. ON CONFLICT locks the
  -- row, so concurrent writers of the same scope and session are serialised.
  WITH changed AS (
    INSERT INTO session_scope_firsts AS f (kind, k1, k2, k3, session_id, first_seen)
    SELECT kind, k1, k2, k3, NEW.session_id, NEW.event_time FROM unnest(v_kinds, v_k1, v_k2, v_k3) AS k (kind, k1, k2, k3)
    ON CONFLICT (kind, k1, k2, k3, session_id) DO UPDATE
      SET first_seen = EXCLUDED.first_seen, previous_first_seen = f.first_seen
      WHERE EXCLUDED.first_seen < f.first_seen
    RETURNING f.kind, f.k1, f.k2, f.k3, f.previous_first_seen
  )
  INSERT INTO session_first_deltas (first_seen, kind, k1, k2, k3, delta)
  SELECT NEW.event_time, kind, k1, k2, k3, 1 FROM changed
  UNION ALL
  SELECT previous_first_seen, kind, k1, k2, k3, -1 FROM changed WHERE previous_first_seen IS NOT NULL;
  RETURN NULL;
END $$;

CREATE TRIGGER events_session_firsts AFTER INSERT ON events
FOR EACH ROW EXECUTE FUNCTION events_track_session_firsts();
