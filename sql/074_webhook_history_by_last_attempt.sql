-- Finished deliveries are kept WEBHOOK_RETENTION_DAYS from their last attempt,
-- not from their creation: a delivery redelivered today keeps today's attempts
-- for the whole retention. The purge finds them by that time.
DROP INDEX webhook_deliveries_finished;
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries ((coalesce(last_attempt_at, created_at)))
  WHERE status <> 'pending';
