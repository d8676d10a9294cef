//! The append-only audit log: who did what, through which channel, to what, and how
//! it ended.

use super::Db;
use crate::domain::channel::Channel;
use crate::storage::sql;

#[derive(Debug, Clone, Default)]
pub struct AuditEvent<'a> {
    pub workspace_id: Option<&'a str>,
    pub user_id: Option<&'a str>,
    pub action: &'a str,
    pub target_type: Option<&'a str>,
    pub target_id: Option<&'a str>,
    pub outcome: &'a str,
    pub details: Option<String>,
    /// The OAuth client the write was made with (its token's `client_id`).
    pub client_id: Option<&'a str>,
}

/// Appends one event, inside the caller's transaction when given one.
pub async fn append<'c>(
    on: impl Into<sql::Target<'c>>,
    channel: Channel,
    event: &AuditEvent<'_>,
) -> Result<(), crate::storage::Error> {
    sql::query(
        "INSERT INTO audit_events
           (id, occurred_at, workspace_id, user_id, channel, action, target_type, target_id, outcome, details, client_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(uuid::Uuid::new_v4().to_string())
    .bind(crate::clock::now_rfc3339())
    .bind(event.workspace_id)
    .bind(event.user_id)
    .bind(channel.as_str())
    .bind(event.action)
    .bind(event.target_type)
    .bind(event.target_id)
    .bind(event.outcome)
    .bind(event.details.as_deref())
    .bind(event.client_id)
    .execute(on)
    .await?;
    Ok(())
}

/// Convenience for callers outside a transaction.
pub async fn record(db: &Db, channel: Channel, event: &AuditEvent<'_>) -> Result<(), crate::storage::Error> {
    append(db, channel, event).await
}
