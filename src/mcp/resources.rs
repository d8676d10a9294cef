//! Resources (SPEC §9): fixed documents (`kobana://finance/workspaces`,
//! `kobana://finance/guide`) and URI templates. A URI that names nothing the caller can
//! read is "not found": -32602 with `data.uri` in 2026, -32002 in 2025.

use http::StatusCode;
use serde_json::{json, Map, Value};

use super::{no_cursor, unavailable, McpContext};
use crate::protocol::rpc::{RpcError, RESOURCE_NOT_FOUND_2025};

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

/// Record templates arrive with the finance records they read; none is offered yet.
pub fn templates(params: &Map<String, Value>) -> Result<Map<String, Value>, RpcError> {
    no_cursor(params)?;
    let mut result = Map::new();
    result.insert("resourceTemplates".into(), json!([]));
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
        _ => return Err(not_found(ctx, uri)),
    };
    let mut result = Map::new();
    result.insert("contents".into(), json!([{ "uri": uri, "mimeType": mime, "text": text }]));
    Ok(result)
}
