-- A failing endpoint with anything due is tried at least every 12 hours, so a
-- longer spell without attempts had nothing to send, and is not failing: the
-- sweep starts failing_since afresh after one (src/modules/webhooks/schedule.ts).
-- A failing endpoint's last attempt was a failure.
ALTER TABLE webhook_endpoints ADD COLUMN last_failure_at timestamptz;
UPDATE webhook_endpoints e
SET last_failure_at = (SELECT max(d.last_attempt_at) FROM webhook_deliveries d WHERE d.endpoint_id = e.id)
WHERE e.failing_since IS NOT NULL;
