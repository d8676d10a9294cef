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

/// SPEC §5.1, row by row, in the catalogue's order (SPEC §5): the workspaces, the money
/// flow, then the registers.
const CONTRACT: &[(&str, &[&str])] = &[
    ("workspaces", &["list"]),
    ("payables", &["list", "get", "create", "update", "delete", "aggregates", "settle", "cancel", "reopen"]),
    ("receivables", &["list", "get", "create", "update", "delete", "aggregates", "settle", "cancel", "reopen"]),
    ("transactions", &["list", "get", "create", "update", "delete", "aggregates"]),
    ("transfers", &["get", "create"]),
    ("accounts", &["list", "get", "create", "update", "delete", "adjust_balance"]),
    ("attachments", &["list", "get", "upload", "download", "link", "unlink", "delete"]),
    ("companies", &["list", "get", "create", "update", "delete"]),
    ("people", &["list", "get", "create", "update", "delete"]),
    ("categories", &["list", "get", "create", "update", "delete"]),
    ("cost_centers", &["list", "get", "create", "update", "delete"]),
    ("taxes", &["list", "get", "create", "update", "delete"]),
];

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
    name == "finance_workspaces_list" || matches!(action_of(name), "list" | "get" | "aggregates" | "download")
}

fn is_destructive(name: &str) -> bool {
    matches!(action_of(name), "delete" | "cancel" | "settle" | "reopen")
        || name == "finance_transfers_create"
        || name == "finance_accounts_adjust_balance"
}

// ---------------------------------------------------------------------------------------
// Requests and results

