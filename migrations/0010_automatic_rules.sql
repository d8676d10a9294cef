-- Automatic rules: per company and scope (transactions or billings), an ordered list of
-- criteria → actions; the first active rule whose criteria all match a freshly created
-- row fills the fields the request left empty. Positions are 1-based and unique per
-- company and scope (a delete leaves a gap; a reorder renumbers them all). The records
-- an action names are not foreign keys: a rule outlives a category or person it names,
-- and an action whose record no longer fits the row is skipped when the rule fires.
CREATE TABLE automatic_rules (
    id                           TEXT PRIMARY KEY,
    workspace_id                 TEXT NOT NULL REFERENCES workspaces (id),
    company_id                   TEXT NOT NULL REFERENCES companies (id),
    scope                        TEXT NOT NULL CHECK (scope IN ('transactions', 'billings')),
    position                     BIGINT NOT NULL CHECK (position >= 1),
    active                       INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
    account_id                   TEXT,
    transaction_type             TEXT CHECK (transaction_type IN ('debit', 'credit')),
    match_person_id              TEXT,
    description_contains         TEXT,
    notes_contains               TEXT,
    set_description              TEXT,
    set_person_id                TEXT,
    set_category_id              TEXT,
    set_classification_center_id TEXT,
    set_expected_account_id      TEXT,
    created_at                   TEXT NOT NULL,
    updated_at                   TEXT NOT NULL,
    created_via                  TEXT NOT NULL CHECK (created_via IN ('api', 'mcp', 'system')),
    updated_via                  TEXT NOT NULL CHECK (updated_via IN ('api', 'mcp', 'system')),
    created_by                   TEXT,
    updated_by                   TEXT
);
CREATE UNIQUE INDEX automatic_rules_position ON automatic_rules (workspace_id, company_id, scope, position);
