//! Tools (SPEC §5): the catalogue is data — one [`ToolSpec`] row per tool, naming the
//! permission it needs, its annotations, its schemas and the operation it dispatches
//! to in-process. `tools/list` filters the rows by what the caller may run;
//! `tools/call` validates arguments and runs the operation, turning actionable errors
//! into `isError` results with the REST envelope.

use std::sync::OnceLock;

use bytes::Bytes;

use crate::kept::Kept;
use crate::storage::Conn;
use serde_json::{json, Map, Value};

use super::catalogue::{self, records, Route};
use super::listing::{self, Listed};
use super::schema::{self, Side};
use super::view::View;
use super::{confirm, no_cursor, unavailable, McpContext};
use crate::domain::roles::{permission, Access, Refusal, Resource};
use crate::error::{ApiError, ErrorCode};
use crate::ops::machinery::resource::{Declaration, Deletable, Op, Records, Registrar, Writable, Written};
use crate::protocol::rpc::RpcError;

pub use crate::ops::machinery::resource::BoxFuture;

/// A tool invocation as its handler sees it.
pub struct ToolCall<'a> {
    pub ctx: &'a McpContext<'a>,
    /// The tool called.
    pub tool: &'a ToolSpec,
    pub arguments: &'a Map<String, Value>,
}

/// Runs the operation. Write tools get the call's database transaction (committed by
/// the caller together with the confirmation nonce, if any); read tools a connection.
pub type Handler = for<'a> fn(&'a ToolCall<'a>, &'a mut Conn) -> Answering<'a>;

/// What a [`Handler`] answers, once the tool has run.
pub type Answering<'a> = BoxFuture<'a, Result<Answer, ApiError>>;

/// What a tool's handler answers: a JSON value, or JSON it wrote itself (a list page
/// picked while serialising), which the result carries as it is.
pub enum Answer {
    Value(Value),
    /// JSON the handler wrote (with `serde_json` and text it read as UTF-8).
    Json(Vec<u8>),
}

/// A handler whose operation answers a value.
pub fn answer<'a>(value: impl std::future::Future<Output = Result<Value, ApiError>> + Send + 'a) -> Answering<'a> {
    Box::pin(async move { value.await.map(Answer::Value) })
}

impl Answer {
    /// The answer as JSON text.
    pub fn into_json(self) -> Vec<u8> {
        match self {
            Answer::Value(value) => value.to_string().into_bytes(),
            Answer::Json(json) => json,
        }
    }

    /// The answer as a value.
    pub fn into_value(self) -> Result<Value, ApiError> {
        match self {
            Answer::Value(value) => Ok(value),
            Answer::Json(json) => serde_json::from_slice(&json).map_err(|_| ApiError::internal()),
        }
    }
}

/// Describes, in the user's terms, what a destructive call is about to do (the
/// confirmation message).
pub type Describe = for<'a> fn(&'a ToolCall<'a>, &'a mut Conn) -> Asking<'a>;

pub use crate::ops::machinery::resource::Asking;

#[derive(Debug, Clone, Copy)]
pub struct Annotations {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
}

impl Annotations {
    /// As `tools/list` shows them (SPEC §5), under the tool's `title`.
    pub fn json(self, title: &str) -> Value {
        json!({
            "title": title,
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": false,
        })
    }
}

/// One row of the catalogue.
#[derive(Clone)]
pub struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// What the tool needs; `None` for tools every valid token may run.
    pub permission: Option<(Resource, Access)>,
    pub annotations: Annotations,
    /// The `/v1` operation this tool is the MCP door of.
    pub route: Option<Route>,
    pub schemas: Schemas,
    pub handler: Handler,
    /// For destructive tools: the confirmation message (SPEC §5.2).
    pub describe: Option<Describe>,
}

/// Where a tool's input and output schemas come from.
#[derive(Debug, Clone, Copy)]
pub enum Schemas {
    /// Functions of the tool's own.
    Given { input: fn() -> Value, output: Option<fn() -> Value> },
    /// A declared own row of a resource: its query or request, and its response
    /// ([`catalogue::records::row_input`]).
    Row(&'static Op),
}

impl ToolSpec {
    /// The tool's input schema, as generated.
    pub fn input_schema(&self) -> Value {
        match self.schemas {
            Schemas::Given { input, .. } => input(),
            Schemas::Row(op) => catalogue::records::row_input(op),
        }
    }

