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

use bytes::Bytes;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::common::{body_id, invalid, page, path_id};
use super::list::{bind_all, Bind, Field, Kind, ListRequest, ListSpec, Op};
use super::openapi::{page_of, Operation, CUSTOM_CONTENT};
use super::validate::schema_of;
use super::{OpContext, Page};
use crate::domain::roles::{Access, Resource};
use crate::error::{ApiError, ErrorCode};
use crate::storage::audit::{self, AuditEvent};
use crate::storage::blob::Placement;
use crate::storage::db_error;
use crate::storage::identity::Membership;

/// The largest file an upload may carry: 10 MB.
pub const MAX_FILE_BYTES: usize = 10_485_760;

/// Longest file name and title, in characters.
const MAX_NAME_CHARS: usize = 255;

/// The file types an attachment may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileType {
    Pdf,
    Png,
    Jpeg,
    Xml,
    Ofx,
    Csv,
    Xlsx,
}

const XLSX_MIME: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

impl FileType {
    /// From a file extension (lower-case, without the dot).
    fn from_extension(ext: &str) -> Option<FileType> {
        Some(match ext {
            "pdf" => FileType::Pdf,
            "png" => FileType::Png,
            "jpg" | "jpeg" => FileType::Jpeg,
            "xml" => FileType::Xml,
            "ofx" => FileType::Ofx,
            "csv" => FileType::Csv,
            "xlsx" => FileType::Xlsx,
            _ => return None,
        })
    }

    /// The media type files of this type are stored with.
    fn media_type(self) -> &'static str {
        match self {
            FileType::Pdf => "application/pdf",
            FileType::Png => "image/png",
            FileType::Jpeg => "image/jpeg",
            FileType::Xml => "application/xml",
            FileType::Ofx => "application/x-ofx",
            FileType::Csv => "text/csv",
            FileType::Xlsx => XLSX_MIME,
        }
    }

    /// From a media type's essence (lower-case, without parameters).
    fn from_mime(mime: &str) -> Option<FileType> {
        Some(match mime {
            "application/pdf" => FileType::Pdf,
            "image/png" => FileType::Png,
            "image/jpeg" => FileType::Jpeg,
            "application/xml" | "text/xml" => FileType::Xml,
            "application/x-ofx" => FileType::Ofx,
            "text/csv" => FileType::Csv,
            XLSX_MIME => FileType::Xlsx,
            _ => return None,
        })
    }

    /// Whether `content` starts the way a file of this type does.
    ///
    /// Binary types are recognised by their signature (an XLSX workbook is a ZIP
    /// archive). XML must start with `<` after an optional UTF-8 byte order mark and
    /// white space. XML, OFX and CSV must be text: UTF-8, or a single-byte Latin-1 /
    /// Windows-1252 encoding as Brazilian banks still produce; NUL and the other control
    /// bytes (except tab, line feed and carriage return) are refused.
    fn matches(self, content: &[u8]) -> bool {
        match self {
            FileType::Pdf => content.starts_with(b"%PDF-"),
            FileType::Png => content.starts_with(b"\x89PNG\r\n\x1a\n"),
            FileType::Jpeg => content.starts_with(b"\xFF\xD8\xFF"),
            FileType::Xlsx => content.starts_with(b"PK\x03\x04"),
            FileType::Xml => {
                let text = content.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(content);
                let first = text.iter().find(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'));
                first == Some(&b'<') && is_text(content)
            }
            FileType::Ofx | FileType::Csv => is_text(content),
        }
    }
}

