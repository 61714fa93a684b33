-- The read-side continuous aggregates again (sql/011), now counting sessions too:
-- each family sums, beside its events, the first-event flags of sql/030, so one
-- aggregate answers both how many events and how many sessions. The owner-side
-- domain flags are grouped on (few values: 0 or a label count); the other flags
-- are summed per bit. Same three levels, real-time aggregation, indexes and
-- policies as before.

-- One at a time: each is a hypertable of its own.
DROP MATERIALIZED VIEW events_by_host_hour;
DROP MATERIALIZED VIEW events_by_host_day;
DROP MATERIALIZED VIEW events_by_host_month;
DROP MATERIALIZED VIEW events_by_url_hour;
DROP MATERIALIZED VIEW events_by_url_day;
DROP MATERIALIZED VIEW events_by_url_month;
DROP MATERIALIZED VIEW events_by_reporter_url_hour;
DROP MATERIALIZED VIEW events_by_reporter_url_day;
DROP MATERIALIZED VIEW events_by_reporter_url_month;

CREATE MATERIALIZED VIEW events_by_host_hour
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 hour', event_time) AS bucket, content_host, event_type, source_role, org_id, agent_id,
       first_domain, first_domain_role, first_domain_reporter,
       count(*) AS events,
       count(*) FILTER (WHERE first_in & 8 <> 0) AS firsts_reporter,
       count(*) FILTER (WHERE first_in & 16 <> 0) AS firsts_agent,
       count(*) FILTER (WHERE first_in & 32 <> 0) AS firsts_reporter_role,
       count(*) FILTER (WHERE first_in & 64 <> 0) AS firsts_agent_role
FROM events
GROUP BY bucket, content_host, event_type, source_role, org_id, agent_id, first_domain, first_domain_role,
         first_domain_reporter
WITH NO DATA;
CREATE INDEX events_by_host_hour_host ON events_by_host_hour (content_host, bucket);
CREATE INDEX events_by_host_hour_reporter ON events_by_host_hour (org_id, bucket);

CREATE MATERIALIZED VIEW events_by_url_hour
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 hour', event_time) AS bucket, content_host, content_url, event_type,
       count(*) AS events, count(*) FILTER (WHERE first_in & 1 <> 0) AS firsts, max(event_time) AS last_seen
FROM events
WHERE content_url IS NOT NULL
GROUP BY bucket, content_host, content_url, event_type
WITH NO DATA;
CREATE INDEX events_by_url_hour_host ON events_by_url_hour (content_host, bucket);

CREATE MATERIALIZED VIEW events_by_reporter_url_hour
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 hour', event_time) AS bucket, org_id, agent_id, content_url, event_type,
       count(*) AS events,
       count(*) FILTER (WHERE first_in & 2 <> 0) AS firsts_reporter,
       count(*) FILTER (WHERE first_in & 4 <> 0) AS firsts_agent,
       max(event_time) AS last_seen
FROM events
WHERE content_url IS NOT NULL
GROUP BY bucket, org_id, agent_id, content_url, event_type
WITH NO DATA;
CREATE INDEX events_by_reporter_url_hour_reporter ON events_by_reporter_url_hour (org_id, bucket);

CREATE MATERIALIZED VIEW events_by_host_day
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 day', event_time) AS bucket, content_host, event_type, source_role, org_id, agent_id,
       first_domain, first_domain_role, first_domain_reporter,
       count(*) AS events,
       count(*) FILTER (WHERE first_in & 8 <> 0) AS firsts_reporter,
       count(*) FILTER (WHERE first_in & 16 <> 0) AS firsts_agent,
       count(*) FILTER (WHERE first_in & 32 <> 0) AS firsts_reporter_role,
       count(*) FILTER (WHERE first_in & 64 <> 0) AS firsts_agent_role
FROM events
GROUP BY bucket, content_host, event_type, source_role, org_id, agent_id, first_domain, first_domain_role,
         first_domain_reporter
WITH NO DATA;
CREATE INDEX events_by_host_day_host ON events_by_host_day (content_host, bucket);
CREATE INDEX events_by_host_day_reporter ON events_by_host_day (org_id, bucket);

CREATE MATERIALIZED VIEW events_by_url_day
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 day', event_time) AS bucket, content_host, content_url, event_type,
       count(*) AS events, count(*) FILTER (WHERE first_in & 1 <> 0) AS firsts, max(event_time) AS last_seen
FROM events
WHERE content_url IS NOT NULL
GROUP BY bucket, content_host, content_url, event_type
WITH NO DATA;
CREATE INDEX events_by_url_day_host ON events_by_url_day (content_host, bucket);

