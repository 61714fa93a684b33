-- Lean rollups for ranking an owner's URLs (issue 9, bench:reads).
--
-- Top URLs rank on each URL's total events, sessions and last event; the event
-- types are listed for the page's URLs only. The events_by_url family (sql/031)
-- groups by event type too: at 20 million events over a year its month level
-- holds 57,500 rows a month, and its day level 30,806 a day, so a year-long top-20
-- aggregated about 1.3 million rows. Grouped on the URL alone a month holds about
-- a fifth as many. Week and quarter levels keep the unaligned edges and the middle
-- of a long range to a few buckets each (a 30-day edge is a few weeks, not 30
-- days; nine months are three quarters). Buckets of '1 week' start on Mondays,
-- and of '3 months' on 1 January, April, July and October, as the planner's
-- levels (src/modules/reads/plan.ts). The hour level is events_by_url_hour's.
--
-- Materialised-only from the start, refreshed like the others (sql/061).

CREATE MATERIALIZED VIEW url_totals_day
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 day', event_time) AS bucket, content_host, content_url,
       count(*) AS events, count(*) FILTER (WHERE first_in & 1 <> 0) AS firsts, max(event_time) AS last_seen
FROM events
WHERE content_url IS NOT NULL
GROUP BY bucket, content_host, content_url
WITH NO DATA;
CREATE INDEX url_totals_day_host ON url_totals_day (content_host, bucket);

CREATE MATERIALIZED VIEW url_totals_week
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 week', event_time) AS bucket, content_host, content_url,
       count(*) AS events, count(*) FILTER (WHERE first_in & 1 <> 0) AS firsts, max(event_time) AS last_seen
FROM events
WHERE content_url IS NOT NULL
GROUP BY bucket, content_host, content_url
WITH NO DATA;
CREATE INDEX url_totals_week_host ON url_totals_week (content_host, bucket);

CREATE MATERIALIZED VIEW url_totals_month
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 month', event_time) AS bucket, content_host, content_url,
       count(*) AS events, count(*) FILTER (WHERE first_in & 1 <> 0) AS firsts, max(event_time) AS last_seen
FROM events
WHERE content_url IS NOT NULL
GROUP BY bucket, content_host, content_url
WITH NO DATA;
CREATE INDEX url_totals_month_host ON url_totals_month (content_host, bucket);

CREATE MATERIALIZED VIEW url_totals_quarter
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '3 months', event_time) AS bucket, content_host, content_url,
       count(*) AS events, count(*) FILTER (WHERE first_in & 1 <> 0) AS firsts, max(event_time) AS last_seen
FROM events
WHERE content_url IS NOT NULL
GROUP BY bucket, content_host, content_url
WITH NO DATA;
CREATE INDEX url_totals_quarter_host ON url_totals_quarter (content_host, bucket);

-- The page's event types are then read for its few URLs from the per-type
-- families. Hash indexes: URLs can be longer than a btree key allows. The hour
-- levels need none: hours only ever fill the edges of a range.
CREATE INDEX events_by_url_day_url ON events_by_url_day USING hash (content_url);
CREATE INDEX events_by_url_month_url ON events_by_url_month USING hash (content_url);
CREATE INDEX events_by_reporter_url_day_url ON events_by_reporter_url_day USING hash (content_url);
CREATE INDEX events_by_reporter_url_month_url ON events_by_reporter_url_month USING hash (content_url);

SELECT add_continuous_aggregate_policy('url_totals_day', start_offset => NULL, end_offset => INTERVAL '1 day', schedule_interval => INTERVAL '5 minutes');
SELECT add_continuous_aggregate_policy('url_totals_week', start_offset => NULL, end_offset => INTERVAL '1 week', schedule_interval => INTERVAL '30 minutes');
SELECT add_continuous_aggregate_policy('url_totals_month', start_offset => NULL, end_offset => INTERVAL '1 month', schedule_interval => INTERVAL '1 hour');
SELECT add_continuous_aggregate_policy('url_totals_quarter', start_offset => NULL, end_offset => INTERVAL '3 months', schedule_interval => INTERVAL '1 hour');
