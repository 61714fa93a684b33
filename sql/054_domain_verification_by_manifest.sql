-- A third way to verify a domain: the organisation's participant manifest lists
-- it in `domains` (standard 8.6), and the organisation signs the domain's
-- challenge with one of the manifest's keys (src/modules/manifests/domain-claim.ts).
ALTER TABLE domains DROP CONSTRAINT domains_verification_method_check;
ALTER TABLE domains ADD CONSTRAINT domains_verification_method_check
  CHECK (verification_method IN ('dns_txt', 'https_file', 'manifest', 'partner_attestation', 'operator'));
