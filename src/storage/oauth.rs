//! The authorization server's rows (migration 0021): clients, grants, codes, refresh
//! tokens and the ids of issued access tokens. Codes and refresh tokens are found by the
//! SHA-256 of their value, never kept themselves. Each function is one statement (or a
//! few in the caller's transaction); the rules of when to call them are `oauth`'s.

use crate::storage::{sql, Conn, Db, Error};

/// A client, registered or known by its metadata document.
#[derive(Debug, Clone)]
pub struct ClientRow {
    pub client_id: String,
    /// `registered` (RFC 7591) or `metadata_document` (its URL is its id).
    pub kind: String,
    pub client_name: Option<String>,
    /// JSON array of the redirect URIs.
    pub redirect_uris: String,
    /// The registration or the document as accepted (JSON).
    pub document: String,
    pub created_at: i64,
    /// A document's cache end; `None` for a registration.
    pub expires_at: Option<i64>,
}

const CLIENT: &str =
    "SELECT client_id, kind, client_name, redirect_uris, document, created_at, expires_at FROM oauth_clients";

fn client_of(row: &sql::Row<'_>) -> Result<ClientRow, Error> {
    Ok(ClientRow {
        client_id: row.try_get(0)?,
        kind: row.try_get(1)?,
        client_name: row.try_get(2)?,
        redirect_uris: row.try_get(3)?,
        document: row.try_get(4)?,
        created_at: row.try_get(5)?,
        expires_at: row.try_get(6)?,
    })
}

pub async fn client(conn: &mut Conn, client_id: &str) -> Result<Option<ClientRow>, Error> {
    sql::query(format!("{CLIENT} WHERE client_id = $1")).bind(client_id).map_optional(conn, client_of).await
}

