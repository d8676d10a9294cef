-- Attachments: file bytes (in the database by default) and their links to payables,
-- receivables and transactions.
CREATE TABLE attachments (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    file_name    TEXT NOT NULL,
    title        TEXT,
    mime_type    TEXT NOT NULL,
    file_size    BIGINT NOT NULL,
    sha256       TEXT NOT NULL,
    content      BLOB,
    blob_key     TEXT,
    uploaded_by  TEXT NOT NULL,
    uploaded_at  TEXT NOT NULL,
    created_via  TEXT NOT NULL CHECK (created_via IN ('api', 'mcp', 'system')),
    created_by   TEXT
);
CREATE INDEX attachments_by_upload ON attachments (workspace_id, uploaded_at, id);

CREATE TABLE attachment_links (
    attachment_id TEXT NOT NULL REFERENCES attachments (id),
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    target_type   TEXT NOT NULL CHECK (target_type IN ('payable', 'receivable', 'transaction')),
    target_id     TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    created_via   TEXT NOT NULL CHECK (created_via IN ('api', 'mcp', 'system')),
    created_by    TEXT,
    PRIMARY KEY (attachment_id, target_type, target_id)
);
CREATE INDEX attachment_links_by_target ON attachment_links (target_type, target_id);
