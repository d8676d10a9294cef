-- People on a real deployment: who a signed-in person is at the company's identity
-- provider, and the invitations that let a person in. Times are Unix seconds.
--
-- * identities: a person bound to an OpenID provider's `iss` + `sub` at their first
--   sign-in; after that only the subject counts (an e-mail changed at the provider does
--   not move the account). One subject per person and provider.
-- * invitations: a workspace's invitation of an e-mail address (kept lowercased) to a
--   role. The person whose provider-verified address it names claims it at sign-in
--   (accepted_at, accepted_by); it may be withdrawn (revoked_at) or expire. A workspace
--   created by `workspace create` starts with the invitation of its first owner.

CREATE TABLE identities (
    issuer     TEXT NOT NULL,
    subject    TEXT NOT NULL,
    user_id    TEXT NOT NULL REFERENCES users (id),
    created_at BIGINT NOT NULL,
    PRIMARY KEY (issuer, subject)
);
CREATE UNIQUE INDEX identities_one_per_provider ON identities (user_id, issuer);

CREATE TABLE invitations (
    id           TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    email        TEXT NOT NULL,
    role         TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'finance', 'viewer')),
    invited_by   TEXT,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    accepted_at  BIGINT,
    accepted_by  TEXT,
    revoked_at   BIGINT
);
CREATE INDEX invitations_by_email ON invitations (email);
CREATE INDEX invitations_by_workspace ON invitations (workspace_id);

-- A sign-in handed to the company's OpenID provider and not back yet: found by the
-- SHA-256 of its `state` (which the browser's cookie also holds), single use, gone after
-- ten minutes. The PKCE verifier and the nonce never leave the server.
CREATE TABLE oauth_sign_ins (
    state_hash TEXT PRIMARY KEY,
    request    TEXT NOT NULL,
    nonce      TEXT NOT NULL,
    verifier   TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