/// Keeps a client: a new registration, or a metadata document fetched again (its row
/// replaced, its cache end moved).
pub async fn keep_client(conn: &mut Conn, client: &ClientRow) -> Result<(), Error> {
    sql::query(
        "INSERT INTO oauth_clients (client_id, kind, client_name, redirect_uris, document, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (client_id) DO UPDATE SET client_name = excluded.client_name, redirect_uris = excluded.redirect_uris,
                document = excluded.document, expires_at = excluded.expires_at",
    )
    .bind(&client.client_id)
    .bind(&client.kind)
    .bind(client.client_name.as_deref())
    .bind(&client.redirect_uris)
    .bind(&client.document)
    .bind(client.created_at)
    .bind(client.expires_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// A person's consent to a client: scopes and resource; every token is issued under one.
#[derive(Debug, Clone)]
pub struct GrantRow {
    pub id: String,
    pub user_id: String,
    pub client_id: String,
    pub client_name: Option<String>,
    pub scope: String,
    pub resource: String,
    pub created_at: i64,
    pub used_at: Option<i64>,
    pub expires_at: i64,
    pub revoked_at: Option<i64>,
}

const GRANT: &str =
    "SELECT id, user_id, client_id, client_name, scope, resource, created_at, used_at, expires_at, revoked_at
       FROM oauth_grants";

fn grant_of(row: &sql::Row<'_>) -> Result<GrantRow, Error> {
    Ok(GrantRow {
        id: row.try_get(0)?,
        user_id: row.try_get(1)?,
        client_id: row.try_get(2)?,
        client_name: row.try_get(3)?,
        scope: row.try_get(4)?,
        resource: row.try_get(5)?,
        created_at: row.try_get(6)?,
        used_at: row.try_get(7)?,
        expires_at: row.try_get(8)?,
        revoked_at: row.try_get(9)?,
    })
}

pub async fn insert_grant(conn: &mut Conn, grant: &GrantRow) -> Result<(), Error> {
    sql::query(
        "INSERT INTO oauth_grants (id, user_id, client_id, client_name, scope, resource, created_at, used_at, expires_at,
                                   revoked_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(&grant.id)
    .bind(&grant.user_id)
    .bind(&grant.client_id)
    .bind(grant.client_name.as_deref())
    .bind(&grant.scope)
    .bind(&grant.resource)
    .bind(grant.created_at)
    .bind(grant.used_at)
    .bind(grant.expires_at)
    .bind(grant.revoked_at)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn grant(conn: &mut Conn, id: &str) -> Result<Option<GrantRow>, Error> {
    sql::query(format!("{GRANT} WHERE id = $1")).bind(id).map_optional(conn, grant_of).await
}

/// A person's grants, newest first (revoked ones too, for their history).
pub async fn grants_of_user(db: &Db, user_id: &str) -> Result<Vec<GrantRow>, Error> {
    sql::query(format!("{GRANT} WHERE user_id = $1 ORDER BY created_at DESC, id"))
        .bind(user_id)
        .map_all(db, grant_of)
        .await
}

/// A live grant as a person sees it on the connected apps page: whose it is, and the
/// client's redirect URIs (JSON) when the client is still known.
#[derive(Debug, Clone)]
pub struct SeenGrant {
    pub grant: GrantRow,
    pub user_name: String,
    pub user_email: String,
    pub redirect_uris: Option<String>,
}

/// The grants `user_id` may see and revoke, alive at `now` (exchanged, neither revoked
/// nor expired): their own, and those of the people of each workspace they own. One
/// rule for the connected apps page, `/v1/connected-apps` and the CLI. With `only`, that
/// grant alone, if it is one of them. Most recently used first.
pub async fn visible_grants(
    conn: &mut Conn,
    user_id: &str,
    only: Option<&str>,
    now: i64,
) -> Result<Vec<SeenGrant>, Error> {
    sql::query(
        "SELECT g.id, g.user_id, g.client_id, g.client_name, g.scope, g.resource, g.created_at, g.used_at, g.expires_at,
                g.revoked_at, u.name, u.email, c.redirect_uris
           FROM oauth_grants g JOIN users u ON u.id = g.user_id
           LEFT JOIN oauth_clients c ON c.client_id = g.client_id
          WHERE g.revoked_at IS NULL AND g.used_at IS NOT NULL AND g.expires_at > $2
            AND ($3 = '' OR g.id = $3)
            AND (g.user_id = $1 OR g.user_id IN (
                   SELECT m.user_id FROM memberships m
                    WHERE m.workspace_id IN (SELECT o.workspace_id FROM memberships o WHERE o.user_id = $1 AND o.role = 'owner')))
          ORDER BY g.used_at DESC, g.id",
    )
    .bind(user_id)
    .bind(now)
    .bind(only.unwrap_or_default())
    .map_all(conn, |row| {
        Ok(SeenGrant {
            grant: grant_of(row)?,
            user_name: row.try_get(10)?,
            user_email: row.try_get(11)?,
            redirect_uris: row.try_get(12)?,
        })
    })
    .await
}

/// Marks a grant used now and moves its end (a refresh keeps it alive).
pub async fn touch_grant(conn: &mut Conn, id: &str, now: i64, expires_at: i64) -> Result<(), Error> {
    sql::query("UPDATE oauth_grants SET used_at = $1, expires_at = $2 WHERE id = $3 AND revoked_at IS NULL")
        .bind(now)
        .bind(expires_at)
        .bind(id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Revokes a grant: its refresh tokens go, and the ids of its access tokens still alive
/// go on the deny list every request reads (the request that presents one is refused,
/// with no statement of its own). Answers whether it was live.
pub async fn revoke_grant(conn: &mut Conn, id: &str, now: i64) -> Result<bool, Error> {
    let revoked = sql::query("UPDATE oauth_grants SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL")
        .bind(now)
        .bind(id)
        .execute(&mut *conn)
        .await?;
    sql::query(
        "INSERT INTO revoked_tokens (jti, revoked_at)
         SELECT jti, $1 FROM oauth_access_tokens WHERE grant_id = $2 AND expires_at > $3
         ON CONFLICT (jti) DO NOTHING",
    )
    .bind(crate::clock::now_rfc3339())
    .bind(id)
    .bind(now)
    .execute(&mut *conn)
    .await?;
    sql::query("DELETE FROM oauth_refresh_tokens WHERE grant_id = $1").bind(id).execute(&mut *conn).await?;
    Ok(revoked > 0)
}

/// An authorization code's row.
#[derive(Debug, Clone)]
pub struct CodeRow {
    pub grant_id: String,
    pub client_id: String,
    pub redirect_uri: String,
    pub code_challenge: String,
    pub resource: String,
    pub expires_at: i64,
}

pub async fn insert_code(conn: &mut Conn, hash: &str, code: &CodeRow) -> Result<(), Error> {
    sql::query(
        "INSERT INTO oauth_codes (code_hash, grant_id, client_id, redirect_uri, code_challenge, resource, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(hash)
    .bind(&code.grant_id)
    .bind(&code.client_id)
    .bind(&code.redirect_uri)
    .bind(&code.code_challenge)
    .bind(&code.resource)
    .bind(code.expires_at)
    .execute(conn)
    .await?;
    Ok(())
}

/// What presenting a code found.
#[derive(Debug)]
pub enum CodeUse {
    /// Its first use: it is spent now.
    First(CodeRow),
    /// It was spent before: a replay.
    Again(CodeRow),
    Unknown,
}

/// Spends the code `hash`, once: of two uses at once, one finds it fresh.
pub async fn spend_code(conn: &mut Conn, hash: &str, now: i64) -> Result<CodeUse, Error> {
    let spent = sql::query("UPDATE oauth_codes SET used_at = $1 WHERE code_hash = $2 AND used_at IS NULL")
        .bind(now)
        .bind(hash)
        .execute(&mut *conn)
        .await?;
    let row = sql::query(
        "SELECT grant_id, client_id, redirect_uri, code_challenge, resource, expires_at FROM oauth_codes WHERE code_hash = $1",
    )
    .bind(hash)
    .map_optional(&mut *conn, |row| {
        Ok(CodeRow {
            grant_id: row.try_get(0)?,
            client_id: row.try_get(1)?,
            redirect_uri: row.try_get(2)?,
            code_challenge: row.try_get(3)?,
            resource: row.try_get(4)?,
            expires_at: row.try_get(5)?,
        })
    })
    .await?;
    Ok(match (row, spent) {
        (Some(row), 1) => CodeUse::First(row),
        (Some(row), _) => CodeUse::Again(row),
        (None, _) => CodeUse::Unknown,
    })
}

/// A refresh token's row.
#[derive(Debug, Clone)]
pub struct RefreshRow {
    pub grant_id: String,
    pub issued_at: i64,
    pub expires_at: i64,
    pub replaced_at: Option<i64>,
}

pub async fn insert_refresh(
    conn: &mut Conn,
    hash: &str,
    grant_id: &str,
    now: i64,
    expires_at: i64,
) -> Result<(), Error> {
    sql::query(
        "INSERT INTO oauth_refresh_tokens (token_hash, grant_id, issued_at, expires_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (token_hash) DO NOTHING",
    )
    .bind(hash)
    .bind(grant_id)
    .bind(now)
    .bind(expires_at)
    .execute(conn)
    .await?;
    Ok(())
}

pub async fn refresh(conn: &mut Conn, hash: &str) -> Result<Option<RefreshRow>, Error> {
    sql::query("SELECT grant_id, issued_at, expires_at, replaced_at FROM oauth_refresh_tokens WHERE token_hash = $1")
        .bind(hash)
        .map_optional(conn, |row| {
            Ok(RefreshRow {
                grant_id: row.try_get(0)?,
                issued_at: row.try_get(1)?,
                expires_at: row.try_get(2)?,
                replaced_at: row.try_get(3)?,
            })
        })
        .await
}

/// Marks the refresh token `hash` replaced now, once: answers whether this call did.
pub async fn replace_refresh(conn: &mut Conn, hash: &str, now: i64) -> Result<bool, Error> {
    let replaced =
        sql::query("UPDATE oauth_refresh_tokens SET replaced_at = $1 WHERE token_hash = $2 AND replaced_at IS NULL")
            .bind(now)
            .bind(hash)
            .execute(conn)
            .await?;
    Ok(replaced == 1)
}

/// Records an access token's id under its grant until it expires.
pub async fn record_access(conn: &mut Conn, jti: &str, grant_id: &str, expires_at: i64) -> Result<(), Error> {
    sql::query("INSERT INTO oauth_access_tokens (jti, grant_id, expires_at) VALUES ($1, $2, $3)")
        .bind(jti)
        .bind(grant_id)
        .bind(expires_at)
        .execute(conn)
        .await?;
    Ok(())
}

/// Drops what has expired: codes, refresh tokens, access tokens' ids, cached documents,
/// grants ended (expired or revoked) a month ago, and registrations no grant names that
/// are a week old. Answers how many rows went.
pub async fn sweep(db: &Db, now: i64) -> Result<u64, Error> {
    const MONTH: i64 = 30 * 24 * 3600;
    const WEEK: i64 = 7 * 24 * 3600;
    let mut swept = 0;
    for (statement, before) in [
        ("DELETE FROM oauth_codes WHERE expires_at < $1", now),
        ("DELETE FROM oauth_sign_ins WHERE expires_at < $1", now),
        ("DELETE FROM oauth_refresh_tokens WHERE expires_at < $1", now),
        ("DELETE FROM oauth_access_tokens WHERE expires_at < $1", now),
        ("DELETE FROM oauth_clients WHERE kind = 'metadata_document' AND expires_at < $1", now),
        ("DELETE FROM oauth_grants WHERE (revoked_at IS NOT NULL AND revoked_at < $1) OR expires_at < $1", now - MONTH),
        (
            "DELETE FROM oauth_clients WHERE kind = 'registered' AND created_at < $1
                AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = oauth_clients.client_id)",
            now - WEEK,
        ),
    ] {
        swept += sql::query(statement).bind(before).execute(db).await?;
    }
    Ok(swept)
}

/// A sign-in waiting for the identity provider's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignInRow {
    /// The sealed authorization request (or the page) it resumes.
    pub request: String,
    pub nonce: String,
    pub verifier: String,
    pub expires_at: i64,
}

pub async fn insert_sign_in(db: &Db, state_hash: &str, row: &SignInRow) -> Result<(), Error> {
    sql::query(
        "INSERT INTO oauth_sign_ins (state_hash, request, nonce, verifier, expires_at) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(state_hash)
    .bind(&row.request)
    .bind(&row.nonce)
    .bind(&row.verifier)
    .bind(row.expires_at)
    .execute(db)
    .await?;
    Ok(())
}

/// Takes the sign-in of a state (its row deleted: a state is answered once), if it is
/// there and alive at `now`.
pub async fn take_sign_in(db: &Db, state_hash: &str, now: i64) -> Result<Option<SignInRow>, Error> {
    let mut tx = db.begin().await?;
    let row = sql::query("SELECT request, nonce, verifier, expires_at FROM oauth_sign_ins WHERE state_hash = $1")
        .bind(state_hash)
        .map_optional(&mut tx, |r| {
            Ok(SignInRow {
                request: r.try_get(0)?,
                nonce: r.try_get(1)?,
                verifier: r.try_get(2)?,
                expires_at: r.try_get(3)?,
            })
        })
        .await?;
    let taken =
        sql::query("DELETE FROM oauth_sign_ins WHERE state_hash = $1").bind(state_hash).execute(&mut tx).await?;
    tx.commit().await?;
    Ok(row.filter(|r| taken == 1 && r.expires_at >= now))
}

/// A person the development login lists.
#[derive(Debug, Clone, Default)]
pub struct ListedPerson {
    pub id: String,
    pub name: String,
    pub email: String,
    /// Each workspace of theirs, by name, with their role there.
    pub workspaces: Vec<(String, String)>,
}

/// Every person, with their workspaces: the development login's list.
pub async fn people(db: &Db) -> Result<Vec<ListedPerson>, Error> {
    let mut people: Vec<ListedPerson> = Vec::new();
    let rows = sql::query(
        "SELECT u.id, u.name, u.email, w.name, m.role
           FROM users u LEFT JOIN memberships m ON m.user_id = u.id LEFT JOIN workspaces w ON w.id = m.workspace_id
          ORDER BY u.email, w.name",
    )
    .fetch_all(db)
    .await?;
    for row in rows {
        let id: String = row.try_get(0)?;
        if people.last().is_none_or(|p| p.id != id) {
            people.push(ListedPerson { id, name: row.try_get(1)?, email: row.try_get(2)?, workspaces: Vec::new() });
        }
        let (workspace, role): (Option<String>, Option<String>) = (row.try_get(3)?, row.try_get(4)?);
        if let (Some(workspace), Some(role), Some(person)) = (workspace, role, people.last_mut()) {
            person.workspaces.push((workspace, role));
        }
    }
    Ok(people)
}

/// A person's name and e-mail, if they exist.
pub async fn person(db: &Db, user_id: &str) -> Result<Option<(String, String)>, Error> {
    sql::query("SELECT name, email FROM users WHERE id = $1")
        .bind(user_id)
        .map_optional(db, |row| Ok((row.try_get(0)?, row.try_get(1)?)))
        .await
}
