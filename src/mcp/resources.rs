//! Resources (SPEC §9): fixed documents (`kobana://finance/workspaces`,
//! `kobana://finance/guide`) and URI templates. A URI that names nothing the caller can
//! read is "not found": -32602 with `data.uri` in 2026, -32002 in 2025.

use http::StatusCode;
use serde_json::{json, Map, Value};

use sqlx::AnyConnection;

use super::tools::BoxFuture;
use super::{no_cursor, unavailable, McpContext};
use crate::domain::roles::{Access, Resource};
use crate::error::{ApiError, ErrorCode};
use crate::ops::OpContext;
use crate::protocol::rpc::{RpcError, RESOURCE_NOT_FOUND_2025};
use crate::storage::identity::Membership;

/// Reads one record through its `get` operation.
pub type ReadRecord = for<'a> fn(&'a OpContext<'a>, &'a mut AnyConnection, &'a Membership, &'a str) -> BoxFuture<'a, Result<Value, ApiError>>;

/// A URI template `kobana://finance/{resource}/{id}` over a resource's get operation.
pub struct Template {
    pub resource: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub scope: Resource,
    pub read: ReadRecord,
    /// Table and label column for completing `{id}` by a label prefix.
    pub table: &'static str,
    pub label: &'static str,
}

fn read_company<'a>(ctx: &'a OpContext<'a>, conn: &'a mut AnyConnection, ws: &'a Membership, id: &'a str) -> BoxFuture<'a, Result<Value, ApiError>> {
    Box::pin(async move {
        let company = crate::ops::companies::get(ctx, conn, ws, id).await?;
        serde_json::to_value(company).map_err(|_| ApiError::internal())
    })
}

/// The record templates, one per resource with a get operation.
pub static TEMPLATES: &[Template] = &[Template {
    resource: "companies",
    title: "Company",
    description: "A company by id: the same JSON as finance_companies_get.",
    scope: Resource::Companies,
    read: read_company,
    table: "companies",
    label: "name",
}];

const PREFIX: &str = "kobana://finance/";

/// The template and id a record URI names, if any.
pub fn template_of(uri: &str) -> Option<(&'static Template, &str)> {
    let rest = uri.strip_prefix(PREFIX)?;
    let (resource, id) = rest.split_once('/')?;
    let template = TEMPLATES.iter().find(|t| t.resource == resource)?;
    (!id.is_empty() && !id.contains('/')).then_some((template, id))
}

pub const WORKSPACES_URI: &str = "kobana://finance/workspaces";
pub const GUIDE_URI: &str = "kobana://finance/guide";
const GUIDE: &str = include_str!("guide.md");

pub fn list(params: &Map<String, Value>) -> Result<Map<String, Value>, RpcError> {
    no_cursor(params)?;
    let mut result = Map::new();
    result.insert(
        "resources".into(),
        json!([
            {
                "uri": WORKSPACES_URI,
                "name": "workspaces",
                "title": "Your workspaces",
                "description": "The workspaces you can act in, your role and permissions in each (JSON).",
                "mimeType": "application/json",
            },
            {
                "uri": GUIDE_URI,
                "name": "guide",
                "title": "How to use Kobana Finance",
                "description": "Money format, filters, pagination, errors and confirmation of destructive actions (Markdown).",
                "mimeType": "text/markdown",
                "size": GUIDE.len(),
            },
        ]),
    );
    Ok(result)
}

/// The record templates whose resource the caller's token may read.
pub fn templates(ctx: &McpContext<'_>, params: &Map<String, Value>) -> Result<Map<String, Value>, RpcError> {
    no_cursor(params)?;
    let list: Vec<Value> = TEMPLATES
        .iter()
        .filter(|t| ctx.identity.scopes.allows(t.scope, Access::Read))
        .map(|t| {
            json!({
                "uriTemplate": format!("{PREFIX}{}/{{id}}", t.resource),
                "name": t.resource,
                "title": t.title,
                "description": t.description,
                "mimeType": "application/json",
            })
        })
        .collect();
    let mut result = Map::new();
    result.insert("resourceTemplates".into(), Value::Array(list));
    Ok(result)
}

