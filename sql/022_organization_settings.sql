-- Per-organisation switches for click tokens. A missing row means every flag is
-- at its default (false); readers LEFT JOIN and coalesce.
CREATE TABLE organization_settings (
  org_id                          uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  -- Set by an agent or platform: GET /ctx/{token} of its tokens may answer.
  share_sessions_via_click_tokens boolean NOT NULL DEFAULT false,
  -- Set by a content owner: its URLs may appear in click manifests.
  visible_in_click_token_lookups  boolean NOT NULL DEFAULT false,
  updated_at                      timestamptz NOT NULL DEFAULT now()
);