/// Text in UTF-8 or a single-byte Latin encoding: no control bytes but tab, LF and CR.
fn is_text(content: &[u8]) -> bool {
    content.iter().all(|&b| (b >= 0x20 && b != 0x7F) || matches!(b, b'\t' | b'\n' | b'\r'))
}

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
    pub uploaded_at: String,
    /// Absolute URL of the bytes (`GET` with an API token).
    pub download_url: String,
    pub linked_payables_count: i64,
    pub linked_receivables_count: i64,
    pub linked_transactions_count: i64,
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
pub const MEDIA_TYPES: [&str; 8] = ["application/pdf", "image/png", "image/jpeg", "application/xml", "text/xml", "application/x-ofx", "text/csv", XLSX_MIME];

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
    for mime in ["application/pdf", "image/png", "image/jpeg", "application/xml", "text/xml", "application/x-ofx", "text/csv", XLSX_MIME] {
        content.insert(mime.to_string(), binary.clone());
    }
    json!({ CUSTOM_CONTENT: content })
}

/// The `/v1/attachments` operations in the OpenAPI document.
pub const DOCS: &[Operation] = &[
    Operation { method: "get", path: "/v1/attachments", id: "attachments_list", summary: "List attachments", scope: "finance.attachments", request: None, success: 200, response: Some(|| page_of(schema_of::<Attachment>())) },
    Operation { method: "post", path: "/v1/attachments", id: "attachments_upload", summary: "Upload an attachment (multipart/form-data; not idempotent)", scope: "finance.attachments.write", request: Some(upload_body), success: 201, response: Some(schema_of::<Attachment>) },
    Operation { method: "get", path: "/v1/attachments/{id}", id: "attachments_get", summary: "Get an attachment", scope: "finance.attachments", request: None, success: 200, response: Some(schema_of::<Attachment>) },
    Operation { method: "delete", path: "/v1/attachments/{id}", id: "attachments_delete", summary: "Delete an attachment that nothing links to", scope: "finance.attachments.write", request: None, success: 204, response: None },
    Operation { method: "get", path: "/v1/attachments/{id}/download", id: "attachments_download", summary: "Download the bytes of an attachment", scope: "finance.attachments", request: None, success: 200, response: Some(download_body) },
    Operation { method: "post", path: "/v1/attachments/{id}/links", id: "attachments_link", summary: "Link an attachment to a payable, receivable or transaction", scope: "finance.attachments.write", request: Some(schema_of::<LinkRequest>), success: 201, response: Some(schema_of::<Link>) },
    Operation { method: "delete", path: "/v1/attachments/{id}/links", id: "attachments_unlink", summary: "Remove a link of an attachment", scope: "finance.attachments.write", request: Some(schema_of::<LinkRequest>), success: 204, response: None },
];

pub static LIST: ListSpec = ListSpec {
    table: "attachments",
    filters: &[
        Field { name: "mime_type", column: "attachments.mime_type", kind: Kind::Text },
        Field { name: "file_name", column: "attachments.file_name", kind: Kind::Text },
        Field { name: "uploaded_by", column: "attachments.uploaded_by", kind: Kind::Text },
        Field { name: "uploaded_at", column: "attachments.uploaded_at", kind: Kind::Timestamp },
    ],
    sorts: &[
        ("uploaded_at", "attachments.uploaded_at"),
        ("file_name", "attachments.file_name"),
        ("file_size", "attachments.file_size"),
    ],
    default_sort: ("uploaded_at", true),
    scope: None,
};

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

fn from_row(row: &AnyRow, base: &str) -> Result<Attachment, sqlx::Error> {
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
            .map_err(|_| bad_filter(format!("Invalid value for filter {name}"), name, "invalid_value"))?;
        links.push((*link_type, ids));
    }
    Ok((rest, links))
}

