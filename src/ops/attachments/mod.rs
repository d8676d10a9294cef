//! Attachments (`/v1/attachments`, scope `finance.attachments`): uploaded files and
//! their links to payables, receivables and transactions.
//!
//! Rules: an upload is one file of at most 10 MB (10,485,760 bytes) of a supported type
//! (pdf, png, jpeg, xml, ofx, csv, xlsx). The type is decided by the declared content
//! type and the file extension, which must agree, and the first bytes must match it
//! (`type_mismatch` otherwise). The row keeps the file's SHA-256; the bytes live in the
//! row or in the blob store (`KFIN_BLOB_URL`, see [`crate::storage::blob`]), and the
//! row says which.
//!
//! Write order with a blob store never loses data: an upload puts the object first and
//! only then writes the row, so a failure in between (the store, the insert, the commit)
//! leaves at worst an object that no row names, never a row without its bytes. A delete
//! queues the object's removal in its own transaction (`blob_deletions`), and the object
//! is removed only after that transaction has committed.
//! A link names a payable, a receivable or a transaction of the same workspace; linking
//! twice is a conflict. An attachment that is still linked cannot be deleted (`in_use`,
//! with the usage per kind). Uploads are not idempotent.
//!
//! The file rules live in `files`, the upload's steps in `upload`, the links in `links`;
//! here are the records, their reads, downloads and deletes.

mod files;
mod links;
mod upload;

pub use links::{attached, Attached};

use crate::storage::{sql, Conn, Row};
use bytes::Bytes;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::machinery::common::path_id;
use super::machinery::list::{invalid_filter_value, list_spec, Bind, Kind, ListRequest, ListSpec, Op};
use super::machinery::openapi::{page_of, Operation, CUSTOM_CONTENT};
use super::machinery::page;
use super::machinery::validate::schema_of;
use super::{OpContext, Page};
use crate::domain::dates::Timestamp;
use crate::domain::roles::{Access, Resource};
use crate::error::{ApiError, ErrorCode};
use crate::storage::db_error;
use crate::storage::identity::Membership;
pub use files::{media_type_of, too_large, FileType};
use files::{sha256_hex, XLSX_MIME};
pub use links::{link, unlink};
pub use upload::{check_upload, put_bytes, record_upload, upload, CheckedUpload};

/// The largest file an upload may carry: 10 MB.
pub const MAX_FILE_BYTES: usize = 10_485_760;

/// Longest file name and title, in characters.
const MAX_NAME_CHARS: usize = 255;

/// The kinds of record an attachment links to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LinkType {
    Payable,
    Receivable,
    Transaction,
}

impl LinkType {
    pub fn as_str(self) -> &'static str {
        match self {
            LinkType::Payable => "payable",
            LinkType::Receivable => "receivable",
            LinkType::Transaction => "transaction",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            LinkType::Payable => "Payable",
            LinkType::Receivable => "Receivable",
            LinkType::Transaction => "Transaction",
        }
    }
}

/// `POST` and `DELETE /v1/attachments/{id}/links`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkRequest {
    /// What the attachment is linked to.
    #[serde(rename = "type")]
    pub target_type: LinkType,
    /// The record's id.
    #[schemars(length(min = 1, max = 64))]
    pub id: String,
}

/// A link as `POST /v1/attachments/{id}/links` returns it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Link {
    pub attachment_id: String,
    pub parent_type: LinkType,
    pub parent_id: String,
}

/// An attachment as `/v1` returns it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Attachment {
    pub id: String,
    pub file_name: String,
    pub title: Option<String>,
    pub mime_type: String,
    /// Size in bytes.
    pub file_size: i64,
    /// `api:<user id>` or `mcp:<user id>`, by the channel of the upload.
    pub uploaded_by: String,
    pub uploaded_at: Timestamp,
    /// Absolute URL of the bytes (`GET` with an API token).
    pub download_url: String,
    pub linked_payables_count: i64,
    pub linked_receivables_count: i64,
    pub linked_transactions_count: i64,
}