    /// The tool's output schema, as generated.
    pub fn output_schema(&self) -> Option<Value> {
        match self.schemas {
            Schemas::Given { output, .. } => output.map(|output| output()),
            Schemas::Row(op) => catalogue::records::row_output(op),
        }
    }

    /// The declared own row the tool runs, if it runs one.
    pub fn row(&self) -> Option<&'static Op> {
        match self.schemas {
            Schemas::Row(op) => Some(op),
            Schemas::Given { .. } => None,
        }
    }

    /// The tool as `tools/list` shows it (SPEC §5), with its compact input schema: what
    /// `listing.tsv` holds serialised (a unit test regenerates and compares it).
    #[cfg(test)]
    pub(crate) fn describe(&self, input_schema: &Value) -> Value {
        let mut tool = json!({
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": input_schema,
            "annotations": self.annotations.json(self.title),
        });
        if let Some(output) = self.output_schema() {
            tool["outputSchema"] = schema::compact(output, Side::Output);
        }
        tool
    }

    /// Whether `view` offers this tool (SPEC §5.4).
    pub fn in_view(&self, view: &View) -> bool {
        view.offers_tool(self.name, self.annotations.read_only)
    }

    /// Whether a call counts against the write budget.
    pub fn is_write(&self) -> bool {
        !self.annotations.read_only
    }
}

/// The first tool of every list.
static WORKSPACES: &[ToolSpec] = &[ToolSpec {
    name: "finance_workspaces_list",
    title: "List workspaces",
    description:
        "Your workspaces, your role in each and what you may read, write or delete there. Call it first; pass \
workspace_id to the other tools when you have more than one.",
    permission: None,
    annotations: Annotations { read_only: true, destructive: false, idempotent: true },
    route: Route::get("/v1/workspaces", ""),
    schemas: Schemas::Given { input: no_arguments_schema, output: Some(workspaces_output_schema) },
    handler: workspaces_list,
    describe: None,
}];

/// The catalogue, in the order `tools/list` returns it (SPEC §5): `finance_workspaces_list`
/// first, then the money flow — reports, cash flow, payables, receivables, reconciliations, transactions and transfers,
/// accounts, receipts, attachments — then the registers: companies, people, categories, cost
/// centers, taxes, automatic rules, banks. A client that shows an agent only the first tools of a server
/// (Cursor: 40) still shows every payables and receivables tool.
///
/// Every tool but the workspace list and the attachment ones is a declared operation's
/// row (`ops::resource::Op::tool`), built here once per process from the rows alone, over
/// the registry ([`crate::ops::registry::register`]), whose order is the catalogue's.
fn build_catalogue() -> Vec<ToolSpec> {
    let mut tools = Catalogue(WORKSPACES.to_vec());
    crate::ops::registry::register(&mut tools);
    tools.0
}

/// The tools of every registered resource, in the registry's order.
struct Catalogue(Vec<ToolSpec>);

impl Registrar for Catalogue {
    fn records<R: Writable + Deletable>(&mut self, _toolset: &'static str, declaration: &'static Declaration) {
        self.0.extend(records::tools::<R>(declaration));
    }

    fn read_only<R: Records>(&mut self, _toolset: &'static str, declaration: &'static Declaration) {
        self.0.extend(records::read_tools::<R>(declaration));
    }

    fn own(&mut self, _toolset: &'static str, declaration: &'static Declaration) {
        self.0.extend(records::own_tools(declaration));
    }

    /// The attachments' tools are written out in full; no tool reaches who has access.
    fn written(&mut self, written: &'static Written) {
        if written.resource == Resource::Attachments {
            self.0.extend_from_slice(catalogue::attachments::TOOLS);
        }
    }
}

pub fn catalogue() -> impl Iterator<Item = &'static ToolSpec> {
    static CATALOGUE: OnceLock<Vec<ToolSpec>> = OnceLock::new();
    CATALOGUE.get_or_init(build_catalogue).iter()
}

pub fn find(name: &str) -> Option<&'static ToolSpec> {
    catalogue().find(|t| t.name == name)
}

/// The tool named `name` if `view` offers it: outside the view a tool is as unknown as
/// a name that does not exist.
pub fn find_in(name: &str, view: &View) -> Option<&'static ToolSpec> {
    find(name).filter(|t| t.in_view(view))
}

