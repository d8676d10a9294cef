//! The whole tool catalogue through the real pipeline (SPEC §5, §5.1–§5.3): names and
//! order, visibility per role and scope, annotations, schemas equal to the `/v1` request
//! types, every tool called on the demo data, the confirmation of destructive tools in
//! both eras, schema and permission errors, projection and paging, isolation between
//! workspaces, and files.

use crate::common;

use std::collections::BTreeSet;

use base64::Engine;
use common::*;
use serde_json::{json, Value};

const TINY_PDF: &[u8] = b"%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n";

/// The toolsets in the catalogue's order (SPEC §5): the workspaces, the money flow, then
/// the registers. Their tools come from the listing ([`CONTRACT`]).
const TOOLSETS: &[&str] = &[
    "workspaces",
    "reports",
    "cash_flow",
    "payables",
    "receivables",
    "reconciliations",
    "transactions",
    "transfers",
    "accounts",
    "receipts",
    "attachments",
    "companies",
    "people",
    "categories",
    "cost_centers",
    "taxes",
    "automatic_rules",
    "banks",
];

/// The catalogue, toolset by toolset with its actions, in the order of `tools/list`, read
/// from the server's listing (`src/mcp/listing.tsv`, which the unit test
/// `listing_is_generated_from_the_catalogue` keeps what the server lists): a new tool
/// edits no test here. A tool belongs to the longest toolset its name starts with; the
/// toolsets must come in [`TOOLSETS`]' order, each once.
pub(crate) static CONTRACT: std::sync::LazyLock<Vec<(&'static str, Vec<&'static str>)>> =
    std::sync::LazyLock::new(|| {
        let mut contract: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
        for line in include_str!("../../../src/mcp/listing.tsv").lines() {
            let name = line.split('\t').next().unwrap_or_default();
            let toolset = TOOLSETS
                .iter()
                .filter(|t| name.starts_with(&format!("finance_{t}_")))
                .max_by_key(|t| t.len())
                .unwrap_or_else(|| panic!("{name} belongs to no toolset"));
            let action = &name[format!("finance_{toolset}_").len()..];
            match contract.last_mut() {
                Some((last, actions)) if last == toolset => actions.push(action),
                _ => contract.push((toolset, vec![action])),
            }
        }
        let order: Vec<&str> = contract.iter().map(|(toolset, _)| *toolset).collect();
        assert_eq!(order, TOOLSETS, "the listing's toolsets, in the catalogue's order, each once");
        contract
    });

fn contract_names() -> Vec<String> {
    CONTRACT
        .iter()
        .flat_map(|(resource, actions)| actions.iter().map(move |a| format!("finance_{resource}_{a}")))
        .collect()
}

fn action_of(name: &str) -> &str {
    CONTRACT
        .iter()
        .flat_map(|(r, actions)| actions.iter().map(move |a| (*r, *a)))
        .find(|(r, a)| name == format!("finance_{r}_{a}"))
        .map(|(_, a)| a)
        .unwrap_or_else(|| panic!("{name} is not in the contract"))
}

fn is_read(name: &str) -> bool {
    name == "finance_workspaces_list"
        || matches!(
            action_of(name),
            "list" | "get" | "aggregates" | "duplicates" | "download" | "suggest" | "aging" | "income_statement"
        )
}

fn is_destructive(name: &str) -> bool {
    matches!(
        action_of(name),
        "delete" | "cancel" | "settle" | "reopen" | "send_to_bank" | "cancel_dispatch" | "charge" | "cancel_charge"
    ) || name == "finance_transfers_create"
        || name == "finance_accounts_adjust_balance"
        || name == "finance_reconciliations_create"
}

// ---------------------------------------------------------------------------------------
// Requests and results

