-- A whole reporter's URL ranking, on rows per URL alone (bench:reads, agent reads).
--
-- reporter_url_totals (sql/071) ranks one agent's URLs, or a whole reporter's
-- by adding up a row per URL and agent. The platform that reported 8 million of
-- the 20 million benchmark events has four agents: a quarter of its year holds
-- 46,000 rows there for 11,500 URLs, and its year-long top-20 URLs took about
-- 200 ms, 160 to 180 of them in the ranking statement. Added up per URL alone,
-- the same pieces ranked in 41 to 50 ms against 75 to 77 (psql, without parallel
-- workers; docs/benchmarks.md). These hold those rows, with the reporter's own
-- URL flags for sessions. Their hour level is events_by_reporter_url_hour, summed
-- over agents and types (src/modules/reads/rollups.ts).
--
-- Materialised-only and refreshed like the others (sql/061).

CREATE MATERIALIZED VIEW whole_reporter_url_totals_day
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 day', event_time) AS bucket, org_id, content_url,
       count(*) AS events,
       count(*) FILTER (WHERE first_in & 2 <> 0) AS firsts_reporter,
       max(event_time) AS last_seen
FROM events
WHERE content_url IS NOT NULL
GROUP BY bucket, org_id, content_url
WITH NO DATA;
CREATE INDEX whole_reporter_url_totals_day_reporter ON whole_reporter_url_totals_day (org_id, bucket);

CREATE MATERIALIZED VIEW whole_reporter_url_totals_week
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 week', event_time) AS bucket, org_id, content_url,
       count(*) AS events,
       count(*) FILTER (WHERE first_in & 2 <> 0) AS firsts_reporter,
       max(event_time) AS last_seen
FROM events
WHERE content_url IS NOT NULL
GROUP BY bucket, org_id, content_url
WITH NO DATA;
CREATE INDEX whole_reporter_url_totals_week_reporter ON whole_reporter_url_totals_week (org_id, bucket);

CREATE MATERIALIZED VIEW whole_reporter_url_totals_month
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 month', event_time) AS bucket, org_id, content_url,
       count(*) AS events,
       count(*) FILTER (WHERE first_in & 2 <> 0) AS firsts_reporter,
       max(event_time) AS last_seen
FROM events
WHERE content_url IS NOT NULL
GROUP BY bucket, org_id, content_url
WITH NO DATA;
CREATE INDEX whole_reporter_url_totals_month_reporter ON whole_reporter_url_totals_month (org_id, bucket);

CREATE MATERIALIZED VIEW whole_reporter_url_totals_quarter
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '3 months', event_time) AS bucket, org_id, content_url,
       count(*) AS events,
       count(*) FILTER (WHERE first_in & 2 <> 0) AS firsts_reporter,
       max(event_time) AS last_seen
FROM events
WHERE content_url IS NOT NULL
GROUP BY bucket, org_id, content_url
WITH NO DATA;
CREATE INDEX whole_reporter_url_totals_quarter_reporter ON whole_reporter_url_totals_quarter (org_id, bucket);

SELECT add_continuous_aggregate_policy('whole_reporter_url_totals_day', start_offset => NULL, end_offset => INTERVAL '1 day', schedule_interval => INTERVAL '5 minutes');
SELECT add_continuous_aggregate_policy('whole_reporter_url_totals_week', start_offset => NULL, end_offset => INTERVAL '1 week', schedule_interval => INTERVAL '30 minutes');
SELECT add_continuous_aggregate_policy('whole_reporter_url_totals_month', start_offset => NULL, end_offset => INTERVAL '1 month', schedule_interval => INTERVAL '1 hour');
SELECT add_continuous_aggregate_policy('whole_reporter_url_totals_quarter', start_offset => NULL, end_offset => INTERVAL '3 months', schedule_interval => INTERVAL '1 hour');
