//! `GET /v1/openapi.json`: the OpenAPI 3.1 description of `/v1`, generated from the
//! resources' declarations ([`Declaration`]: route, scope, request and response types —
//! the same Rust types that validate the requests and that the MCP tools take).

use serde_json::{json, Map, Value};

use super::list::{Kind, ListSpec};
use super::resource::{Declaration, Deletable, Records, Registrar, Shape, Writable, Written};
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
    /// A list's filters and sorts.
    pub list: Option<&'static ListSpec>,
    /// Filters by a record's id that the operation reads itself, beside the list's.
    pub id_filters: &'static [&'static str],
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
    /// Its query parameters.
    query: Query,
    /// Why it is this product's own ([`Op::extension`]).
    extension: Option<&'static str>,
    /// What it says beyond its summary ([`Op::described`]).
    description: Option<&'static str>,
}

/// Where an operation's query parameters come from.
#[derive(Clone, Copy)]
enum Query {
    None,
    /// A list's filters, sort and page, and filters by id it reads itself.
    List(&'static ListSpec, &'static [&'static str]),
    /// The properties of a read's query schema (the aggregates' period).
    Schema(fn() -> Value),
    /// An id sweep's page: `limit` (up to 10,000) and `cursor`.
    Sweep,
    /// A record by id: `fields`.
    Record,
}

/// `fields=a,b`: only these fields of each record (an unknown name is 400, as an
/// unknown filter is).
fn fields_parameter() -> Value {
    json!({
        "name": "fields",
        "in": "query",
        "required": false,
        "schema": { "type": "string" },
        "description": "Comma-separated: only these fields of each record; an unknown one is 400 bad_request",
        "x-kobana-extension": "projection, as the tools' fields",
    })
}

impl Query {
    fn parameters(self) -> Vec<Value> {
        let parameter =
            |name: &str, schema: Value| json!({ "name": name, "in": "query", "required": false, "schema": schema });
        match self {
            Query::None => Vec::new(),
            Query::List(spec, id_filters) => {
                let sorts: Vec<String> =
                    spec.sorts.iter().flat_map(|(name, _)| [name.to_string(), format!("-{name}")]).collect();
                let mut parameters: Vec<Value> = spec
                    .fields()
                    .map(|f| {
                        let mut documented = parameter(f.name, filter_value(f.kind));
                        if let Some(why) = f.extension {
                            documented["x-kobana-extension"] = json!(why);
                        }
                        documented
                    })
                    .collect();
                parameters.extend(id_filters.iter().map(|name| parameter(name, filter_value(Kind::Uuid))));
                parameters.push(parameter("sort", json!({ "type": "string", "enum": sorts })));
                parameters.push(parameter("limit", json!({ "type": "integer", "minimum": 1, "maximum": 100 })));
                parameters.push(parameter("cursor", json!({ "type": "string" })));
                parameters.push(fields_parameter());
                parameters
            }
            Query::Record => vec![fields_parameter()],
            Query::Schema(schema) => {
                let schema = schema();
                let properties = schema["properties"].as_object().cloned().unwrap_or_default();
                let required = schema["required"].as_array().cloned().unwrap_or_default();
                properties
                    .into_iter()
                    .filter(|(name, _)| name != "workspace_id")
                    .map(|(n, s)| {
                        let mut documented = parameter(&n, s);
                        documented["required"] = json!(required.contains(&json!(n)));
                        documented
                    })
                    .collect()
            }
            Query::Sweep => vec![
                parameter("limit", json!({ "type": "integer", "minimum": 1, "maximum": 10_000 })),
                parameter("cursor", json!({ "type": "string" })),
            ],
        }
    }
}

/// A filter's value in a query string. Each filter also takes its operators —
/// `name[in]=a,b` for every kind, `name[gte|lte|gt|lt]=` for dates, instants, integers
/// and amounts — which the operation's description says.
fn filter_value(kind: Kind) -> Value {
    match kind {
        Kind::Bool => json!({ "type": "string", "enum": ["true", "false"] }),
        Kind::Enum(values) => json!({ "type": "string", "enum": values }),
        Kind::Uuid => json!({ "type": "string", "format": "uuid" }),
        Kind::Integer => json!({ "type": "integer" }),
        Kind::Date | Kind::Timestamp | Kind::Money | Kind::Text => json!({ "type": "string" }),
    }
}

/// What a list's description says of its query string.
const LIST_QUERY: &str = " Filters: `field=value`, `field[in]=a,b`, and on dates, instants and amounts \
`field[gte]=`, `[lte]`, `[gt]`, `[lt]`; `sort=field` or `sort=-field`; `limit` (1–100, default 25) and `cursor`.";

/// The document's operations, as a [`Registrar`] walked over the registry collects them.
#[derive(Default)]
pub struct Document {
    rows: Vec<Row>,
}

impl Document {
    fn declared(&mut self, d: &'static Declaration) {
        self.rows.extend(d.operations.iter().map(|op| Row {
            method: op.method,
            path: d.path(op),
            id: d.id(op),
            summary: d.summary(op),
            scope: ScopeSet::required(d.resource, op.access),
            request: op.patch.map(|patch| patch.request).or(op.request),
            success: op.success,
            response: op.response,
            query: match (op.list, op.query) {
                (Some(spec), _) => Query::List(spec, &[]),
                (None, Some(schema)) => Query::Schema(schema),
                (None, None) if op.action == "ids" => Query::Sweep,
                (None, None) if op.shape == Shape::Get => Query::Record,
                (None, None) => Query::None,
            },
            extension: op.extension,
            description: op.description,
        }));
    }
}

impl Registrar for Document {
    fn records<R: Writable + Deletable>(&mut self, _toolset: &'static str, declaration: &'static Declaration) {
        self.declared(declaration);
    }

    fn read_only<R: Records>(&mut self, _toolset: &'static str, declaration: &'static Declaration) {
        self.declared(declaration);
    }

    fn own(&mut self, _toolset: &'static str, declaration: &'static Declaration) {
        self.declared(declaration);
    }

    fn written(&mut self, written: &'static Written) {
        self.rows.extend(written.operations.iter().map(|op| Row {
            method: op.method,
            path: op.path.to_string(),
            id: op.id.to_string(),
            summary: op.summary.to_string(),
            scope: op.scope.to_string(),
            request: op.request,
            success: op.success,
            response: op.response,
            query: match op.list {
                Some(spec) => Query::List(spec, op.id_filters),
                None if op.method == "get" && op.path.ends_with("/{id}") => Query::Record,
                None => Query::None,
            },
            extension: written.extension,
            description: None,
        }));
    }
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

impl Document {
    /// The document, its servers at `api_base_url`.
    pub fn into_json(self, api_base_url: &str) -> Value {
        let mut paths = Map::new();
        for op in self.rows {
            let summary = match op.query {
                Query::List(..) => format!("{}.{LIST_QUERY}", op.summary),
                _ => op.summary.clone(),
            };
            let mut operation = json!({
                "operationId": op.id,
                "summary": summary,
                "security": [{ "bearer": [op.scope] }],
                "responses": {
                    "4XX": { "description": "Error", "content": { "application/json": { "schema": error_schema() } } },
                },
            });
            if let Some(why) = op.extension {
                operation["x-kobana-extension"] = json!(why);
            }
            if let Some(description) = op.description {
                operation["description"] = json!(description);
            }
            let mut success = json!({ "description": "Success" });
            // A 204 has no body on `/v1` (the schema is the tool's answer).
            if let Some(response) = op.response.filter(|_| op.success != 204) {
                success["content"] = content_of(response()).0;
            }
            operation["responses"][op.success.to_string()] = success;
            let mut idempotent = true;
            if let Some(request) = op.request {
                let (content, custom) = content_of(request());
                idempotent = !custom;
                operation["requestBody"] = json!({ "required": true, "content": content });
            }
            let mut parameters = op.query.parameters();
            if op.path.contains("{id}") {
                parameters.insert(0, json!({ "name": "id", "in": "path", "required": true, "schema": { "type": "string", "format": "uuid" } }));
            }
            if !parameters.is_empty() {
                operation["parameters"] = Value::Array(parameters);
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
}

impl Document {
    /// Each operation's id and request schema, for the check that every schema is enforced.
    #[cfg(test)]
    pub(crate) fn requests(&self) -> impl Iterator<Item = (&str, fn() -> Value)> {
        self.rows.iter().filter_map(|row| Some((row.id.as_str(), row.request?)))
    }
}