/// Whether a `tools/call` of `name` spends the write budget: a tool that changes data,
/// or in find mode a runner of such tools (a tool the view hides is as unknown as a
/// name that does not exist, and spends the read budget).
pub fn spends_write_budget(name: &str, view: &View) -> bool {
    if view.is_find() {
        return super::find::runs_writes(name);
    }
    find_in(name, view).is_some_and(ToolSpec::is_write)
}

/// Names, on each operation of the `/v1` OpenAPI document, the tool that is its MCP
/// door (`x-mcp-tool`): the catalogue and the document describe one set of operations.
pub fn name_operations(document: &mut Value) {
    for tool in catalogue() {
        let Some(route) = tool.route else { continue };
        if let Some(operation) =
            document.get_mut("paths").and_then(|p| p.get_mut(route.path())).and_then(|p| p.get_mut(route.method))
        {
            operation["x-mcp-tool"] = json!(tool.name);
        }
    }
}

/// Every tool with its serialised parts ([`listing`]), in catalogue order.
fn generated() -> impl Iterator<Item = (&'static ToolSpec, &'static Listed)> {
    catalogue().zip(listing::all())
}

/// The input schema `tools/call` checks: the one `tools/list` shows, resolved.
fn input_schema(tool: &ToolSpec) -> std::borrow::Cow<'static, Value> {
    match listing::all().iter().find(|l| l.name == tool.name).and_then(Listed::check_schema) {
        Some(checked) => std::borrow::Cow::Borrowed(checked),
        None => std::borrow::Cow::Owned(schema::resolve(&schema::compact(tool.input_schema(), Side::Input))),
    }
}

fn no_arguments_schema() -> Value {
    json!({ "type": "object", "properties": {}, "additionalProperties": false })
}

fn workspaces_output_schema() -> Value {
    let permission = json!({
        "type": "object",
        "properties": { "read": {"type": "boolean"}, "write": {"type": "boolean"}, "delete": {"type": "boolean"} },
        "required": ["read", "write", "delete"],
    });
    json!({
        "type": "object",
        "properties": {
            "data": { "type": "array", "items": {
                "type": "object",
                "properties": {
                    "id": { "type": "string", "format": "uuid" },
                    "name": { "type": "string" },
                    "role": { "type": "string", "enum": ["owner", "admin", "finance", "viewer"] },
                    "permissions": { "type": "object", "additionalProperties": permission },
                },
                "required": ["id", "name", "role", "permissions"],
            }},
            "meta": { "type": "object", "properties": { "next_cursor": { "type": ["string", "null"] } } },
        },
        "required": ["data", "meta"],
    })
}

fn workspaces_list<'a>(call: &'a ToolCall<'a>, _conn: &'a mut Conn) -> Answering<'a> {
    answer(async move {
        let ctx = call.ctx.op_context().await?;
        let list = crate::ops::workspaces::list(&ctx)?;
        serde_json::to_value(list).map_err(|_| ApiError::internal())
    })
}

/// Whether `tools/list` shows `tool`: the scope is in the token and the role grants it
/// in the default workspace when one is given, else in any of the caller's workspaces.
pub(super) async fn visible(ctx: &McpContext<'_>, tool: &ToolSpec) -> Result<bool, ApiError> {
    match tool.permission {
        None => Ok(true),
        Some((resource, access)) => ctx.may(resource, access).await,
    }
}

/// `tools/list`: the visible tools as a serialised JSON array (the result's `tools`
/// member), spliced from the serialised parts. Which tools a caller sees is a set of
/// the catalogue; the array of each set is built once per era form and kept, so a
/// request answers shared bytes instead of copying the catalogue again.
pub async fn list(ctx: &McpContext<'_>, params: &Map<String, Value>) -> Result<Bytes, RpcError> {
    no_cursor(params)?;
    if ctx.view.is_find() {
        return super::find::list(ctx).await;
    }
    let full = !ctx.era.is_2025_03_26();
    let mut shown: u128 = 0;
    for (at, tool) in catalogue().enumerate() {
        if tool.in_view(&ctx.view) && visible(ctx, tool).await.map_err(|e| unavailable(&e))? {
            shown |= 1 << at;
        }
    }
    Ok(LISTS.get((shown, full), || {
        let mut tools = String::with_capacity(listing::all().iter().map(|l| l.serialised_len() + 1).sum::<usize>() + 2);
        tools.push('[');
        for (at, (_, listed)) in generated().enumerate() {
            if shown & (1 << at) != 0 {
                if tools.len() > 1 {
                    tools.push(',');
                }
                listed.write(&mut tools, full);
            }
        }
        tools.push(']');
        Bytes::from(tools)
    }))
}

