-- Reads take the newest events from raw rows themselves, not through real-time
-- aggregation (issue 9, bench:reads).
--
-- A real-time aggregate is a UNION ALL of its materialised rows below the
-- watermark and an aggregate of raw events above it. A read that asks a month
-- view for months wholly below the watermark still runs the raw branch, and the
-- filter on the bucket does not exclude chunks there: at 20 million events a
-- year-long read of events_by_url_month spent about 0.4 s scanning this month's
-- raw chunks for rows it then discarded.
--
-- The aggregates become materialised-only, and rollup_stale_ranges also returns,
-- per aggregate, everything from its watermark on. The read planner already
-- answers a stale bucket one level finer (src/modules/reads/plan.ts), so the part
-- of a range above a month's watermark is read from days, above the days' from
-- hours, and above the hours' from raw events filtered on event_time, which
-- excludes chunks. The answers are those of real-time aggregation, which splits
-- at the same watermark.

ALTER MATERIALIZED VIEW events_by_host_hour SET (timescaledb.materialized_only = true);
ALTER MATERIALIZED VIEW events_by_host_day SET (timescaledb.materialized_only = true);
ALTER MATERIALIZED VIEW events_by_host_month SET (timescaledb.materialized_only = true);
ALTER MATERIALIZED VIEW events_by_url_hour SET (timescaledb.materialized_only = true);
ALTER MATERIALIZED VIEW events_by_url_day SET (timescaledb.materialized_only = true);
ALTER MATERIALIZED VIEW events_by_url_month SET (timescaledb.materialized_only = true);
ALTER MATERIALIZED VIEW events_by_reporter_url_hour SET (timescaledb.materialized_only = true);
ALTER MATERIALIZED VIEW events_by_reporter_url_day SET (timescaledb.materialized_only = true);
ALTER MATERIALIZED VIEW events_by_reporter_url_month SET (timescaledb.materialized_only = true);
ALTER MATERIALIZED VIEW events_by_host_type_hour SET (timescaledb.materialized_only = true);
ALTER MATERIALIZED VIEW events_by_host_type_day SET (timescaledb.materialized_only = true);
ALTER MATERIALIZED VIEW events_by_host_type_month SET (timescaledb.materialized_only = true);

-- As in sql/011, plus one range per aggregate from its watermark (the end of what
-- it has materialised; the lowest time when it never ran) to unbounded. The
-- catalog stores the watermark in Unix epoch microseconds, like the logs; an
-- aggregate without a watermark row counts as never materialised.
CREATE OR REPLACE FUNCTION rollup_stale_ranges(p_views text[])
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
  UNION ALL
  SELECT ca.user_view_name::text, coalesce(w.watermark, -9223372036854775808) / 1000.0, 9223372036854775807 / 1000.0
  FROM _timescaledb_catalog.continuous_agg ca
  LEFT JOIN _timescaledb_catalog.continuous_aggs_watermark w ON w.mat_hypertable_id = ca.mat_hypertable_id
  WHERE ca.user_view_name = ANY (p_views)
$$;
