//! `finance_attachments_*`: the `/v1/attachments` operations as tools (SPEC §5.3). An
//! upload arrives as base64 and becomes the same typed upload `POST /v1/attachments`
//! reads from its multipart body; a download never returns bytes, only where to fetch them with an
//! API token.

use crate::storage::Conn;
use base64::Engine;
use serde_json::{json, Map, Value};

use super::records::{delete_tool, get_tool, list_tool, to_value};
use super::{list_schema_with, write_schema, Route, Scope, CREATE, READ, UPDATE};
use crate::domain::roles::{Access, Resource};
use crate::error::ApiError;
use crate::mcp::tools::{answer, Answering, Schemas, ToolCall, ToolSpec};
use crate::ops::attachments::{self, Attachment, Link, LinkRequest, MAX_FILE_BYTES, MEDIA_TYPES};
use crate::ops::machinery::list::{ListRequest, ListSpec};
use crate::ops::machinery::resource::Tool;
use crate::ops::machinery::resource::{Deletable, Records};
use crate::ops::machinery::validate::{parse, schema_of};
use crate::ops::{OpContext, Page};
use crate::storage::identity::Membership;

pub struct Attachments;

impl Records for Attachments {
    const RESOURCE: Resource = Resource::Attachments;
    const COLLECTION: &'static str = "/v1/attachments";
    const NOUN: &'static str = "attachment";
    type Row = Attachment;
    type Record = Attachment;
    const LIST: &'static ListSpec = &attachments::LIST;
    async fn list(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        request: &ListRequest,
    ) -> Result<Page<Attachment>, ApiError> {
        attachments::list(ctx, conn, ws, request).await
    }
    async fn get(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<Attachment, ApiError> {
        attachments::get(ctx, conn, ws, id).await
    }
    fn label(a: &Attachment) -> String {
        match &a.title {
            Some(title) => format!("“{}” ({title}, {} bytes)", a.file_name, a.file_size),
            None => format!("“{}” ({} bytes)", a.file_name, a.file_size),
        }
    }
}

impl Deletable for Attachments {
    async fn delete(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<(), ApiError> {
        attachments::delete(ctx, conn, ws, id).await
    }
}

fn upload_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "workspace_id": super::workspace_property(),
            "file_name": { "type": "string", "minLength": 1, "maxLength": 255, "description": "With its extension: .pdf, .png, .jpg, .xml, .ofx, .csv or .xlsx" },
            "content_base64": { "type": "string", "contentEncoding": "base64", "description": "The file's bytes in base64 (at most 10 MB decoded)" },
            "title": { "type": "string", "maxLength": 255 },
            "mime_type": { "type": "string", "enum": MEDIA_TYPES, "description": "Default: from the file name's extension" },
        },
        "required": ["file_name", "content_base64"],
        "additionalProperties": false,
    })
}

fn download_output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": { "type": "string", "format": "uuid" },
            "file_name": { "type": "string" },
            "content_type": { "type": "string" },
            "size": { "type": "integer", "description": "Bytes" },
            "download_url": { "type": "string", "format": "uri", "description": "GET it with an API token (finance.attachments); MCP tokens are refused there" },
        },
        "required": ["id", "file_name", "content_type", "size", "download_url"],
    })
}

fn link_input() -> Value {
    let mut schema = write_schema(schema_of::<LinkRequest>(), false, false);
    schema["properties"]["attachment_id"] =
        json!({ "type": "string", "format": "uuid", "description": "The attachment" });
    if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
        required.insert(0, json!("attachment_id"));
    }
    schema
}

fn unlinked_output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "unlinked": { "type": "boolean" },
            "attachment_id": { "type": "string", "format": "uuid" },
            "type": { "type": "string" },
            "id": { "type": "string", "format": "uuid" },
        },
        "required": ["unlinked", "attachment_id", "type", "id"],
    })
}

/// `tool` with another input schema, its output kept.
const fn with_input(tool: ToolSpec, input: fn() -> Value) -> ToolSpec {
    let output = match tool.schemas {
        Schemas::Given { output, .. } => output,
        Schemas::Row(_) => None,
    };
    ToolSpec { schemas: Schemas::Given { input, output }, ..tool }
}

/// The list tool's input: the list's filters and the link filters `/v1` takes.
fn list_input() -> Value {
    list_schema_with(&attachments::LIST, &attachments::LINKED_TO)
}

