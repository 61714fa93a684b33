-- Every instance keeps authenticated API keys in memory (with the organisation's
-- verified domains). A change that invalidates them is announced on the
-- `auth_changes` channel when it commits, whoever makes it (any instance, the
-- CLI, SQL by hand), and each instance drops what it holds (src/modules/keys/).
-- Payload: {"key_id": …} for one key, {"org_id": …} for every key of an organisation.

CREATE FUNCTION notify_api_key_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('auth_changes', json_build_object('key_id', OLD.id)::text);
  RETURN NULL;
END $$;

CREATE TRIGGER api_keys_revoked AFTER UPDATE OF revoked_at ON api_keys
FOR EACH ROW WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at) EXECUTE FUNCTION notify_api_key_change();
CREATE TRIGGER api_keys_deleted AFTER DELETE ON api_keys
FOR EACH ROW EXECUTE FUNCTION notify_api_key_change();

-- A key's principal carries its organisation's verified domains, and its org type.
CREATE FUNCTION notify_org_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('auth_changes', json_build_object('org_id', coalesce(NEW.org_id, OLD.org_id))::text);
  RETURN NULL;
END $$;

CREATE TRIGGER domains_verified_added AFTER INSERT ON domains
FOR EACH ROW WHEN (NEW.state = 'verified') EXECUTE FUNCTION notify_org_change();
CREATE TRIGGER domains_verified_changed AFTER UPDATE ON domains
FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.domain IS DISTINCT FROM NEW.domain)
EXECUTE FUNCTION notify_org_change();
CREATE TRIGGER domains_verified_removed AFTER DELETE ON domains
FOR EACH ROW WHEN (OLD.state = 'verified') EXECUTE FUNCTION notify_org_change();

CREATE FUNCTION notify_organization_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('auth_changes', json_build_object('org_id', OLD.id)::text);
  RETURN NULL;
END $$;

CREATE TRIGGER organizations_changed AFTER UPDATE OF org_type OR DELETE ON organizations
FOR EACH ROW EXECUTE FUNCTION notify_organization_change();
