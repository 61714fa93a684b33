-- Owners' summaries and timeseries grouped on the owner's domain, not on each
-- host (issue 9, bench:reads).
--
-- An owner's summary and timeseries never break down by host, yet the lean
-- families of sql/060 and sql/063 group on it: at 20 million events over a year
-- the large owner's 40 hosts make a year of daily timeseries add up about 255,000
-- rows, and its summary as many again. Owners verify domains of two or three
-- labels (example.com, example.co.uk, news.example.com), so these families group
-- on the host's last two and last three labels instead: the large owner's hosts
-- then share one key. A read of a domain of two labels filters on domain2, of
-- three on domain3 (src/modules/reads/read-context.ts); a domain of more labels
-- reads the full host family (sql/031), which holds every breakdown.
--
-- Levels: day and month per breakdown, and one hour level with every breakdown
-- column for the edges of all three (as events_by_host_hour is for the host
-- families). Materialised-only and refreshed like the others (sql/061).

-- The domain of `labels` labels that holds `host` (NULL when the host has fewer).
CREATE FUNCTION host_domain(host text, labels integer) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT substring(host FROM '[^.]+(?:\.[^.]+){' || labels - 1 || '}$') $$;

DROP MATERIALIZED VIEW events_by_host_type_hour;
DROP MATERIALIZED VIEW events_by_host_type_day;
DROP MATERIALIZED VIEW events_by_host_type_month;
DROP MATERIALIZED VIEW events_by_host_role_day;
DROP MATERIALIZED VIEW events_by_host_role_month;
DROP MATERIALIZED VIEW events_by_host_agent_day;
DROP MATERIALIZED VIEW events_by_host_agent_month;

CREATE MATERIALIZED VIEW events_by_domain_hour
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 hour', event_time) AS bucket,
       host_domain(content_host, 2) AS domain2, host_domain(content_host, 3) AS domain3,
       event_type, source_role, org_id, agent_id, first_domain, first_domain_role, first_domain_reporter,
       count(*) AS events
FROM events
WHERE content_host IS NOT NULL
GROUP BY bucket, domain2, domain3, event_type, source_role, org_id, agent_id, first_domain, first_domain_role,
         first_domain_reporter
WITH NO DATA;

CREATE MATERIALIZED VIEW events_by_domain_type_day
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 day', event_time) AS bucket,
       host_domain(content_host, 2) AS domain2, host_domain(content_host, 3) AS domain3,
       event_type, first_domain, count(*) AS events
FROM events
WHERE content_host IS NOT NULL
GROUP BY bucket, domain2, domain3, event_type, first_domain
WITH NO DATA;

CREATE MATERIALIZED VIEW events_by_domain_type_month
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 month', event_time) AS bucket,
       host_domain(content_host, 2) AS domain2, host_domain(content_host, 3) AS domain3,
       event_type, first_domain, count(*) AS events
FROM events
WHERE content_host IS NOT NULL
GROUP BY bucket, domain2, domain3, event_type, first_domain
WITH NO DATA;

CREATE MATERIALIZED VIEW events_by_domain_role_day
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 day', event_time) AS bucket,
       host_domain(content_host, 2) AS domain2, host_domain(content_host, 3) AS domain3,
       source_role, first_domain_role, count(*) AS events
FROM events
WHERE content_host IS NOT NULL
GROUP BY bucket, domain2, domain3, source_role, first_domain_role
WITH NO DATA;

CREATE MATERIALIZED VIEW events_by_domain_role_month
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 month', event_time) AS bucket,
       host_domain(content_host, 2) AS domain2, host_domain(content_host, 3) AS domain3,
       source_role, first_domain_role, count(*) AS events
FROM events
WHERE content_host IS NOT NULL
GROUP BY bucket, domain2, domain3, source_role, first_domain_role
WITH NO DATA;

