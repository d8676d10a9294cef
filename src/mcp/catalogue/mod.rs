//! The tool catalogue's building blocks: every tool is generated from a `/v1`
//! operation and its request type. A write tool's input schema is the endpoint's own
//! request schema plus `workspace_id` (and the path `id`, and `idempotency_key` on
//! creates); list tools take `filters`/`sort`/`limit`/`cursor`/`fields`; get tools
//! `id`/`fields`. Tools dispatch in-process to the operation with channel `mcp`.

pub mod attachments;
pub mod records;

use crate::storage::Conn;
use serde_json::{json, Map, Value};

use crate::error::ApiError;
use crate::mcp::tools::{Annotations, Answer, ToolCall};
use crate::ops::machinery::idempotency;
use crate::ops::machinery::list::{Kind, ListRequest, ListSpec};
use crate::ops::machinery::pick;
use crate::ops::OpContext;
use crate::storage::identity::Membership;

/// list, get, aggregates, download: read-only and idempotent.
pub const READ: Annotations = Annotations { read_only: true, destructive: false, idempotent: true };
/// Creates (safe to retry with an `idempotency_key`, not by themselves).
pub const CREATE: Annotations = Annotations { read_only: false, destructive: false, idempotent: false };
/// Updates and unlink: the same call twice leaves the same state.
pub const UPDATE: Annotations = Annotations { read_only: false, destructive: false, idempotent: true };
/// Deletes, cancels, settles, reopens, transfers, balance adjustments: confirmed by the
/// user before they run (SPEC §5.2).
pub const DESTRUCTIVE: Annotations = Annotations { read_only: false, destructive: true, idempotent: false };

/// The `/v1` route a tool is the MCP door of: `collection` + `suffix` (e.g.
/// `/v1/payables` + `/{id}/settle`). The OpenAPI document names the tool on that
/// operation.
#[derive(Debug, Clone, Copy)]
pub struct Route {
    pub method: &'static str,
    pub collection: &'static str,
    pub suffix: &'static str,
}

impl Route {
    pub const fn get(collection: &'static str, suffix: &'static str) -> Option<Route> {
        Some(Route { method: "get", collection, suffix })
    }
    pub const fn post(collection: &'static str, suffix: &'static str) -> Option<Route> {
        Some(Route { method: "post", collection, suffix })
    }
    pub const fn patch(collection: &'static str, suffix: &'static str) -> Option<Route> {
        Some(Route { method: "patch", collection, suffix })
    }
    pub const fn delete(collection: &'static str, suffix: &'static str) -> Option<Route> {
        Some(Route { method: "delete", collection, suffix })
    }
    pub fn path(&self) -> String {
        format!("{}{}", self.collection, self.suffix)
    }
}

/// A tool call's operation context, arguments and resolved workspace.
pub struct Scope<'a> {
    pub ctx: OpContext<'a>,
    pub args: Split,
    pub ws: &'a Membership,
}

impl<'a> Scope<'a> {
    /// The workspace of a tool call: `workspace_id` argument, else the connection
    /// default, else the caller's only workspace.
    pub async fn of(call: &'a ToolCall<'a>) -> Result<Scope<'a>, ApiError> {
        let ctx = call.ctx.op_context().await?;
        let args = split(call.arguments);
        let ws = ctx.workspace(args.workspace_id.as_deref(), call.ctx.default_workspace.as_deref())?;
        Ok(Scope { ctx, args, ws })
    }

    /// The record id (the schema requires it where the tool takes one).
    pub fn id(&self) -> &str {
        self.args.id.as_deref().unwrap_or_default()
    }

    /// The request body: the arguments without the tool-only ones.
    pub fn body(&self) -> Value {
        Value::Object(self.args.body.clone())
    }

    /// Runs a create under the call's `idempotency_key`, if any, in the call's
    /// transaction: the same orchestration, key space and fingerprint as
    /// `X-Idempotency-Key` on `POST {route}` (the body is the request), so a retry
    /// through either door answers the first result.
    pub async fn once<T: serde::Serialize>(
        &self,
        conn: &mut Conn,
        route: &str,
        op: impl AsyncFnOnce(&mut Conn) -> Result<T, ApiError>,
    ) -> Result<Value, ApiError> {
        let input = self.body();
        let keyed = idempotency::Keyed {
            key: self.args.idempotency_key.as_deref(),
            operation: route,
            input: &input,
            status: 201,
        };
        Ok(idempotency::run(conn, self.ws, &self.ctx.identity.user_id, keyed, op).await?.stored.body)
    }
}

