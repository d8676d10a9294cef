//! `GET /v1/openapi.json`: the OpenAPI 3.1 description of `/v1`, generated from the
//! resources' declarations ([`Declaration`]: route, scope, request and response types —
//! the same Rust types that validate the requests and that the MCP tools take).

use serde_json::{json, Map, Value};

use super::resource::Declaration;
use crate::domain::roles::ScopeSet;

/// One documented operation written out in full, scope included: the form of the
/// resources whose operations are not declared in a [`Declaration`] (their `DOCS`).
pub struct Operation {
    pub method: &'static str,
    pub path: &'static str,
    pub id: &'static str,
    pub summary: &'static str,
    pub scope: &'static str,
    /// The request body's schema (from the request type).
    pub request: Option<fn() -> Value>,
    pub success: u16,
    pub response: Option<fn() -> Value>,
}

/// A request or response schema function may return `{CUSTOM_CONTENT: {media type:
/// media type object, …}}` instead of a JSON schema, for bodies that are not JSON (an
/// upload in `multipart/form-data`, the bytes of a download). A POST with such a
/// request body is not idempotent: it gets no `X-Idempotency-Key` parameter.
pub const CUSTOM_CONTENT: &str = "x-content";

/// The `content` map of a request or response body.
fn content_of(value: Value) -> (Value, bool) {
    match value {
        Value::Object(mut map) if map.contains_key(CUSTOM_CONTENT) => {
            (map.remove(CUSTOM_CONTENT).unwrap_or_default(), true)
        }
        schema => (json!({ "application/json": { "schema": schema } }), false),
    }
}

/// The declared `/v1` operations, per collection, in the order the document lists them.
static DECLARED: &[&Declaration] = &[
    &super::companies::OPERATIONS,
    &super::categories::OPERATIONS,
    &super::cost_centers::OPERATIONS,
    &super::people::OPERATIONS,
    &super::taxes::OPERATIONS,
    &super::accounts::OPERATIONS,
    &super::transactions::declared::TRANSACTIONS,
    &super::transactions::declared::TRANSFERS,
    &super::bills::declared::PAYABLES,
    &super::bills::declared::RECEIVABLES,
];

/// The operations written out in full, after the declared ones.
const WRITTEN: &[&[Operation]] = &[super::attachments::DOCS];

/// An operation as the document shows it.
struct Row {
    method: &'static str,
    path: String,
    id: String,
    summary: String,
    scope: String,
    request: Option<fn() -> Value>,
    success: u16,
    response: Option<fn() -> Value>,
}

/// Every operation of the document, declared or written out.
fn rows() -> impl Iterator<Item = Row> {
    let declared = DECLARED.iter().flat_map(|d| {
        d.operations.iter().map(move |op| Row {
            method: op.method,
            path: d.path(op),
            id: d.id(op),
            summary: d.summary(op),
            scope: ScopeSet::required(d.resource, op.access),
            request: op.patch.map(|patch| patch.request).or(op.request),
            success: op.success,
            response: op.response,
        })
    });
    let written = WRITTEN.iter().flat_map(|ops| ops.iter()).map(|op| Row {
        method: op.method,
        path: op.path.to_string(),
        id: op.id.to_string(),
        summary: op.summary.to_string(),
        scope: op.scope.to_string(),
        request: op.request,
        success: op.success,
        response: op.response,
    });
    declared.chain(written)
}

/// `{"data":[item…],"meta":{"next_cursor"}}`
pub fn page_of(item: Value) -> Value {
    json!({
        "type": "object",
        "properties": {
            "data": { "type": "array", "items": item },
            "meta": { "type": "object", "properties": { "next_cursor": { "type": ["string", "null"] } }, "required": ["next_cursor"] },
        },
        "required": ["data", "meta"],
    })
}

fn error_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "error": {
            "type": "object",
            "properties": { "code": { "type": "string" }, "message": { "type": "string" }, "details": {} },
            "required": ["code", "message"],
        }},
        "required": ["error"],
    })
}

pub fn document(api_base_url: &str) -> Value {
    let mut paths = Map::new();
    for op in rows() {
        let mut operation = json!({
            "operationId": op.id,
            "summary": op.summary,
            "security": [{ "bearer": [op.scope] }],
            "responses": {
                "4XX": { "description": "Error", "content": { "application/json": { "schema": error_schema() } } },
            },
        });
        let mut success = json!({ "description": "Success" });
        if let Some(response) = op.response {
            success["content"] = content_of(response()).0;
        }
        operation["responses"][op.success.to_string()] = success;
        let mut idempotent = true;
        if let Some(request) = op.request {
            let (content, custom) = content_of(request());
            idempotent = !custom;
            operation["requestBody"] = json!({ "required": true, "content": content });
        }
        if op.path.contains("{id}") {
            operation["parameters"] = json!([{ "name": "id", "in": "path", "required": true, "schema": { "type": "string", "format": "uuid" } }]);
        }
        if matches!(op.method, "post" | "patch") && idempotent {
            let header = json!({ "name": "X-Idempotency-Key", "in": "header", "required": false, "schema": { "type": "string", "maxLength": 255 } });
            match operation.get_mut("parameters").and_then(Value::as_array_mut) {
                Some(params) => params.push(header),
                None => operation["parameters"] = json!([header]),
            }
        }
        let entry = paths.entry(op.path.clone()).or_insert_with(|| json!({}));
        entry[op.method] = operation;
    }
    json!({
        "openapi": "3.1.0",
        "info": { "title": "Kobana Finance API", "version": env!("CARGO_PKG_VERSION") },
        "servers": [{ "url": api_base_url }],
        "components": { "securitySchemes": { "bearer": { "type": "http", "scheme": "bearer", "bearerFormat": "JWT" } } },
        "paths": paths,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every request body of `/v1` is checked against its schema (`validate::parse`):
    /// the check enforces every keyword the schema states.
    #[test]
    fn every_request_schema_is_enforced_by_the_check() {
        let mut refused = Vec::new();
        for row in rows() {
            if let Some(request) = row.request {
                refused.extend(
                    super::super::validate::unenforced(&request()).into_iter().map(|k| format!("{}: {k}", row.id)),
                );
            }
        }
        assert!(refused.is_empty(), "keywords the request check does not enforce:\n{}", refused.join("\n"));
    }
}
