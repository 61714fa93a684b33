-- One change can write several audit entries in one transaction (approving an
-- access request: organization.created, then access_request.approved). With now(),
-- the transaction's start, they shared one occurred_at and listed in random order;
-- the statement's own clock keeps them in the order they were written.
ALTER TABLE audit_events ALTER COLUMN occurred_at SET DEFAULT clock_timestamp();
