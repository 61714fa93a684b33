-- Platform and agent organisations are not self-serve: a signed-in user asks,
-- an operator admin approves (creating the organisation) or rejects.
CREATE TABLE access_requests (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_type         text NOT NULL CHECK (org_type IN ('platform', 'agent')),
  user_id          uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  org_name         text NOT NULL CHECK (char_length(org_name) BETWEEN 1 AND 200),
  admin_email      text NOT NULL CHECK (char_length(admin_email) BETWEEN 3 AND 254),
  use_case         text NOT NULL CHECK (char_length(use_case) BETWEEN 1 AND 4000),
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected')),
  created_at       timestamptz NOT NULL DEFAULT now(),
  reviewed_at      timestamptz,
  reviewed_by      text,
  reviewer_note    text CHECK (char_length(reviewer_note) <= 4000),
  approved_org_id  uuid REFERENCES organizations (id) ON DELETE SET NULL,
  CHECK ((status = 'pending') = (reviewed_at IS NULL))
);
CREATE INDEX access_requests_user ON access_requests (user_id, created_at);
CREATE INDEX access_requests_status ON access_requests (status, created_at);
