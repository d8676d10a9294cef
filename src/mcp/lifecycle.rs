//! `server/discover` (2026), `initialize` and `ping` (2025).

use serde_json::{json, Map, Value};

use super::{shape::server_info, INSTRUCTIONS};
use crate::protocol::era::{negotiate_initialize, SUPPORTED_VERSIONS};

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

pub fn discover() -> Map<String, Value> {
    object(json!({
        "supportedVersions": SUPPORTED_VERSIONS,
        "capabilities": { "tools": {}, "resources": {}, "prompts": {}, "completions": {} },
        "instructions": INSTRUCTIONS,
    }))
}

/// The version the answer settles on is also what the response header carries; the
/// transport reads it back from `protocolVersion`.
pub fn initialize(params: &Map<String, Value>) -> Map<String, Value> {
    let requested = params.get("protocolVersion").and_then(Value::as_str);
    object(json!({
        "protocolVersion": negotiate_initialize(requested),
        "capabilities": {
            "tools": { "listChanged": false },
            "resources": { "subscribe": false, "listChanged": false },
            "prompts": { "listChanged": false },
            "completions": {},
        },
        "serverInfo": server_info(),
        "instructions": INSTRUCTIONS,
    }))
}
