-- The webhook sweep turns each outbox event into deliveries once, then marks it
-- dispatched; events not yet dispatched are found through the partial index.
ALTER TABLE event_outbox ADD COLUMN dispatched_at timestamptz;
CREATE INDEX event_outbox_undispatched ON event_outbox (created_at, id) WHERE dispatched_at IS NULL;
CREATE INDEX event_outbox_dispatched ON event_outbox (dispatched_at) WHERE dispatched_at IS NOT NULL;
