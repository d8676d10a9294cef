-- The authorization server's state (src/oauth): clients, grants, codes and tokens, in the
-- database so every step of a sign-in may land on another process or Lambda instance.
-- Codes and refresh tokens are kept by their SHA-256 only. Times are Unix seconds.
--
-- * oauth_clients: a client registered by RFC 7591 (kind 'registered') or known by its
--   metadata document (kind 'metadata_document': the document's URL is the client id,
--   kept until expires_at, the end of its cache).
-- * oauth_grants: what a person consented to: a client, the scopes, the resource. Every
--   token issued under it dies with it (revoked_at).
-- * oauth_codes: an authorization code, single use, bound to its client, redirect URI,
--   PKCE challenge and resource.
-- * oauth_refresh_tokens: a grant's refresh tokens; one is current, the one it replaced
--   is remembered (replaced_at) for the grace window and reuse detection.
-- * oauth_access_tokens: the ids of a grant's access tokens until they expire, so that
--   revoking the grant puts them on the deny list every request already reads.

CREATE TABLE oauth_clients (
    client_id     TEXT PRIMARY KEY,
    kind          TEXT NOT NULL CHECK (kind IN ('registered', 'metadata_document')),
    client_name   TEXT,
    redirect_uris TEXT NOT NULL,
    document      TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT,
    used_at       BIGINT
);

CREATE TABLE oauth_grants (
    id          TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL,
    client_id   TEXT NOT NULL,
    client_name TEXT,
    scope       TEXT NOT NULL,
    resource    TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    used_at     BIGINT,
    expires_at  BIGINT NOT NULL,
    revoked_at  BIGINT
);
CREATE INDEX oauth_grants_by_user ON oauth_grants (user_id);

CREATE TABLE oauth_codes (
    code_hash      TEXT PRIMARY KEY,
    grant_id       TEXT NOT NULL,
    client_id      TEXT NOT NULL,
    redirect_uri   TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    resource       TEXT NOT NULL,
    expires_at     BIGINT NOT NULL,
    used_at        BIGINT
);

CREATE TABLE oauth_refresh_tokens (
    token_hash  TEXT PRIMARY KEY,
    grant_id    TEXT NOT NULL,
    issued_at   BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    replaced_at BIGINT
);
CREATE INDEX oauth_refresh_tokens_by_grant ON oauth_refresh_tokens (grant_id);

CREATE TABLE oauth_access_tokens (
    jti        TEXT PRIMARY KEY,
    grant_id   TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX oauth_access_tokens_by_grant ON oauth_access_tokens (grant_id);

-- The OAuth client a write was made with (NULL: a token the CLI minted, or no token).
ALTER TABLE audit_events ADD COLUMN client_id TEXT;
