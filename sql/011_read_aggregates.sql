-- Continuous aggregates behind the read side, at three bucket sizes (hour, day,
-- month), all with real-time aggregation so the newest, not yet materialised
-- buckets are computed from raw rows. A read splits its range into whole months,
-- whole days and whole hours at the edges, and raw rows for the unaligned rest;
-- buckets with pending invalidations (late data not yet re-materialised, see
-- rollup_stale_ranges) are read one level finer, so answers are always exact.
--
-- Families: events per host (summaries, timeseries, totals), per URL for owner
-- reads, per URL and reporter for agent reads (kept apart so owner URL rollups
-- do not multiply by reporters and agents), and session firsts per scope.
-- Each level aggregates the raw hypertable directly (not hierarchically) so a
-- level's freshness never depends on another level's refresh.
-- Group indexes are replaced by the few the reads use (URL columns can be
-- longer than a btree key allows).

CREATE MATERIALIZED VIEW events_by_host_hour
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 hour', event_time) AS bucket, content_host, event_type, source_role, org_id, agent_id,
       count(*) AS events
FROM events
GROUP BY bucket, content_host, event_type, source_role, org_id, agent_id
WITH NO DATA;
CREATE INDEX events_by_host_hour_host ON events_by_host_hour (content_host, bucket);
CREATE INDEX events_by_host_hour_reporter ON events_by_host_hour (org_id, bucket);

CREATE MATERIALIZED VIEW events_by_url_hour
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 hour', event_time) AS bucket, content_host, content_url, event_type,
       count(*) AS events, max(event_time) AS last_seen
FROM events
WHERE content_url IS NOT NULL
GROUP BY bucket, content_host, content_url, event_type
WITH NO DATA;
CREATE INDEX events_by_url_hour_host ON events_by_url_hour (content_host, bucket);

CREATE MATERIALIZED VIEW events_by_reporter_url_hour
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 hour', event_time) AS bucket, org_id, agent_id, content_url, event_type,
       count(*) AS events, max(event_time) AS last_seen
FROM events
WHERE content_url IS NOT NULL
GROUP BY bucket, org_id, agent_id, content_url, event_type
WITH NO DATA;
CREATE INDEX events_by_reporter_url_hour_reporter ON events_by_reporter_url_hour (org_id, bucket);

CREATE MATERIALIZED VIEW session_firsts_hour
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 hour', first_seen) AS bucket, kind, k1, k2, k3, sum(delta) AS sessions
FROM session_first_deltas
GROUP BY bucket, kind, k1, k2, k3
WITH NO DATA;
CREATE INDEX session_firsts_hour_scope ON session_firsts_hour (kind, k1, bucket);

CREATE MATERIALIZED VIEW events_by_host_day
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 day', event_time) AS bucket, content_host, event_type, source_role, org_id, agent_id,
       count(*) AS events
FROM events
GROUP BY bucket, content_host, event_type, source_role, org_id, agent_id
WITH NO DATA;
CREATE INDEX events_by_host_day_host ON events_by_host_day (content_host, bucket);
CREATE INDEX events_by_host_day_reporter ON events_by_host_day (org_id, bucket);

CREATE MATERIALIZED VIEW events_by_url_day
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 day', event_time) AS bucket, content_host, content_url, event_type,
       count(*) AS events, max(event_time) AS last_seen
FROM events
WHERE content_url IS NOT NULL
GROUP BY bucket, content_host, content_url, event_type
WITH NO DATA;
CREATE INDEX events_by_url_day_host ON events_by_url_day (content_host, bucket);

CREATE MATERIALIZED VIEW events_by_reporter_url_day
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 day', event_time) AS bucket, org_id, agent_id, content_url, event_type,
       count(*) AS events, max(event_time) AS last_seen
FROM events
WHERE content_url IS NOT NULL
GROUP BY bucket, org_id, agent_id, content_url, event_type
WITH NO DATA;
CREATE INDEX events_by_reporter_url_day_reporter ON events_by_reporter_url_day (org_id, bucket);

CREATE MATERIALIZED VIEW session_firsts_day
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 day', first_seen) AS bucket, kind, k1, k2, k3, sum(delta) AS sessions
FROM session_first_deltas
GROUP BY bucket, kind, k1, k2, k3
WITH NO DATA;
CREATE INDEX session_firsts_day_scope ON session_firsts_day (kind, k1, bucket);

CREATE MATERIALIZED VIEW events_by_host_month
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 month', event_time) AS bucket, content_host, event_type, source_role, org_id, agent_id,
       count(*) AS events
FROM events
GROUP BY bucket, content_host, event_type, source_role, org_id, agent_id
WITH NO DATA;
CREATE INDEX events_by_host_month_host ON events_by_host_month (content_host, bucket);
CREATE INDEX events_by_host_month_reporter ON events_by_host_month (org_id, bucket);

CREATE MATERIALIZED VIEW events_by_url_month
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 month', event_time) AS bucket, content_host, content_url, event_type,
       count(*) AS events, max(event_time) AS last_seen
