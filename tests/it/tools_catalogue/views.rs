use super::*;

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
pub(crate) fn of_toolsets(toolsets: &[&str], read_only: bool) -> Vec<String> {
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
    assert_eq!(writes.len(), 50);
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
pub(super) fn model_visible(tools: &[Value]) -> usize {
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
/// figures (bytes ≈ tokens × 4) are those of BENCHMARKS.md. (Names and descriptions
/// carry the pattern that refuses control and override characters: +4.0 KB. Where a
/// waiting payable counts, the suggestions' counts, a rule's overlap and the attachments'
/// link filters: +1.0 KB, less than one tool's weight. The duplicates tool and the files
/// a get answers: +2.5 KB, one tool's weight.)
#[tokio::test]
async fn the_catalogue_stays_within_its_byte_budget() {
    const MODEL_VISIBLE_OWNER: usize = 96_200;
    const WIRE_OWNER: usize = 220_000;
    const WIRE_PAYABLES_VIEW: usize = 59_000;
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
        assert_eq!(tools.len(), catalogue_size());
        assert!(
            reply.bytes.len() <= WIRE_OWNER,
            "{version}: tools/list is {} bytes (pinned at {WIRE_OWNER})",
            reply.bytes.len()
        );
        let visible = model_visible(&tools);
        println!("owner's tools/list {version}: {} bytes, {visible} model-visible", reply.bytes.len());
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
