-- The expiry sweep (src/jobs/expiry.ts) deletes click tokens past expires_at in
-- batches; this index finds them without scanning every live token.
CREATE INDEX click_tokens_expiry ON click_tokens (expires_at);
