-- Invitations to one address in the last day, revoked ones included: each was a
-- mail to that address, and at most a few a day may go out (src/modules/members).
CREATE INDEX invites_by_address ON invites (email, created_at);