fn not_found(ctx: &McpContext<'_>, uri: &str) -> RpcError {
    if ctx.era.is_modern() {
        RpcError::invalid_params("Resource not found").with_data(json!({ "uri": uri }))
    } else {
        RpcError::new(StatusCode::OK, RESOURCE_NOT_FOUND_2025, "Resource not found").with_data(json!({ "uri": uri }))
    }
}

pub async fn read(ctx: &McpContext<'_>, params: &Map<String, Value>) -> Result<Map<String, Value>, RpcError> {
    let uri = params.get("uri").and_then(Value::as_str).ok_or_else(|| RpcError::invalid_params("params.uri must be a string"))?;
    let (mime, text) = match uri {
        WORKSPACES_URI => {
            let op = ctx.op_context().await.map_err(|e| unavailable(&e))?;
            let list = crate::ops::workspaces::list(&op).map_err(|e| unavailable(&e))?;
            ("application/json", serde_json::to_string(&list).map_err(|_| RpcError::internal())?)
        }
        GUIDE_URI => ("text/markdown", GUIDE.to_string()),
        _ => {
            let Some((template, id)) = template_of(uri) else { return Err(not_found(ctx, uri)) };
            match read_record(ctx, template, id).await {
                Ok(Some(record)) => ("application/json", record.to_string()),
                Ok(None) => return Err(not_found(ctx, uri)),
                Err(e) => return Err(unavailable(&e)),
            }
        }
    };
    let mut result = Map::new();
    result.insert("contents".into(), json!([{ "uri": uri, "mimeType": mime, "text": text }]));
    Ok(result)
}

/// Reads a record in whichever of the caller's workspaces holds it (the default
/// workspace only, when one is set). Anything the caller may not read — another
/// tenant's record, a missing scope or role — is `None`, indistinguishable from missing.
async fn read_record(ctx: &McpContext<'_>, template: &Template, id: &str) -> Result<Option<Value>, ApiError> {
    let op = ctx.op_context().await?;
    let mut conn = ctx.state.db.pool.acquire().await.map_err(crate::storage::db_error)?;
    for ws in op.memberships.iter().filter(|m| ctx.default_workspace.as_deref().is_none_or(|d| d == m.workspace_id)) {
        match (template.read)(&op, &mut conn, ws, id).await {
            Ok(record) => return Ok(Some(record)),
            Err(e) if e.code == ErrorCode::ServiceUnavailable || e.code == ErrorCode::InternalError => return Err(e),
            Err(_) => continue,
        }
    }
    Ok(None)
}

/// Completes the `{id}` of a record template: ids of the caller's records whose label
/// (or id) starts with `prefix`, at most 100, and whether there are more.
pub async fn complete_id(ctx: &McpContext<'_>, template: &Template, prefix: &str) -> Result<(Vec<String>, bool), ApiError> {
    if !ctx.identity.scopes.allows(template.scope, Access::Read) {
        return Ok((Vec::new(), false));
    }
    let memberships = ctx.memberships().await?;
    let workspaces: Vec<&str> = memberships
        .iter()
        .filter(|m| m.role.allows(template.scope, Access::Read))
        .filter(|m| ctx.default_workspace.as_deref().is_none_or(|d| d == m.workspace_id))
        .map(|m| m.workspace_id.as_str())
        .collect();
    if workspaces.is_empty() {
        return Ok((Vec::new(), false));
    }
    let pattern = format!("{}%", prefix.to_lowercase().replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_"));
    let placeholders: Vec<String> = (0..workspaces.len()).map(|i| format!("${}", i + 2)).collect();
    let sql = format!(
        "SELECT id FROM {table} WHERE (LOWER({label}) LIKE $1 ESCAPE '\\' OR id LIKE $1 ESCAPE '\\') AND workspace_id IN ({ws})
         ORDER BY {label}, id LIMIT 101",
        table = template.table,
        label = template.label,
        ws = placeholders.join(", ")
    );
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(pattern);
    for ws in &workspaces {
        query = query.bind(*ws);
    }
    let rows = query.fetch_all(&ctx.state.db.pool).await.map_err(crate::storage::db_error)?;
    let mut ids: Vec<String> = rows.iter().filter_map(|r| sqlx::Row::try_get::<String, _>(r, 0).ok()).collect();
    let more = ids.len() > 100;
    ids.truncate(100);
    Ok((ids, more))
}