FROM events
WHERE content_url IS NOT NULL
GROUP BY bucket, content_host, content_url, event_type
WITH NO DATA;
CREATE INDEX events_by_url_month_host ON events_by_url_month (content_host, bucket);

CREATE MATERIALIZED VIEW events_by_reporter_url_month
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 month', event_time) AS bucket, org_id, agent_id, content_url, event_type,
       count(*) AS events, max(event_time) AS last_seen
FROM events
WHERE content_url IS NOT NULL
GROUP BY bucket, org_id, agent_id, content_url, event_type
WITH NO DATA;
CREATE INDEX events_by_reporter_url_month_reporter ON events_by_reporter_url_month (org_id, bucket);

CREATE MATERIALIZED VIEW session_firsts_month
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 month', first_seen) AS bucket, kind, k1, k2, k3, sum(delta) AS sessions
FROM session_first_deltas
GROUP BY bucket, kind, k1, k2, k3
WITH NO DATA;
CREATE INDEX session_firsts_month_scope ON session_firsts_month (kind, k1, bucket);

-- On a TimescaleDB server these policies keep the aggregates fresh (a NULL start
-- re-materialises invalidated buckets of any age). The embedded engine runs no
-- background jobs; there the service's own croner job refreshes them.
SELECT add_continuous_aggregate_policy('events_by_host_hour', start_offset => NULL, end_offset => INTERVAL '1 hour', schedule_interval => INTERVAL '1 minute');
SELECT add_continuous_aggregate_policy('events_by_url_hour', start_offset => NULL, end_offset => INTERVAL '1 hour', schedule_interval => INTERVAL '1 minute');
SELECT add_continuous_aggregate_policy('events_by_reporter_url_hour', start_offset => NULL, end_offset => INTERVAL '1 hour', schedule_interval => INTERVAL '1 minute');
SELECT add_continuous_aggregate_policy('session_firsts_hour', start_offset => NULL, end_offset => INTERVAL '1 hour', schedule_interval => INTERVAL '1 minute');
SELECT add_continuous_aggregate_policy('events_by_host_day', start_offset => NULL, end_offset => INTERVAL '1 day', schedule_interval => INTERVAL '5 minutes');
SELECT add_continuous_aggregate_policy('events_by_url_day', start_offset => NULL, end_offset => INTERVAL '1 day', schedule_interval => INTERVAL '5 minutes');
SELECT add_continuous_aggregate_policy('events_by_reporter_url_day', start_offset => NULL, end_offset => INTERVAL '1 day', schedule_interval => INTERVAL '5 minutes');
SELECT add_continuous_aggregate_policy('session_firsts_day', start_offset => NULL, end_offset => INTERVAL '1 day', schedule_interval => INTERVAL '5 minutes');
SELECT add_continuous_aggregate_policy('events_by_host_month', start_offset => NULL, end_offset => INTERVAL '1 month', schedule_interval => INTERVAL '1 hour');
SELECT add_continuous_aggregate_policy('events_by_url_month', start_offset => NULL, end_offset => INTERVAL '1 month', schedule_interval => INTERVAL '1 hour');
SELECT add_continuous_aggregate_policy('events_by_reporter_url_month', start_offset => NULL, end_offset => INTERVAL '1 month', schedule_interval => INTERVAL '1 hour');
SELECT add_continuous_aggregate_policy('session_firsts_month', start_offset => NULL, end_offset => INTERVAL '1 month', schedule_interval => INTERVAL '1 hour');

-- Time ranges of each aggregate whose materialised buckets may be out of date:
-- rows written below the invalidation threshold and not yet re-materialised.
-- This is the only place that reads TimescaleDB's catalog; readers treat every
-- bucket overlapping a returned range as unusable and read it one level finer.
-- Bounds are Unix epoch milliseconds (inclusive); the catalog stores Unix epoch
-- microseconds, with the bigint extremes meaning unbounded.
CREATE FUNCTION rollup_stale_ranges(p_views text[])
RETURNS TABLE (view_name text, lowest_ms double precision, greatest_ms double precision)
LANGUAGE sql STABLE AS $$
  SELECT ca.user_view_name::text, l.lowest_modified_value / 1000.0, l.greatest_modified_value / 1000.0
  FROM _timescaledb_catalog.continuous_agg ca
  JOIN _timescaledb_catalog.continuous_aggs_hypertable_invalidation_log l ON l.hypertable_id = ca.raw_hypertable_id
  WHERE ca.user_view_name = ANY (p_views)
  UNION ALL
  SELECT ca.user_view_name::text, l.lowest_modified_value / 1000.0, l.greatest_modified_value / 1000.0
  FROM _timescaledb_catalog.continuous_agg ca
  JOIN _timescaledb_catalog.continuous_aggs_materialization_invalidation_log l ON l.materialization_id = ca.mat_hypertable_id
  WHERE ca.user_view_name = ANY (p_views)
$$;