/// The `tools/list` arrays built so far, by the set of tools shown and the era form
/// (callers fall into few: a role, a scope set, a view).
static LISTS: Kept<(u128, bool), Bytes> = Kept::new(64);

/// A tool result: the JSON as text, and as structured content — except for an error
/// (`isError`), whose envelope is its text only: a tool's `outputSchema` describes its
/// success, structured content must conform to it, and a client that validates it would
/// show its own schema failure instead of the server's message (SPEC §5).
pub fn tool_result(value: &Value, is_error: bool) -> Map<String, Value> {
    let mut result = Map::new();
    result.insert("content".into(), json!([{ "type": "text", "text": value.to_string() }]));
    if is_error {
        result.insert("isError".into(), json!(true));
    } else {
        result.insert("structuredContent".into(), value.clone());
    }
    result
}

/// The result of an operation's outcome: the value, or the REST envelope as `isError`.
/// A dependency failure is a protocol-level 503 instead.
pub fn outcome_result(outcome: Result<Value, ApiError>) -> Result<Map<String, Value>, RpcError> {
    match outcome {
        Ok(value) => Ok(tool_result(&value, false)),
        Err(e) if e.code == ErrorCode::ServiceUnavailable => Err(unavailable(&e)),
        Err(e) => Ok(tool_result(&e.envelope(), true)),
    }
}

/// What `tools/call` answers: result members, or — for an operation's successful
/// result, the common case — the result serialised once, which the transport writes
/// both as the text content and as `structuredContent` without building either again.
pub enum ToolAnswer {
    Members(Map<String, Value>),
    Serialised(Vec<u8>),
}