pub static TOOLS: &[ToolSpec] = &[
    with_input(
        list_tool::<Attachments>(Tool {
            name: "finance_attachments_list",
            title: "List attachments",
            description:
                "Lists stored documents (invoices, boletos, receipts, statements) and how many records each is \
linked to; a record's documents: filters linked_to_payable_id, linked_to_receivable_id or linked_to_transaction_id.",
        }),
        list_input,
    ),
    get_tool::<Attachments>(Tool {
        name: "finance_attachments_get",
        title: "Get an attachment",
        description: "One attachment's description (for its bytes see finance_attachments_download).",
    }),
    ToolSpec {
        name: "finance_attachments_upload",
        title: "Upload an attachment",
        description:
            "Stores a document from content_base64 (at most 10 MB): pdf, png, jpeg, xml, ofx, csv or xlsx, content \
matching the type. Then finance_attachments_link.",
        permission: Some((Resource::Attachments, Access::Write)),
        annotations: CREATE,
        route: Route::post("/v1/attachments", ""),
        schemas: Schemas::Given { input: upload_input, output: Some(schema_of::<Attachment>) },
        handler: upload,
        describe: None,
    },
    ToolSpec {
        name: "finance_attachments_download",
        title: "Where to download an attachment",
        description:
            "An attachment's content_type, size and download_url, to GET with an API token; no bytes come back here.",
        permission: Some((Resource::Attachments, Access::Read)),
        annotations: READ,
        route: Route::get("/v1/attachments", "/{id}/download"),
        schemas: Schemas::Given { input: super::id_schema, output: Some(download_output) },
        handler: download,
        describe: None,
    },
    ToolSpec {
        name: "finance_attachments_link",
        title: "Link an attachment",
        description: "Links an attachment to a payable, receivable or transaction.",
        permission: Some((Resource::Attachments, Access::Write)),
        annotations: CREATE,
        route: Route::post("/v1/attachments", "/{id}/links"),
        schemas: Schemas::Given { input: link_input, output: Some(schema_of::<Link>) },
        handler: link,
        describe: None,
    },
    ToolSpec {
        name: "finance_attachments_unlink",
        title: "Unlink an attachment",
        description: "Removes a link between an attachment and a record; both stay.",
        permission: Some((Resource::Attachments, Access::Write)),
        annotations: UPDATE,
        route: Route::delete("/v1/attachments", "/{id}/links"),
        schemas: Schemas::Given { input: link_input, output: Some(unlinked_output) },
        handler: unlink,
        describe: None,
    },
    delete_tool::<Attachments>(Tool {
        name: "finance_attachments_delete",
        title: "Delete an attachment",
        description: "Deletes an unlinked attachment and its bytes. Asks the user to confirm.",
    }),
];

/// The file name of an upload tool: what a `multipart/form-data` upload could carry (no
/// quotes, backslashes or control characters), so both doors take the same names.
fn check_file_name(file_name: &str) -> Result<(), ApiError> {
    if file_name.chars().any(|c| c == '"' || c == '\\' || c.is_control()) {
        return Err(ApiError::bad_request("The file name cannot contain quotes, backslashes or control characters")
            .with_details(json!({ "field": "file_name", "reason": "invalid_value" })));
    }
    Ok(())
}

fn text<'m>(arguments: &'m Map<String, Value>, name: &str) -> Option<&'m str> {
    arguments.get(name).and_then(Value::as_str)
}

fn upload<'a>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> Answering<'a> {
    answer(async move {
        let s = Scope::of(call).await?;
        let file_name = text(&s.args.body, "file_name").unwrap_or_default();
        let encoded = text(&s.args.body, "content_base64").unwrap_or_default();
        // Decoded size, before decoding: refuse an oversized file without allocating it.
        if encoded.len() / 4 * 3 > MAX_FILE_BYTES + 3 {
            return Err(attachments::too_large());
        }
        let content = base64::engine::general_purpose::STANDARD.decode(encoded.trim()).map_err(|_| {
            ApiError::bad_request("content_base64 is not valid base64")
                .with_details(json!({ "field": "content_base64", "reason": "invalid_base64" }))
        })?;
        if content.len() > MAX_FILE_BYTES {
            return Err(attachments::too_large());
        }
        let media_type = match text(&s.args.body, "mime_type") {
            Some(declared) => declared,
            None => attachments::media_type_of(file_name).unwrap_or("application/octet-stream"),
        };
        check_file_name(file_name)?;
        let upload = attachments::Upload {
            file_name: file_name.to_string(),
            content_type: media_type.to_string(),
            title: text(&s.args.body, "title").map(str::to_string),
            content: content.into(),
        };
        to_value(&attachments::upload(&s.ctx, conn, s.ws, upload).await?)
    })
}

fn download<'a>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> Answering<'a> {
    answer(async move {
        let s = Scope::of(call).await?;
        let a = attachments::get(&s.ctx, conn, s.ws, s.id()).await?;
        Ok(json!({
            "id": a.id,
            "file_name": a.file_name,
            "content_type": a.mime_type,
            "size": a.file_size,
            "download_url": a.download_url,
        }))
    })
}

/// The link request of a link/unlink call (`id` is the record's, `attachment_id` the
/// path's).
fn link_request(s: &Scope<'_>) -> Result<(String, LinkRequest), ApiError> {
    let mut body = s.args.body.clone();
    let attachment_id = body.remove("attachment_id").and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    if let Some(id) = &s.args.id {
        body.insert("id".into(), json!(id));
    }
    Ok((attachment_id, parse(Value::Object(body))?))
}

fn link<'a>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> Answering<'a> {
    answer(async move {
        let s = Scope::of(call).await?;
        let (attachment_id, request) = link_request(&s)?;
        to_value(&attachments::link(&s.ctx, conn, s.ws, &attachment_id, request).await?)
    })
}

fn unlink<'a>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> Answering<'a> {
    answer(async move {
        let s = Scope::of(call).await?;
        let (attachment_id, request) = link_request(&s)?;
        let answer = json!({ "unlinked": true, "attachment_id": attachment_id, "type": request.target_type.as_str(), "id": request.id });
        attachments::unlink(&s.ctx, conn, s.ws, &attachment_id, request).await?;
        Ok(answer)
    })
}
