-- Platform organisations the operator trusts to attest content owners' domains.
CREATE TABLE trusted_partners (
  org_id      uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  enabled_by  text NOT NULL,
  enabled_at  timestamptz NOT NULL DEFAULT now()
);

-- The trusted partner that provisioned a content owner: the only partner that
-- may later attest (upgrade to verified) that owner's registered domains.
ALTER TABLE organizations ADD COLUMN provisioned_by uuid REFERENCES organizations (id) ON DELETE SET NULL;
CREATE INDEX organizations_provisioned_by ON organizations (provisioned_by) WHERE provisioned_by IS NOT NULL;
