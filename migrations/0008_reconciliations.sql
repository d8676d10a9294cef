-- Reconciliations: bills of one kind matched with the bank transactions that paid them
-- (n:m), all of one company. A member is in one group at most (the unique index);
-- a bill keeps the account it named before the group, restored when the group goes.
CREATE TABLE reconciliations (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    company_id   TEXT NOT NULL REFERENCES companies (id),
    kind         TEXT NOT NULL CHECK (kind IN ('payable', 'receivable')),
    source       TEXT NOT NULL DEFAULT 'manual' CHECK (source IN ('manual', 'fintera')),
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    created_via  TEXT NOT NULL CHECK (created_via IN ('api', 'mcp', 'system')),
    updated_via  TEXT NOT NULL CHECK (updated_via IN ('api', 'mcp', 'system')),
    created_by   TEXT,
    updated_by   TEXT
);
CREATE TABLE reconciliation_members (
    reconciliation_id   TEXT NOT NULL REFERENCES reconciliations (id),
    workspace_id        TEXT NOT NULL REFERENCES workspaces (id),
    member_type         TEXT NOT NULL CHECK (member_type IN ('billing', 'transaction')),
    member_id           TEXT NOT NULL,
    position            BIGINT NOT NULL,
    previous_account_id TEXT,
    PRIMARY KEY (reconciliation_id, member_type, member_id)
);
CREATE UNIQUE INDEX reconciliation_members_once ON reconciliation_members (member_type, member_id);
