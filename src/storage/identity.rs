//! Identity queries: who belongs to which workspace with which role, and which token
//! ids are revoked.

use crate::storage::sql;

use super::Db;
use crate::domain::roles::Role;

#[derive(Debug, Clone)]
pub struct Membership {
    pub workspace_id: String,
    pub workspace_name: String,
    pub role: Role,
}

/// The user's memberships, in a stable order (workspace name, then id).
pub async fn memberships(db: &Db, user_id: &str) -> Result<Vec<Membership>, crate::storage::Error> {
    let rows = sql::query(
        "SELECT w.id, w.name, m.role FROM memberships m
           JOIN workspaces w ON w.id = m.workspace_id
          WHERE m.user_id = $1
          ORDER BY w.name, w.id",
    )
    .bind(user_id)
    .fetch_all(db)
    .await?;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let role: String = row.try_get(2)?;
        // The CHECK constraint guarantees a known role; skip anything else defensively.
        if let Some(role) = Role::parse(&role) {
            out.push(Membership { workspace_id: row.try_get(0)?, workspace_name: row.try_get(1)?, role });
        }
    }
    Ok(out)
}

pub async fn is_revoked(db: &Db, jti: &str) -> Result<bool, crate::storage::Error> {
    Ok(sql::query("SELECT 1 FROM revoked_tokens WHERE jti = $1")
        .bind(jti)
        .fetch_optional(db)
        .await?
        .is_some())
}

/// Adds `jti` to the deny list; returns false when it was already there.
pub async fn revoke(db: &Db, jti: &str) -> Result<bool, crate::storage::Error> {
    let done = sql::query(
        "INSERT INTO revoked_tokens (jti, revoked_at) VALUES ($1, $2) ON CONFLICT (jti) DO NOTHING",
    )
    .bind(jti)
    .bind(crate::clock::now_rfc3339())
    .execute(db)
    .await?;
    Ok(done == 1)
}