CREATE MATERIALIZED VIEW events_by_reporter_url_day
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 day', event_time) AS bucket, org_id, agent_id, content_url, event_type,
       count(*) AS events,
       count(*) FILTER (WHERE first_in & 2 <> 0) AS firsts_reporter,
       count(*) FILTER (WHERE first_in & 4 <> 0) AS firsts_agent,
       max(event_time) AS last_seen
FROM events
WHERE content_url IS NOT NULL
GROUP BY bucket, org_id, agent_id, content_url, event_type
WITH NO DATA;
CREATE INDEX events_by_reporter_url_day_reporter ON events_by_reporter_url_day (org_id, bucket);

CREATE MATERIALIZED VIEW events_by_host_month
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 month', event_time) AS bucket, content_host, event_type, source_role, org_id, agent_id,
       first_domain, first_domain_role, first_domain_reporter,
       count(*) AS events,
       count(*) FILTER (WHERE first_in & 8 <> 0) AS firsts_reporter,
       count(*) FILTER (WHERE first_in & 16 <> 0) AS firsts_agent,
       count(*) FILTER (WHERE first_in & 32 <> 0) AS firsts_reporter_role,
       count(*) FILTER (WHERE first_in & 64 <> 0) AS firsts_agent_role
FROM events
GROUP BY bucket, content_host, event_type, source_role, org_id, agent_id, first_domain, first_domain_role,
         first_domain_reporter
WITH NO DATA;
CREATE INDEX events_by_host_month_host ON events_by_host_month (content_host, bucket);
CREATE INDEX events_by_host_month_reporter ON events_by_host_month (org_id, bucket);

CREATE MATERIALIZED VIEW events_by_url_month
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 month', event_time) AS bucket, content_host, content_url, event_type,
       count(*) AS events, count(*) FILTER (WHERE first_in & 1 <> 0) AS firsts, max(event_time) AS last_seen
FROM events
WHERE content_url IS NOT NULL
GROUP BY bucket, content_host, content_url, event_type
WITH NO DATA;
CREATE INDEX events_by_url_month_host ON events_by_url_month (content_host, bucket);

CREATE MATERIALIZED VIEW events_by_reporter_url_month
WITH (timescaledb.continuous, timescaledb.materialized_only = false, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 month', event_time) AS bucket, org_id, agent_id, content_url, event_type,
       count(*) AS events,
       count(*) FILTER (WHERE first_in & 2 <> 0) AS firsts_reporter,
       count(*) FILTER (WHERE first_in & 4 <> 0) AS firsts_agent,
       max(event_time) AS last_seen
FROM events
WHERE content_url IS NOT NULL
GROUP BY bucket, org_id, agent_id, content_url, event_type
WITH NO DATA;
CREATE INDEX events_by_reporter_url_month_reporter ON events_by_reporter_url_month (org_id, bucket);

-- On a TimescaleDB server these policies keep the aggregates fresh (a NULL start
-- re-materialises invalidated buckets of any age). The embedded engine runs no
-- background jobs; there the service's stand-in job refreshes them (src/db/maintenance.ts).
SELECT add_continuous_aggregate_policy('events_by_host_hour', start_offset => NULL, end_offset => INTERVAL '1 hour', schedule_interval => INTERVAL '1 minute');
SELECT add_continuous_aggregate_policy('events_by_url_hour', start_offset => NULL, end_offset => INTERVAL '1 hour', schedule_interval => INTERVAL '1 minute');
SELECT add_continuous_aggregate_policy('events_by_reporter_url_hour', start_offset => NULL, end_offset => INTERVAL '1 hour', schedule_interval => INTERVAL '1 minute');
SELECT add_continuous_aggregate_policy('events_by_host_day', start_offset => NULL, end_offset => INTERVAL '1 day', schedule_interval => INTERVAL '5 minutes');
SELECT add_continuous_aggregate_policy('events_by_url_day', start_offset => NULL, end_offset => INTERVAL '1 day', schedule_interval => INTERVAL '5 minutes');
SELECT add_continuous_aggregate_policy('events_by_reporter_url_day', start_offset => NULL, end_offset => INTERVAL '1 day', schedule_interval => INTERVAL '5 minutes');
SELECT add_continuous_aggregate_policy('events_by_host_month', start_offset => NULL, end_offset => INTERVAL '1 month', schedule_interval => INTERVAL '1 hour');
SELECT add_continuous_aggregate_policy('events_by_url_month', start_offset => NULL, end_offset => INTERVAL '1 month', schedule_interval => INTERVAL '1 hour');
SELECT add_continuous_aggregate_policy('events_by_reporter_url_month', start_offset => NULL, end_offset => INTERVAL '1 month', schedule_interval => INTERVAL '1 hour');
