-- Verified domains by their reversed name, so that those under a domain are one
-- index range: a partner's attestation looks them up, since it may not cover
-- another organisation's verified domain (src/modules/partners/service.ts).
CREATE INDEX domains_verified_reversed ON domains ((reverse(domain) COLLATE "C")) WHERE state = 'verified';
