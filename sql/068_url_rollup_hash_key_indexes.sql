-- The page's event types for top URLs (src/modules/reads/urls.ts) are read for
-- its few URLs from the per-type URL families, each piece of the range in its
-- own time span. The hash indexes of sql/062 and sql/066 find a URL's rows for
-- all time, so the bucket condition filtered them after the heap fetch: in
-- bench:reads at 20 million events, a year's page of 20 URLs fetched 6,300 day
-- rows from 5,300 heap pages to keep 2,400, and the planner read the newest
-- hours through the bucket index instead. A btree on a 64-bit hash of the URL
-- (URLs can be longer than a btree key allows) and the bucket reaches each URL's
-- rows of the piece's span alone; the read keeps `content_url = ANY` beside the
-- hash, so a collision costs a row read, never a wrong count. Half the hash
-- indexes' size on the day level.
DROP INDEX _timescaledb_internal.events_by_url_hour_url;
DROP INDEX _timescaledb_internal.events_by_url_day_url;
DROP INDEX _timescaledb_internal.events_by_url_month_url;
DROP INDEX _timescaledb_internal.events_by_reporter_url_day_url;
DROP INDEX _timescaledb_internal.events_by_reporter_url_month_url;

CREATE INDEX events_by_url_hour_url_key ON events_by_url_hour (hashtextextended(content_url, 0), bucket);
CREATE INDEX events_by_url_day_url_key ON events_by_url_day (hashtextextended(content_url, 0), bucket);
CREATE INDEX events_by_url_month_url_key ON events_by_url_month (hashtextextended(content_url, 0), bucket);
CREATE INDEX events_by_reporter_url_hour_url_key ON events_by_reporter_url_hour (hashtextextended(content_url, 0), bucket);
CREATE INDEX events_by_reporter_url_day_url_key ON events_by_reporter_url_day (hashtextextended(content_url, 0), bucket);
CREATE INDEX events_by_reporter_url_month_url_key ON events_by_reporter_url_month (hashtextextended(content_url, 0), bucket);

-- The planner picks the new indexes by the expression's statistics, which chunks
-- analysed before this migration lack until autovacuum comes back to them.
DO $$
DECLARE
  view record;
BEGIN
  FOR view IN
    SELECT materialization_hypertable_schema AS schema_name, materialization_hypertable_name AS table_name
    FROM timescaledb_information.continuous_aggregates
    WHERE view_name IN ('events_by_url_hour', 'events_by_url_day', 'events_by_url_month',
                        'events_by_reporter_url_hour', 'events_by_reporter_url_day', 'events_by_reporter_url_month')
  LOOP
    EXECUTE format('ANALYZE %I.%I', view.schema_name, view.table_name);
  END LOOP;
END $$;