pub async fn list(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, request: &ListRequest) -> Result<Page<Attachment>, ApiError> {
    ctx.authorize(ws, Resource::Attachments, Access::Read)?;
    let (request, links) = split_link_filters(request)?;
    let keys = ctx.state.keys.current().await?;
    let compiled = LIST.compile(&request, &ws.workspace_id, &keys.state)?;
    // The link conditions go last in the WHERE clause, so their placeholders follow
    // the ones the shared compiler numbered.
    let mut binds = compiled.binds.clone();
    let mut extra = String::new();
    for (link_type, ids) in links {
        let mut placeholders = Vec::with_capacity(ids.len());
        for id in ids {
            binds.push(Bind::Text(id));
            placeholders.push(format!("${}", binds.len()));
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
    let rows = bind_all(sqlx::query(sqlx::AssertSqlSafe(sql)), &binds).fetch_all(&mut *conn).await.map_err(db_error)?;
    let base = &ctx.state.config.api_base_url;
    let data = rows.iter().map(|r| from_row(r, base)).collect::<Result<Vec<_>, _>>().map_err(db_error)?;
    Ok(page(
        data,
        &compiled,
        &keys.state,
        |a, field| match field {
            "file_name" => json!(a.file_name),
            "file_size" => json!(a.file_size),
            _ => json!(a.uploaded_at),
        },
        |a| a.id.clone(),
    ))
}

async fn find(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, id: &str) -> Result<Attachment, ApiError> {
    let id = path_id(id, "Attachment")?;
    let row = sqlx::query(sqlx::AssertSqlSafe(format!("{SELECT} WHERE attachments.workspace_id = $1 AND attachments.id = $2")))
        .bind(&ws.workspace_id)
        .bind(&id)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?;
    match row {
        Some(row) => from_row(&row, &ctx.state.config.api_base_url).map_err(db_error),
        None => Err(ApiError::not_found("Attachment")),
    }
}

pub async fn get(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, id: &str) -> Result<Attachment, ApiError> {
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
pub async fn locate(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, id: &str) -> Result<Located, ApiError> {
    ctx.authorize(ws, Resource::Attachments, Access::Read)?;
    let id = path_id(id, "Attachment")?;
    let row = sqlx::query("SELECT file_name, mime_type, sha256, content, blob_key FROM attachments WHERE workspace_id = $1 AND id = $2")
        .bind(&ws.workspace_id)
        .bind(&id)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?
        .ok_or_else(|| ApiError::not_found("Attachment"))?;
    let content: Option<Vec<u8>> = row.try_get("content").map_err(db_error)?;
    let blob_key: Option<String> = row.try_get("blob_key").map_err(db_error)?;
    let bytes = match (content, blob_key) {
        (Some(content), _) => Stored::Row(content),
        (None, Some(location)) => Stored::Object(location),
        (None, None) => {
            tracing::error!(attachment = %id, "attachment row has neither bytes nor a blob location");
            return Err(ApiError::internal());
        }
    };
    Ok(Located {
        file_name: row.try_get("file_name").map_err(db_error)?,
        mime_type: row.try_get("mime_type").map_err(db_error)?,
        sha256: row.try_get("sha256").map_err(db_error)?,
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
pub async fn download(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, id: &str) -> Result<Download, ApiError> {
    let located = locate(ctx, conn, ws, id).await?;
    fetch(ctx, located).await
}

/// 422 `too_large` (with `details.limit_bytes`): also what the door answers for a
/// request body over its own cap.
pub fn too_large() -> ApiError {
    ApiError::new(ErrorCode::UnprocessableEntity, "The file is larger than 10 MB")
        .with_details(json!({ "field": "file", "reason": "too_large", "limit_bytes": MAX_FILE_BYTES }))
}

fn file_problem(reason: &str, message: &str) -> ApiError {
    super::common::unprocessable("file", reason, message)
}

/// The file name as stored: the last path segment (some clients send a full path),
/// without control characters, trimmed, at most 255 characters.
fn clean_file_name(raw: &str) -> Result<String, ApiError> {
    let base = raw.rsplit(['/', '\\']).next().unwrap_or(raw);
    let cleaned: String = base.chars().filter(|c| !c.is_control()).collect();
    let cleaned = cleaned.trim();
    if cleaned.is_empty() || cleaned == "." || cleaned == ".." {
        return Err(invalid("file", "missing_file_name", "The file part needs a file name"));
    }
    if cleaned.chars().count() > MAX_NAME_CHARS {
        return Err(invalid("file", "too_long", "The file name is longer than 255 characters"));
    }
    Ok(cleaned.to_string())
}

/// The media type's essence: lower-case, parameters dropped.
fn essence(content_type: &str) -> String {
    content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}

/// Decides the file's type from its declared content type and its extension, which
/// must name the same supported type, then checks its first bytes.
/// The media type a file name's extension names (`None` for an unsupported type), for
/// an upload that does not declare one.
pub fn media_type_of(file_name: &str) -> Option<&'static str> {
    let (_, ext) = file_name.rsplit_once('.')?;
    FileType::from_extension(&ext.to_ascii_lowercase()).map(FileType::media_type)
}

fn check_type(file_name: &str, content_type: &str, content: &[u8]) -> Result<(FileType, String), ApiError> {
    let mime = essence(content_type);
    let by_mime = FileType::from_mime(&mime);
    let by_extension = file_name.rsplit_once('.').and_then(|(_, ext)| FileType::from_extension(&ext.to_ascii_lowercase()));
    let (Some(declared), Some(named)) = (by_mime, by_extension) else {
        return Err(file_problem(
            "unsupported_type",
            "Unsupported file type: send pdf, png, jpeg, xml, ofx, csv or xlsx with its content type and extension",
        ));
    };
    if declared != named {
        return Err(file_problem("type_mismatch", "The content type and the file extension name different types"));
    }
    if !declared.matches(content) {
        return Err(file_problem("type_mismatch", "The file content does not match its declared type"));
    }
    Ok((declared, mime))
}

fn sha256_hex(content: &[u8]) -> String {
    aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, content).as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

async fn audit_event(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, action: &str, id: &str, details: Option<Value>) -> Result<(), ApiError> {
    audit::append(
        &mut *conn,
        ctx.channel,
        &AuditEvent {
            workspace_id: Some(&ws.workspace_id),
            user_id: Some(&ctx.identity.user_id),
            action,
            target_type: Some("attachment"),
            target_id: Some(id),
            outcome: "ok",
            details: details.map(|d| d.to_string()),
        },
    )
    .await
    .map_err(db_error)
}

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
pub async fn upload(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, input: Upload) -> Result<Attachment, ApiError> {
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
        Some(t) if t.chars().count() > MAX_NAME_CHARS => return Err(invalid("title", "too_long", "The title is longer than 255 characters")),
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
pub async fn record_upload(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, checked: CheckedUpload, placement: Placement) -> Result<Attachment, ApiError> {
    let outcome = insert_row(ctx, conn, ws, &checked, &placement).await;
    if let (Err(_), Placement::Object(location)) = (&outcome, &placement) {
        if ctx.state.blobs.remove(location).await.is_err() {
            tracing::warn!(location = %location, "orphan attachment object left in the blob store");
        }
    }
    outcome
}

async fn insert_row(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, checked: &CheckedUpload, placement: &Placement) -> Result<Attachment, ApiError> {
    let CheckedUpload { id, file_name, title, mime_type, content } = checked;
    let (in_row, blob_key) = match placement {
        Placement::Row => (Some(&content[..]), None),
        Placement::Object(location) => (None, Some(location.as_str())),
    };
    let uploaded_by = format!("{}:{}", ctx.channel.as_str(), ctx.identity.user_id);
    sqlx::query(
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
    .bind(crate::clock::now_rfc3339())
    .bind(ctx.channel.as_str())
    .bind(&ctx.identity.user_id)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    audit_event(ctx, conn, ws, "attachments.upload", id, None).await?;
    find(ctx, conn, ws, id).await
}

/// How many records of each kind an attachment is linked to.
async fn usage(conn: &mut AnyConnection, ws: &Membership, id: &str) -> Result<Value, ApiError> {
    let rows = sqlx::query("SELECT target_type, COUNT(*) AS n FROM attachment_links WHERE workspace_id = $1 AND attachment_id = $2 GROUP BY target_type")
        .bind(&ws.workspace_id)
        .bind(id)
        .fetch_all(&mut *conn)
        .await
        .map_err(db_error)?;
    let mut usage = json!({ "payables": 0, "receivables": 0, "transactions": 0 });
    for row in rows {
        let kind: String = row.try_get("target_type").map_err(db_error)?;
        let n: i64 = row.try_get("n").map_err(db_error)?;
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
pub async fn delete(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, id: &str) -> Result<(), ApiError> {
    ctx.authorize(ws, Resource::Attachments, Access::Delete)?;
    let current = find(ctx, conn, ws, id).await?;
    if current.linked_payables_count + current.linked_receivables_count + current.linked_transactions_count > 0 {
        return Err(in_use(usage(conn, ws, &current.id).await?));
    }
    // The condition repeats the check in the statement itself, and the foreign key of
    // the links backs it: a link added meanwhile makes this `in_use`, never a dangling link.
    let deleted = sqlx::query(
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
            if let Some(location) = row.try_get::<Option<String>, _>("blob_key").map_err(db_error)? {
                crate::storage::housekeeping::queue_blob_removal(conn, &location).await.map_err(db_error)?;
            }
        }
        Ok(None) => return Err(in_use(usage(conn, ws, &current.id).await?)),
        Err(sqlx::Error::Database(e)) if e.is_foreign_key_violation() => {
            return Err(in_use(json!({ "payables": null, "receivables": null, "transactions": null })))
        }
        Err(e) => return Err(db_error(e)),
    }
    audit_event(ctx, conn, ws, "attachments.delete", &current.id, None).await
}

/// The link target must be a record of the workspace (another workspace's is not found).
async fn check_target(conn: &mut AnyConnection, ws: &Membership, target_type: LinkType, target_id: &str) -> Result<(), ApiError> {
    let query = match target_type {
        LinkType::Payable | LinkType::Receivable => sqlx::query("SELECT 1 FROM billings WHERE workspace_id = $1 AND id = $2 AND kind = $3")
            .bind(&ws.workspace_id)
            .bind(target_id)
            .bind(target_type.as_str()),
        LinkType::Transaction => sqlx::query("SELECT 1 FROM financial_transactions WHERE workspace_id = $1 AND id = $2")
            .bind(&ws.workspace_id)
            .bind(target_id),
    };
    match query.fetch_optional(&mut *conn).await.map_err(db_error)? {
        Some(_) => Ok(()),
        None => Err(ApiError::not_found(target_type.noun())),
    }
}

/// Links an attachment to a payable, receivable or transaction of the workspace.
pub async fn link(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, id: &str, input: LinkRequest) -> Result<Link, ApiError> {
    ctx.authorize(ws, Resource::Attachments, Access::Write)?;
    let attachment = find(ctx, conn, ws, id).await?;
    let target_id = body_id("id", &input.id)?;
    check_target(conn, ws, input.target_type, &target_id).await?;
    let inserted = sqlx::query(
        "INSERT INTO attachment_links (attachment_id, workspace_id, target_type, target_id, created_at, created_via, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (attachment_id, target_type, target_id) DO NOTHING",
    )
    .bind(&attachment.id)
    .bind(&ws.workspace_id)
    .bind(input.target_type.as_str())
    .bind(&target_id)
    .bind(crate::clock::now_rfc3339())
    .bind(ctx.channel.as_str())
    .bind(&ctx.identity.user_id)
    .execute(&mut *conn)
    .await
    .map_err(|e| match e {
        // Deleted meanwhile: the foreign key keeps a link from pointing at nothing.
        sqlx::Error::Database(db) if db.is_foreign_key_violation() => ApiError::not_found("Attachment"),
        e => db_error(e),
    })?
    .rows_affected();
    if inserted == 0 {
        return Err(ApiError::new(ErrorCode::Conflict, "The attachment is already linked to this record")
            .with_details(json!({ "field": "id", "reason": "already_linked" })));
    }
    let details = json!({ "parent_type": input.target_type.as_str(), "parent_id": target_id });
    audit_event(ctx, conn, ws, "attachments.link", &attachment.id, Some(details)).await?;
    Ok(Link { attachment_id: attachment.id, parent_type: input.target_type, parent_id: target_id })
}

/// Removes a link; not linked is not found.
pub async fn unlink(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, id: &str, input: LinkRequest) -> Result<(), ApiError> {
    ctx.authorize(ws, Resource::Attachments, Access::Write)?;
    let attachment = find(ctx, conn, ws, id).await?;
    let target_id = body_id("id", &input.id)?;
    let removed = sqlx::query("DELETE FROM attachment_links WHERE workspace_id = $1 AND attachment_id = $2 AND target_type = $3 AND target_id = $4")
        .bind(&ws.workspace_id)
        .bind(&attachment.id)
        .bind(input.target_type.as_str())
        .bind(&target_id)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?
        .rows_affected();
    if removed == 0 {
        return Err(ApiError::not_found("Link"));
    }
    let details = json!({ "parent_type": input.target_type.as_str(), "parent_id": target_id });
    audit_event(ctx, conn, ws, "attachments.unlink", &attachment.id, Some(details)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_is_decided_by_content_type_and_extension_then_checked_by_magic_bytes() {
        let reason = |name: &str, ct: &str, data: &[u8]| check_type(name, ct, data).err().map(|e| e.details.unwrap()["reason"].as_str().unwrap().to_string());
        assert_eq!(reason("a.PDF", "Application/PDF", b"%PDF-1.4"), None);
        assert_eq!(reason("a.jpg", "image/jpeg", b"\xFF\xD8\xFF\xE0"), None);
        assert_eq!(reason("a.jpeg", "image/jpeg", b"\xFF\xD8\xFF\xE0"), None);
        assert_eq!(reason("a.png", "image/png", b"\x89PNG\r\n\x1a\n...."), None);
        assert_eq!(reason("a.xlsx", XLSX_MIME, b"PK\x03\x04...."), None);
        assert_eq!(reason("a.xml", "text/xml; charset=utf-8", b"\xEF\xBB\xBF \r\n<?xml version=\"1.0\"?><a/>"), None);
        assert_eq!(reason("a.ofx", "application/x-ofx", b"OFXHEADER:100\r\nCHARSET:1252\r\nNAME:Jo\xe3o\r\n"), None);
        assert_eq!(reason("a.csv", "text/csv", "data;valor\n2026-01-01;1,00\tação\n".as_bytes()), None);
        assert_eq!(reason("a.pdf", "image/png", b"%PDF-").as_deref(), Some("type_mismatch"));
        assert_eq!(reason("a.pdf", "application/pdf", b"\x89PNG\r\n\x1a\n").as_deref(), Some("type_mismatch"));
        assert_eq!(reason("a.png", "image/png", b"GIF89a").as_deref(), Some("type_mismatch"));
        assert_eq!(reason("a.xml", "application/xml", b"not xml").as_deref(), Some("type_mismatch"));
        assert_eq!(reason("a.csv", "text/csv", b"a,b\x00c").as_deref(), Some("type_mismatch"));
        assert_eq!(reason("a.xlsx", XLSX_MIME, b"%PDF-").as_deref(), Some("type_mismatch"));
        assert_eq!(reason("a.gif", "image/gif", b"GIF89a").as_deref(), Some("unsupported_type"));
        assert_eq!(reason("a.pdf", "application/octet-stream", b"%PDF-").as_deref(), Some("unsupported_type"));
        assert_eq!(reason("pdf", "application/pdf", b"%PDF-").as_deref(), Some("unsupported_type"));
    }

    #[test]
    fn file_names_lose_paths_and_control_characters() {
        assert_eq!(clean_file_name("C:\\fakepath\\nota.pdf").unwrap(), "nota.pdf");
        assert_eq!(clean_file_name("../../etc/na\r\nme.pdf").unwrap(), "name.pdf");
        assert!(clean_file_name("dir/").is_err());
        assert!(clean_file_name(&"a".repeat(256)).is_err());
    }
}
