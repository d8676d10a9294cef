//! Uploading an attachment: every check first, then the bytes where new uploads go,
//! then the row — in that order, so a failure never leaves a row without its bytes.

use crate::ops::machinery::stamps::Stamp;
use crate::storage::{sql, Conn};
use bytes::Bytes;

use super::files::{check_type, clean_file_name, file_problem, sha256_hex, too_large};
use super::{audit_event, find, Attachment, Upload, MAX_FILE_BYTES, MAX_NAME_CHARS};
use crate::domain::roles::{Access, Resource};
use crate::error::ApiError;
use crate::ops::machinery::common::unprocessable;
use crate::ops::OpContext;
use crate::storage::blob::Placement;
use crate::storage::identity::Membership;

/// An upload that passed every check, with the id it will be stored under.
#[derive(Debug, Clone)]
pub struct CheckedUpload {
    id: String,
    file_name: String,
    title: Option<String>,
    mime_type: String,
    content: Bytes,
}

/// Stores an uploaded file: [`check_upload`], [`put_bytes`], then [`record_upload`].
/// Run it in a transaction (the row and its audit event); a caller that can should
/// put the bytes before opening the transaction, as the REST route does.
pub async fn upload(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    input: Upload,
) -> Result<Attachment, ApiError> {
    let checked = check_upload(ctx, ws, input)?;
    let placement = put_bytes(ctx, ws, &checked).await?;
    record_upload(ctx, conn, ws, checked, placement).await
}

/// Every check of an upload, before anything is written: permission, names, size, type.
pub fn check_upload(ctx: &OpContext<'_>, ws: &Membership, input: Upload) -> Result<CheckedUpload, ApiError> {
    ctx.authorize(ws, Resource::Attachments, Access::Write)?;
    let file_name = clean_file_name(&input.file_name)?;
    let title = match input.title.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(t) if t.chars().count() > MAX_NAME_CHARS => {
            return Err(unprocessable("title", "too_long", "The title is longer than 255 characters"))
        }
        Some(t) => Some(t.to_string()),
    };
    if input.content.len() > MAX_FILE_BYTES {
        return Err(too_large());
    }
    if input.content.is_empty() {
        return Err(file_problem("empty_file", "The file is empty"));
    }
    let (_, mime_type) = check_type(&file_name, &input.content_type, &input.content)?;
    Ok(CheckedUpload { id: uuid::Uuid::new_v4().to_string(), file_name, title, mime_type, content: input.content })
}

/// Puts the bytes of a checked upload where new uploads go: nothing to do for the
/// database (the row takes them), an object for S3. 503 when the store fails, and then
/// nothing at all has been written.
pub async fn put_bytes(ctx: &OpContext<'_>, ws: &Membership, checked: &CheckedUpload) -> Result<Placement, ApiError> {
    ctx.state.blobs.put(&ws.workspace_id, &checked.id, &checked.content, &checked.mime_type).await
}

/// Writes the row of an upload whose bytes are at `placement`, and its audit event.
/// Run it in a transaction and commit after it.
///
/// If this fails the object put before is removed (best effort), since no row can name
/// it. If the commit after it fails, the object stays: a commit's outcome can be unknown
/// to us, and removing the bytes of a row that did commit would lose the file; an
/// orphan object is the worst case.
pub async fn record_upload(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    checked: CheckedUpload,
    placement: Placement,
) -> Result<Attachment, ApiError> {
    let outcome = insert_row(ctx, conn, ws, &checked, &placement).await;
    if let (Err(_), Placement::Object(location)) = (&outcome, &placement) {
        if ctx.state.blobs.remove(location).await.is_err() {
            tracing::warn!(location = %location, "orphan attachment object left in the blob store");
        }
    }
    outcome
}

async fn insert_row(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    checked: &CheckedUpload,
    placement: &Placement,
) -> Result<Attachment, ApiError> {
    let CheckedUpload { id, file_name, title, mime_type, content } = checked;
    let (in_row, blob_key) = match placement {
        Placement::Row => (Some(&content[..]), None),
        Placement::Object(location) => (None, Some(location.as_str())),
    };
    let uploaded_by = format!("{}:{}", ctx.channel.as_str(), ctx.identity.user_id);
    sql::query(
        "INSERT INTO attachments (id, workspace_id, file_name, title, mime_type, file_size, sha256, content, blob_key,
                                  uploaded_by, uploaded_at, created_via, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
    )
    .bind(id)
    .bind(&ws.workspace_id)
    .bind(file_name)
    .bind(title.as_deref())
    .bind(mime_type)
    .bind(content.len() as i64)
    .bind(sha256_hex(content))
    .bind(in_row)
    .bind(blob_key)
    .bind(&uploaded_by)
    .stamp_now(ctx)
    .execute(&mut *conn)
    .await?;
    audit_event(ctx, conn, ws, "attachments.upload", id, None).await?;
    find(ctx, conn, ws, id).await
}