/// A 2026 call from a client that declares form elicitation, with extra params
/// (`requestState`, `inputResponses`).
pub(crate) fn confirmable(tool: &str, arguments: Value, extra: Value) -> Mcp {
    let mut m = call(tool, arguments);
    let mut body: Value = serde_json::from_slice(&m.body).unwrap();
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {}});
    for (k, v) in extra.as_object().unwrap() {
        body["params"][k] = v.clone();
    }
    m.body = body.to_string().into_bytes();
    m
}

fn accept(state: &Value) -> Value {
    json!({"requestState": state, "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}})
}

/// A 2025-era call (no envelope) at `version`.
fn legacy(tool: &str, arguments: Value, version: &str) -> Mcp {
    Mcp::legacy("tools/call", json!({"name": tool, "arguments": arguments}), Some(version))
}

/// The JSON a tool result carries as text.
fn text_of(result: &Value) -> Value {
    let text = result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text content: {result}"));
    serde_json::from_str(text).unwrap_or_else(|_| panic!("text content is not JSON: {text}"))
}

/// A tool result's JSON, checking that structured content and text say the same.
fn payload(result: &Value) -> Value {
    assert_eq!(result["content"][0]["type"], "text", "{result}");
    let text = text_of(result);
    assert_eq!(result["structuredContent"], text, "structuredContent == text");
    text
}

async fn tool_names(h: &Harness, token: &str) -> Vec<String> {
    let reply = h.send(Mcp::modern("tools/list", json!({})).bearer(token).build()).await;
    reply.result()["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
}

/// The settlement transactions of a bill in the ledger.
async fn settlements(h: &Harness, billing_id: &str) -> i64 {
    count(h, "SELECT COUNT(*) FROM financial_transactions WHERE billing_id = $1", billing_id).await
}

/// One caller of the tools, remembering which tools it ran.
struct Agent<'h> {
    h: &'h Harness,
    token: String,
    called: BTreeSet<String>,
    /// Each visible tool's `outputSchema`, from the caller's `tools/list`.
    output_schemas: Option<std::collections::HashMap<String, Value>>,
    /// Every call through its runner on `/mcp/find` (SPEC §5.5).
    find: bool,
}

impl<'h> Agent<'h> {
    fn new(h: &'h Harness, token: String) -> Agent<'h> {
        Agent { h, token, called: BTreeSet::new(), output_schemas: None, find: false }
    }

    /// A successful result's JSON conforms to the tool's `outputSchema` (which clients
    /// may check): required fields, types, enums, formats.
    async fn check_output(&mut self, tool: &str, value: &Value) {
        if self.output_schemas.is_none() {
            let listed = self.h.send(Mcp::modern("tools/list", json!({})).bearer(&self.token).build()).await.result();
            let schemas = listed["tools"].as_array().unwrap().iter().filter(|t| t.get("outputSchema").is_some());
            self.output_schemas =
                Some(schemas.map(|t| (t["name"].as_str().unwrap().to_string(), t["outputSchema"].clone())).collect());
        }
        let Some(schema) = self.output_schemas.as_ref().and_then(|s| s.get(tool)) else { return };
        let object =
            value.as_object().unwrap_or_else(|| panic!("{tool} declares an outputSchema but answered {value}"));
        let schema = kobana_finance_mcp::mcp::schema::resolve(schema);
        if let Err(e) = kobana_finance_mcp::ops::machinery::validate::check_object(&schema, object, "") {
            panic!("{tool}: the result does not match its outputSchema: {} {:?}\n{value}", e.message, e.details);
        }
    }

    async fn result(&mut self, request: Mcp, tool: &str) -> Value {
        self.called.insert(tool.to_string());
        let request = if self.find { through_runner(request) } else { request };
        let reply = self.h.send(request.bearer(&self.token).build()).await;
        assert_eq!(reply.status, 200, "{tool}: {}", String::from_utf8_lossy(&reply.bytes));
        reply.result()
    }

    /// Calls a tool that must succeed; answers its JSON.
    async fn ok(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.result(call(tool, arguments), tool).await;
        assert_eq!(result.get("isError"), None, "{tool}: {result}");
        assert_eq!(result["resultType"], "complete", "{tool}");
        let value = payload(&result);
        self.check_output(tool, &value).await;
        value
    }

    /// Calls a tool that must answer `isError`; answers the envelope's `error`.
    async fn err(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.result(call(tool, arguments), tool).await;
        tool_error(&result)
    }

    /// The first call of a destructive tool: the confirmation message and requestState.
    async fn ask(&mut self, tool: &str, arguments: Value) -> (String, Value) {
        let ask = self.result(confirmable(tool, arguments, json!({})), tool).await;
        assert_eq!(ask["resultType"], "input_required", "{tool}: {ask}");
        let request = &ask["inputRequests"]["confirm"];
        assert_eq!(request["method"], "elicitation/create");
        assert_eq!(request["params"]["mode"], "form");
        assert_eq!(request["params"]["requestedSchema"]["properties"]["confirm"]["type"], "boolean");
        (request["params"]["message"].as_str().unwrap().to_string(), ask["requestState"].clone())
    }

    /// A destructive tool through the whole confirmation: ask, then accept. Answers the
    /// message the user saw and the tool's JSON.
    async fn confirmed(&mut self, tool: &str, arguments: Value) -> (String, Value) {
        let (message, state) = self.ask(tool, arguments.clone()).await;
        let done = self.result(confirmable(tool, arguments, accept(&state)), tool).await;
        assert_eq!(done.get("isError"), None, "{tool}: {done}");
        assert_eq!(done["resultType"], "complete");
        let value = payload(&done);
        self.check_output(tool, &value).await;
        (message, value)
    }
}

/// The runner of a catalogue tool in find mode: by its annotations.
pub(crate) fn runner_of(tool: &str) -> &'static str {
    let spec = kobana_finance_mcp::mcp::tools::find(tool).unwrap_or_else(|| panic!("no tool {tool}"));
    match (spec.annotations.read_only, spec.annotations.destructive) {
        (true, _) => "finance_tools_run_read",
        (false, false) => "finance_tools_run_write",
        (false, true) => "finance_tools_run_destructive",
    }
}

/// A `tools/call` request as find mode makes it: the tool's runner on `/mcp/find`, with
/// `{tool, arguments}` (the workspaces tool is called as itself there).
pub(crate) fn through_runner(request: Mcp) -> Mcp {
    let mut body: Value = serde_json::from_slice(&request.body).unwrap();
    let tool = body["params"]["name"].as_str().unwrap().to_string();
    if tool != "finance_workspaces_list" {
        let arguments = body["params"]["arguments"].take();
        body["params"]["name"] = json!(runner_of(&tool));
        body["params"]["arguments"] = json!({"tool": tool, "arguments": arguments});
    }
    let named = request.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("mcp-name"));
    let mut request = request.path("/mcp/find");
    if named {
        request = request.header("mcp-name", body["params"]["name"].as_str().unwrap());
    }
    request.body = body.to_string().into_bytes();
    request
}

fn id_of(record: &Value) -> String {
    record["id"].as_str().unwrap_or_else(|| panic!("no id in {record}")).to_string()
}

fn assert_mentions(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "{part:?} missing from {message:?}");
    }
}

