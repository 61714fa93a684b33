-- Compression of the hour-level rollups once their chunks are 30 days old, as the
-- events hypertable is compressed (sql/003). In bench:reads at 20 million events
-- over a year, the four hour-level families held 10.6 GB of the rollups' 18 GB,
-- more than the compressed events themselves; compressed, 2.4 GB.
--
-- Most reads meet old hours only at the edges of a range (at most 23 hours at each
-- end; days and coarser levels hold the rest). Reading all of a range's hours are
-- hourly timeseries, and a day whose bucket a late event left stale until the next
-- refresh. Each family is segmented by what its reads filter on, which TimescaleDB
-- applies to compressed batches before decompressing any: the per-host family by
-- reporter (reporters' summaries and timeseries) and host (owners of a domain the
-- owner-domain family does not key); the per-URL family by host (owners); the
-- per-reporter family by reporter; the owner-domain family by its domain keys. All
-- are ordered by bucket, whose per-batch bounds leave out batches outside the
-- range. A late event older than 30 days is still counted: the refresh rewrites its
-- buckets in the compressed chunk (test/reads/exactness.test.ts).
ALTER MATERIALIZED VIEW events_by_host_hour SET (
  timescaledb.compress,
  timescaledb.compress_segmentby = 'org_id, content_host',
  timescaledb.compress_orderby = 'bucket'
);
ALTER MATERIALIZED VIEW events_by_url_hour SET (
  timescaledb.compress,
  timescaledb.compress_segmentby = 'content_host',
  timescaledb.compress_orderby = 'bucket'
);
ALTER MATERIALIZED VIEW events_by_reporter_url_hour SET (
  timescaledb.compress,
  timescaledb.compress_segmentby = 'org_id',
  timescaledb.compress_orderby = 'bucket'
);
ALTER MATERIALIZED VIEW events_by_domain_hour SET (
  timescaledb.compress,
  timescaledb.compress_segmentby = 'domain2, domain3',
  timescaledb.compress_orderby = 'bucket'
);

SELECT add_compression_policy('events_by_host_hour', compress_after => INTERVAL '30 days');
SELECT add_compression_policy('events_by_url_hour', compress_after => INTERVAL '30 days');
SELECT add_compression_policy('events_by_reporter_url_hour', compress_after => INTERVAL '30 days');
SELECT add_compression_policy('events_by_domain_hour', compress_after => INTERVAL '30 days');