pub use crate::ops::machinery::common::brl;

/// A record schema as a projection may return it: `fields` can leave any field out.
pub fn projected(mut schema: Value) -> Value {
    if let Some(object) = schema.as_object_mut() {
        object.remove("required");
        object.remove("$schema");
        object.remove("title");
    }
    schema
}

/// The tool-only arguments carry no descriptions: what they mean is said once, in the
/// server's instructions and the guide resource, instead of in every tool.
fn uuid_property() -> Value {
    json!({ "type": "string", "format": "uuid" })
}

fn workspace_property() -> Value {
    uuid_property()
}

fn fields_property() -> Value {
    json!({ "type": "array", "items": { "type": "string" } })
}

/// A filter kind's name in a list tool's `$defs` and its value schema; enums have no
/// definition of their own (each field has its own values).
fn filter_value(kind: Kind) -> (Option<&'static str>, Value) {
    match kind {
        Kind::Bool => (Some("boolean"), json!({ "type": "boolean" })),
        Kind::Integer => (Some("integer"), json!({ "type": "integer" })),
        Kind::Enum(values) => (None, json!({ "type": "string", "enum": values })),
        Kind::Uuid => (Some("uuid"), json!({ "type": "string", "format": "uuid" })),
        Kind::Date => (Some("date"), json!({ "type": "string", "format": "date" })),
        Kind::Timestamp => (Some("timestamp"), json!({ "type": "string" })),
        Kind::Money => (Some("money"), json!({ "type": "string" })),
        Kind::Text => (Some("text"), json!({ "type": "string" })),
    }
}

/// A filter: the value itself (equality), or an object of operators — `in` for every
/// kind, and the ranges for the ordered ones.
fn filter_schema(kind: Kind, scalar: Value) -> Value {
    let mut operators = Map::new();
    operators.insert("in".into(), json!({ "type": "array", "items": scalar.clone(), "maxItems": 100 }));
    if matches!(kind, Kind::Date | Kind::Timestamp | Kind::Integer | Kind::Money) {
        for op in ["gte", "lte", "gt", "lt"] {
            operators.insert(op.into(), scalar.clone());
        }
    }
    json!({ "anyOf": [scalar, { "type": "object", "properties": operators, "additionalProperties": false }] })
}

/// The input schema of a list tool for the resource described by `spec`. Each filter
/// kind's value-or-operators schema is defined once in `$defs` (named after the kind:
/// `uuid`, `date`, `money`, …) and referenced by every field of that kind.
pub fn list_schema(spec: &ListSpec) -> Value {
    list_schema_with(spec, &[])
}

/// [`list_schema`] with filters by id the list reads itself (`id_filters`, each a UUID
/// or `{in}`), as its `/v1` route takes them: an attachment's linked record.
pub fn list_schema_with(spec: &ListSpec, id_filters: &[&str]) -> Value {
    let mut defs = Map::new();
    let mut filters = Map::new();
    let by_id = id_filters.iter().map(|name| (*name, Kind::Uuid));
    for (field, kind) in spec.fields().map(|f| (f.name, f.kind)).chain(by_id) {
        let (name, scalar) = filter_value(kind);
        let schema = filter_schema(kind, scalar);
        let property = match name {
            Some(name) => {
                defs.entry(name).or_insert(schema);
                json!({ "$ref": format!("#/$defs/{name}") })
            }
            None => schema,
        };
        filters.insert(field.to_string(), property);
    }
    let sorts: Vec<String> = spec.sorts.iter().flat_map(|(name, _)| [name.to_string(), format!("-{name}")]).collect();
    let mut schema = json!({
        "type": "object",
        "properties": {
            "workspace_id": workspace_property(),
            "filters": { "type": "object", "properties": filters, "additionalProperties": false },
            "sort": { "type": "string", "enum": sorts },
            "limit": { "type": "integer", "minimum": 1, "maximum": 100, "default": 25 },
            "cursor": { "type": "string" },
            "fields": fields_property(),
        },
        "additionalProperties": false,
    });
    if !defs.is_empty() {
        schema["$defs"] = Value::Object(defs);
    }
    schema
}

