-- Lean rollups for owners' summaries (issue 9, bench:reads).
--
-- An owner's summary breaks events and sessions down by type, by source role and
-- by reporting agent, each on its own: never by role and agent together. The
-- events_by_host family (sql/031) groups on all of them at once, and on the three
-- domain flags: at 20 million events over a year its month level holds about
-- 45,000 rows a month, so a year-long summary added up about half a million
-- rows. Each breakdown now reads a family grouped on the host, its own key and
-- its own flag: by type from events_by_host_type (sql/060), by role and by agent
-- from these, a few hundred to a few thousand rows a month each. Day and month
-- levels; the hours of a range's edges come from events_by_host_hour, which holds
-- every column these do. Materialised-only, refreshed like the others (sql/061).

CREATE MATERIALIZED VIEW events_by_host_role_day
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 day', event_time) AS bucket, content_host, source_role, first_domain_role,
       count(*) AS events
FROM events
GROUP BY bucket, content_host, source_role, first_domain_role
WITH NO DATA;
CREATE INDEX events_by_host_role_day_host ON events_by_host_role_day (content_host, bucket);

CREATE MATERIALIZED VIEW events_by_host_role_month
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 month', event_time) AS bucket, content_host, source_role, first_domain_role,
       count(*) AS events
FROM events
GROUP BY bucket, content_host, source_role, first_domain_role
WITH NO DATA;
CREATE INDEX events_by_host_role_month_host ON events_by_host_role_month (content_host, bucket);

CREATE MATERIALIZED VIEW events_by_host_agent_day
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 day', event_time) AS bucket, content_host, org_id, agent_id, first_domain_reporter,
       count(*) AS events
FROM events
GROUP BY bucket, content_host, org_id, agent_id, first_domain_reporter
WITH NO DATA;
CREATE INDEX events_by_host_agent_day_host ON events_by_host_agent_day (content_host, bucket);

CREATE MATERIALIZED VIEW events_by_host_agent_month
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 month', event_time) AS bucket, content_host, org_id, agent_id, first_domain_reporter,
       count(*) AS events
FROM events
GROUP BY bucket, content_host, org_id, agent_id, first_domain_reporter
WITH NO DATA;
CREATE INDEX events_by_host_agent_month_host ON events_by_host_agent_month (content_host, bucket);

SELECT add_continuous_aggregate_policy('events_by_host_role_day', start_offset => NULL, end_offset => INTERVAL '1 day', schedule_interval => INTERVAL '5 minutes');
SELECT add_continuous_aggregate_policy('events_by_host_role_month', start_offset => NULL, end_offset => INTERVAL '1 month', schedule_interval => INTERVAL '1 hour');
SELECT add_continuous_aggregate_policy('events_by_host_agent_day', start_offset => NULL, end_offset => INTERVAL '1 day', schedule_interval => INTERVAL '5 minutes');
SELECT add_continuous_aggregate_policy('events_by_host_agent_month', start_offset => NULL, end_offset => INTERVAL '1 month', schedule_interval => INTERVAL '1 hour');