impl ToolAnswer {
    /// The answer as result members and members kept serialised (`content`, then
    /// `structuredContent` where the era has it).
    pub fn into_parts(self, structured: bool) -> (Map<String, Value>, Vec<(&'static str, Bytes)>) {
        match self {
            ToolAnswer::Members(members) => (members, Vec::new()),
            ToolAnswer::Serialised(json) => {
                let mut content = Vec::with_capacity(json.len() + json.len() / 4 + 32);
                content.extend_from_slice(b"[{\"type\":\"text\",\"text\":");
                push_json_string(&mut content, &json);
                content.extend_from_slice(b"}]");
                let mut raw = vec![("content", Bytes::from(content))];
                if structured {
                    raw.push(("structuredContent", Bytes::from(json)));
                }
                (Map::new(), raw)
            }
        }
    }
}

/// Appends `json` (compact JSON the server wrote) as a JSON string. Compact JSON holds
/// no raw control characters (its strings carry them escaped), so only `"` and `\`
/// need a backslash: copied in runs between them, not byte by byte. Anything else —
/// which the server never writes — goes through `serde_json`'s escaping.
fn push_json_string(out: &mut Vec<u8>, json: &[u8]) {
    let start = out.len();
    out.push(b'"');
    let mut run = 0;
    for (at, &b) in json.iter().enumerate() {
        match b {
            b'"' | b'\\' => {
                out.extend_from_slice(&json[run..at]);
                out.push(b'\\');
                run = at;
            }
            0..0x20 => {
                out.truncate(start);
                let text = String::from_utf8_lossy(json);
                out.extend_from_slice(
                    serde_json::to_string(&*text).unwrap_or_else(|_| String::from("\"\"")).as_bytes(),
                );
                return;
            }
            _ => {}
        }
    }
    out.extend_from_slice(&json[run..]);
    out.push(b'"');
}

pub async fn call(ctx: &McpContext<'_>, params: &Map<String, Value>) -> Result<ToolAnswer, RpcError> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("params.name must be a string"))?;
    let arguments = arguments_of(params)?;
    if ctx.view.is_find() {
        return super::find::call(ctx, name, arguments, params).await;
    }
    let tool = find_in(name, &ctx.view).ok_or_else(|| unknown_tool(name))?;
    run(ctx, tool, arguments, params).await
}

/// -32602 for a tool that does not exist or that the view hides.
pub(super) fn unknown_tool(name: &str) -> RpcError {
    RpcError::invalid_params(format!("Unknown tool: {name}"))
}

/// A call's `arguments` (absent or null: none).
fn arguments_of(params: &Map<String, Value>) -> Result<&Map<String, Value>, RpcError> {
    static NONE: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
    match params.get("arguments") {
        None | Some(Value::Null) => Ok(&*NONE),
        Some(Value::Object(args)) => Ok(args),
        Some(_) => Err(RpcError::invalid_params("params.arguments must be an object")),
    }
}

/// Runs a catalogue tool the view offers, as `tools/call` does: checks, then the
/// operation (a destructive one through its confirmation, whose `requestState` and
/// `inputResponses` are `params`'s).
pub(super) async fn run(
    ctx: &McpContext<'_>,
    tool: &'static ToolSpec,
    arguments: &Map<String, Value>,
    params: &Map<String, Value>,
) -> Result<ToolAnswer, RpcError> {
    if let Err(e) = admit(ctx, tool, arguments).await {
        return outcome_result(Err(e)).map(ToolAnswer::Members);
    }
    // The caller's memberships are read now, before the operation holds a connection:
    // with a one-connection pool (SQLite) a second acquire would wait forever.
    if let Err(e) = ctx.memberships().await {
        return outcome_result(Err(e)).map(ToolAnswer::Members);
    }
    let call = ToolCall { ctx, tool, arguments };
    if tool.annotations.destructive {
        ctx.release_connection();
        return confirm::run_confirmed(&call, tool, params).await.map(ToolAnswer::Members);
    }
    match execute(&call, tool).await {
        Ok(answer) => Ok(ToolAnswer::Serialised(answer.into_json())),
        Err(e) => outcome_result(Err(e)).map(ToolAnswer::Members),
    }
}

/// Permission and schema checks before anything runs, in the `/v1` door's order: the
/// token's scope before the arguments (a read-only token sending a bad body is told
/// about the scope), then the arguments, then the workspace and the role.
async fn admit(ctx: &McpContext<'_>, tool: &ToolSpec, arguments: &Map<String, Value>) -> Result<(), ApiError> {
    if let Some((resource, access)) = tool.permission {
        if !ctx.identity.scopes.allows(resource, access) {
            return Err(crate::ops::insufficient_scope(ctx.identity, resource, access));
        }
    }
    check_arguments(tool, arguments)?;
    let Some((resource, access)) = tool.permission else { return Ok(()) };
    // The workspace the call acts in, when it names one: the argument (already checked
    // to be a UUID), else the connection's default. One the caller is not a member of
    // is not found, however it was named (SPEC §6).
    let named = arguments.get("workspace_id").and_then(Value::as_str);
    match (named, ctx.default_workspace.as_deref()) {
        (Some(id), _) => member_of(ctx, id).await?,
        (None, Some(default)) => connection_workspace(ctx, default).await?,
        (None, None) => {}
    }
    if !ctx.workspaces_allowing(resource, access, named).await?.is_empty() {
        return Ok(());
    }
    // Say which half (scope or role) is missing, as the operation would: the role of the
    // workspace the call acts in (the one named, else the caller's only one), else none
    // of the caller's roles. The operation checks both again.
    let only = named.or(ctx.default_workspace.as_deref());
    let role = match (only, ctx.memberships().await?) {
        (Some(id), memberships) => memberships.iter().find(|m| m.workspace_id == id).map(|m| m.role),
        (None, [one]) => Some(one.role),
        (None, _) => None,
    };
    Err(match permission(&ctx.identity.scopes, role, resource, access) {
        Err(Refusal::Scope) => crate::ops::insufficient_scope(ctx.identity, resource, access),
        _ => crate::ops::role_refusal(role, resource, access),
    })
}

/// The arguments against the tool's input schema, refused with the code the `/v1` door
/// answers for the same input: a read's arguments are its route's query parameters
/// (400 `bad_request`), a write's are its body (422 `unprocessable_entity`).
fn check_arguments(tool: &ToolSpec, arguments: &Map<String, Value>) -> Result<(), ApiError> {
    crate::ops::machinery::validate::check_object(&input_schema(tool), arguments, "").map_err(|mut error| {
        if tool.annotations.read_only && error.code == ErrorCode::UnprocessableEntity {
            error.code = ErrorCode::BadRequest;
        }
        error
    })
}

/// The connection's default workspace (`X-Workspace-Id` or `?workspace_id=`) must be one
/// of the caller's: otherwise it answers as the `workspace_id` argument would — a value
/// that is not a UUID is `bad_request`, anything else not found.
async fn connection_workspace(ctx: &McpContext<'_>, id: &str) -> Result<(), ApiError> {
    if uuid::Uuid::parse_str(id).is_err() {
        return Err(ApiError::bad_request(
            "The connection's workspace (X-Workspace-Id or ?workspace_id=) must be a UUID",
        )
        .with_details(json!({ "field": "workspace_id", "reason": "invalid_uuid" })));
    }
    member_of(ctx, id).await
}

/// A workspace of the caller's, or not found: another tenant's reads as missing.
async fn member_of(ctx: &McpContext<'_>, id: &str) -> Result<(), ApiError> {
    if ctx.memberships().await?.iter().any(|m| m.workspace_id == id) {
        Ok(())
    } else {
        Err(ApiError::not_found("Workspace"))
    }
}

/// Runs a tool that needs no confirmation: reads on the request's connection, writes in
/// one transaction.
async fn execute(call: &ToolCall<'_>, tool: &ToolSpec) -> Result<Answer, ApiError> {
    if tool.annotations.read_only {
        let mut conn = call.ctx.connection().await?;
        return (tool.handler)(call, &mut conn).await;
    }
    call.ctx.release_connection();
    let mut tx = call.ctx.state.db.begin().await?;
    let value = (tool.handler)(call, &mut tx).await?;
    tx.commit().await?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text content is the result's JSON as a JSON string, as `serde_json` writes
    /// it, for JSON with quotes, backslashes, escapes and non-ASCII text, and for text
    /// the fast path leaves to `serde_json` (a raw tab).
    #[test]
    fn a_tool_result_is_its_json_as_a_json_string() {
        for json in [
            r#"{"a":"b","c":[1,2],"n":"São Paulo — ação"}"#,
            r#"{"q":"say \"hi\" \\ path","u":"\u00e9\n"}"#,
            "",
            "\"",
            r#"{"raw":"tab	here"}"#,
            "plain",
        ] {
            let mut out = Vec::new();
            push_json_string(&mut out, json.as_bytes());
            assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(json).unwrap(), "{json}");
        }
    }

