-- A user's memberships carry a version, moved in the same transaction as any change to
-- what they are (see the PostgreSQL migration, where a read's statement checks it).
ALTER TABLE users ADD COLUMN memberships_version INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER memberships_version_added AFTER INSERT ON memberships BEGIN
    UPDATE users SET memberships_version = memberships_version + 1 WHERE id = NEW.user_id;
END;
CREATE TRIGGER memberships_version_changed AFTER UPDATE ON memberships BEGIN
    UPDATE users SET memberships_version = memberships_version + 1 WHERE id IN (OLD.user_id, NEW.user_id);
END;
CREATE TRIGGER memberships_version_removed AFTER DELETE ON memberships BEGIN
    UPDATE users SET memberships_version = memberships_version + 1 WHERE id = OLD.user_id;
END;
CREATE TRIGGER memberships_version_renamed AFTER UPDATE OF name ON workspaces
    WHEN OLD.name IS NOT NEW.name BEGIN
    UPDATE users SET memberships_version = memberships_version + 1
     WHERE id IN (SELECT user_id FROM memberships WHERE workspace_id = NEW.id);
END;