/// Tool arguments as the query string pairs of a `GET` operation.
pub fn query_pairs(arguments: &Map<String, Value>) -> Vec<(String, String)> {
    arguments
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                },
            )
        })
        .collect()
}

/// The input schema of a get tool.
pub fn get_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "id": uuid_property(), "workspace_id": workspace_property(), "fields": fields_property() },
        "required": ["id"],
        "additionalProperties": false,
    })
}

/// The input schema of a delete (or other id-only action) tool.
pub fn id_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "id": uuid_property(), "workspace_id": workspace_property() },
        "required": ["id"],
        "additionalProperties": false,
    })
}

/// A write tool's schema: the request type's own schema plus `workspace_id`, and the
/// path `id` (updates) or `idempotency_key` (creates).
pub fn write_schema(request: Value, with_id: bool, with_key: bool) -> Value {
    let mut schema = request;
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        properties.insert("workspace_id".into(), workspace_property());
        if with_id {
            properties.insert("id".into(), uuid_property());
        }
        if with_key {
            properties.insert("idempotency_key".into(), json!({ "type": "string", "minLength": 1, "maxLength": 255 }));
        }
    }
    if with_id {
        match schema.get_mut("required").and_then(Value::as_array_mut) {
            Some(required) => required.insert(0, json!("id")),
            None => schema["required"] = json!(["id"]),
        }
    }
    schema.as_object_mut().map(|o| o.remove("$schema"));
    schema.as_object_mut().map(|o| o.remove("title"));
    schema
}

/// Takes the tool-only arguments out, leaving the request body.
pub struct Split {
    pub workspace_id: Option<String>,
    pub id: Option<String>,
    pub idempotency_key: Option<String>,
    pub fields: Option<Vec<String>>,
    pub body: Map<String, Value>,
}

/// The `fields` argument: the names of the fields to answer.
fn fields_of(fields: Option<&Value>) -> Option<Vec<String>> {
    fields.and_then(Value::as_array).map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
}

pub fn split(arguments: &Map<String, Value>) -> Split {
    let mut body = arguments.clone();
    let text = |v: Option<Value>| v.and_then(|v| v.as_str().map(str::to_string));
    Split {
        workspace_id: text(body.remove("workspace_id")),
        id: text(body.remove("id")),
        idempotency_key: text(body.remove("idempotency_key")),
        fields: fields_of(body.remove("fields").as_ref()),
        body,
    }
}

/// The list request of a list tool's arguments.
pub fn list_request(arguments: &Map<String, Value>) -> Result<ListRequest, ApiError> {
    let mut request = ListRequest::from_arguments(
        arguments.get("filters"),
        arguments.get("sort"),
        arguments.get("limit"),
        arguments.get("cursor"),
    )?;
    request.fields = fields_of(arguments.get("fields"));
    Ok(request)
}

/// A record as a tool answers it, serialised: with `fields`, only those fields (picked
/// while writing, [`pick`]), else whole.
pub fn project<T: serde::Serialize>(record: &T, fields: Option<&[String]>) -> Result<Answer, ApiError> {
    pick::record(record, fields).map(Answer::Json)
}

/// A `{data, meta}` page, serialised, with `fields` applied to each row.
pub fn project_page<T: serde::Serialize>(
    page: &crate::ops::Page<T>,
    fields: Option<&[String]>,
) -> Result<Answer, ApiError> {
    pick::page(page, fields).map(Answer::Json)
}