    /// `tools/list` keeps the set of tools a caller sees as bits of a `u128`.
    #[test]
    fn the_catalogue_fits_the_set_of_shown_tools() {
        assert!(catalogue().count() <= 128);
    }

    #[test]
    fn workspaces_list_is_first_and_read_only() {
        let first = catalogue().next().unwrap();
        assert_eq!(first.name, "finance_workspaces_list");
        assert!(first.annotations.read_only && first.annotations.idempotent && !first.annotations.destructive);
        assert!(first.permission.is_none());
    }

    /// Every tool is the door of one `/v1` operation, and a write tool's input schema
    /// is that operation's request schema (same fields, types, enums and required list)
    /// plus the tool-only arguments.
    #[test]
    fn every_tool_is_an_operation_and_takes_its_request_schema() {
        let mut document = crate::ops::registry::document("https://api.example");
        name_operations(&mut document);
        let tool_only = ["workspace_id", "id", "idempotency_key", "fields", "attachment_id"];
        for tool in catalogue().filter(|t| t.name != "finance_workspaces_list") {
            let route = tool.route.unwrap_or_else(|| panic!("{} has no route", tool.name));
            let operation = &document["paths"][route.path()][route.method];
            assert_eq!(operation["x-mcp-tool"], json!(tool.name), "{} → {} {}", tool.name, route.method, route.path());
            let request = &operation["requestBody"]["content"]["application/json"]["schema"];
            if request.is_null()
                || !tool.name.ends_with("_create") && !tool.name.ends_with("_update") && tool.annotations.read_only
            {
                continue;
            }
            let input = tool.input_schema();
            for (field, schema) in request["properties"].as_object().unwrap() {
                if v1_only(tool.name, field) {
                    assert!(input["properties"].get(field).is_none(), "{}: {field} is /v1's alone", tool.name);
                    continue;
                }
                assert_eq!(&input["properties"][field], schema, "{}: field {field}", tool.name);
            }
            for field in input["properties"].as_object().unwrap().keys() {
                assert!(
                    request["properties"].get(field).is_some() || tool_only.contains(&field.as_str()),
                    "{}: extra field {field}",
                    tool.name
                );
            }
            let required = |s: &Value| -> Vec<String> {
                let mut r: Vec<String> = s["required"]
                    .as_array()
                    .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
                    .unwrap_or_default();
                r.retain(|f| !tool_only.contains(&f.as_str()));
                r.sort();
                r
            };
            assert_eq!(required(&input), required(request), "{}: required", tool.name);
        }
    }

