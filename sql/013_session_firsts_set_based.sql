-- Session-first bookkeeping (sql/010) once per statement instead of once per row.
--
-- The row trigger of 010 ran about three statements per inserted event and cut
-- HTTP ingest on the embedded engine to a fifth. TimescaleDB hypertables have no
-- statement-level triggers with transition tables, so the writers of `events`
-- call record_session_firsts once with the rows they actually inserted (the
-- RETURNING of the insert, so duplicates skipped by ON CONFLICT are not counted).
--
-- Same tables, keys and semantics as 010. Within one call several events can hit
-- the same row, and ON CONFLICT cannot touch a row twice in one statement, so
-- each upsert is fed the batch's MIN(event_time) per key. The deltas a batch
-- appends net to the same per-bucket sums as 010's row-by-row deltas (a session
-- moved twice within one batch gets one -1/+1 pair instead of two).
-- plpgsql rather than SQL so that the statement's plan is cached across calls.

DROP TRIGGER events_session_firsts ON events;
DROP FUNCTION events_track_session_firsts();

CREATE FUNCTION record_session_firsts(
  p_event_time timestamptz[],
  p_session_id uuid[],
  p_content_host text[],
  p_content_url text[],
  p_source_role text[],
  p_org_id uuid[],
  p_agent_id text[]
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  WITH batch AS (
    SELECT e.event_time, e.session_id, e.content_host, md5(e.content_url) AS url_md5, e.source_role, e.org_id,
           coalesce(e.agent_id, '') AS agent_id
    FROM unnest(p_event_time, p_session_id, p_content_host, p_content_url, p_source_role, p_org_id, p_agent_id)
      AS e (event_time, session_id, content_host, content_url, source_role, org_id, agent_id)
  ),
  hosts AS (
    INSERT INTO content_hosts (host)
    SELECT DISTINCT content_host FROM batch WHERE content_host IS NOT NULL ORDER BY content_host
    ON CONFLICT DO NOTHING
  ),
  -- Keys are written in key order so concurrent writers lock rows in one order.
  fine_changed AS (
    INSERT INTO session_fine_firsts AS f (session_id, content_host, url_md5, source_role, org_id, agent_id, first_seen)
    SELECT session_id, coalesce(content_host, ''), coalesce(url_md5, ''), source_role, org_id, agent_id,
           min(event_time)
    FROM batch
    WHERE session_id IS NOT NULL
    GROUP BY 1, 2, 3, 4, 5, 6
    ORDER BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (session_id, content_host, url_md5, source_role, org_id, agent_id)
    DO UPDATE SET first_seen = EXCLUDED.first_seen WHERE EXCLUDED.first_seen < f.first_seen
    RETURNING f.session_id, f.content_host, f.url_md5, f.source_role, f.org_id::text AS org, f.agent_id, f.first_seen
  ),
  -- Every scope of each fine row that moved earlier or appeared (kinds of 010).
  -- Each side's keys use only some fine columns: take their MIN first, then expand.
  -- url_md5 is '' exactly when the URL is missing (an md5 is never empty).
  scope_keys AS (
    -- Owner side: the host and each parent domain of at least two labels.
    SELECT o.kind, d.domain AS k1, o.k2, o.k3, h.session_id, h.first_seen
    FROM (
      SELECT session_id, content_host, source_role, org, agent_id, min(first_seen) AS first_seen
      FROM fine_changed WHERE position('.' IN content_host) > 0 GROUP BY 1, 2, 3, 4, 5
    ) AS h
    CROSS JOIN LATERAL (
      SELECT array_to_string(labels[i:], '.') AS domain
      FROM (SELECT string_to_array(h.content_host, '.') AS labels) AS l, generate_series(1, cardinality(labels) - 1) AS i
    ) AS d
    CROSS JOIN LATERAL (VALUES ('O', '', ''), ('OR', h.source_role, ''), ('OA', h.org, h.agent_id)) AS o (kind, k2, k3)
    UNION ALL
    SELECT k.kind, k.k1, k.k2, k.k3, u.session_id, u.first_seen
    FROM (
      SELECT session_id, url_md5, org, agent_id, min(first_seen) AS first_seen
      FROM fine_changed WHERE url_md5 <> '' GROUP BY 1, 2, 3, 4
    ) AS u
    CROSS JOIN LATERAL (VALUES ('U', u.url_md5, '', ''), ('PU', u.org, '', u.url_md5), ('PAU', u.org, u.agent_id, u.url_md5))
      AS k (kind, k1, k2, k3)
    UNION ALL
    -- Reporter side (agent dashboards).
    SELECT k.kind, k.k1, k.k2, k.k3, r.session_id, r.first_seen
    FROM (
      SELECT session_id, org, agent_id, source_role, min(first_seen) AS first_seen FROM fine_changed GROUP BY 1, 2, 3, 4
    ) AS r
    CROSS JOIN LATERAL (VALUES ('P', r.org, '', ''), ('PA', r.org, r.agent_id, ''), ('PR', r.org, r.source_role, ''),
                               ('PAR', r.org, r.agent_id, r.source_role)) AS k (kind, k1, k2, k3)
  ),
  -- A new row is +1 at its time; a row moved earlier is -1 at its previous time
  -- and +1 at the new one. ON CONFLICT locks the row, so concurrent writers of
  -- the same scope and session are serialised.
  scope_changed AS (
    INSERT INTO session_scope_firsts AS f (kind, k1, k2, k3, session_id, first_seen)
    SELECT kind, k1, k2, k3, session_id, min(first_seen)
    FROM scope_keys
    GROUP BY kind, k1, k2, k3, session_id
    ORDER BY kind, k1, k2, k3, session_id
    ON CONFLICT (kind, k1, k2, k3, session_id) DO UPDATE
      SET first_seen = EXCLUDED.first_seen, previous_first_seen = f.first_seen
      WHERE EXCLUDED.first_seen < f.first_seen
    RETURNING f.kind, f.k1, f.k2, f.k3, f.first_seen, f.previous_first_seen
  )
  INSERT INTO session_first_deltas (first_seen, kind, k1, k2, k3, delta)
  SELECT first_seen, kind, k1, k2, k3, 1 FROM scope_changed
  UNION ALL
  SELECT previous_first_seen, kind, k1, k2, k3, -1 FROM scope_changed WHERE previous_first_seen IS NOT NULL;
END $$;