/// The schema of a get's answer `T` with its record's files (`attachments`, this
/// product's): a get answers them, the other answers and the lists only their count.
pub fn with_files<T: JsonSchema>() -> Value {
    let mut schema = schema_of::<T>();
    let mut files = schema_of::<Vec<Attached>>();
    if let Some(files) = files.as_object_mut() {
        files.remove("$schema");
        files.remove("title");
        files.insert("x-kobana-extension".into(), "attachments".into());
    }
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        properties.insert("attachments".into(), files);
    }
    schema
}

/// A parsed upload: the `file` part (name, declared type, bytes) and the `title` part.
#[derive(Debug, Clone)]
pub struct Upload {
    pub file_name: String,
    pub content_type: String,
    pub title: Option<String>,
    pub content: Bytes,
}

/// The bytes of an attachment and what a download needs to describe them.
#[derive(Debug, Clone)]
pub struct Download {
    pub file_name: String,
    pub mime_type: String,
    pub content: Vec<u8>,
}

/// The media types an upload may declare.
pub const MEDIA_TYPES: [&str; 8] = [
    "application/pdf",
    "image/png",
    "image/jpeg",
    "application/xml",
    "text/xml",
    "application/x-ofx",
    "text/csv",
    XLSX_MIME,
];

fn upload_body() -> Value {
    json!({ CUSTOM_CONTENT: { "multipart/form-data": {
        "schema": {
            "type": "object",
            "properties": {
                "file": {
                    "type": "string",
                    "contentMediaType": "application/octet-stream",
                    "description": "The file (at most 10,485,760 bytes), with a file name whose extension agrees with its content type: pdf, png, jpg/jpeg, xml, ofx, csv or xlsx.",
                },
                "title": { "type": "string", "maxLength": MAX_NAME_CHARS },
            },
            "required": ["file"],
            "additionalProperties": false,
        },
        "encoding": { "file": { "contentType": MEDIA_TYPES.join(", ") } },
    }}})
}

fn download_body() -> Value {
    let binary = json!({ "schema": { "type": "string", "contentMediaType": "application/octet-stream" } });
    let mut content = serde_json::Map::new();
    for mime in MEDIA_TYPES {
        content.insert(mime.to_string(), binary.clone());
    }
    json!({ CUSTOM_CONTENT: content })
}

/// The `/v1/attachments` operations in the OpenAPI document.
pub const DOCS: &[Operation] = &[
    Operation {
        method: "get",
        path: "/v1/attachments",
        id: "attachments_list",
        summary: "List attachments",
        scope: "finance.attachments",
        request: None,
        success: 200,
        response: Some(|| page_of(schema_of::<Attachment>())),
        list: Some(&LIST),
        id_filters: &LINKED_TO,
    },
    Operation {
        method: "post",
        path: "/v1/attachments",
        id: "attachments_upload",
        summary: "Upload an attachment (multipart/form-data; not idempotent)",
        scope: "finance.attachments.write",
        request: Some(upload_body),
        success: 201,
        response: Some(schema_of::<Attachment>),
        list: None,
        id_filters: &[],
    },
    Operation {
        method: "get",
        path: "/v1/attachments/{id}",
        id: "attachments_get",
        summary: "Get an attachment",
        scope: "finance.attachments",
        request: None,
        success: 200,
        response: Some(schema_of::<Attachment>),
        list: None,
        id_filters: &[],
    },
    Operation {
        method: "delete",
        path: "/v1/attachments/{id}",
        id: "attachments_delete",
        summary: "Delete an attachment that nothing links to",
        scope: "finance.attachments.write",
        request: None,
        success: 204,
        response: None,
        list: None,
        id_filters: &[],
    },
    Operation {
        method: "get",
        path: "/v1/attachments/{id}/download",
        id: "attachments_download",
        summary: "Download the bytes of an attachment",
        scope: "finance.attachments",
        request: None,
        success: 200,
        response: Some(download_body),
        list: None,
        id_filters: &[],
    },
    Operation {
        method: "post",
        path: "/v1/attachments/{id}/links",
        id: "attachments_link",
        summary: "Link an attachment to a payable, receivable or transaction",
        scope: "finance.attachments.write",
        request: Some(schema_of::<LinkRequest>),
        success: 201,
        response: Some(schema_of::<Link>),
        list: None,
        id_filters: &[],
    },
    Operation {
        method: "delete",
        path: "/v1/attachments/{id}/links",
        id: "attachments_unlink",
        summary: "Remove a link of an attachment",
        scope: "finance.attachments.write",
        request: Some(schema_of::<LinkRequest>),
        success: 204,
        response: None,
        list: None,
        id_filters: &[],
    },
];

