//! Links between an attachment and a payable, a receivable or a transaction of the
//! same workspace.

use crate::ops::stamps::Stamp;
use crate::storage::{sql, Conn};
use serde_json::json;

use super::{audit_event, find, Link, LinkRequest, LinkType};
use crate::domain::roles::{Access, Resource};
use crate::error::{ApiError, ErrorCode};
use crate::ops::common::body_id;
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