    /// The fields of `/v1`'s bill `PATCH` that move the status: the update tools never
    /// take them (money moves through the confirmed tools).
    fn v1_only(tool: &str, field: &str) -> bool {
        matches!(tool, "finance_payables_update" | "finance_receivables_update")
            && ["status", "payment_date", "interest_amount", "discount_amount", "ticket_amount"].contains(&field)
    }

    #[test]
    fn destructive_tools_are_exactly_those_of_the_contract() {
        let destructive: Vec<&str> = catalogue().filter(|t| t.annotations.destructive).map(|t| t.name).collect();
        for name in &destructive {
            assert!(
                name.ends_with("_delete")
                    || name.ends_with("_cancel")
                    || name.ends_with("_settle")
                    || name.ends_with("_reopen")
                    || *name == "finance_transfers_create"
                    || *name == "finance_accounts_adjust_balance"
                    || *name == "finance_reconciliations_create"
                    || *name == "finance_payables_send_to_bank"
                    || *name == "finance_payables_cancel_dispatch"
                    || *name == "finance_receivables_charge"
                    || *name == "finance_receivables_cancel_charge",
                "{name}"
            );
        }
        assert_eq!(destructive.len(), 12 + 3 * 2 + 3 + 4, "{destructive:?}");
        assert!(catalogue().all(|t| t.annotations.destructive == t.describe.is_some()));
        assert_eq!(catalogue().count(), include_str!("listing.tsv").lines().count());
    }

    /// What `tools/call` checks is what the tool's schema always said: resolving the
    /// compact schema gives back the generated one, less the annotations the check never
    /// reads (descriptions, titles, `"default": null`, numeric formats).
    #[test]
    fn the_checked_schema_is_the_generated_one() {
        fn annotations_out(v: &Value) -> Value {
            match v {
                Value::Object(o) => Value::Object(
                    o.iter()
                        .filter(|(k, v)| {
                            let annotation =
                                matches!(k.as_str(), "description" | "title" | "$schema") || k.starts_with("x-");
                            let null_default = k.as_str() == "default" && v.is_null();
                            let numeric_format =
                                k.as_str() == "format" && v.as_str().is_some_and(|f| f.starts_with("int"));
                            !(annotation || null_default || numeric_format)
                        })
                        .map(|(k, v)| {
                            (k.clone(), if k == "enum" || k == "required" { v.clone() } else { annotations_out(v) })
                        })
                        .collect(),
                ),
                Value::Array(a) => Value::Array(a.iter().map(annotations_out).collect()),
                other => other.clone(),
            }
        }
        for tool in catalogue() {
            let generated = schema::resolve(&tool.input_schema());
            assert_eq!(annotations_out(&input_schema(tool)), annotations_out(&generated), "{}", tool.name);
        }
    }

    #[test]
    fn arguments_are_checked_against_the_schema() {
        let schema = json!({"type":"object","properties":{"limit":{"type":"integer"}},"required":["limit"],"additionalProperties":false});
        let ok: Map<String, Value> = serde_json::from_value(json!({"limit": 3})).unwrap();
        assert!(crate::ops::machinery::validate::check_object(&schema, &ok, "").is_ok());
        for bad in [json!({}), json!({"limit":"3"}), json!({"limit":3,"x":1})] {
            let args: Map<String, Value> = serde_json::from_value(bad).unwrap();
            let err = crate::ops::machinery::validate::check_object(&schema, &args, "").unwrap_err();
            assert_eq!(err.code, ErrorCode::UnprocessableEntity);
            assert!(err.details.unwrap().get("field").is_some());
        }
    }
}
