-- Each registered domain carries its own verification challenge, published by
-- the owner as a DNS TXT record or an HTTPS file under /.well-known/.
ALTER TABLE domains
  ADD COLUMN challenge text NOT NULL DEFAULT replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', '');
