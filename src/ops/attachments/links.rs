//! Links between an attachment and a payable, a receivable or a transaction of the
//! same workspace.

use crate::ops::machinery::stamps::Stamp;
use crate::storage::{sql, Conn};
use serde_json::json;

use super::{audit_event, find, Link, LinkRequest, LinkType};
use crate::domain::roles::{Access, Resource};
use crate::error::{ApiError, ErrorCode};
use crate::ops::machinery::common::body_id;
use crate::ops::OpContext;
use crate::storage::db_error;
use crate::storage::identity::Membership;

/// The link target must be a record of the workspace (another workspace's is not found).
async fn check_target(
    conn: &mut Conn,
    ws: &Membership,
    target_type: LinkType,
    target_id: &str,
) -> Result<(), ApiError> {
    let query = match target_type {
        LinkType::Payable | LinkType::Receivable => {
            sql::query("SELECT 1 FROM billings WHERE workspace_id = $1 AND id = $2 AND kind = $3")
                .bind(&ws.workspace_id)
                .bind(target_id)
                .bind(target_type.as_str())
        }
        LinkType::Transaction => sql::query("SELECT 1 FROM financial_transactions WHERE workspace_id = $1 AND id = $2")
            .bind(&ws.workspace_id)
            .bind(target_id),
    };
    match query.fetch_optional(&mut *conn).await? {
        Some(_) => Ok(()),
        None => Err(ApiError::not_found(target_type.noun())),
    }
}

/// Links an attachment to a payable, receivable or transaction of the workspace.
pub async fn link(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
    input: LinkRequest,
) -> Result<Link, ApiError> {
    ctx.authorize(ws, Resource::Attachments, Access::Write)?;
    let attachment = find(ctx, conn, ws, id).await?;
    let target_id = body_id("id", &input.id)?;
    check_target(conn, ws, input.target_type, &target_id).await?;
    let inserted = sql::query(
        "INSERT INTO attachment_links (attachment_id, workspace_id, target_type, target_id, created_at, created_via, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (attachment_id, target_type, target_id) DO NOTHING",
    )
    .bind(&attachment.id)
    .bind(&ws.workspace_id)
    .bind(input.target_type.as_str())
    .bind(&target_id)
    .stamp_now(ctx)
    .execute(&mut *conn)
    .await
    .map_err(|e| match e {
        // Deleted meanwhile: the foreign key keeps a link from pointing at nothing.
        db if db.is_foreign_key_violation() => ApiError::not_found("Attachment"),
        e => db_error(e),
    })?;
    if inserted == 0 {
        return Err(ApiError::new(ErrorCode::Conflict, "The attachment is already linked to this record")
            .with_details(json!({ "field": "id", "reason": "already_linked" })));
    }
    let details = json!({ "parent_type": input.target_type.as_str(), "parent_id": target_id });
    audit_event(ctx, conn, ws, "attachments.link", &attachment.id, Some(details)).await?;
    Ok(Link { attachment_id: attachment.id, parent_type: input.target_type, parent_id: target_id })
}

/// Removes a link; not linked is not found.
pub async fn unlink(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
    input: LinkRequest,
) -> Result<(), ApiError> {
    ctx.authorize(ws, Resource::Attachments, Access::Write)?;
    let attachment = find(ctx, conn, ws, id).await?;
    let target_id = body_id("id", &input.id)?;
    let removed = sql::query("DELETE FROM attachment_links WHERE workspace_id = $1 AND attachment_id = $2 AND target_type = $3 AND target_id = $4")
        .bind(&ws.workspace_id)
        .bind(&attachment.id)
        .bind(input.target_type.as_str())
        .bind(&target_id)
        .execute(&mut *conn)
        .await
        ?;
    if removed == 0 {
        return Err(ApiError::not_found("Link"));
    }
    let details = json!({ "parent_type": input.target_type.as_str(), "parent_id": target_id });
    audit_event(ctx, conn, ws, "attachments.unlink", &attachment.id, Some(details)).await
}

/// One of a record's files as the record's answer shows it (`attachments`); a list keeps
/// only their count (`attachments_count`).
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Attached {
    pub id: String,
    pub file_name: String,
    pub mime_type: String,
    /// Size in bytes.
    pub file_size: i64,
}

/// The files linked to the record `target_id` of `target_type` (`payable`, `receivable`,
/// `transaction`), in the order they were linked.
pub async fn attached(
    conn: &mut Conn,
    ws: &Membership,
    target_type: &str,
    target_id: &str,
) -> Result<Vec<Attached>, ApiError> {
    let rows = sql::query(
        "SELECT a.id, a.file_name, a.mime_type, a.file_size FROM attachment_links l
           JOIN attachments a ON a.workspace_id = l.workspace_id AND a.id = l.attachment_id
          WHERE l.workspace_id = $1 AND l.target_type = $2 AND l.target_id = $3 ORDER BY l.created_at, a.id",
    )
    .bind(&ws.workspace_id)
    .bind(target_type)
    .bind(target_id)
    .map_all(&mut *conn, |row| {
        Ok(Attached {
            id: row.try_get(0)?,
            file_name: row.try_get(1)?,
            mime_type: row.try_get(2)?,
            file_size: row.try_get(3)?,
        })
    })
    .await?;
    Ok(rows)
}
