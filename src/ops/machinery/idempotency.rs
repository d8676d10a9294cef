//! Idempotency keys (`X-Idempotency-Key`, alias `Idempotency-Key`, or a tool's
//! `idempotency_key`) on creates and actions: the same key with the same request
//! replays the stored response; with a different request it is a conflict. Keys live
//! 24 hours, per workspace, and mean the same on both doors: a request is fingerprinted
//! by its operation and the canonical JSON of its validated input, never by how its
//! body was written. Both doors run a keyed write through [`run`].
//!
//! Race-safe by construction: the key row is claimed inside the operation's own
//! transaction, before the operation runs. A concurrent request with the same key waits
//! on (PostgreSQL) or is serialised behind (SQLite) that row, then finds it and replays
//! the stored answer instead of running the operation a second time.

use crate::storage::{sql, Conn};
use aws_lc_rs::digest;
use serde::Serialize;
use serde_json::Value;

use crate::error::{ApiError, ErrorCode};
use crate::storage::identity::Membership;

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
enum Claim {
    /// The key is ours now: run the operation, then [`store`] its answer.
    Fresh,
    /// The same request already ran: answer this.
    Replay(Stored),
}

/// Fingerprint of a request: its operation (the `/v1` route it is the door of, e.g.
/// `/v1/payables` or `/v1/payables/{id}/settle`) and the canonical JSON of its input —
/// object keys sorted, no insignificant whitespace — so equal requests digest equally
/// whichever door they came through and however their body was spelled.
pub fn fingerprint(operation: &str, input: &Value) -> String {
    let mut ctx = digest::Context::new(&digest::SHA256);
    ctx.update(operation.as_bytes());
    ctx.update(b"\n");
    ctx.update(input.to_string().as_bytes());
    ctx.finish().as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// A write under an idempotency key (or none), as a door names it.
pub struct Keyed<'a> {
    /// The key the request sent, if any.
    pub key: Option<&'a str>,
    /// The `/v1` route the write is the door of.
    pub operation: &'a str,
    /// The validated request as JSON: what the fingerprint covers.
    pub input: &'a Value,
    /// The status of a fresh answer (201 for creates, 200 for actions).
    pub status: u16,
}

/// The answer of a keyed write: fresh, or a replay of the first one.
#[derive(Debug)]
pub struct Answer {
    pub stored: Stored,
    pub replayed: bool,
}

/// Runs `op` once per key, inside the caller's transaction `conn`: with a key, claims it
/// first (a replay answers the stored result without running `op`; a different request
/// under the same key is 409 `conflict` with `details.reason` `idempotency_key_reused`),
/// then stores the fresh answer in the same transaction, which the caller commits.
/// Without a key, `op` simply runs.
pub async fn run<T: Serialize>(
    conn: &mut Conn,
    ws: &Membership,
    user_id: &str,
    keyed: Keyed<'_>,
    op: impl AsyncFnOnce(&mut Conn) -> Result<T, ApiError>,
) -> Result<Answer, ApiError> {
    if let Some(key) = keyed.key {
        check_key(key)?;
        let digest = fingerprint(keyed.operation, keyed.input);
        if let Claim::Replay(stored) = claim(conn, &ws.workspace_id, user_id, key, keyed.operation, &digest).await? {
            return Ok(Answer { stored, replayed: true });
        }
    }
    let body = serde_json::to_value(op(&mut *conn).await?).map_err(|_| ApiError::internal())?;
    let stored = Stored { status: keyed.status, body };
    if let Some(key) = keyed.key {
        store(conn, &ws.workspace_id, key, &stored).await?;
    }
    Ok(Answer { stored, replayed: false })
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
async fn claim(
    conn: &mut Conn,
    workspace_id: &str,
    user_id: &str,
    key: &str,
    route: &str,
    request_digest: &str,
) -> Result<Claim, ApiError> {
    let now = crate::clock::now_unix();
    // An expired key is free again.
    sql::query("DELETE FROM idempotency_keys WHERE workspace_id = $1 AND idem_key = $2 AND created_at < $3")
        .bind(workspace_id)
        .bind(key)
        .bind(now - KEY_TTL_SECONDS)
        .execute(&mut *conn)
        .await?;
    let inserted = sql::query(
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
    .await?;
    if inserted == 1 {
        return Ok(Claim::Fresh);
    }
    let row = sql::query("SELECT request_digest, CAST(status_code AS BIGINT), response_body FROM idempotency_keys WHERE workspace_id = $1 AND idem_key = $2")
        .bind(workspace_id)
        .bind(key)
        .fetch_one(&mut *conn)
        .await
        ?;
    let stored_digest: String = row.try_get(0)?;
    if stored_digest != request_digest {
        return Err(ApiError::new(ErrorCode::Conflict, "X-Idempotency-Key reused with a different request")
            .with_details(serde_json::json!({ "reason": "idempotency_key_reused" })));
    }
    let status: Option<i64> = row.try_get(1)?;
    let body: Option<String> = row.try_get(2)?;
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
async fn store(conn: &mut Conn, workspace_id: &str, key: &str, answer: &Stored) -> Result<(), ApiError> {
    sql::query(
        "UPDATE idempotency_keys SET status_code = $1, response_body = $2 WHERE workspace_id = $3 AND idem_key = $4",
    )
    .bind(answer.status as i32)
    .bind(answer.body.to_string())
    .bind(workspace_id)
    .bind(key)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_is_of_the_parsed_request_not_its_spelling() {
        let compact: Value = serde_json::from_str(r#"{"name":"Acme","amount":"10.00"}"#).unwrap();
        let spaced: Value = serde_json::from_str("{ \"amount\" : \"10.00\",\n  \"name\": \"Acme\" }").unwrap();
        assert_eq!(fingerprint("/v1/companies", &compact), fingerprint("/v1/companies", &spaced));
        assert_ne!(fingerprint("/v1/companies", &compact), fingerprint("/v1/people", &compact));
        let other: Value = serde_json::from_str(r#"{"name":"Acme","amount":"10.01"}"#).unwrap();
        assert_ne!(fingerprint("/v1/companies", &compact), fingerprint("/v1/companies", &other));
    }
}
