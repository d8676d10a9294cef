//! Prompts and completions (SPEC §9). The prompts arrive with the finance tools they
//! steer to, so their list is empty for now and any named prompt is unknown (-32602);
//! completion answers the `{id}` of the record templates.

use serde_json::{json, Map, Value};

use super::{no_cursor, McpContext};
use crate::protocol::rpc::RpcError;

pub fn list(params: &Map<String, Value>) -> Result<Map<String, Value>, RpcError> {
    no_cursor(params)?;
    let mut result = Map::new();
    result.insert("prompts".into(), json!([]));
    Ok(result)
}

pub fn get(params: &Map<String, Value>) -> Result<Map<String, Value>, RpcError> {
    let name = params.get("name").and_then(Value::as_str).ok_or_else(|| RpcError::invalid_params("params.name must be a string"))?;
    Err(RpcError::invalid_params(format!("Unknown prompt: {name}")))
}

pub async fn complete(ctx: &McpContext<'_>, params: &Map<String, Value>) -> Result<Map<String, Value>, RpcError> {
    let reference = params.get("ref").and_then(Value::as_object).ok_or_else(|| RpcError::invalid_params("params.ref must be an object"))?;
    let argument = params
        .get("argument")
        .and_then(Value::as_object)
        .filter(|a| a.get("name").is_some_and(Value::is_string) && a.get("value").is_some_and(Value::is_string))
        .ok_or_else(|| RpcError::invalid_params("params.argument must be {name, value}"))?;
    match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => {
            let name = reference.get("name").and_then(Value::as_str).unwrap_or("");
            Err(RpcError::invalid_params(format!("Unknown prompt: {name}")))
        }
        Some("ref/resource") => {
            let uri = reference.get("uri").and_then(Value::as_str).unwrap_or("");
            let template = super::resources::TEMPLATES
                .iter()
                .find(|t| uri == super::resources::uri_template(t))
                .ok_or_else(|| RpcError::invalid_params(format!("Unknown resource template: {uri}")))?;
            if argument.get("name").and_then(Value::as_str) != Some("id") {
                return Err(RpcError::invalid_params("This template's only variable is id"));
            }
            let prefix = argument.get("value").and_then(Value::as_str).unwrap_or("");
            let (values, more) = super::resources::complete_id(ctx, template, prefix, None).await.map_err(|e| super::unavailable(&e))?;
            let mut result = Map::new();
            result.insert("completion".into(), json!({ "values": values, "hasMore": more }));
            Ok(result)
        }
        _ => Err(RpcError::invalid_params("params.ref.type must be ref/prompt or ref/resource")),
    }
}
