//! `GET /v1/openapi.json`: the OpenAPI 3.1 description of `/v1`, generated from the
//! same Rust types that validate the requests (and that the MCP tools will take).

use serde_json::{json, Map, Value};

use super::companies::{Company, CompanyCreate, CompanyUpdate};
use super::validate::schema_of;

/// One documented operation.
struct Operation {
    method: &'static str,
    path: &'static str,
    id: &'static str,
    summary: &'static str,
    scope: &'static str,
    request: Option<fn() -> Value>,
    success: u16,
    response: Option<fn() -> Value>,
}

fn page_of(item: Value) -> Value {
    json!({
        "type": "object",
        "properties": {
            "data": { "type": "array", "items": item },
            "meta": { "type": "object", "properties": { "next_cursor": { "type": ["string", "null"] } }, "required": ["next_cursor"] },
        },
        "required": ["data", "meta"],
    })
}

const OPERATIONS: &[Operation] = &[
    Operation { method: "get", path: "/v1/companies", id: "companies_list", summary: "List companies", scope: "finance.companies", request: None, success: 200, response: Some(|| page_of(schema_of::<Company>())) },
    Operation { method: "post", path: "/v1/companies", id: "companies_create", summary: "Create a company", scope: "finance.companies.write", request: Some(schema_of::<CompanyCreate>), success: 201, response: Some(schema_of::<Company>) },
    Operation { method: "get", path: "/v1/companies/{id}", id: "companies_get", summary: "Get a company", scope: "finance.companies", request: None, success: 200, response: Some(schema_of::<Company>) },
    Operation { method: "patch", path: "/v1/companies/{id}", id: "companies_update", summary: "Update a company", scope: "finance.companies.write", request: Some(schema_of::<CompanyUpdate>), success: 200, response: Some(schema_of::<Company>) },
    Operation { method: "delete", path: "/v1/companies/{id}", id: "companies_delete", summary: "Delete a company", scope: "finance.companies.write", request: None, success: 204, response: None },
];

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
    for op in OPERATIONS {
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
            success["content"] = json!({ "application/json": { "schema": response() } });
        }
        operation["responses"][op.success.to_string()] = success;
        if let Some(request) = op.request {
            operation["requestBody"] = json!({ "required": true, "content": { "application/json": { "schema": request() } } });
        }
        if op.path.contains("{id}") {
            operation["parameters"] = json!([{ "name": "id", "in": "path", "required": true, "schema": { "type": "string", "format": "uuid" } }]);
        }
        if op.method == "post" {
            let header = json!({ "name": "X-Idempotency-Key", "in": "header", "required": false, "schema": { "type": "string", "maxLength": 255 } });
            match operation.get_mut("parameters").and_then(Value::as_array_mut) {
                Some(params) => params.push(header),
                None => operation["parameters"] = json!([header]),
            }
        }
        let entry = paths.entry(op.path.to_string()).or_insert_with(|| json!({}));
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
