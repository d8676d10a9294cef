//! Era-specific result shapes (SPEC §3): 2026 results carry `resultType`, the server
//! info in `_meta` and, on list/discover/read, `ttlMs`/`cacheScope`; 2025 results carry
//! none of those, and 2025-03-26 results also omit what that revision lacks (`title`,
//! `outputSchema`, `structuredContent`, `resource_link`).

use serde_json::{json, Map, Value};

use super::{Method, SERVER_NAME, SERVER_TITLE, SERVER_VERSION};
use crate::protocol::era::{Era, META_SERVER_INFO};

pub fn server_info() -> Value {
    json!({ "name": SERVER_NAME, "title": SERVER_TITLE, "version": SERVER_VERSION })
}

pub fn finish(era: &Era, method: Method, mut result: Map<String, Value>) -> Value {
    if era.is_modern() {
        result.entry("resultType").or_insert_with(|| json!("complete"));
        let meta = result.entry("_meta").or_insert_with(|| json!({}));
        if let Value::Object(meta) = meta {
            meta.insert(META_SERVER_INFO.into(), server_info());
        }
        if method.is_cacheable() && result.get("resultType") == Some(&json!("complete")) {
            result.insert("ttlMs".into(), json!(0));
            result.insert("cacheScope".into(), json!("private"));
        }
    } else if era.is_2025_03_26() {
        strip_2025_03_26(method, &mut result);
    }
    Value::Object(result)
}

fn remove_titles(items: Option<&mut Value>, nested: Option<&str>) {
    if let Some(Value::Array(items)) = items {
        for item in items.iter_mut().filter_map(Value::as_object_mut) {
            item.remove("title");
            if let Some(key) = nested {
                remove_titles(item.get_mut(key), None);
            }
        }
    }
}

fn strip_2025_03_26(method: Method, result: &mut Map<String, Value>) {
    match method {
        Method::Initialize => {
            if let Some(Value::Object(info)) = result.get_mut("serverInfo") {
                info.remove("title");
            }
        }
        // tools/list arrives already shaped: its descriptions are pre-serialised per era
        // (mcp::tools::list).
        Method::ToolsCall => {
            result.remove("structuredContent");
            if let Some(Value::Array(content)) = result.get_mut("content") {
                content.retain(|c| c.get("type").and_then(Value::as_str) != Some("resource_link"));
            }
        }
        Method::ResourcesList => remove_titles(result.get_mut("resources"), None),
        Method::ResourceTemplatesList => remove_titles(result.get_mut("resourceTemplates"), None),
        Method::PromptsList => remove_titles(result.get_mut("prompts"), Some("arguments")),
        _ => {}
    }
}