CREATE MATERIALIZED VIEW events_by_domain_agent_day
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 day', event_time) AS bucket,
       host_domain(content_host, 2) AS domain2, host_domain(content_host, 3) AS domain3,
       org_id, agent_id, first_domain_reporter, count(*) AS events
FROM events
WHERE content_host IS NOT NULL
GROUP BY bucket, domain2, domain3, org_id, agent_id, first_domain_reporter
WITH NO DATA;

CREATE MATERIALIZED VIEW events_by_domain_agent_month
WITH (timescaledb.continuous, timescaledb.materialized_only = true, timescaledb.create_group_indexes = false) AS
SELECT time_bucket(INTERVAL '1 month', event_time) AS bucket,
       host_domain(content_host, 2) AS domain2, host_domain(content_host, 3) AS domain3,
       org_id, agent_id, first_domain_reporter, count(*) AS events
FROM events
WHERE content_host IS NOT NULL
GROUP BY bucket, domain2, domain3, org_id, agent_id, first_domain_reporter
WITH NO DATA;

CREATE INDEX events_by_domain_hour_domain2 ON events_by_domain_hour (domain2, bucket);
CREATE INDEX events_by_domain_hour_domain3 ON events_by_domain_hour (domain3, bucket);
CREATE INDEX events_by_domain_type_day_domain2 ON events_by_domain_type_day (domain2, bucket);
CREATE INDEX events_by_domain_type_day_domain3 ON events_by_domain_type_day (domain3, bucket);
CREATE INDEX events_by_domain_type_month_domain2 ON events_by_domain_type_month (domain2, bucket);
CREATE INDEX events_by_domain_type_month_domain3 ON events_by_domain_type_month (domain3, bucket);
CREATE INDEX events_by_domain_role_day_domain2 ON events_by_domain_role_day (domain2, bucket);
CREATE INDEX events_by_domain_role_day_domain3 ON events_by_domain_role_day (domain3, bucket);
CREATE INDEX events_by_domain_role_month_domain2 ON events_by_domain_role_month (domain2, bucket);
CREATE INDEX events_by_domain_role_month_domain3 ON events_by_domain_role_month (domain3, bucket);
CREATE INDEX events_by_domain_agent_day_domain2 ON events_by_domain_agent_day (domain2, bucket);
CREATE INDEX events_by_domain_agent_day_domain3 ON events_by_domain_agent_day (domain3, bucket);
CREATE INDEX events_by_domain_agent_month_domain2 ON events_by_domain_agent_month (domain2, bucket);
CREATE INDEX events_by_domain_agent_month_domain3 ON events_by_domain_agent_month (domain3, bucket);

SELECT add_continuous_aggregate_policy('events_by_domain_hour', start_offset => NULL, end_offset => INTERVAL '1 hour', schedule_interval => INTERVAL '1 minute');
SELECT add_continuous_aggregate_policy('events_by_domain_type_day', start_offset => NULL, end_offset => INTERVAL '1 day', schedule_interval => INTERVAL '5 minutes');
SELECT add_continuous_aggregate_policy('events_by_domain_type_month', start_offset => NULL, end_offset => INTERVAL '1 month', schedule_interval => INTERVAL '1 hour');
SELECT add_continuous_aggregate_policy('events_by_domain_role_day', start_offset => NULL, end_offset => INTERVAL '1 day', schedule_interval => INTERVAL '5 minutes');
SELECT add_continuous_aggregate_policy('events_by_domain_role_month', start_offset => NULL, end_offset => INTERVAL '1 month', schedule_interval => INTERVAL '1 hour');
SELECT add_continuous_aggregate_policy('events_by_domain_agent_day', start_offset => NULL, end_offset => INTERVAL '1 day', schedule_interval => INTERVAL '5 minutes');
SELECT add_continuous_aggregate_policy('events_by_domain_agent_month', start_offset => NULL, end_offset => INTERVAL '1 month', schedule_interval => INTERVAL '1 hour');
