-- Ingest: the event fields the read side may need beyond 002, compression of the
-- events hypertable, and the guard that keeps one batch's write atomic.

-- presentation_id links a content_engaged event to the presented event acted upon.
-- turn holds a turn event's conversation fields after privacy stripping; it is a
-- column of its own so that reads returning `data` can never expose it.
ALTER TABLE events ADD COLUMN presentation_id text, ADD COLUMN turn jsonb;

-- Compression. Segment by content_host: every owner-facing read filters on the
-- host (a verified domain and its subdomains), and a segmentby filter is applied
-- to compressed batches before any row is decompressed. Order by event_time DESC
-- because reads are time ranges, newest first. org_id and event_id complete the
-- ordering because TimescaleDB requires every column of the unique dedupe index
-- (org_id, event_id, event_time) in segmentby or orderby to keep enforcing it on
-- compressed chunks, so a retried batch stays idempotent at any age.
-- Chunks are compressed once 30 days old: emitter retries and bulk replays land
-- well inside that window (inserts into compressed chunks work, but are slower),
-- and continuous aggregate refreshes read recent chunks uncompressed.
ALTER TABLE events SET (
  timescaledb.compress,
  timescaledb.compress_segmentby = 'content_host',
  timescaledb.compress_orderby = 'event_time DESC, org_id, event_id'
);
SELECT add_compression_policy('events', compress_after => INTERVAL '30 days');

-- Raised from inside the single statement that claims a batch's sessions and
-- inserts its events: when fewer sessions were claimed than the batch names, one
-- belongs to another organisation, and raising aborts the whole statement, so
-- neither sessions nor events of the batch are stored.
CREATE FUNCTION ingest_require_sessions(claimed bigint, expected bigint) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  IF claimed <> expected THEN
    RAISE EXCEPTION 'a session named by this batch belongs to another organisation' USING ERRCODE = 'CT409';
  END IF;
  RETURN true;
END
$$;