pub static LIST: ListSpec = list_spec!(attachments;
    filters: mime_type: Text, file_name: Text, uploaded_by: Text, uploaded_at: Timestamp;
    sorts: uploaded_at, file_name, file_size;
    default: uploaded_at desc);

/// The filters on links, by name: a record's documents (both doors take them).
pub const LINKED_TO: [&str; 3] = [LINK_FILTERS[0].0, LINK_FILTERS[1].0, LINK_FILTERS[2].0];

/// Filters on links, applied as a condition on `attachment_links` (name, link type).
const LINK_FILTERS: [(&str, LinkType); 3] = [
    ("linked_to_payable_id", LinkType::Payable),
    ("linked_to_receivable_id", LinkType::Receivable),
    ("linked_to_transaction_id", LinkType::Transaction),
];

const SELECT: &str = "SELECT attachments.id, attachments.file_name, attachments.title, attachments.mime_type, \
    attachments.file_size, attachments.uploaded_by, attachments.uploaded_at, \
    (SELECT COUNT(*) FROM attachment_links l WHERE l.attachment_id = attachments.id AND l.target_type = 'payable') AS linked_payables_count, \
    (SELECT COUNT(*) FROM attachment_links l WHERE l.attachment_id = attachments.id AND l.target_type = 'receivable') AS linked_receivables_count, \
    (SELECT COUNT(*) FROM attachment_links l WHERE l.attachment_id = attachments.id AND l.target_type = 'transaction') AS linked_transactions_count \
    FROM attachments";

fn download_url(base: &str, id: &str) -> String {
    format!("{}/v1/attachments/{id}/download", base.trim_end_matches('/'))
}

fn from_row(row: &Row<'_>, base: &str) -> Result<Attachment, crate::storage::Error> {
    let id: String = row.try_get("id")?;
    Ok(Attachment {
        download_url: download_url(base, &id),
        id,
        file_name: row.try_get("file_name")?,
        title: row.try_get("title")?,
        mime_type: row.try_get("mime_type")?,
        file_size: row.try_get("file_size")?,
        uploaded_by: row.try_get("uploaded_by")?,
        uploaded_at: row.try_get("uploaded_at")?,
        linked_payables_count: row.try_get("linked_payables_count")?,
        linked_receivables_count: row.try_get("linked_receivables_count")?,
        linked_transactions_count: row.try_get("linked_transactions_count")?,
    })
}

fn bad_filter(message: String, field: &str, reason: &str) -> ApiError {
    ApiError::bad_request(message).with_details(json!({ "field": field, "reason": reason }))
}

/// A link condition of a list: attachments linked to any of these records of this kind.
type LinkFilter = (LinkType, Vec<String>);

