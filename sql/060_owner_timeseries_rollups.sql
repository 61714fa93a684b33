-- A lean rollup family for content owners' timeseries (issue 9, bench:reads).
--
-- An owner's timeseries needs, per bucket, events per host and type and the
-- sessions first in the owner's domain (the first_domain flag of sql/030). The
-- events_by_host family also groups by role, reporter, agent and the two other
-- domain flags, for the summary's breakdowns: in bench:reads at 20 million
-- events over a year it holds 12,566 rows for one day, so a year of daily buckets
-- reads over 4 million rows. Grouped on host, type and first_domain alone the same
-- day holds 699, and the same timeseries reads about an eighteenth as many.
-- Same levels, real-time aggregation and refresh as sql/031.

CREATE MATERIALIZED VIEW events_by_host_type_hour
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 hour', event_time) AS bucket, content_host, event_type, first_domain, count(*) AS events
FROM events
GROUP BY bucket, content_host, event_type, first_domain
WITH NO DATA;
CREATE INDEX events_by_host_type_hour_host ON events_by_host_type_hour (content_host, bucket);

CREATE MATERIALIZED VIEW events_by_host_type_day
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 day', event_time) AS bucket, content_host, event_type, first_domain, count(*) AS events
FROM events
GROUP BY bucket, content_host, event_type, first_domain
WITH NO DATA;
CREATE INDEX events_by_host_type_day_host ON events_by_host_type_day (content_host, bucket);

CREATE MATERIALIZED VIEW events_by_host_type_month
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 month', event_time) AS bucket, content_host, event_type, first_domain, count(*) AS events
FROM events
GROUP BY bucket, content_host, event_type, first_domain
WITH NO DATA;
CREATE INDEX events_by_host_type_month_host ON events_by_host_type_month (content_host, bucket);

SELECT add_continuous_aggregate_policy('events_by_host_type_hour', start_offset => NULL, end_offset => INTERVAL '1 hour', schedule_interval => INTERVAL '1 minute');
SELECT add_continuous_aggregate_policy('events_by_host_type_day', start_offset => NULL, end_offset => INTERVAL '1 day', schedule_interval => INTERVAL '5 minutes');
SELECT add_continuous_aggregate_policy('events_by_host_type_month', start_offset => NULL, end_offset => INTERVAL '1 month', schedule_interval => INTERVAL '1 hour');
