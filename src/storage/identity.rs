//! Identity queries: who belongs to which workspace with which role, and which token
//! ids are revoked.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use crate::storage::{sql, Row};

use super::Db;
use crate::domain::roles::Role;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Membership {
    pub workspace_id: String,
    pub workspace_name: String,
    pub role: Role,
}

/// The user's memberships (`$1`): the workspace id, name and role, at columns 0–2 (or
/// from `at` on), in no order.
pub(super) const MEMBERSHIPS_OF_USER: &str = "SELECT w.id AS workspace_id, w.name AS workspace_name, m.role
       FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
      WHERE m.user_id = $1";

/// [`MEMBERSHIPS_OF_USER`] in a stable order: workspace name, then id.
pub(super) static MEMBERSHIPS: LazyLock<String> =
    LazyLock::new(|| format!("{MEMBERSHIPS_OF_USER} ORDER BY w.name, w.id"));

/// A membership read from the columns `at`, `at + 1` and `at + 2`; `None` for a role
/// this version does not know (the CHECK constraint rules that out) or no membership
/// (a left join that found none).
pub(super) fn membership(row: &Row<'_>, at: usize) -> Result<Option<Membership>, crate::storage::Error> {
    let Some(role) = row.try_get::<Option<String>, _>(at + 2)?.as_deref().and_then(Role::parse) else {
        return Ok(None);
    };
    Ok(Some(Membership { workspace_id: row.try_get(at)?, workspace_name: row.try_get(at + 1)?, role }))
}

/// A user's memberships as of their `users.memberships_version`: a random value the
/// database sets anew in the same transaction as any change to them (migration 16;
/// [`Known::NO_USER`] for a user with no row, who has none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Known {
    pub version: Arc<str>,
    pub memberships: Arc<[Membership]>,
}

impl Known {
    /// The version of a user with no row.
    pub const NO_USER: &str = "none";
    /// A version no user row has: a statement that checks it reads the memberships.
    pub const UNSURE: &str = "";
}

/// The version of `users.memberships_version` a statement reads with a user's
/// memberships (`$n` the user's id): [`Known::NO_USER`] when the user has no row.
pub(super) fn version_of_user(user: usize) -> String {
    format!("COALESCE((SELECT memberships_version FROM users WHERE id = ${user}), '{}')", Known::NO_USER)
}

/// The memberships this process last read of each user, in [`MEMBERSHIPS`]' order, with
/// their version: what a request whose count rides on its first read
/// ([`Counting`](super::rate_limit::Counting)) acts on — and finds checked against the
/// database's version in that same statement. A hint, never an authority: at most
/// [`Recent::USERS`] users are kept, then it starts over. A user whose last count
/// refused a request (revoked, past the budget) is not kept, so that a refused caller's
/// requests run no read.
#[derive(Debug, Default)]
pub struct Recent(Mutex<HashMap<String, Known>>);

impl Recent {
    const USERS: usize = 10_000;

    pub fn get(&self, user_id: &str) -> Option<Known> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).get(user_id).cloned()
    }

    pub fn remember(&self, user_id: &str, known: Known) {
        let mut recent = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if recent.get(user_id).is_some_and(|was| *was == known) {
            return;
        }
        if recent.len() >= Self::USERS {
            recent.clear();
        }
        recent.insert(user_id.to_string(), known);
    }

    /// Forgets the user: their next request is counted before it reads.
    pub fn forget(&self, user_id: &str) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(user_id);
    }
}

/// The user's memberships, in a stable order (workspace name, then id).
pub async fn memberships(db: &Db, user_id: &str) -> Result<Vec<Membership>, crate::storage::Error> {
    let rows = sql::query(MEMBERSHIPS.as_str()).bind(user_id).map_all(db, |row| membership(row, 0)).await?;
    Ok(rows.into_iter().flatten().collect())
}

pub async fn is_revoked(db: &Db, jti: &str) -> Result<bool, crate::storage::Error> {
    Ok(sql::query("SELECT 1 FROM revoked_tokens WHERE jti = $1").bind(jti).fetch_optional(db).await?.is_some())
}

/// Adds `jti` to the deny list; returns false when it was already there.
pub async fn revoke(db: &Db, jti: &str) -> Result<bool, crate::storage::Error> {
    let done = sql::query("INSERT INTO revoked_tokens (jti, revoked_at) VALUES ($1, $2) ON CONFLICT (jti) DO NOTHING")
        .bind(jti)
        .bind(crate::clock::now_rfc3339())
        .execute(db)
        .await?;
    Ok(done == 1)
}
