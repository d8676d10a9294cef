-- Foundation schema: tenancy, identity, and the bookkeeping tables of the pipeline.
-- Portable SQL (SQLite and PostgreSQL): ids are UUID strings, timestamps are RFC 3339
-- UTC strings, counters and expiries are Unix seconds (BIGINT), money is integer cents.

CREATE TABLE workspaces (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    created_at  TEXT NOT NULL
);

CREATE TABLE users (
    id          TEXT PRIMARY KEY,
    email       TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    created_at  TEXT NOT NULL
);

CREATE TABLE memberships (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    user_id      TEXT NOT NULL REFERENCES users (id),
    role         TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'finance', 'viewer')),
    created_at   TEXT NOT NULL,
    PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX memberships_by_user ON memberships (user_id);

CREATE TABLE companies (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    name         TEXT NOT NULL,
    trade_name   TEXT,
    document     TEXT,
    locked_until TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    created_via  TEXT NOT NULL CHECK (created_via IN ('api', 'mcp', 'system')),
    updated_via  TEXT NOT NULL CHECK (updated_via IN ('api', 'mcp', 'system')),
    created_by   TEXT,
    updated_by   TEXT,
    deleted_at   TEXT
);
CREATE INDEX companies_by_workspace ON companies (workspace_id, name);

CREATE TABLE revoked_tokens (
    jti         TEXT PRIMARY KEY,
    revoked_at  TEXT NOT NULL
);

CREATE TABLE rate_limit_counters (
    user_id      TEXT NOT NULL,
    bucket       TEXT NOT NULL CHECK (bucket IN ('read', 'write')),
    window_start BIGINT NOT NULL,
    hits         BIGINT NOT NULL,
    PRIMARY KEY (user_id, bucket, window_start)
);

CREATE TABLE idempotency_keys (
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id),
    user_id        TEXT NOT NULL,
    idem_key       TEXT NOT NULL,
    route          TEXT NOT NULL,
    request_digest TEXT NOT NULL,
    status_code    INTEGER,
    response_body  TEXT,
    created_at     BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, idem_key)
);

CREATE TABLE confirmation_nonces (
    nonce        TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    user_id      TEXT NOT NULL,
    tool         TEXT NOT NULL,
    args_digest  TEXT NOT NULL,
    outcome      TEXT,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL
);

-- Append-only: rows are inserted, never updated or deleted.
CREATE TABLE audit_events (
    id           TEXT PRIMARY KEY,
    occurred_at  TEXT NOT NULL,
    workspace_id TEXT,
    user_id      TEXT,
    channel      TEXT NOT NULL CHECK (channel IN ('api', 'mcp', 'system')),
    action       TEXT NOT NULL,
    target_type  TEXT,
    target_id    TEXT,
    outcome      TEXT NOT NULL,
    details      TEXT
);
CREATE INDEX audit_events_by_workspace ON audit_events (workspace_id, occurred_at);