fn created_through_mcp(record: &Value) {
    assert_eq!(record["created_via"], "mcp", "{record}");
    assert_eq!(record["created_by"], DEMO_OWNER, "{record}");
}

// ---------------------------------------------------------------------------------------
// The list: names, order, visibility, annotations, schemas

#[tokio::test]
async fn the_owner_sees_exactly_the_contract_catalogue_in_order() {
    let h = Harness::new().await;
    let names = tool_names(&h, &h.token(DEMO_OWNER)).await;
    assert_eq!(names, contract_names());
    assert_eq!(names[0], "finance_workspaces_list");
}

#[tokio::test]
async fn tools_list_shows_what_the_role_and_the_token_scopes_allow() {
    let h = Harness::new().await;
    let all = contract_names();
    let reads: Vec<String> = all.iter().filter(|n| is_read(n)).cloned().collect();
    // viewer: reads only.
    assert_eq!(tool_names(&h, &h.token(DEMO_VIEWER)).await, reads);
    // finance: everything but deleting companies and accounts.
    let finance: Vec<String> =
        all.iter().filter(|n| *n != "finance_companies_delete" && *n != "finance_accounts_delete").cloned().collect();
    assert_eq!(tool_names(&h, &h.token(DEMO_FINANCE)).await, finance);
    // finance.all: every read, no write, whatever the role.
    assert_eq!(tool_names(&h, &h.token_with(DEMO_OWNER, Some("finance.all"), |_| {})).await, reads);
    // One read scope: the workspaces and that resource's read tools.
    assert_eq!(
        tool_names(&h, &h.token_with(DEMO_OWNER, Some("finance.payables"), |_| {})).await,
        [
            "finance_workspaces_list",
            "finance_payables_list",
            "finance_payables_get",
            "finance_payables_aggregates",
            "finance_payables_duplicates"
        ]
    );
    // A write scope alone: the writes of that resource, not its reads.
    assert_eq!(
        tool_names(&h, &h.token_with(DEMO_OWNER, Some("finance.taxes.write"), |_| {})).await,
        ["finance_workspaces_list", "finance_taxes_create", "finance_taxes_update", "finance_taxes_delete"]
    );
    // No scope: only the workspaces.
    assert_eq!(tool_names(&h, &h.token_with(DEMO_OWNER, Some(""), |_| {})).await, ["finance_workspaces_list"]);
}

