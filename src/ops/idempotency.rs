//! Idempotency keys (`X-Idempotency-Key`, alias `Idempotency-Key`) on creates and
//! actions: the same key with the same request replays the stored response; with a
//! different request it is a conflict. Keys live 24 hours, per workspace.
//!
//! Race-safe by construction: the key row is claimed inside the operation's own
//! transaction, before the operation runs. A concurrent request with the same key waits
//! on (PostgreSQL) or is serialised behind (SQLite) that row, then finds it and replays
//! the stored answer instead of running the operation a second time.

use aws_lc_rs::digest;
use serde_json::Value;
use sqlx::{AnyConnection, Row};

use crate::error::{ApiError, ErrorCode};

/// Keys are kept this long.
pub const KEY_TTL_SECONDS: i64 = 24 * 3600;
const MAX_KEY_LENGTH: usize = 255;

/// A stored answer.
#[derive(Debug, Clone)]
pub struct Stored {
    pub status: u16,
    pub body: Value,
}

/// What claiming a key found.
#[derive(Debug)]
pub enum Claim {
    /// The key is ours now: run the operation, then [`store`] its answer.
    Fresh,
    /// The same request already ran: answer this.
    Replay(Stored),
}

/// Fingerprint of a request: method, path and raw body.
pub fn digest_request(method: &str, path: &str, body: &[u8]) -> String {
    let mut ctx = digest::Context::new(&digest::SHA256);
    ctx.update(method.as_bytes());
    ctx.update(b" ");
    ctx.update(path.as_bytes());
    ctx.update(b"\n");
    ctx.update(body);
    ctx.finish().as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// Checks a key's form (1–255 visible characters).
pub fn check_key(key: &str) -> Result<(), ApiError> {
    if key.is_empty() || key.len() > MAX_KEY_LENGTH || !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ApiError::bad_request("The idempotency key must be 1 to 255 visible ASCII characters")
            .with_details(serde_json::json!({"field": "X-Idempotency-Key", "reason": "invalid_value"})));
    }
    Ok(())
}

/// Claims `key` for this request inside the caller's transaction.
pub async fn claim(conn: &mut AnyConnection, workspace_id: &str, user_id: &str, key: &str, route: &str, request_digest: &str) -> Result<Claim, ApiError> {
    let now = crate::clock::now_unix();
    // An expired key is free again.
    sqlx::query("DELETE FROM idempotency_keys WHERE workspace_id = $1 AND idem_key = $2 AND created_at < $3")
        .bind(workspace_id)
        .bind(key)
        .bind(now - KEY_TTL_SECONDS)
        .execute(&mut *conn)
        .await
        .map_err(crate::storage::db_error)?;
    let inserted = sqlx::query(
        "INSERT INTO idempotency_keys (workspace_id, user_id, idem_key, route, request_digest, created_at)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (workspace_id, idem_key) DO NOTHING",
    )
    .bind(workspace_id)
    .bind(user_id)
    .bind(key)
    .bind(route)
    .bind(request_digest)
    .bind(now)
    .execute(&mut *conn)
    .await
    .map_err(crate::storage::db_error)?
    .rows_affected();
    if inserted == 1 {
        return Ok(Claim::Fresh);
    }
    let row = sqlx::query("SELECT request_digest, CAST(status_code AS BIGINT), response_body FROM idempotency_keys WHERE workspace_id = $1 AND idem_key = $2")
        .bind(workspace_id)
        .bind(key)
        .fetch_one(&mut *conn)
        .await
        .map_err(crate::storage::db_error)?;
    let stored_digest: String = row.try_get(0).map_err(crate::storage::db_error)?;
    if stored_digest != request_digest {
        return Err(ApiError::new(ErrorCode::IdempotencyKeyReused, "X-Idempotency-Key reused with a different request"));
    }
    let status: Option<i64> = row.try_get(1).map_err(crate::storage::db_error)?;
    let body: Option<String> = row.try_get(2).map_err(crate::storage::db_error)?;
    match (status, body) {
        (Some(status), Some(body)) => Ok(Claim::Replay(Stored {
            status: status as u16,
            body: serde_json::from_str(&body).map_err(|_| ApiError::internal())?,
        })),
        // Claimed by a request that has not finished (only possible across databases
        // without row locking): the caller retries.
        _ => Err(ApiError::new(ErrorCode::Conflict, "A request with this idempotency key is still in progress")),
    }
}

/// Stores the answer of a fresh claim, in the same transaction as the operation.
pub async fn store(conn: &mut AnyConnection, workspace_id: &str, key: &str, answer: &Stored) -> Result<(), ApiError> {
    sqlx::query("UPDATE idempotency_keys SET status_code = $1, response_body = $2 WHERE workspace_id = $3 AND idem_key = $4")
        .bind(answer.status as i32)
        .bind(answer.body.to_string())
        .bind(workspace_id)
        .bind(key)
        .execute(&mut *conn)
        .await
        .map_err(crate::storage::db_error)?;
    Ok(())
}
