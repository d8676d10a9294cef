//! Confirmation nonces (SPEC §5.2): the one-time claim a confirmed destructive tool
//! takes, in the same transaction as its operation, and the outcome a replay of the
//! same confirmation answers.

use crate::storage::{sql, Conn};

/// A confirmation being carried out: its nonce and what it is bound to.
pub struct Nonce<'a> {
    pub nonce: &'a str,
    pub workspace_id: &'a str,
    pub user_id: &'a str,
    pub tool: &'a str,
    pub args_digest: &'a str,
    pub created_at: i64,
    pub expires_at: i64,
}

/// Claims the nonce, with `outcome` already known (a refusal) or not yet (`None`: the
/// operation runs in the same transaction, then [`store_outcome`]). `false` when it was
/// claimed before.
pub async fn claim(conn: &mut Conn, nonce: &Nonce<'_>, outcome: Option<&str>) -> Result<bool, crate::storage::Error> {
    let claimed = sql::query(
        "INSERT INTO confirmation_nonces (nonce, workspace_id, user_id, tool, args_digest, outcome, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (nonce) DO NOTHING",
    )
    .bind(nonce.nonce)
    .bind(nonce.workspace_id)
    .bind(nonce.user_id)
    .bind(nonce.tool)
    .bind(nonce.args_digest)
    .bind(outcome)
    .bind(nonce.created_at)
    .bind(nonce.expires_at)
    .execute(conn)
    .await?;
    Ok(claimed == 1)
}

/// The stored outcome of a claimed nonce (`None` while it is still being carried out).
pub async fn outcome(conn: &mut Conn, nonce: &str) -> Result<Option<String>, crate::storage::Error> {
    let row =
        sql::query("SELECT outcome FROM confirmation_nonces WHERE nonce = $1").bind(nonce).fetch_one(conn).await?;
    row.try_get(0)
}

/// Stores the outcome of a claimed nonce, in the claim's transaction.
pub async fn store_outcome(conn: &mut Conn, nonce: &str, outcome: &str) -> Result<(), crate::storage::Error> {
    sql::query("UPDATE confirmation_nonces SET outcome = $1 WHERE nonce = $2")
        .bind(outcome)
        .bind(nonce)
        .execute(conn)
        .await
        .map(|_| ())
}
