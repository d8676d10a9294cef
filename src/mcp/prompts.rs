//! Prompts and completions (SPEC §9). The capabilities are advertised; the prompts and
//! the completable template variables arrive with the finance operations they steer
//! to, so the lists are empty and any named prompt or reference is unknown (-32602).

use serde_json::{json, Map, Value};

use super::no_cursor;
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

pub fn complete(params: &Map<String, Value>) -> Result<Map<String, Value>, RpcError> {
    let reference = params.get("ref").and_then(Value::as_object).ok_or_else(|| RpcError::invalid_params("params.ref must be an object"))?;
    params
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
            Err(RpcError::invalid_params(format!("Unknown resource template: {uri}")))
        }
        _ => Err(RpcError::invalid_params("params.ref.type must be ref/prompt or ref/resource")),
    }
}
