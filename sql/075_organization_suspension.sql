-- An operator may suspend an organisation (CLI `org suspend`): its API keys and
-- its members' sessions are refused for it until `org resume`. Nothing it owns is
-- deleted. The change is announced on auth_changes (sql/029) like an org type
-- change, so every instance drops the organisation's cached keys at once.
ALTER TABLE organizations ADD COLUMN suspended_at timestamptz;

DROP TRIGGER organizations_changed ON organizations;
CREATE TRIGGER organizations_changed AFTER UPDATE OF org_type, suspended_at OR DELETE ON organizations
FOR EACH ROW EXECUTE FUNCTION notify_organization_change();
