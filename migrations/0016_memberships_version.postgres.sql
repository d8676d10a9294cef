-- A user's memberships carry a version, set anew by the database itself in the same
-- transaction as any change to what they are: a membership added, removed or given
-- another role, or one of its workspaces renamed. A process that remembers a user's
-- memberships with their version checks the version alone in a read's statement (one
-- index lookup) instead of reading the memberships again, and reads them only when it
-- changed. A version is a random value, not a count: a database taken back in time (a
-- restore to an earlier point, a failover that lost its last commits) never hands out
-- again a version a process may remember for other memberships.
ALTER TABLE users ADD COLUMN memberships_version TEXT NOT NULL DEFAULT 'initial';

CREATE FUNCTION memberships_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'workspaces' THEN
        UPDATE users SET memberships_version = gen_random_uuid()::text
         WHERE id IN (SELECT user_id FROM memberships WHERE workspace_id = NEW.id);
        RETURN NULL;
    END IF;
    IF TG_OP <> 'INSERT' THEN
        UPDATE users SET memberships_version = gen_random_uuid()::text WHERE id = OLD.user_id;
    END IF;
    IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW.user_id <> OLD.user_id) THEN
        UPDATE users SET memberships_version = gen_random_uuid()::text WHERE id = NEW.user_id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER memberships_version AFTER INSERT OR UPDATE OR DELETE ON memberships
    FOR EACH ROW EXECUTE FUNCTION memberships_version();
CREATE TRIGGER memberships_version_renamed AFTER UPDATE OF name ON workspaces
    FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name) EXECUTE FUNCTION memberships_version();