#[tokio::test]
async fn annotations_follow_the_contract() {
    let h = Harness::new().await;
    let reply = h.send(Mcp::modern("tools/list", json!({})).bearer(&h.token(DEMO_OWNER)).build()).await;
    let tools = reply.result()["tools"].as_array().unwrap().clone();
    let mut destructive = 0;
    for tool in &tools {
        let name = tool["name"].as_str().unwrap();
        let a = &tool["annotations"];
        assert_eq!(a["title"], tool["title"], "{name}");
        assert_eq!(a["openWorldHint"], false, "{name}");
        assert!(tool["description"].as_str().is_some_and(|d| !d.is_empty()), "{name}");
        assert_eq!(tool["inputSchema"]["type"], "object", "{name}");
        let read = is_read(name);
        assert_eq!(a["readOnlyHint"], read, "{name}");
        assert_eq!(a["destructiveHint"], is_destructive(name), "{name}");
        if is_destructive(name) {
            destructive += 1;
            assert!(tool["description"].as_str().unwrap().contains("confirm"), "{name} says the user is asked");
        }
        let idempotent = read || matches!(action_of(name), "update" | "unlink");
        assert_eq!(a["idempotentHint"], idempotent, "{name}");
    }
    // 12 deletes (every resource but workspaces, cash flow and transfers), 2 ×
    // settle/cancel/reopen, transfers_create, accounts_adjust_balance,
    // reconciliations_create.
    assert_eq!(destructive, 12 + 6 + 3 + 4);
}

/// The tool-only arguments a write tool adds to its endpoint's request schema.
fn tool_only_arguments(name: &str, path: &str) -> BTreeSet<String> {
    let mut extra = BTreeSet::from(["workspace_id".to_string()]);
    if path.contains("{id}") {
        // The path id: `attachment_id` for the link routes (whose body has its own `id`).
        extra.insert(
            if name.starts_with("finance_attachments_") && path.ends_with("/links") { "attachment_id" } else { "id" }
                .to_string(),
        );
    }
    if name.ends_with("_create") {
        extra.insert("idempotency_key".to_string());
    }
    extra
}

