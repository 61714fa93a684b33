-- Agent dashboards' reads over long ranges, on rollups of their own (bench:reads,
-- agent reads), as the owners' have (sql/062, sql/065).
--
-- Summaries and timeseries: grouped on the reporter, not on each host.
-- A reporter's summary and timeseries read the host family (sql/031), which
-- groups on the host and the owner-side domain flags as well: at 20 million
-- events over a year the platform that reported 8 million of them has 1.8
-- million rows in events_by_host_day and 215,000 in events_by_host_month, and its
-- year-long summary and daily timeseries took 474 and 372 ms. These group on
-- what a reporter's reads break down by (type, role, agent) and count its
-- sessions with the reporter's own flags, as the host family does: that
-- platform's year is 29,270 day rows and 960 month rows. Their hour level is events_by_host_hour, which has
-- every one of these columns (src/modules/reads/rollups.ts).
--
-- Ranking URLs: per reporter, agent and URL alone, at day, week, month and
-- quarter, as url_totals ranks owners' URLs (sql/062). The ranking read the
-- per-type family, 2.3 million month rows of that platform over the year (830
-- ms); these hold 541,088 month and 184,000 quarter rows of it. Their hour level is events_by_reporter_url_hour, summed over types.
--
-- Materialised-only and refreshed like the others (sql/061).

CREATE MATERIALIZED VIEW events_by_reporter_day
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 day', event_time) AS bucket, org_id, agent_id, event_type, source_role,
       count(*) AS events,
       count(*) FILTER (WHERE first_in & 8 <> 0) AS firsts_reporter,
       count(*) FILTER (WHERE first_in & 16 <> 0) AS firsts_agent,
       count(*) FILTER (WHERE first_in & 32 <> 0) AS firsts_reporter_role,
       count(*) FILTER (WHERE first_in & 64 <> 0) AS firsts_agent_role
FROM events
GROUP BY bucket, org_id, agent_id, event_type, source_role
WITH NO DATA;

CREATE MATERIALIZED VIEW events_by_reporter_month
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 month', event_time) AS bucket, org_id, agent_id, event_type, source_role,
       count(*) AS events,
       count(*) FILTER (WHERE first_in & 8 <> 0) AS firsts_reporter,
       count(*) FILTER (WHERE first_in & 16 <> 0) AS firsts_agent,
       count(*) FILTER (WHERE first_in & 32 <> 0) AS firsts_reporter_role,
       count(*) FILTER (WHERE first_in & 64 <> 0) AS firsts_agent_role
FROM events
GROUP BY bucket, org_id, agent_id, event_type, source_role
WITH NO DATA;

CREATE MATERIALIZED VIEW reporter_url_totals_day
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 day', event_time) AS bucket, org_id, agent_id, content_url,
       count(*) AS events,
       count(*) FILTER (WHERE first_in & 2 <> 0) AS firsts_reporter,
       count(*) FILTER (WHERE first_in & 4 <> 0) AS firsts_agent,
       max(event_time) AS last_seen
FROM events
WHERE content_url IS NOT NULL
GROUP BY bucket, org_id, agent_id, content_url
WITH NO DATA;
CREATE INDEX reporter_url_totals_day_reporter ON reporter_url_totals_day (org_id, bucket);

CREATE MATERIALIZED VIEW reporter_url_totals_week
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 week', event_time) AS bucket, org_id, agent_id, content_url,
       count(*) AS events,
       count(*) FILTER (WHERE first_in & 2 <> 0) AS firsts_reporter,
       count(*) FILTER (WHERE first_in & 4 <> 0) AS firsts_agent,
       max(event_time) AS last_seen
FROM events
WHERE content_url IS NOT NULL
GROUP BY bucket, org_id, agent_id, content_url
WITH NO DATA;
CREATE INDEX reporter_url_totals_week_reporter ON reporter_url_totals_week (org_id, bucket);

CREATE MATERIALIZED VIEW reporter_url_totals_month
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 month', event_time) AS bucket, org_id, agent_id, content_url,
       count(*) AS events,
       count(*) FILTER (WHERE first_in & 2 <> 0) AS firsts_reporter,
       count(*) FILTER (WHERE first_in & 4 <> 0) AS firsts_agent,
       max(event_time) AS last_seen
FROM events
WHERE content_url IS NOT NULL
GROUP BY bucket, org_id, agent_id, content_url
WITH NO DATA;
CREATE INDEX reporter_url_totals_month_reporter ON reporter_url_totals_month (org_id, bucket);

CREATE MATERIALIZED VIEW reporter_url_totals_quarter
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '3 months', event_time) AS bucket, org_id, agent_id, content_url,
       count(*) AS events,
       count(*) FILTER (WHERE first_in & 2 <> 0) AS firsts_reporter,
       count(*) FILTER (WHERE first_in & 4 <> 0) AS firsts_agent,
       max(event_time) AS last_seen
FROM events
WHERE content_url IS NOT NULL
GROUP BY bucket, org_id, agent_id, content_url
WITH NO DATA;
CREATE INDEX reporter_url_totals_quarter_reporter ON reporter_url_totals_quarter (org_id, bucket);

CREATE INDEX events_by_reporter_day_reporter ON events_by_reporter_day (org_id, bucket);
CREATE INDEX events_by_reporter_month_reporter ON events_by_reporter_month (org_id, bucket);

SELECT add_continuous_aggregate_policy('events_by_reporter_day', start_offset => NULL, end_offset => INTERVAL '1 day', schedule_interval => INTERVAL '5 minutes');
SELECT add_continuous_aggregate_policy('events_by_reporter_month', start_offset => NULL, end_offset => INTERVAL '1 month', schedule_interval => INTERVAL '1 hour');
SELECT add_continuous_aggregate_policy('reporter_url_totals_day', start_offset => NULL, end_offset => INTERVAL '1 day', schedule_interval => INTERVAL '5 minutes');
SELECT add_continuous_aggregate_policy('reporter_url_totals_week', start_offset => NULL, end_offset => INTERVAL '1 week', schedule_interval => INTERVAL '30 minutes');
SELECT add_continuous_aggregate_policy('reporter_url_totals_month', start_offset => NULL, end_offset => INTERVAL '1 month', schedule_interval => INTERVAL '1 hour');
SELECT add_continuous_aggregate_policy('reporter_url_totals_quarter', start_offset => NULL, end_offset => INTERVAL '3 months', schedule_interval => INTERVAL '1 hour');