/// A 2026 call from a client that declares form elicitation, with extra params
/// (`requestState`, `inputResponses`).
fn confirmable(tool: &str, arguments: Value, extra: Value) -> Mcp {
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

/// The REST error envelope's `error` of an `isError` result.
fn tool_error(result: &Value) -> Value {
    assert_eq!(result["isError"], true, "expected isError: {result}");
    payload(result)["error"].clone()
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
}

impl<'h> Agent<'h> {
    fn new(h: &'h Harness, token: String) -> Agent<'h> {
        Agent { h, token, called: BTreeSet::new(), output_schemas: None }
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
        if let Err(e) = kobana_finance_mcp::ops::validate::check_object(&schema, object, "") {
            panic!("{tool}: the result does not match its outputSchema: {} {:?}\n{value}", e.message, e.details);
        }
    }

    async fn result(&mut self, request: Mcp, tool: &str) -> Value {
        self.called.insert(tool.to_string());
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
    assert_eq!(names.len(), 65);
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
        ["finance_workspaces_list", "finance_payables_list", "finance_payables_get", "finance_payables_aggregates"]
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
    // 10 deletes (every resource but workspaces and transfers), 2 × settle/cancel/reopen,
    // transfers_create, accounts_adjust_balance.
    assert_eq!(destructive, 10 + 6 + 2);
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
            for (field, schema) in request["properties"].as_object().unwrap() {
                assert_eq!(&input["properties"][field], schema, "{name}: field {field} (types, enums, limits)");
            }
            (
                request["properties"].as_object().unwrap().keys().cloned().collect(),
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

// ---------------------------------------------------------------------------------------
// Views (SPEC §5.4) and what the catalogue costs an agent

/// The names `tools/list` answers for `request` (a 2026 `tools/list`, path and headers
/// set by the caller).
async fn listed_names(h: &Harness, request: Mcp) -> Vec<String> {
    let reply = h.send(request.build()).await;
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.bytes));
    reply.result()["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
}

/// The contract's tools of these toolsets (and `finance_workspaces_list`), in order.
fn of_toolsets(toolsets: &[&str], read_only: bool) -> Vec<String> {
    CONTRACT
        .iter()
        .filter(|(resource, _)| *resource == "workspaces" || toolsets.contains(resource))
        .flat_map(|(resource, actions)| actions.iter().map(move |a| format!("finance_{resource}_{a}")))
        .filter(|n| !read_only || is_read(n))
        .collect()
}

async fn prompt_names(h: &Harness, token: &str, path: &str) -> Vec<String> {
    let result = h.send(Mcp::modern("prompts/list", json!({})).bearer(token).path(path).build()).await.result();
    result["prompts"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn each_view_form_lists_what_it_names() {
    let h = Harness::new().await;
    let owner = h.token(DEMO_OWNER);
    let list = || Mcp::modern("tools/list", json!({})).bearer(&owner);
    let pr = of_toolsets(&["payables", "receivables"], false);
    assert_eq!(pr.len(), 19);
    // Path, header, both.
    assert_eq!(listed_names(&h, list().path("/mcp/x/payables,receivables")).await, pr);
    assert_eq!(listed_names(&h, list().header("x-mcp-toolsets", "payables,receivables")).await, pr);
    assert_eq!(listed_names(&h, list().path("/mcp").header("x-mcp-toolsets", "receivables, payables")).await, pr);
    assert_eq!(
        listed_names(&h, list().path("/mcp/x/payables,receivables").header("x-mcp-toolsets", "receivables,taxes"))
            .await,
        of_toolsets(&["receivables"], false)
    );
    // Read-only: by path, by header, combined with toolsets.
    let reads: Vec<String> = contract_names().into_iter().filter(|n| is_read(n)).collect();
    assert_eq!(listed_names(&h, list().path("/mcp/readonly")).await, reads);
    assert_eq!(listed_names(&h, list().header("x-mcp-readonly", "true")).await, reads);
    assert_eq!(
        listed_names(&h, list().path("/mcp/x/payables,receivables/readonly")).await,
        of_toolsets(&["payables", "receivables"], true)
    );
    assert_eq!(
        listed_names(&h, list().path("/mcp/x/payables").header("x-mcp-readonly", "TRUE")).await,
        of_toolsets(&["payables"], true)
    );
    assert_eq!(listed_names(&h, list().header("x-mcp-readonly", "false")).await, contract_names());
    // Transfers are a toolset of their own; the workspaces tool is in every view.
    assert_eq!(
        listed_names(&h, list().path("/mcp/x/transfers")).await,
        ["finance_workspaces_list", "finance_transfers_get", "finance_transfers_create"]
    );
    // Every toolset, one at a time, adds up to the whole catalogue.
    let mut union = vec!["finance_workspaces_list".to_string()];
    for (toolset, _) in &CONTRACT[1..] {
        let names = listed_names(&h, list().path(&format!("/mcp/x/{toolset}"))).await;
        assert_eq!(names, of_toolsets(&[toolset], false), "{toolset}");
        union.extend(names.into_iter().skip(1));
    }
    assert_eq!(union, contract_names());
    // A view narrows, never widens: the viewer on a full view still sees reads only.
    assert_eq!(
        listed_names(&h, Mcp::modern("tools/list", json!({})).bearer(&h.token(DEMO_VIEWER)).path("/mcp/x/payables"))
            .await,
        of_toolsets(&["payables"], true)
    );
    // The 2025 eras see the same views.
    for version in ["2025-06-18", "2025-03-26"] {
        let legacy =
            Mcp::legacy("tools/list", json!({}), Some(version)).bearer(&owner).path("/mcp/x/payables,receivables");
        assert_eq!(listed_names(&h, legacy).await, pr, "{version}");
    }
}

#[tokio::test]
async fn the_first_forty_tools_carry_every_payables_and_receivables_tool() {
    let h = Harness::new().await;
    let names = tool_names(&h, &h.token(DEMO_OWNER)).await;
    let first: Vec<&String> = names.iter().take(40).collect();
    for name in names.iter().filter(|n| n.starts_with("finance_payables_") || n.starts_with("finance_receivables_")) {
        assert!(first.contains(&name), "{name} is not among the first 40 tools");
    }
}

/// A read-only view can never change anything: every write and destructive tool is an
/// unknown tool there, on both eras, whatever confirmation the client brings, and
/// nothing in the database moves.
#[tokio::test]
async fn a_read_only_view_refuses_every_write_and_destructive_tool_on_both_eras() {
    let h = Harness::with_demo().await;
    let owner = h.token(DEMO_OWNER);
    let before = (
        count(&h, "SELECT COUNT(*) FROM billings WHERE status <> $1", "pending").await,
        count(&h, "SELECT COUNT(*) FROM financial_transactions WHERE id <> $1", "").await,
        count(&h, "SELECT COUNT(*) FROM companies WHERE id <> $1", "").await,
    );
    let writes: Vec<String> = contract_names().into_iter().filter(|n| !is_read(n)).collect();
    assert_eq!(writes.len(), 39);
    for name in &writes {
        let arguments = json!({"id": ACME_RENT_DECEMBER, "payment_date": "2026-12-01", "financial_account_id": ACME_CHECKING_ACCOUNT, "name": "X", "cnpj": "11444777000242"});
        let fake_state = json!({"requestState": "x", "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}});
        for (path, header) in [
            ("/mcp/readonly", None),
            ("/mcp/x/payables,receivables,accounts,companies/readonly", None),
            ("/", Some("true")),
        ] {
            let mut requests = vec![
                confirmable(name, arguments.clone(), json!({})),
                confirmable(name, arguments.clone(), fake_state.clone()),
                legacy(name, arguments.clone(), "2025-06-18"),
                legacy(name, arguments.clone(), "2025-03-26"),
            ];
            for request in requests.drain(..) {
                let mut request = request.bearer(&owner).path(path);
                if let Some(value) = header {
                    request = request.header("x-mcp-readonly", value);
                }
                let reply = h.send(request.build()).await;
                assert_eq!(reply.status, 200, "{name} on {path}");
                assert_eq!(
                    reply.rpc_code(),
                    Some(-32602),
                    "{name} on {path}: {}",
                    String::from_utf8_lossy(&reply.bytes)
                );
                assert_eq!(reply.json()["error"]["message"], json!(format!("Unknown tool: {name}")), "{name}");
            }
        }
    }
    let after = (
        count(&h, "SELECT COUNT(*) FROM billings WHERE status <> $1", "pending").await,
        count(&h, "SELECT COUNT(*) FROM financial_transactions WHERE id <> $1", "").await,
        count(&h, "SELECT COUNT(*) FROM companies WHERE id <> $1", "").await,
    );
    assert_eq!(before, after, "nothing changed");
    // The read tools still answer there.
    let reply = h
        .send(
            call("finance_payables_get", json!({"id": ACME_RENT_DECEMBER}))
                .bearer(&owner)
                .path("/mcp/readonly")
                .build(),
        )
        .await
        .result();
    assert_eq!(payload(&reply)["status"], "pending");
}

#[tokio::test]
async fn a_view_narrows_templates_prompts_and_completion() {
    let h = Harness::with_demo().await;
    let owner = h.token(DEMO_OWNER);
    let on = |method: &str, params: Value, path: &str| Mcp::modern(method, params).bearer(&owner).path(path).build();
    let templates = h.send(on("resources/templates/list", json!({}), "/mcp/x/payables,accounts")).await.result();
    let names: Vec<&str> =
        templates["resourceTemplates"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["payables", "accounts"]);
    // A record outside the view reads as not found there; inside, as the get tool.
    assert_eq!(
        h.send(on(
            "resources/read",
            json!({"uri": format!("kobana://finance/receivables/{ACME_SALE_PENDING}")}),
            "/mcp/x/payables"
        ))
        .await
        .rpc_code(),
        Some(-32602)
    );
    let read = h
        .send(on(
            "resources/read",
            json!({"uri": format!("kobana://finance/payables/{ACME_RENT_DECEMBER}")}),
            "/mcp/x/payables",
        ))
        .await
        .result();
    assert!(read["contents"][0]["text"].as_str().unwrap().contains("Aluguel de dezembro"));
    // Prompts: only those whose every resource is in the view; read-only drops those
    // that change records.
    assert_eq!(prompt_names(&h, &owner, "/mcp/x/payables").await, ["overdue_payables_review"]);
    assert!(prompt_names(&h, &owner, "/mcp/readonly").await.iter().all(|p| p != "classify_transactions"));
    assert!(prompt_names(&h, &owner, "/").await.iter().any(|p| p == "classify_transactions"));
    assert_eq!(
        h.send(on("prompts/get", json!({"name": "cash_position"}), "/mcp/x/payables")).await.rpc_code(),
        Some(-32602)
    );
    // Completion: a template or prompt outside the view is unknown there.
    let complete_id = |resource: &str| json!({"ref": {"type": "ref/resource", "uri": format!("kobana://finance/{resource}/{{id}}")}, "argument": {"name": "id", "value": "A"}});
    assert_eq!(
        h.send(on("completion/complete", complete_id("receivables"), "/mcp/x/payables")).await.rpc_code(),
        Some(-32602)
    );
    let values = h.send(on("completion/complete", complete_id("payables"), "/mcp/x/payables")).await.result();
    assert!(values["completion"]["values"].as_array().unwrap().iter().any(|v| v == ACME_RENT_DECEMBER), "{values}");
    let prompt_arg = json!({"ref": {"type": "ref/prompt", "name": "cash_position"}, "argument": {"name": "company_id", "value": ""}});
    assert_eq!(h.send(on("completion/complete", prompt_arg, "/mcp/x/payables")).await.rpc_code(), Some(-32602));
}

/// What a model is shown of a tool: its name, description and input schema, as the
/// Anthropic and OpenAI tool formats carry them (compact JSON).
fn model_visible(tools: &[Value]) -> usize {
    tools
        .iter()
        .map(|t| {
            json!({"name": t["name"], "description": t["description"], "inputSchema": t["inputSchema"]})
                .to_string()
                .len()
        })
        .sum()
}

/// The catalogue's cost in an agent's context, pinned: a test fails if it grows. The
/// figures (bytes ≈ tokens × 4) are those of BENCHMARKS.md.
#[tokio::test]
async fn the_catalogue_stays_within_its_byte_budget() {
    const MODEL_VISIBLE_OWNER: usize = 66_000;
    const WIRE_OWNER: usize = 142_000;
    const WIRE_PAYABLES_VIEW: usize = 32_000;
    let h = Harness::new().await;
    let owner = h.token(DEMO_OWNER);
    for version in ["2026-07-28", "2025-06-18"] {
        let request = if version == "2026-07-28" {
            Mcp::modern("tools/list", json!({}))
        } else {
            Mcp::legacy("tools/list", json!({}), Some(version))
        };
        let reply = h.send(request.bearer(&owner).build()).await;
        let tools = reply.result()["tools"].as_array().unwrap().clone();
        assert_eq!(tools.len(), 65);
        assert!(
            reply.bytes.len() <= WIRE_OWNER,
            "{version}: tools/list is {} bytes (pinned at {WIRE_OWNER})",
            reply.bytes.len()
        );
        let visible = model_visible(&tools);
        assert!(
            visible <= MODEL_VISIBLE_OWNER,
            "{version}: a model is shown {visible} bytes (pinned at {MODEL_VISIBLE_OWNER})"
        );
        for tool in &tools {
            let description = tool["description"].as_str().unwrap();
            assert!(
                description.chars().count() <= 1024,
                "{}: a {}-character description (clients cut at 1,024)",
                tool["name"],
                description.chars().count()
            );
        }
    }
    let payables = h.send(Mcp::modern("tools/list", json!({})).bearer(&owner).path("/mcp/x/payables").build()).await;
    assert!(
        payables.bytes.len() <= WIRE_PAYABLES_VIEW,
        "/mcp/x/payables is {} bytes (pinned at {WIRE_PAYABLES_VIEW})",
        payables.bytes.len()
    );
    let discover = h.send(Mcp::modern("server/discover", json!({})).bearer(&owner).build()).await.result();
    let instructions = discover["instructions"].as_str().unwrap();
    assert!(instructions.chars().count() <= 2048, "instructions are {} characters", instructions.chars().count());
    assert!(instructions.contains("never as instructions") && instructions.contains("idempotency_key"));
}

// ---------------------------------------------------------------------------------------
// Every tool, called

/// A record resource as the demo run drives it: its name, how many the demo has, a demo
/// id and that record's name, a create, a change, and what the delete's confirmation
/// must say.
type RecordRun = (&'static str, usize, &'static str, &'static str, Value, Value, &'static [&'static str]);

#[tokio::test]
async fn every_tool_runs_on_the_demo_data() {
    let h = Harness::with_demo().await;
    let mut a = Agent::new(&h, h.token(DEMO_OWNER));

    let workspaces = a.ok("finance_workspaces_list", json!({})).await;
    assert_eq!(workspaces["data"].as_array().unwrap().len(), 1);
    assert_eq!(workspaces["data"][0]["id"], DEMO_WORKSPACE_ACME);
    assert_eq!(workspaces["data"][0]["role"], "owner");

    // The record resources: list, get, create, update and a confirmed delete of what
    // was created.
    let records: [RecordRun; 6] = [
        (
            "companies",
            2,
            ACME_COMPANY,
            "Acme Comércio Ltda",
            json!({"name": "Filial Norte Ltda", "cnpj": "11444777000242", "workspace_id": DEMO_WORKSPACE_ACME}),
            json!({"trade_name": "Filial Norte"}),
            &["Filial Norte Ltda", "11444777000242", "Acme Comércio"],
        ),
        (
            "accounts",
            2,
            ACME_CASH_ACCOUNT,
            "Caixa",
            json!({"company_id": ACME_COMPANY, "name": "Conta Inter", "type": "checking", "bank_code": "077", "balance": "100.00"}),
            json!({"name": "Conta Inter PJ"}),
            &["Conta Inter PJ", "R$ 100,00"],
        ),
        (
            "categories",
            7,
            ACME_RENT_CATEGORY,
            "Aluguel",
            json!({"company_id": ACME_COMPANY, "name": "Impostos", "type": "debit"}),
            json!({"name": "Impostos e taxas"}),
            &["Impostos e taxas", "debit"],
        ),
        (
            "cost_centers",
            3,
            ACME_ADMIN_COST_CENTER,
            "Administrativo",
            json!({"company_id": ACME_COMPANY, "name": "Marketing", "type": "cost"}),
            json!({"description": "Campanhas"}),
            &["Marketing"],
        ),
        (
            "people",
            4,
            ACME_LANDLORD,
            "Imobiliária Central Ltda",
            json!({"company_id": ACME_COMPANY, "name": "Gráfica Rápida", "kind": "juridical", "is_supplier": true}),
            json!({"nickname": "Gráfica"}),
            &["Gráfica Rápida"],
        ),
        (
            "taxes",
            3,
            ACME_IRRF_TAX,
            "IRRF",
            json!({"name": "CSLL", "default_rate": "1.00"}),
            json!({"default_rate": "9.00"}),
            &["CSLL"],
        ),
    ];
    for (resource, count, known, name, create, change, told) in records {
        let tool = |action: &str| format!("finance_{resource}_{action}");
        assert_eq!(a.ok(&tool("list"), json!({})).await["data"].as_array().unwrap().len(), count, "{resource}");
        assert_eq!(a.ok(&tool("get"), json!({"id": known})).await["name"], name, "{resource}");
        let record = a.ok(&tool("create"), create).await;
        created_through_mcp(&record);
        let mut update = change.clone();
        update["id"] = json!(id_of(&record));
        let updated = a.ok(&tool("update"), update).await;
        for (field, value) in change.as_object().unwrap() {
            assert_eq!(&updated[field], value, "{resource}.{field}");
        }
        assert_eq!(updated["updated_via"], "mcp", "{resource}");
        let (message, deleted) = a.confirmed(&tool("delete"), json!({"id": id_of(&record)})).await;
        assert_mentions(&message, told);
        assert_eq!(deleted, json!({"deleted": true, "id": id_of(&record)}), "{resource}");
    }
    let (message, adjusted) = a
        .confirmed("finance_accounts_adjust_balance", json!({"id": ACME_CASH_ACCOUNT, "target_balance": "2600.00", "category_id": ACME_SALES_CATEGORY, "occurred_at": "2026-11-30"}))
        .await;
    assert_mentions(&message, &["“Caixa”", "R$ 2.500,00", "R$ 2.600,00", "credit of R$ 100,00", "2026-11-30"]);
    assert_eq!(
        (adjusted["previous_balance"].clone(), adjusted["new_balance"].clone()),
        (json!("2500.00"), json!("2600.00"))
    );
    assert_eq!(a.ok("finance_accounts_get", json!({"id": ACME_CASH_ACCOUNT})).await["balance"], "2600.00");

    // Transactions and transfers.
    assert!(a.ok("finance_transactions_list", json!({})).await["data"].as_array().unwrap().len() >= 3);
    assert_eq!(
        a.ok("finance_transactions_get", json!({"id": ACME_CAPITAL_CONTRIBUTION})).await["description"],
        "Aporte dos sócios"
    );
    let november =
        a.ok("finance_transactions_aggregates", json!({"month": 11, "year": 2026, "company_id": ACME_COMPANY})).await;
    // November: the capital contribution, the rent paid, the sale received and the adjustment above.
    assert_eq!(november, json!({"count": 4, "credit": "10100.00", "debit": "4500.00", "net": "5600.00"}));
    let coffee = a
        .ok("finance_transactions_create", json!({"company_id": ACME_COMPANY, "financial_account_id": ACME_CASH_ACCOUNT, "description": "Café", "amount": "35.90", "occurred_at": "2026-11-28", "type": "debit"}))
        .await;
    created_through_mcp(&coffee);
    assert_eq!(
        a.ok("finance_transactions_update", json!({"id": id_of(&coffee), "notes": "Copa"})).await["notes"],
        "Copa"
    );
    let (message, _) = a.confirmed("finance_transactions_delete", json!({"id": id_of(&coffee)})).await;
    assert_mentions(&message, &["Café", "R$ 35,90", "2026-11-28"]);
    let (message, transfer) = a
        .confirmed("finance_transfers_create", json!({"from_account_id": ACME_CHECKING_ACCOUNT, "to_account_id": ACME_CASH_ACCOUNT, "amount": "1500.00", "occurred_at": "2026-11-29", "description": "Reforço de caixa"}))
        .await;
    assert_mentions(&message, &["R$ 1.500,00", "Conta corrente Itaú", "Caixa", "2026-11-29", "Reforço de caixa"]);
    let got = a.ok("finance_transfers_get", json!({"id": transfer["transfer_id"]})).await;
    assert_eq!(got, transfer);
    let projected = a
        .ok("finance_transfers_get", json!({"id": transfer["transfer_id"], "fields": ["from_account_id", "amount"]}))
        .await;
    assert_eq!(projected, json!({"from_account_id": ACME_CHECKING_ACCOUNT, "amount": "1500.00"}));

    // Payables.
    let pending = a.ok("finance_payables_list", json!({"filters": {"status": "pending"}})).await;
    assert_eq!(pending["data"].as_array().unwrap().len(), 2);
    let rent = a.ok("finance_payables_get", json!({"id": ACME_RENT_DECEMBER})).await;
    assert_eq!((rent["status"].as_str(), rent["amount"].as_str()), (Some("pending"), Some("4500.00")));
    let totals =
        a.ok("finance_payables_aggregates", json!({"start_date": "2026-11-01", "end_date": "2026-12-31"})).await;
    assert_eq!(
        (totals["count"].as_i64(), totals["total"].as_str(), totals["pending"].as_str(), totals["paid"].as_str()),
        (Some(4), Some("9150.00"), Some("4650.00"), Some("4500.00")),
        "{totals}"
    );
    let power = a
        .ok("finance_payables_create", json!({"company_id": ACME_COMPANY, "description": "Conta de luz", "amount": "380.45", "due_date": "2026-12-18", "person_name": "Enel", "idempotency_key": "luz-12"}))
        .await;
    created_through_mcp(&power);
    assert_eq!(power["status"], "pending");
    let again = a
        .ok("finance_payables_create", json!({"company_id": ACME_COMPANY, "description": "Conta de luz", "amount": "380.45", "due_date": "2026-12-18", "person_name": "Enel", "idempotency_key": "luz-12"}))
        .await;
    assert_eq!(again, power, "the same key answers the first record");
    assert_eq!(
        a.ok("finance_payables_update", json!({"id": id_of(&power), "notes": "Referente a novembro"})).await["notes"],
        "Referente a novembro"
    );
    let (message, paid) = a.confirmed("finance_payables_settle", json!({"id": ACME_RENT_DECEMBER, "payment_date": "2026-12-10", "financial_account_id": ACME_CHECKING_ACCOUNT})).await;
    assert_mentions(
        &message,
        &["Aluguel de dezembro", "Imobiliária Central Ltda", "R$ 4.500,00", "2026-12-10", "Conta corrente Itaú"],
    );
    assert_eq!(paid["status"], "paid");
    let (message, reopened) = a.confirmed("finance_payables_reopen", json!({"id": ACME_RENT_DECEMBER})).await;
    assert_mentions(&message, &["Aluguel de dezembro", "R$ 4.500,00", "Conta corrente Itaú"]);
    assert_eq!(reopened["status"], "pending");
    let (message, cancelled) = a.confirmed("finance_payables_cancel", json!({"id": id_of(&power)})).await;
    assert_mentions(&message, &["Conta de luz", "Enel", "R$ 380,45", "2026-12-18"]);
    assert_eq!(cancelled["status"], "cancelled");
    let (message, _) = a.confirmed("finance_payables_delete", json!({"id": id_of(&power)})).await;
    assert_mentions(&message, &["Conta de luz", "R$ 380,45"]);

    // Receivables.
    assert_eq!(a.ok("finance_receivables_list", json!({})).await["data"].as_array().unwrap().len(), 3);
    assert_eq!(a.ok("finance_receivables_get", json!({"id": ACME_SALE_PENDING})).await["amount"], "12000.00");
    let totals = a.ok("finance_receivables_aggregates", json!({})).await;
    assert_eq!(
        (totals["total"].as_str(), totals["pending"].as_str(), totals["received"].as_str()),
        (Some("20000.00"), Some("12000.00"), Some("8000.00")),
        "{totals}"
    );
    let sale = a
        .ok("finance_receivables_create", json!({"company_id": ACME_COMPANY, "description": "Venda NF-1002", "amount": "990.00", "due_date": "2026-12-20", "person_id": ACME_CUSTOMER_MARIA}))
        .await;
    created_through_mcp(&sale);
    assert_eq!(
        a.ok("finance_receivables_update", json!({"id": id_of(&sale), "document_number": "1002"})).await
            ["document_number"],
        "1002"
    );
    let (message, received) = a.confirmed("finance_receivables_settle", json!({"id": ACME_SALE_PENDING, "payment_date": "2026-12-15", "financial_account_id": ACME_CHECKING_ACCOUNT})).await;
    assert_mentions(
        &message,
        &["Venda NF-1001", "Cliente Exemplo S.A.", "R$ 12.000,00", "2026-12-15", "Conta corrente Itaú"],
    );
    assert_eq!(received["status"], "received");
    let (_, reopened) = a.confirmed("finance_receivables_reopen", json!({"id": ACME_SALE_PENDING})).await;
    assert_eq!(reopened["status"], "pending");
    let (message, cancelled) = a.confirmed("finance_receivables_cancel", json!({"id": id_of(&sale)})).await;
    assert_mentions(&message, &["Venda NF-1002", "Maria Oliveira", "R$ 990,00"]);
    assert_eq!(cancelled["status"], "cancelled");
    a.confirmed("finance_receivables_delete", json!({"id": id_of(&sale)})).await;

    // Attachments.
    assert_eq!(a.ok("finance_attachments_list", json!({})).await["data"].as_array().unwrap().len(), 1);
    assert_eq!(
        a.ok("finance_attachments_get", json!({"id": ACME_RENT_RECEIPT})).await["file_name"],
        "recibo-aluguel-novembro.pdf"
    );
    let where_ = a.ok("finance_attachments_download", json!({"id": ACME_RENT_RECEIPT})).await;
    assert_eq!(where_["content_type"], "application/pdf");
    let uploaded = a
        .ok("finance_attachments_upload", json!({"file_name": "nota.pdf", "content_base64": base64::engine::general_purpose::STANDARD.encode(TINY_PDF), "title": "Nota"}))
        .await;
    assert_eq!(uploaded["uploaded_by"], format!("mcp:{DEMO_OWNER}"));
    let link = json!({"attachment_id": id_of(&uploaded), "type": "payable", "id": ACME_RENT_DECEMBER});
    let linked = a.ok("finance_attachments_link", link.clone()).await;
    assert_eq!(
        (linked["parent_type"].as_str(), linked["parent_id"].as_str()),
        (Some("payable"), Some(ACME_RENT_DECEMBER))
    );
    assert_eq!(a.ok("finance_attachments_unlink", link).await["unlinked"], true);
    let (message, _) = a.confirmed("finance_attachments_delete", json!({"id": id_of(&uploaded)})).await;
    assert_mentions(&message, &["nota.pdf"]);

    let all: BTreeSet<String> = contract_names().into_iter().collect();
    let missed: Vec<&String> = all.difference(&a.called).collect();
    assert!(missed.is_empty(), "tools never called: {missed:?}");
    // Every write above was recorded as made through MCP.
    assert!(
        count(&h, "SELECT COUNT(*) FROM audit_events WHERE user_id = $1 AND channel = 'mcp'", DEMO_OWNER).await > 30
    );
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM audit_events WHERE user_id = $1 AND channel <> 'mcp'", DEMO_OWNER).await,
        0
    );
}

// ---------------------------------------------------------------------------------------
// Confirmation of a money-moving tool, in every era

#[tokio::test]
async fn settling_the_rent_asks_in_the_users_terms_and_moves_the_money_once() {
    let h = Harness::with_demo().await;
    let mut a = Agent::new(&h, h.token(DEMO_OWNER));
    let before = a.ok("finance_accounts_get", json!({"id": ACME_CHECKING_ACCOUNT})).await["balance"]
        .as_str()
        .unwrap()
        .to_string();
    let args =
        json!({"id": ACME_RENT_DECEMBER, "payment_date": "2026-12-10", "financial_account_id": ACME_CHECKING_ACCOUNT});

    let (message, state) = a.ask("finance_payables_settle", args.clone()).await;
    assert_eq!(
        message,
        "Settle the payable “Aluguel de dezembro” to Imobiliária Central Ltda (R$ 4.500,00, due 2026-12-10)? \
This records a payment of R$ 4.500,00 on 2026-12-10 out of the account “Conta corrente Itaú” (balance R$ 13.500,00)."
    );
    assert_eq!(
        a.ok("finance_payables_get", json!({"id": ACME_RENT_DECEMBER})).await["status"],
        "pending",
        "asking changes nothing"
    );
    assert_eq!(settlements(&h, ACME_RENT_DECEMBER).await, 0);

    let accepted = accept(&state);
    let done = a
        .result(confirmable("finance_payables_settle", args.clone(), accepted.clone()), "finance_payables_settle")
        .await;
    let paid = payload(&done);
    assert_eq!(
        (paid["status"].as_str(), paid["payment_date"].as_str(), paid["financial_account_id"].as_str()),
        (Some("paid"), Some("2026-12-10"), Some(ACME_CHECKING_ACCOUNT))
    );
    assert!(paid["transaction_id"].is_string());
    let after = a.ok("finance_accounts_get", json!({"id": ACME_CHECKING_ACCOUNT})).await["balance"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!((before.as_str(), after.as_str()), ("13500.00", "9000.00"));

    // The accepted retry, replayed: the first outcome, no second movement.
    let replay = a.result(confirmable("finance_payables_settle", args, accepted), "finance_payables_settle").await;
    assert_eq!(replay["structuredContent"], done["structuredContent"]);
    assert_eq!(a.ok("finance_accounts_get", json!({"id": ACME_CHECKING_ACCOUNT})).await["balance"], "9000.00");
    assert_eq!(settlements(&h, ACME_RENT_DECEMBER).await, 1, "exactly one settlement transaction");
    let ledger = a.ok("finance_transactions_get", json!({"id": paid["transaction_id"]})).await;
    assert_eq!((ledger["type"].as_str(), ledger["amount"].as_str()), (Some("debit"), Some("4500.00")));
    let outcomes = count(
        &h,
        "SELECT COUNT(*) FROM audit_events WHERE action = 'tools.confirmation' AND target_id = $1",
        "finance_payables_settle",
    )
    .await;
    assert_eq!(outcomes, 3, "requested, executed, replayed");
}

#[tokio::test]
async fn destructive_tools_change_nothing_without_a_client_that_can_confirm() {
    let h = Harness::with_demo().await;
    let token = h.token(DEMO_OWNER);
    let cases: [(&str, Value); 4] = [
        (
            "finance_payables_settle",
            json!({"id": ACME_RENT_DECEMBER, "payment_date": "2026-12-10", "financial_account_id": ACME_CHECKING_ACCOUNT}),
        ),
        ("finance_payables_reopen", json!({"id": ACME_RENT_NOVEMBER})),
        (
            "finance_transfers_create",
            json!({"from_account_id": ACME_CHECKING_ACCOUNT, "to_account_id": ACME_CASH_ACCOUNT, "amount": "10.00", "occurred_at": "2026-11-29", "description": "x"}),
        ),
        (
            "finance_accounts_adjust_balance",
            json!({"id": ACME_CASH_ACCOUNT, "target_balance": "0.00", "category_id": ACME_RENT_CATEGORY}),
        ),
    ];
    for (tool, args) in &cases {
        for version in ["2025-06-18", "2025-03-26"] {
            let reply = h.send(legacy(tool, args.clone(), version).bearer(&token).build()).await;
            let result = reply.result();
            assert_eq!(result["isError"], true, "{tool} on {version}: {result}");
            let text = result["content"][0]["text"].as_str().unwrap();
            assert!(text.contains("2026-07-28") && text.contains("Nothing changed"), "{text}");
        }
        // 2026 without form elicitation: the client must declare it.
        let reply = h.send(call(tool, args.clone()).bearer(&token).build()).await;
        assert_eq!(reply.status, 400, "{tool}");
        assert_eq!(reply.rpc_code(), Some(-32021));
        assert_eq!(reply.json()["error"]["data"], json!({"requiredCapabilities": {"elicitation": {}}}));
    }
    let mut a = Agent::new(&h, token);
    assert_eq!(a.ok("finance_payables_get", json!({"id": ACME_RENT_DECEMBER})).await["status"], "pending");
    assert_eq!(a.ok("finance_payables_get", json!({"id": ACME_RENT_NOVEMBER})).await["status"], "paid");
    assert_eq!(settlements(&h, ACME_RENT_DECEMBER).await, 0);
    assert_eq!(a.ok("finance_accounts_get", json!({"id": ACME_CHECKING_ACCOUNT})).await["balance"], "13500.00");
    assert_eq!(a.ok("finance_accounts_get", json!({"id": ACME_CASH_ACCOUNT})).await["balance"], "2500.00");
}

#[tokio::test]
async fn read_tools_answer_in_every_era() {
    let h = Harness::with_demo().await;
    let token = h.token(DEMO_OWNER);
    let reads = [
        (
            "finance_payables_list",
            json!({"filters": {"status": {"in": ["pending"]}, "due_date": {"gte": "2026-12-01"}}}),
        ),
        ("finance_accounts_get", json!({"id": ACME_CHECKING_ACCOUNT, "fields": ["name", "balance"]})),
        ("finance_transactions_aggregates", json!({"month": 11, "year": 2026})),
        ("finance_workspaces_list", json!({})),
    ];
    for (tool, args) in reads {
        let modern = h.send(call(tool, args.clone()).bearer(&token).build()).await.result();
        let value = payload(&modern);
        assert_eq!(modern["resultType"], "complete");
        let june = h.send(legacy(tool, args.clone(), "2025-06-18").bearer(&token).build()).await.result();
        assert_eq!(payload(&june), value, "{tool} on 2025-06-18");
        assert!(june.get("resultType").is_none());
        let march = h.send(legacy(tool, args, "2025-03-26").bearer(&token).build()).await.result();
        assert!(march.get("structuredContent").is_none(), "2025-03-26 has no structuredContent");
        assert_eq!(text_of(&march), value, "{tool} on 2025-03-26");
    }
}

// ---------------------------------------------------------------------------------------
// Errors

#[tokio::test]
async fn arguments_that_break_the_schema_are_tool_errors_naming_the_field() {
    let h = Harness::with_demo().await;
    let mut a = Agent::new(&h, h.token(DEMO_OWNER));
    let cases = [
        (
            "finance_payables_create",
            json!({"company_id": ACME_COMPANY, "description": "Sem valor", "due_date": "2026-12-01"}),
            "amount",
            "required",
        ),
        ("finance_payables_list", json!({"limit": "ten"}), "limit", "wrong_type"),
        ("finance_payables_get", json!({"id": "b1110000-0001-4000-8000-00000000000z"}), "id", "invalid_uuid"),
        ("finance_payables_list", json!({"limit": 101}), "limit", "out_of_range"),
        ("finance_payables_list", json!({"limit": 0}), "limit", "out_of_range"),
        ("finance_payables_aggregates", json!({"month": 13, "year": 2026}), "month", "out_of_range"),
        (
            "finance_payables_list",
            json!({"filters": {"due_date": {"gte": "2026-13-01"}}}),
            "filters.due_date.gte",
            "invalid_date",
        ),
        (
            "finance_payables_list",
            json!({"filters": {"status": {"in": ["pending", 7]}}}),
            "filters.status.in[1]",
            "wrong_type",
        ),
        (
            "finance_attachments_link",
            json!({"attachment_id": "nope", "type": "payable", "id": ACME_RENT_DECEMBER}),
            "attachment_id",
            "invalid_uuid",
        ),
        (
            "finance_accounts_create",
            json!({"company_id": ACME_COMPANY, "name": "Ouro", "type": "gold"}),
            "type",
            "invalid_value",
        ),
        ("finance_taxes_create", json!({"name": "X", "surprise": 1}), "surprise", "unknown_field"),
        // Destructive tools check their arguments before asking anyone.
        ("finance_payables_settle", json!({"id": ACME_RENT_DECEMBER}), "payment_date", "required"),
    ];
    for (tool, args, field, reason) in cases {
        let error = a.err(tool, args.clone()).await;
        assert_eq!(error["code"], "bad_request", "{tool} {args}: {error}");
        assert_eq!(error["details"]["field"], field, "{tool} {args}: {error}");
        assert_eq!(error["details"]["reason"], reason, "{tool} {args}: {error}");
    }
    assert_eq!(a.ok("finance_payables_get", json!({"id": ACME_RENT_DECEMBER})).await["status"], "pending");
}

#[tokio::test]
async fn an_unknown_tool_or_arguments_that_are_not_an_object_are_protocol_errors() {
    let h = Harness::new().await;
    let token = h.token(DEMO_OWNER);
    let raw = |params: Value| Mcp::modern("tools/call", params).bearer(&token).build();
    for params in [
        json!({"name": "finance_payables_pay", "arguments": {}}),
        json!({"name": "finance_payables_list", "arguments": [1]}),
        json!({"name": "finance_payables_list", "arguments": "limit=5"}),
        json!({"name": "finance_payables_list", "arguments": 5}),
    ] {
        let reply = h.send(raw(params.clone())).await;
        assert_eq!(reply.status, 200, "{params}");
        assert_eq!(reply.rpc_code(), Some(-32602), "{params}: {}", String::from_utf8_lossy(&reply.bytes));
    }
}

#[tokio::test]
async fn a_tool_outside_the_token_scopes_or_the_role_is_refused_with_a_reason() {
    let h = Harness::with_demo().await;
    let mut payables_only = Agent::new(&h, h.token_with(DEMO_OWNER, Some("finance.payables"), |_| {}));
    let error = payables_only.err("finance_accounts_list", json!({})).await;
    assert_eq!(error["code"], "insufficient_scope");
    assert_eq!(error["details"], json!({"required": ["finance.accounts"], "granted": ["finance.payables"]}));
    let error = payables_only
        .err("finance_payables_settle", json!({"id": ACME_RENT_DECEMBER, "payment_date": "2026-12-10"}))
        .await;
    assert_eq!(error["code"], "insufficient_scope");
    assert_eq!(error["details"]["required"], json!(["finance.payables.write"]));

    let mut viewer = Agent::new(&h, h.token(DEMO_VIEWER));
    assert_eq!(viewer.ok("finance_payables_get", json!({"id": ACME_RENT_DECEMBER})).await["status"], "pending");
    for (tool, args) in [
        (
            "finance_payables_create",
            json!({"company_id": ACME_COMPANY, "description": "x", "amount": "1.00", "due_date": "2026-12-01"}),
        ),
        (
            "finance_payables_settle",
            json!({"id": ACME_RENT_DECEMBER, "payment_date": "2026-12-10", "financial_account_id": ACME_CHECKING_ACCOUNT}),
        ),
        ("finance_transactions_delete", json!({"id": ACME_CAPITAL_CONTRIBUTION})),
    ] {
        let error = viewer.err(tool, args).await;
        assert_eq!(error["code"], "forbidden", "viewer → {tool}: {error}");
    }
    let mut finance = Agent::new(&h, h.token(DEMO_FINANCE));
    assert_eq!(finance.err("finance_accounts_delete", json!({"id": ACME_CASH_ACCOUNT})).await["code"], "forbidden");
    // Finance in ACME, viewer in Beta: two workspaces, so each call names one, and the
    // operation checks the role in the one named.
    assert_eq!(
        finance.err("finance_payables_get", json!({"id": ACME_RENT_DECEMBER})).await["code"],
        "workspace_required"
    );
    assert_eq!(
        finance
            .ok("finance_payables_get", json!({"id": ACME_RENT_DECEMBER, "workspace_id": DEMO_WORKSPACE_ACME}))
            .await["status"],
        "pending"
    );
    let in_beta = json!({"company_id": BETA_COMPANY, "description": "x", "amount": "1.00", "due_date": "2026-12-01", "person_name": "x", "workspace_id": DEMO_WORKSPACE_BETA});
    assert_eq!(finance.err("finance_payables_create", in_beta).await["code"], "forbidden");

    // A write scope without the read scope: the confirmation names the records by id
    // (it may not read them) and the settle runs.
    let mut writer = Agent::new(&h, h.token_with(DEMO_OWNER, Some("finance.payables.write"), |_| {}));
    let (message, paid) = writer.confirmed("finance_payables_settle", json!({"id": ACME_SUPPLIES_PENDING, "payment_date": "2026-11-20", "financial_account_id": ACME_CASH_ACCOUNT})).await;
    assert_mentions(&message, &[ACME_SUPPLIES_PENDING, ACME_CASH_ACCOUNT, "2026-11-20"]);
    assert!(!message.contains("Papelaria"), "{message}");
    assert_eq!(paid["status"], "paid");
    assert_eq!(settlements(&h, ACME_RENT_DECEMBER).await, 0);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM financial_accounts WHERE id = $1", ACME_CASH_ACCOUNT).await, 1);
}

// ---------------------------------------------------------------------------------------
// Projection, filters, sort and paging

#[tokio::test]
async fn list_tools_filter_sort_page_and_project() {
    let h = Harness::with_demo().await;
    let mut a = Agent::new(&h, h.token(DEMO_OWNER));
    let mut seen = Vec::new();
    let mut cursor = Value::Null;
    for page in 0.. {
        assert!(page < 10, "paging does not end");
        let mut args = json!({"sort": "-amount", "limit": 1, "fields": ["id", "amount"]});
        if !cursor.is_null() {
            args["cursor"] = cursor.clone();
        }
        let page = a.ok("finance_payables_list", args).await;
        for row in page["data"].as_array().unwrap() {
            assert_eq!(
                row.as_object().unwrap().keys().collect::<Vec<_>>(),
                ["amount", "id"],
                "only the projected fields"
            );
            seen.push((
                row["amount"].as_str().unwrap().parse::<f64>().unwrap(),
                row["id"].as_str().unwrap().to_string(),
            ));
        }
        cursor = page["meta"]["next_cursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    let ids: BTreeSet<&str> = seen.iter().map(|(_, id)| id.as_str()).collect();
    assert_eq!(
        ids,
        BTreeSet::from([ACME_RENT_DECEMBER, ACME_RENT_NOVEMBER, ACME_SUPPLIES_CANCELLED, ACME_SUPPLIES_PENDING]),
        "ACME's four payables, once each"
    );
    assert_eq!(seen.len(), 4);
    assert!(seen.windows(2).all(|w| w[0].0 >= w[1].0), "descending amount: {seen:?}");

    let early = a
        .ok(
            "finance_payables_list",
            json!({"filters": {"due_date": {"lt": "2026-11-15"}}, "sort": "due_date", "fields": ["id"]}),
        )
        .await;
    assert_eq!(early["data"], json!([{"id": ACME_SUPPLIES_CANCELLED}, {"id": ACME_RENT_NOVEMBER}]));
    let settled = a.ok("finance_payables_list", json!({"filters": {"status": {"in": ["paid", "cancelled"]}, "person_id": ACME_LANDLORD}, "fields": ["id", "status"]})).await;
    assert_eq!(settled["data"], json!([{"id": ACME_RENT_NOVEMBER, "status": "paid"}]));

    let projected = a
        .ok("finance_payables_get", json!({"id": ACME_RENT_DECEMBER, "fields": ["description", "amount", "status"]}))
        .await;
    assert_eq!(projected, json!({"description": "Aluguel de dezembro", "amount": "4500.00", "status": "pending"}));
    let error = a.err("finance_payables_list", json!({"cursor": "not-a-cursor"})).await;
    assert_eq!((error["code"].as_str(), error["details"]["field"].as_str()), (Some("bad_request"), Some("cursor")));
}

// ---------------------------------------------------------------------------------------
// Isolation

#[tokio::test]
async fn ids_of_another_workspace_are_not_found_through_any_tool() {
    let h = Harness::with_demo().await;
    // Beta's own records, one of each resource, made by Beta's owner.
    let mut beta = Agent::new(&h, h.token(DEMO_BETA_OWNER));
    let category = id_of(
        &beta
            .ok(
                "finance_categories_create",
                json!({"company_id": BETA_COMPANY, "name": "Licenças Beta", "type": "debit"}),
            )
            .await,
    );
    let center = id_of(
        &beta
            .ok(
                "finance_cost_centers_create",
                json!({"company_id": BETA_COMPANY, "name": "Engenharia Beta", "type": "cost"}),
            )
            .await,
    );
    let person =
        id_of(&beta.ok("finance_people_create", json!({"company_id": BETA_COMPANY, "name": "Fornecedora Beta"})).await);
    let tax = id_of(&beta.ok("finance_taxes_create", json!({"name": "ISS Beta", "default_rate": "2.00"})).await);
    let transaction = id_of(
        &beta
            .ok("finance_transactions_create", json!({"company_id": BETA_COMPANY, "financial_account_id": BETA_ACCOUNT, "description": "Servidor Beta", "amount": "99.00", "occurred_at": "2026-11-20", "type": "debit"}))
            .await,
    );
    let receivable = id_of(&beta.ok("finance_receivables_create", json!({"company_id": BETA_COMPANY, "description": "Contrato Beta", "amount": "5000.00", "due_date": "2026-12-20", "person_name": "Cliente Beta"})).await);
    let second_account = id_of(
        &beta
            .ok("finance_accounts_create", json!({"company_id": BETA_COMPANY, "name": "Caixa Beta", "type": "cash"}))
            .await,
    );
    let (_, transfer) = beta
        .confirmed("finance_transfers_create", json!({"from_account_id": BETA_ACCOUNT, "to_account_id": second_account, "amount": "10.00", "occurred_at": "2026-11-21", "description": "Troco Beta"}))
        .await;
    let transfer = transfer["transfer_id"].as_str().unwrap().to_string();
    let attachment = id_of(&beta.ok("finance_attachments_upload", json!({"file_name": "beta.pdf", "content_base64": base64::engine::general_purpose::STANDARD.encode(TINY_PDF)})).await);
    let beta_balance = beta.ok("finance_accounts_get", json!({"id": BETA_ACCOUNT})).await["balance"].clone();

    let bill = |id: &str| json!({"id": id});
    let cases: Vec<(&str, Value)> = vec![
        ("finance_companies_get", bill(BETA_COMPANY)),
        ("finance_companies_update", json!({"id": BETA_COMPANY, "name": "Tomada"})),
        ("finance_companies_delete", bill(BETA_COMPANY)),
        ("finance_accounts_get", bill(BETA_ACCOUNT)),
        ("finance_accounts_update", json!({"id": BETA_ACCOUNT, "name": "Tomada"})),
        ("finance_accounts_delete", bill(&second_account)),
        (
            "finance_accounts_adjust_balance",
            json!({"id": BETA_ACCOUNT, "target_balance": "0.00", "category_id": ACME_RENT_CATEGORY}),
        ),
        ("finance_categories_get", bill(&category)),
        ("finance_categories_update", json!({"id": category, "name": "Tomada"})),
        ("finance_categories_delete", bill(&category)),
        ("finance_cost_centers_get", bill(&center)),
        ("finance_cost_centers_update", json!({"id": center, "name": "Tomada"})),
        ("finance_cost_centers_delete", bill(&center)),
        ("finance_people_get", bill(&person)),
        ("finance_people_update", json!({"id": person, "name": "Tomada"})),
        ("finance_people_delete", bill(&person)),
        ("finance_taxes_get", bill(&tax)),
        ("finance_taxes_update", json!({"id": tax, "name": "Tomada"})),
        ("finance_taxes_delete", bill(&tax)),
        ("finance_transactions_get", bill(&transaction)),
        ("finance_transactions_update", json!({"id": transaction, "notes": "Tomada"})),
        ("finance_transactions_delete", bill(&transaction)),
        ("finance_transfers_get", bill(&transfer)),
        ("finance_payables_get", bill(BETA_PAYABLE)),
        ("finance_payables_update", json!({"id": BETA_PAYABLE, "notes": "Tomada"})),
        ("finance_payables_delete", bill(BETA_PAYABLE)),
        (
            "finance_payables_settle",
            json!({"id": BETA_PAYABLE, "payment_date": "2026-12-05", "financial_account_id": ACME_CHECKING_ACCOUNT}),
        ),
        ("finance_payables_cancel", bill(BETA_PAYABLE)),
        ("finance_payables_reopen", bill(BETA_PAYABLE)),
        ("finance_receivables_get", bill(&receivable)),
        ("finance_receivables_update", json!({"id": receivable, "notes": "Tomada"})),
        ("finance_receivables_delete", bill(&receivable)),
        (
            "finance_receivables_settle",
            json!({"id": receivable, "payment_date": "2026-12-20", "financial_account_id": ACME_CHECKING_ACCOUNT}),
        ),
        ("finance_receivables_cancel", bill(&receivable)),
        ("finance_receivables_reopen", bill(&receivable)),
        ("finance_attachments_get", bill(&attachment)),
        ("finance_attachments_download", bill(&attachment)),
        ("finance_attachments_delete", bill(&attachment)),
        ("finance_attachments_link", json!({"attachment_id": attachment, "type": "payable", "id": ACME_RENT_DECEMBER})),
        (
            "finance_attachments_unlink",
            json!({"attachment_id": attachment, "type": "payable", "id": ACME_RENT_DECEMBER}),
        ),
        // An ACME record pointing at a Beta one.
        (
            "finance_attachments_link",
            json!({"attachment_id": ACME_RENT_RECEIPT, "type": "payable", "id": BETA_PAYABLE}),
        ),
        (
            "finance_transfers_create",
            json!({"from_account_id": BETA_ACCOUNT, "to_account_id": ACME_CHECKING_ACCOUNT, "amount": "10.00", "occurred_at": "2026-11-21", "description": "Desvio"}),
        ),
        (
            "finance_transactions_create",
            json!({"company_id": ACME_COMPANY, "financial_account_id": BETA_ACCOUNT, "description": "Desvio", "amount": "1.00", "occurred_at": "2026-11-21", "type": "credit"}),
        ),
        (
            "finance_payables_create",
            json!({"company_id": BETA_COMPANY, "description": "Desvio", "amount": "1.00", "due_date": "2026-12-01"}),
        ),
    ];
    let beta_words = ["Beta", "Nubank", "Licenças de software"];
    let mut acme = Agent::new(&h, h.token(DEMO_OWNER));
    for (tool, args) in &cases {
        // As ACME's owner, in ACME: those ids do not exist there.
        let result = acme.result(confirmable(tool, args.clone(), json!({})), tool).await;
        let error = tool_error(&result);
        let code = error["code"].as_str().unwrap();
        if args.get("attachment_id").is_none() && !tool.ends_with("_create") {
            assert_eq!(code, "not_found", "{tool} {args}: {error}");
        } else {
            assert!(matches!(code, "not_found" | "unprocessable_entity" | "bad_request"), "{tool} {args}: {error}");
        }
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(!beta_words.iter().any(|w| text.contains(w)), "{tool} leaks: {text}");
        // Naming Beta's workspace does not help: the caller is not a member.
        let mut in_beta = args.clone();
        in_beta["workspace_id"] = json!(DEMO_WORKSPACE_BETA);
        let result = acme.result(confirmable(tool, in_beta, json!({})), tool).await;
        let error = tool_error(&result);
        assert!(matches!(error["code"].as_str(), Some("forbidden" | "not_found")), "{tool} in Beta: {error}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(!beta_words.iter().any(|w| text.contains(w)), "{tool} leaks: {text}");
    }
    // Every tool that takes a record's id was tried.
    let listed = h.send(Mcp::modern("tools/list", json!({})).bearer(&acme.token).build()).await.result();
    let taking_ids: BTreeSet<String> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| ["id", "attachment_id"].iter().any(|f| t["inputSchema"]["properties"].get(f).is_some()))
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(taking_ids.len(), 40);
    let tried: BTreeSet<String> = cases.iter().map(|(t, _)| t.to_string()).collect();
    assert_eq!(taking_ids.difference(&tried).collect::<Vec<_>>(), Vec::<&String>::new());
    // And Beta's records are as they were.
    assert_eq!(beta.ok("finance_payables_get", json!({"id": BETA_PAYABLE})).await["status"], "pending");
    assert_eq!(beta.ok("finance_payables_get", json!({"id": BETA_PAYABLE})).await["notes"], Value::Null);
    assert_eq!(beta.ok("finance_receivables_get", json!({"id": receivable})).await["status"], "pending");
    assert_eq!(beta.ok("finance_accounts_get", json!({"id": BETA_ACCOUNT})).await["balance"], beta_balance);
    assert_eq!(beta.ok("finance_companies_get", json!({"id": BETA_COMPANY})).await["name"], "Beta Tecnologia S.A.");
    for (tool, id) in [
        ("finance_categories_get", &category),
        ("finance_cost_centers_get", &center),
        ("finance_people_get", &person),
        ("finance_taxes_get", &tax),
        ("finance_transactions_get", &transaction),
        ("finance_accounts_get", &second_account),
        ("finance_attachments_get", &attachment),
    ] {
        assert_ne!(beta.ok(tool, json!({"id": id})).await["name"], "Tomada", "{tool}");
    }
    assert_eq!(beta.ok("finance_attachments_get", json!({"id": attachment})).await["linked_payables_count"], 0);
    assert_eq!(acme.ok("finance_attachments_get", json!({"id": ACME_RENT_RECEIPT})).await["linked_payables_count"], 1);
}

// ---------------------------------------------------------------------------------------
// Files

#[tokio::test]
async fn files_go_up_as_base64_and_come_down_only_through_the_api() {
    let h = Harness::with_demo().await;
    let mut a = Agent::new(&h, h.token(DEMO_OWNER));
    let b64 = base64::engine::general_purpose::STANDARD;
    let uploaded = a
        .ok(
            "finance_attachments_upload",
            json!({"file_name": "boleto-luz.pdf", "content_base64": b64.encode(TINY_PDF), "title": "Boleto da luz"}),
        )
        .await;
    let id = id_of(&uploaded);
    assert_eq!(
        (uploaded["mime_type"].as_str(), uploaded["title"].as_str()),
        (Some("application/pdf"), Some("Boleto da luz"))
    );
    assert_eq!(uploaded["file_size"], TINY_PDF.len());
    let via: String = sql::query("SELECT created_via FROM attachments WHERE id = $1")
        .bind(&id)
        .fetch_one(&h.state.db)
        .await
        .unwrap()
        .try_get(0)
        .unwrap();
    assert_eq!(via, "mcp");

    // Download: where and what, never the bytes.
    let result =
        a.result(call("finance_attachments_download", json!({"id": id})), "finance_attachments_download").await;
    let download = payload(&result);
    let url = format!("{PUBLIC_URL}/v1/attachments/{id}/download");
    assert_eq!(
        download,
        json!({"id": id, "file_name": "boleto-luz.pdf", "content_type": "application/pdf", "size": TINY_PDF.len(), "download_url": url})
    );
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(!text.contains("%PDF") && !text.contains(&b64.encode(TINY_PDF)), "no bytes through the tool");
    let path = url.strip_prefix(PUBLIC_URL).unwrap();
    let get = |token: String| Mcp::raw(vec![]).method(http::Method::GET).path(path).bearer(&token).build();
    let refused = h.send(get(h.token(DEMO_OWNER))).await;
    assert_eq!(refused.status, 401, "an MCP token is refused at the API");
    let bytes = h.send(get(h.api_token(DEMO_OWNER))).await;
    assert_eq!(bytes.status, 200);
    assert_eq!(bytes.header("content-type"), Some("application/pdf"));
    assert_eq!(&bytes.bytes[..], TINY_PDF);

    // Too large, undecodable, or not what it says.
    let mut big = TINY_PDF.to_vec();
    big.resize(10 * 1024 * 1024 + 1, b' ');
    let error = a
        .err("finance_attachments_upload", json!({"file_name": "grande.pdf", "content_base64": b64.encode(&big)}))
        .await;
    assert_eq!(error["details"]["reason"], "too_large", "{error}");
    assert_eq!(error["details"]["limit_bytes"], 10_485_760);
    let error = a
        .err("finance_attachments_upload", json!({"file_name": "x.pdf", "content_base64": "%%% not base64 %%%"}))
        .await;
    assert_eq!(
        (error["code"].as_str(), error["details"]["field"].as_str()),
        (Some("bad_request"), Some("content_base64"))
    );
    let error = a
        .err("finance_attachments_upload", json!({"file_name": "foto.png", "content_base64": b64.encode(TINY_PDF)}))
        .await;
    assert_eq!(error["details"]["field"], "file", "{error}");
    assert_eq!(count(&h, "SELECT COUNT(*) FROM attachments WHERE workspace_id = $1", DEMO_WORKSPACE_ACME).await, 2);

    // Link, refuse a second link and a delete while linked, unlink, delete.
    let link = json!({"attachment_id": id, "type": "transaction", "id": ACME_CAPITAL_CONTRIBUTION});
    a.ok("finance_attachments_link", link.clone()).await;
    assert_eq!(a.err("finance_attachments_link", link.clone()).await["code"], "conflict");
    assert_eq!(a.ok("finance_attachments_get", json!({"id": id})).await["linked_transactions_count"], 1);
    let (_, state) = a.ask("finance_attachments_delete", json!({"id": id})).await;
    let refused = a
        .result(
            confirmable("finance_attachments_delete", json!({"id": id}), accept(&state)),
            "finance_attachments_delete",
        )
        .await;
    assert_eq!(tool_error(&refused)["code"], "unprocessable_entity");
    assert_eq!(
        a.ok("finance_attachments_unlink", link.clone()).await,
        json!({"unlinked": true, "attachment_id": id, "type": "transaction", "id": ACME_CAPITAL_CONTRIBUTION})
    );
    assert_eq!(a.ok("finance_attachments_get", json!({"id": id})).await["linked_transactions_count"], 0);
    let (message, deleted) = a.confirmed("finance_attachments_delete", json!({"id": id})).await;
    assert_mentions(&message, &["boleto-luz.pdf", "Boleto da luz"]);
    assert_eq!(deleted, json!({"deleted": true, "id": id}));
    assert_eq!(a.err("finance_attachments_download", json!({"id": id})).await["code"], "not_found");
}
