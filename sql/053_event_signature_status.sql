-- Signed telemetry: what the service found when it checked the signature a
-- request carried against the reporter's manifest keys (src/modules/manifests/
-- signatures.ts): verified, unverified (unsigned, or no valid manifest),
-- invalid, unknown_key or expired_key. Events stored before this are unverified.
ALTER TABLE events ADD COLUMN signature_status text NOT NULL DEFAULT 'unverified';