/// Takes the link filters out of `request`: what remains goes through the shared list
/// grammar; each link filter becomes `(link type, ids)` (equality or `[in]`, UUIDs).
fn split_link_filters(request: &ListRequest) -> Result<(ListRequest, Vec<LinkFilter>), ApiError> {
    let mut rest = request.clone();
    rest.filters.clear();
    let mut links = Vec::new();
    for (name, op, values) in &request.filters {
        let Some((_, link_type)) = LINK_FILTERS.iter().find(|(n, _)| n == name) else {
            rest.filters.push((name.clone(), *op, values.clone()));
            continue;
        };
        if !matches!(op, Op::Eq | Op::In) {
            return Err(bad_filter(format!("Filter {name} does not take ranges"), name, "unknown_operator"));
        }
        if values.is_empty() || values.len() > 100 {
            return Err(bad_filter(format!("Filter {name} takes 1 to 100 values"), name, "invalid_value"));
        }
        let ids = values
            .iter()
            .map(|v| uuid::Uuid::parse_str(v).map(|u| u.to_string()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| invalid_filter_value(name, Kind::Uuid))?;
        links.push((*link_type, ids));
    }
    Ok((rest, links))
}

pub async fn list(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    request: &ListRequest,
) -> Result<Page<Attachment>, ApiError> {
    ctx.authorize(ws, Resource::Attachments, Access::Read)?;
    let (request, links) = split_link_filters(request)?;
    let keys = ctx.state.keys.current().await?;
    let mut compiled = page::compile(conn, ws, &LIST, &request, &keys.state).await?;
    // The link conditions go last in the WHERE clause, so their placeholders follow
    // the ones the shared compiler numbered.
    let mut extra = String::new();
    for (link_type, ids) in links {
        let mut placeholders = Vec::with_capacity(ids.len());
        for id in ids {
            compiled.binds.push(Bind::Text(id));
            placeholders.push(format!("${}", compiled.binds.len()));
        }
        extra.push_str(&format!(
            " AND EXISTS (SELECT 1 FROM attachment_links f WHERE f.attachment_id = attachments.id \
               AND f.workspace_id = attachments.workspace_id AND f.target_type = '{}' AND f.target_id IN ({}))",
            link_type.as_str(),
            placeholders.join(", ")
        ));
    }
    let at = compiled.sql.find(" ORDER BY ").ok_or_else(ApiError::internal)?;
    let sql = format!("{SELECT} {}{extra}{}", &compiled.sql[..at], &compiled.sql[at..]);
    let base = &ctx.state.config.api_base_url;
    page::fetch(conn, sql, &compiled, &keys.state, |r| from_row(r, base)).await
}

async fn find(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<Attachment, ApiError> {
    let id = path_id(id, "Attachment")?;
    let base = &ctx.state.config.api_base_url;
    sql::query(format!("{SELECT} WHERE attachments.workspace_id = $1 AND attachments.id = $2"))
        .bind(&ws.workspace_id)
        .bind(&id)
        .map_optional(&mut *conn, |row| from_row(row, base))
        .await?
        .ok_or_else(|| ApiError::not_found("Attachment"))
}

pub async fn get(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<Attachment, ApiError> {
    ctx.authorize(ws, Resource::Attachments, Access::Read)?;
    find(ctx, conn, ws, id).await
}

/// Where an attachment's bytes are, as its row says.
#[derive(Debug, Clone)]
pub struct Located {
    pub file_name: String,
    pub mime_type: String,
    sha256: String,
    bytes: Stored,
}

#[derive(Debug, Clone)]
enum Stored {
    /// In the row.
    Row(Vec<u8>),
    /// An object in the blob store, at this location.
    Object(String),
}

/// The first half of a download: the row, read on `conn`. The bytes are read by
/// [`fetch`], which needs no connection.
pub async fn locate(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<Located, ApiError> {
    ctx.authorize(ws, Resource::Attachments, Access::Read)?;
    let id = path_id(id, "Attachment")?;
    let row = sql::query(
        "SELECT file_name, mime_type, sha256, content, blob_key FROM attachments WHERE workspace_id = $1 AND id = $2",
    )
    .bind(&ws.workspace_id)
    .bind(&id)
    .fetch_optional(&mut *conn)
    .await?
    .ok_or_else(|| ApiError::not_found("Attachment"))?;
    let content: Option<Vec<u8>> = row.try_get("content")?;
    let blob_key: Option<String> = row.try_get("blob_key")?;
    let bytes = match (content, blob_key) {
        (Some(content), _) => Stored::Row(content),
        (None, Some(location)) => Stored::Object(location),
        (None, None) => {
            tracing::error!(attachment = %id, "attachment row has neither bytes nor a blob location");
            return Err(ApiError::internal());
        }
    };
    Ok(Located {
        file_name: row.try_get("file_name")?,
        mime_type: row.try_get("mime_type")?,
        sha256: row.try_get("sha256")?,
        bytes,
    })
}

/// The second half of a download: the bytes, from the row or from the store the row
/// names, checked against the SHA-256 recorded at upload.
pub async fn fetch(ctx: &OpContext<'_>, located: Located) -> Result<Download, ApiError> {
    let content = match located.bytes {
        Stored::Row(content) => content,
        Stored::Object(location) => ctx.state.blobs.get(&location).await?.to_vec(),
    };
    if sha256_hex(&content) != located.sha256 {
        tracing::error!(file_name = %located.file_name, "attachment bytes do not match their recorded SHA-256");
        return Err(ApiError::internal());
    }
    Ok(Download { file_name: located.file_name, mime_type: located.mime_type, content })
}

/// The bytes of an attachment (the download route streams them).
pub async fn download(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<Download, ApiError> {
    let located = locate(ctx, conn, ws, id).await?;
    fetch(ctx, located).await
}

async fn audit_event(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    action: &str,
    id: &str,
    details: Option<Value>,
) -> Result<(), ApiError> {
    super::machinery::common::audit_write_with(ctx, conn, ws, (action, "attachment", id), details).await
}

/// How many records of each kind an attachment is linked to.
async fn usage(conn: &mut Conn, ws: &Membership, id: &str) -> Result<Value, ApiError> {
    let rows = sql::query("SELECT target_type, COUNT(*) AS n FROM attachment_links WHERE workspace_id = $1 AND attachment_id = $2 GROUP BY target_type")
        .bind(&ws.workspace_id)
        .bind(id)
        .fetch_all(&mut *conn)
        .await
        ?;
    let mut usage = json!({ "payables": 0, "receivables": 0, "transactions": 0 });
    for row in rows {
        let kind: String = row.try_get("target_type")?;
        let n: i64 = row.try_get("n")?;
        usage[format!("{kind}s")] = json!(n);
    }
    Ok(usage)
}

fn in_use(usage: Value) -> ApiError {
    ApiError::new(ErrorCode::UnprocessableEntity, "The attachment is linked to records; unlink it first")
        .with_details(json!({ "reason": "in_use", "usage": usage }))
}

/// Deletes an attachment and its bytes; refused while anything links to it. Bytes in a
/// blob store are queued for removal in this transaction and removed after it commits
/// (by the application state, right after the delete, and by the periodic housekeeping).
pub async fn delete(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<(), ApiError> {
    ctx.authorize(ws, Resource::Attachments, Access::Delete)?;
    let current = find(ctx, conn, ws, id).await?;
    if current.linked_payables_count + current.linked_receivables_count + current.linked_transactions_count > 0 {
        return Err(in_use(usage(conn, ws, &current.id).await?));
    }
    // The condition repeats the check in the statement itself, and the foreign key of
    // the links backs it: a link added meanwhile makes this `in_use`, never a dangling link.
    let deleted = sql::query(
        "DELETE FROM attachments WHERE workspace_id = $1 AND id = $2
            AND NOT EXISTS (SELECT 1 FROM attachment_links WHERE attachment_id = $2)
         RETURNING blob_key",
    )
    .bind(&ws.workspace_id)
    .bind(&current.id)
    .fetch_optional(&mut *conn)
    .await;
    match deleted {
        Ok(Some(row)) => {
            if let Some(location) = row.try_get::<Option<String>, _>("blob_key")? {
                crate::storage::housekeeping::queue_blob_removal(conn, &location).await?;
            }
        }
        Ok(None) => return Err(in_use(usage(conn, ws, &current.id).await?)),
        Err(e) if e.is_foreign_key_violation() => {
            return Err(in_use(json!({ "payables": null, "receivables": null, "transactions": null })))
        }
        Err(e) => return Err(db_error(e)),
    }
    audit_event(ctx, conn, ws, "attachments.delete", &current.id, None).await
}
