-- A user's memberships carry a version, a random value set anew in the same transaction
-- as any change to what they are (see the PostgreSQL migration, where a read's statement
-- checks it).
ALTER TABLE users ADD COLUMN memberships_version TEXT NOT NULL DEFAULT 'initial';

CREATE TRIGGER memberships_version_added AFTER INSERT ON memberships BEGIN
    UPDATE users SET memberships_version = lower(hex(randomblob(16))) WHERE id = NEW.user_id;
END;
CREATE TRIGGER memberships_version_changed AFTER UPDATE ON memberships BEGIN
    UPDATE users SET memberships_version = lower(hex(randomblob(16))) WHERE id IN (OLD.user_id, NEW.user_id);
END;
CREATE TRIGGER memberships_version_removed AFTER DELETE ON memberships BEGIN
    UPDATE users SET memberships_version = lower(hex(randomblob(16))) WHERE id = OLD.user_id;
END;
CREATE TRIGGER memberships_version_renamed AFTER UPDATE OF name ON workspaces
    WHEN OLD.name IS NOT NEW.name BEGIN
    UPDATE users SET memberships_version = lower(hex(randomblob(16)))
     WHERE id IN (SELECT user_id FROM memberships WHERE workspace_id = NEW.id);
END;