#[tokio::test]
async fn write_tools_take_their_endpoints_request_schema() {
    let h = Harness::new().await;
    let listed = h.send(Mcp::modern("tools/list", json!({})).bearer(&h.token(DEMO_OWNER)).build()).await.result();
    let openapi = h.send(Mcp::raw(vec![]).method(http::Method::GET).path("/v1/openapi.json").build()).await;
    assert_eq!(openapi.status, 200);
    let openapi = openapi.json();
    // Each operation names the tool that is its MCP door.
    let mut operations = std::collections::BTreeMap::new();
    for (path, item) in openapi["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            if let Some(tool) = operation["x-mcp-tool"].as_str() {
                assert!(
                    operations.insert(tool.to_string(), (method.clone(), path.clone(), operation.clone())).is_none(),
                    "{tool} names two operations"
                );
            }
        }
    }
    let mut checked = 0;
    for tool in listed["tools"].as_array().unwrap() {
        let name = tool["name"].as_str().unwrap();
        if name == "finance_workspaces_list" {
            continue;
        }
        let (method, path, operation) = operations.get(name).unwrap_or_else(|| panic!("no /v1 operation names {name}"));
        if is_read(name) {
            assert_eq!(method, "get", "{name}");
            continue;
        }
        // Resolved, the compact schema states the request schema exactly.
        let input = &meaning(&tool["inputSchema"]);
        let properties: BTreeSet<String> = input["properties"].as_object().unwrap().keys().cloned().collect();
        let required: BTreeSet<String> = input["required"]
            .as_array()
            .map(|r| r.iter().map(|v| v.as_str().unwrap().to_string()).collect())
            .unwrap_or_default();
        let extra = tool_only_arguments(name, path);
        let request = &meaning(&operation["requestBody"]["content"]["application/json"]["schema"]);
        if name == "finance_attachments_upload" {
            // multipart/form-data on /v1: the tool takes the file as base64.
            assert!(operation["requestBody"]["content"]["multipart/form-data"].is_object());
            assert_eq!(required, BTreeSet::from(["file_name".to_string(), "content_base64".to_string()]));
            checked += 1;
            continue;
        }
        let (request_properties, request_required): (BTreeSet<String>, BTreeSet<String>) = if request.is_null() {
            (BTreeSet::new(), BTreeSet::new())
        } else {
            // `/v1`'s bill PATCH also moves the status; the update tools never do.
            let v1_only: &[&str] = match name {
                "finance_payables_update" | "finance_receivables_update" => {
                    &["status", "payment_date", "interest_amount", "discount_amount", "ticket_amount"]
                }
                _ => &[],
            };
            for (field, schema) in request["properties"].as_object().unwrap() {
                if v1_only.contains(&field.as_str()) {
                    assert!(input["properties"].get(field).is_none(), "{name}: {field} is /v1's alone");
                    continue;
                }
                assert_eq!(&input["properties"][field], schema, "{name}: field {field} (types, enums, limits)");
            }
            (
                request["properties"]
                    .as_object()
                    .unwrap()
                    .keys()
                    .filter(|f| !v1_only.contains(&f.as_str()))
                    .cloned()
                    .collect(),
                request["required"]
                    .as_array()
                    .map(|r| r.iter().map(|v| v.as_str().unwrap().to_string()).collect())
                    .unwrap_or_default(),
            )
        };
        assert_eq!(properties, &request_properties | &extra, "{name}: the request's fields plus {extra:?}");
        let path_id: BTreeSet<String> = extra.iter().filter(|f| *f == "id" || *f == "attachment_id").cloned().collect();
        assert_eq!(required, &request_required | &path_id, "{name}: required");
        assert_eq!(input["additionalProperties"], false, "{name}");
        checked += 1;
    }
    assert_eq!(checked, contract_names().iter().filter(|n| !is_read(n)).count());
}

mod boundaries;
mod calls;
mod errors;
mod find;
pub(crate) mod views;
