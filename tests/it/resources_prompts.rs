//! Resources, prompts and completions (SPEC §9): every record template reads the get
//! operation's JSON in both eras, records of another workspace are not found and never
//! suggested, templates and prompts are listed by what the caller may do, prompts check
//! their arguments and steer to the catalogue's tools, and completion answers every
//! prompt argument and template variable.

use crate::common;

use common::*;
use serde_json::{json, Value};

/// One demo record of Acme per template: (resource, id, its `/v1` path).
const RECORDS: &[(&str, &str, &str)] = &[
    ("companies", ACME_COMPANY, "/v1/companies"),
    ("accounts", ACME_CHECKING_ACCOUNT, "/v1/financial-accounts"),
    ("categories", ACME_RENT_CATEGORY, "/v1/categories"),
    ("cost_centers", ACME_ADMIN_COST_CENTER, "/v1/classification_centers"),
    ("people", ACME_LANDLORD, "/v1/people"),
    ("taxes", ACME_ISS_TAX, "/v1/taxes"),
    ("transactions", ACME_CAPITAL_CONTRIBUTION, "/v1/financial-transactions"),
    ("payables", ACME_RENT_DECEMBER, "/v1/payables"),
    ("receivables", ACME_SALE_PENDING, "/v1/receivables"),
    ("attachments", ACME_RENT_RECEIPT, "/v1/attachments"),
];

/// In catalogue order (SPEC §5: the money flow first).
const ALL_TEMPLATES: [&str; 10] = [
    "payables",
    "receivables",
    "transactions",
    "accounts",
    "attachments",
    "companies",
    "people",
    "categories",
    "cost_centers",
    "taxes",
];

const ALL_PROMPTS: [&str; 4] =
    ["overdue_payables_review", "cash_position", "month_close_checklist", "classify_transactions"];

fn uri(resource: &str, id: &str) -> String {
    format!("kobana://finance/{resource}/{id}")
}

fn read_modern(uri: &str) -> Mcp {
    Mcp::modern("resources/read", json!({"uri": uri}))
}

fn read_legacy(uri: &str, version: &str) -> Mcp {
    Mcp::legacy("resources/read", json!({"uri": uri}), Some(version))
}

/// The record as `GET /v1/...{id}` (the get operation) answers it.
async fn rest_get(h: &Harness, path: &str, id: &str) -> Value {
    let request =
        Mcp::raw("").method(http::Method::GET).path(&format!("{path}/{id}")).bearer(&h.api_token(DEMO_OWNER)).build();
    let reply = h.send(request).await;
    assert_eq!(reply.status, 200, "{path}/{id}: {}", String::from_utf8_lossy(&reply.bytes));
    reply.json()
}

fn record_of(result: &Value) -> Value {
    serde_json::from_str(result["contents"][0]["text"].as_str().expect("text contents")).expect("JSON record")
}

fn complete_id(resource: &str, value: &str) -> Mcp {
    Mcp::modern(
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": format!("kobana://finance/{resource}/{{id}}")}, "argument": {"name": "id", "value": value}}),
    )
}

fn complete_prompt(prompt: &str, argument: &str, value: &str, context: Option<Value>) -> Mcp {
    let mut params =
        json!({"ref": {"type": "ref/prompt", "name": prompt}, "argument": {"name": argument, "value": value}});
    if let Some(arguments) = context {
        params["context"] = json!({ "arguments": arguments });
    }
    Mcp::modern("completion/complete", params)
}

fn get_prompt(name: &str, arguments: Value) -> Mcp {
    Mcp::modern("prompts/get", json!({"name": name, "arguments": arguments}))
}

async fn values(h: &Harness, request: Mcp, token: &str) -> Vec<String> {
    let result = h.send(request.bearer(token).build()).await.result();
    result["completion"]["values"].as_array().expect("values").iter().map(|v| v.as_str().unwrap().to_string()).collect()
}

/// The same values in any order (the order of labels depends on the database's collation).
fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn names(list: &Value, key: &str) -> Vec<String> {
    list.as_array().unwrap().iter().map(|t| t[key].as_str().unwrap().to_string()).collect()
}

async fn template_names(h: &Harness, token: &str) -> Vec<String> {
    let result = h.send(Mcp::modern("resources/templates/list", json!({})).bearer(token).build()).await.result();
    names(&result["resourceTemplates"], "name")
}

async fn prompt_names(h: &Harness, token: &str) -> Vec<String> {
    let result = h.send(Mcp::modern("prompts/list", json!({})).bearer(token).build()).await.result();
    names(&result["prompts"], "name")
}

fn prompt_text(result: &Value) -> String {
    let messages = result["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0]["role"], "user");
    assert_eq!(messages[0]["content"]["type"], "text");
    messages[0]["content"]["text"].as_str().unwrap().to_string()
}

fn today() -> String {
    kobana_finance_mcp::clock::now_rfc3339()[..10].to_string()
}

fn in_days(days: i64) -> String {
    kobana_finance_mcp::domain::dates::add_days(&today(), days).unwrap()
}

// ---------------------------------------------------------------------------------
// Resources

#[tokio::test]
async fn every_record_template_reads_the_get_operations_json_in_both_eras() {
    let h = Harness::with_demo().await;
    let token = h.token(DEMO_OWNER);
    for &(resource, id, path) in RECORDS {
        let expected = rest_get(&h, path, id).await;
        let uri = uri(resource, id);
        let modern = h.send(read_modern(&uri).bearer(&token).build()).await;
        assert_eq!(modern.status, 200, "{uri}");
        let result = modern.result();
        assert_eq!(result["contents"][0]["uri"], uri);
        assert_eq!(result["contents"][0]["mimeType"], "application/json");
        assert_eq!(record_of(&result), expected, "{uri} (2026)");
        assert_eq!(result["resultType"], "complete");
        assert_eq!(result["cacheScope"], "private");
        for version in ["2025-06-18", "2025-03-26"] {
            let legacy = h.send(read_legacy(&uri, version).bearer(&token).build()).await.result();
            assert_eq!(record_of(&legacy), expected, "{uri} ({version})");
            assert!(legacy.get("resultType").is_none() && legacy.get("ttlMs").is_none());
        }
    }
}

#[tokio::test]
async fn a_record_of_another_workspace_reads_as_not_found_in_each_era() {
    let h = Harness::with_demo().await;
    let beta = h.token(DEMO_BETA_OWNER);
    for &(resource, id, _) in RECORDS {
        let uri = uri(resource, id);
        let modern = h.send(read_modern(&uri).bearer(&beta).build()).await;
        assert_eq!((modern.status.as_u16(), modern.rpc_code()), (200, Some(-32602)), "{uri}");
        assert_eq!(modern.json()["error"]["data"]["uri"], uri);
        let legacy = h.send(read_legacy(&uri, "2025-06-18").bearer(&beta).build()).await;
        assert_eq!((legacy.status.as_u16(), legacy.rpc_code()), (200, Some(-32002)), "{uri}");
        assert_eq!(legacy.json()["error"]["data"]["uri"], uri);
    }
    // Beta's own records read.
    let own = h.send(read_modern(&uri("payables", BETA_PAYABLE)).bearer(&beta).build()).await.result();
    assert_eq!(record_of(&own)["description"], "Licenças de software");
    // A payable is not a receivable, a malformed id and an unknown resource are nobody's.
    let owner = h.token(DEMO_OWNER);
    for uri in [
        uri("receivables", ACME_RENT_DECEMBER),
        uri("payables", ACME_SALE_PENDING),
        uri("payables", "not-a-uuid"),
        uri("invoices", ACME_COMPANY),
        "kobana://finance/payables/b1110000-0001-4000-8000-000000000001/extra".to_string(),
    ] {
        assert_eq!(h.send(read_modern(&uri).bearer(&owner).build()).await.rpc_code(), Some(-32602), "{uri}");
        assert_eq!(
            h.send(read_legacy(&uri, "2025-03-26").bearer(&owner).build()).await.rpc_code(),
            Some(-32002),
            "{uri}"
        );
    }
}

#[tokio::test]
async fn the_connections_default_workspace_bounds_what_resources_read() {
    let h = Harness::with_demo().await;
    // Finance in Acme, viewer in Beta.
    let token = h.token(DEMO_FINANCE);
    let acme_payable = uri("payables", ACME_RENT_DECEMBER);
    assert!(h.send(read_modern(&acme_payable).bearer(&token).build()).await.rpc_code().is_none());
    let in_beta = |u: &str| read_modern(u).bearer(&token).header("x-workspace-id", DEMO_WORKSPACE_BETA).build();
    assert_eq!(h.send(in_beta(&acme_payable)).await.rpc_code(), Some(-32602));
    let beta = h.send(in_beta(&uri("payables", BETA_PAYABLE))).await.result();
    assert_eq!(record_of(&beta)["id"], BETA_PAYABLE);
}

#[tokio::test]
async fn templates_are_listed_for_what_the_caller_may_read() {
    let h = Harness::with_demo().await;
    assert_eq!(template_names(&h, &h.token(DEMO_OWNER)).await, ALL_TEMPLATES);
    // Every role reads: the viewer sees every template, as does finance.all.
    assert_eq!(template_names(&h, &h.token(DEMO_VIEWER)).await, ALL_TEMPLATES);
    assert_eq!(template_names(&h, &h.token_with(DEMO_VIEWER, Some("finance.all"), |_| {})).await, ALL_TEMPLATES);
    // A single read scope shows its template only; write scopes do not imply reads.
    let some = h.token_with(DEMO_OWNER, Some("finance.payables finance.transactions"), |_| {});
    assert_eq!(template_names(&h, &some).await, ["payables", "transactions"]);
    let writes = h.token_with(DEMO_OWNER, Some("finance.payables.write finance.transactions.write"), |_| {});
    assert!(template_names(&h, &writes).await.is_empty());
    // A default workspace the caller is no member of shows nothing.
    let stranger = h
        .send(
            Mcp::modern("resources/templates/list", json!({}))
                .bearer(&h.token(DEMO_OWNER))
                .header("x-workspace-id", DEMO_WORKSPACE_BETA)
                .build(),
        )
        .await
        .result();
    assert_eq!(stranger["resourceTemplates"], json!([]));
    // Shape: uriTemplate, name, title, description, mimeType; 2025-03-26 has no titles.
    let result =
        h.send(Mcp::modern("resources/templates/list", json!({})).bearer(&h.token(DEMO_OWNER)).build()).await.result();
    let payables = &result["resourceTemplates"][0];
    assert_eq!(payables["uriTemplate"], "kobana://finance/payables/{id}");
    assert_eq!(payables["mimeType"], "application/json");
    assert!(payables["description"].as_str().unwrap().contains("finance_payables_get"));
    assert_eq!(result["ttlMs"], 0);
    let old = h
        .send(
            Mcp::legacy("resources/templates/list", json!({}), Some("2025-03-26")).bearer(&h.token(DEMO_OWNER)).build(),
        )
        .await
        .result();
    assert_eq!(names(&old["resourceTemplates"], "name"), ALL_TEMPLATES);
    assert!(old["resourceTemplates"][0].get("title").is_none());
}

#[tokio::test]
async fn viewers_read_records_and_tokens_without_the_scope_do_not() {
    let h = Harness::with_demo().await;
    for &(resource, id, _) in RECORDS {
        let uri = uri(resource, id);
        let viewer = h.send(read_modern(&uri).bearer(&h.token(DEMO_VIEWER)).build()).await;
        assert!(viewer.rpc_code().is_none(), "viewer reads {uri}");
        // The other resources' read scopes, and this resource's write scope, read nothing here.
        let others: Vec<String> =
            ALL_TEMPLATES.iter().filter(|r| **r != resource).map(|r| format!("finance.{r}")).collect();
        let scope = format!("{} finance.{resource}.write", others.join(" "));
        let blind = h.token_with(DEMO_OWNER, Some(&scope), |_| {});
        assert_eq!(
            h.send(read_modern(&uri).bearer(&blind).build()).await.rpc_code(),
            Some(-32602),
            "{uri} without its scope"
        );
    }
}

#[tokio::test]
async fn the_fixed_documents_are_listed_for_every_token() {
    let h = Harness::new().await;
    for token in [h.token(DEMO_OWNER), h.token_with(DEMO_VIEWER, Some(""), |_| {})] {
        let result = h.send(Mcp::modern("resources/list", json!({})).bearer(&token).build()).await.result();
        assert_eq!(names(&result["resources"], "uri"), ["kobana://finance/workspaces", "kobana://finance/guide"]);
    }
    let guide = h.send(read_modern("kobana://finance/guide").bearer(&h.token(DEMO_OWNER)).build()).await.result();
    let text = guide["contents"][0]["text"].as_str().unwrap();
    assert!(text.contains("month_close_checklist") && text.contains("kobana://finance/{resource}/{id}"));
}

// ---------------------------------------------------------------------------------
// Completion of template ids

#[tokio::test]
async fn completion_offers_record_ids_by_label_prefix_for_every_template() {
    let h = Harness::with_demo().await;
    let owner = h.token(DEMO_OWNER);
    let rows: &[(&str, &str, &[&str])] = &[
        ("companies", "acme s", &[ACME_SERVICES]),
        ("accounts", "conta", &[ACME_CHECKING_ACCOUNT]),
        ("accounts", "CAIXA", &[ACME_CASH_ACCOUNT]),
        ("categories", "alug", &[ACME_RENT_CATEGORY]),
        ("categories", "sal", &[ACME_SALARIES_CATEGORY]),
        ("cost_centers", "adm", &[ACME_ADMIN_COST_CENTER]),
        ("people", "IMOBILIÁRIA", &[ACME_LANDLORD]),
        ("people", "Imobiliária C", &[ACME_LANDLORD]),
        ("people", "maria", &[ACME_CUSTOMER_MARIA]),
        ("taxes", "i", &[ACME_IRRF_TAX, ACME_ISS_TAX, ACME_INSS_TAX]),
        ("transactions", "aporte", &[ACME_CAPITAL_CONTRIBUTION]),
        ("transactions", "aluguel", &[ACME_RENT_SETTLEMENT]),
        // Payables complete payables only, receivables receivables only (one table).
        ("payables", "alug", &[ACME_RENT_DECEMBER, ACME_RENT_NOVEMBER]),
        ("payables", "venda", &[]),
        (
            "payables",
            "b1110000-0001-4000-8000-00000000000",
            &[
                ACME_RENT_DECEMBER,
                ACME_RENT_NOVEMBER,
                ACME_SUPPLIES_CANCELLED,
                ACME_SUPPLIES_PENDING,
                ACME_SERVICE_CHARGE_DECEMBER,
                ACME_DARF_NOVEMBER,
            ],
        ),
        ("receivables", "venda", &[ACME_SALE_PENDING, ACME_SALE_RECEIVED, ACME_SALE_CANCELLED]),
        ("receivables", "alug", &[]),
        // Attachments by file name or title.
        ("attachments", "recibo-", &[ACME_RENT_RECEIPT]),
        ("attachments", "recibo do", &[ACME_RENT_RECEIPT]),
        ("attachments", "%", &[]),
        ("payables", "_", &[]),
    ];
    for &(resource, prefix, expected) in rows {
        let got = sorted(values(&h, complete_id(resource, prefix), &owner).await);
        assert_eq!(got, expected, "{resource} / {prefix:?}");
    }
    let reply = h.send(complete_id("payables", "").bearer(&owner).build()).await.result();
    assert_eq!(reply["completion"]["values"].as_array().unwrap().len(), 6);
    assert_eq!(reply["completion"]["hasMore"], false);
}

#[tokio::test]
async fn completion_never_offers_ids_of_another_workspace() {
    let h = Harness::with_demo().await;
    let beta = h.token(DEMO_BETA_OWNER);
    assert_eq!(values(&h, complete_id("payables", ""), &beta).await, [BETA_PAYABLE]);
    assert_eq!(values(&h, complete_id("accounts", "conta"), &beta).await, [BETA_ACCOUNT]);
    assert_eq!(values(&h, complete_id("companies", ""), &beta).await, [BETA_COMPANY]);
    for resource in ALL_TEMPLATES {
        let offered = values(&h, complete_id(resource, ""), &beta).await;
        for &(_, id, _) in RECORDS {
            assert!(!offered.iter().any(|v| v == id), "{resource} offers Acme's {id} to Beta");
        }
    }
    // The owner of Acme never sees Beta's records.
    assert_eq!(
        values(&h, complete_id("accounts", "conta corrente n"), &h.token(DEMO_OWNER)).await,
        Vec::<String>::new()
    );
    // Finance (member of both) with Beta as the connection's workspace: Beta's only.
    let finance = h.token(DEMO_FINANCE);
    assert_eq!(sorted(values(&h, complete_id("accounts", ""), &finance).await).len(), 4);
    let in_beta = complete_id("accounts", "conta").header("x-workspace-id", DEMO_WORKSPACE_BETA);
    assert_eq!(values(&h, in_beta, &finance).await, [BETA_ACCOUNT]);
    let all_in_beta = complete_id("accounts", "").header("x-workspace-id", DEMO_WORKSPACE_BETA);
    assert!(
        values(&h, all_in_beta, &finance).await.iter().all(|id| !RECORDS.iter().any(|r| r.1 == id)),
        "no Acme account in Beta"
    );
    // Without the read scope nothing is offered.
    let blind = h.token_with(DEMO_OWNER, Some("finance.companies finance.payables.write"), |_| {});
    assert!(values(&h, complete_id("payables", ""), &blind).await.is_empty());
}

#[tokio::test]
async fn completion_offers_live_rows_only_and_at_most_100() {
    let h = Harness::with_demo().await;
    let owner = h.token(DEMO_OWNER);
    // A soft-deleted person is no longer offered.
    sql::query("UPDATE people SET deleted_at = $1 WHERE id = $2")
        .bind(kobana_finance_mcp::clock::now_rfc3339())
        .bind(ACME_CUSTOMER_MARIA)
        .execute(&h.state.db)
        .await
        .unwrap();
    assert!(values(&h, complete_id("people", "maria"), &owner).await.is_empty());
    // 105 taxes named "Taxa …": 100 values and hasMore.
    let now = kobana_finance_mcp::clock::now_rfc3339();
    for i in 0..105 {
        sql::query(
            "INSERT INTO taxes (id, workspace_id, name, created_at, updated_at, created_via, updated_via)
             VALUES ($1, $2, $3, $4, $4, 'system', 'system')",
        )
        .bind(uuid::Uuid::new_v4().to_string())
        .bind(DEMO_WORKSPACE_ACME)
        .bind(format!("Taxa {i:03}"))
        .bind(&now)
        .execute(&h.state.db)
        .await
        .unwrap();
    }
    let reply = h.send(complete_id("taxes", "taxa").bearer(&owner).build()).await.result();
    assert_eq!(reply["completion"]["values"].as_array().unwrap().len(), 100);
    assert_eq!(reply["completion"]["hasMore"], true);
    let narrow = h.send(complete_id("taxes", "taxa 10").bearer(&owner).build()).await.result();
    assert_eq!(narrow["completion"]["values"].as_array().unwrap().len(), 5);
    assert_eq!(narrow["completion"]["hasMore"], false);
}

#[tokio::test]
async fn completion_rejects_unknown_references_and_variables() {
    let h = Harness::new().await;
    let owner = h.token(DEMO_OWNER);
    let bad = [
        json!({"ref": {"type": "ref/resource", "uri": "kobana://finance/invoices/{id}"}, "argument": {"name": "id", "value": ""}}),
        json!({"ref": {"type": "ref/resource", "uri": "kobana://finance/payables/{id}"}, "argument": {"name": "other", "value": ""}}),
        json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "month", "value": ""}}),
        json!({"ref": {"type": "ref/prompt", "name": "month_close_checklist"}, "argument": {"name": "days_ahead", "value": ""}}),
        json!({"ref": {"type": "ref/other"}, "argument": {"name": "id", "value": ""}}),
        json!({"ref": {"type": "ref/prompt", "name": "month_close_checklist"}, "argument": {"name": "month", "value": 2026}}),
        json!({"ref": {"type": "ref/prompt", "name": "month_close_checklist"}}),
    ];
    for params in bad {
        let reply = h.send(Mcp::modern("completion/complete", params.clone()).bearer(&owner).build()).await;
        assert_eq!(reply.rpc_code(), Some(-32602), "{params}");
        let legacy =
            h.send(Mcp::legacy("completion/complete", params.clone(), Some("2025-06-18")).bearer(&owner).build()).await;
        assert_eq!(legacy.rpc_code(), Some(-32602), "{params} (2025)");
    }
}

// ---------------------------------------------------------------------------------
// Prompts

#[tokio::test]
async fn prompts_are_listed_for_what_the_caller_may_do() {
    let h = Harness::new().await;
    let result = h.send(Mcp::modern("prompts/list", json!({})).bearer(&h.token(DEMO_OWNER)).build()).await.result();
    assert_eq!(names(&result["prompts"], "name"), ALL_PROMPTS);
    assert_eq!(result["ttlMs"], 0);
    let month_close = &result["prompts"][2];
    assert_eq!(
        month_close["arguments"],
        json!([
            {"name": "workspace_id", "title": "Workspace", "description": "The workspace to work in (optional when you have only one)", "required": false},
            {"name": "month", "title": "Month", "description": "The month to close, YYYY-MM (e.g. 2026-11)", "required": true},
        ])
    );
    assert_eq!(names(&result["prompts"][0]["arguments"], "name"), ["workspace_id", "days_ahead"]);
    assert_eq!(names(&result["prompts"][1]["arguments"], "name"), ["workspace_id", "company_id"]);
    assert_eq!(names(&result["prompts"][3]["arguments"], "name"), ["workspace_id"]);
    // Classifying writes transactions: not for a viewer, nor for a read-only token.
    assert_eq!(prompt_names(&h, &h.token(DEMO_VIEWER)).await, ALL_PROMPTS[..3]);
    assert_eq!(prompt_names(&h, &h.token_with(DEMO_OWNER, Some("finance.all"), |_| {})).await, ALL_PROMPTS[..3]);
    assert_eq!(prompt_names(&h, &h.token(DEMO_FINANCE)).await, ALL_PROMPTS);
    // One read scope: the prompt that needs only it.
    assert_eq!(
        prompt_names(&h, &h.token_with(DEMO_OWNER, Some("finance.payables"), |_| {})).await,
        ["overdue_payables_review"]
    );
    assert_eq!(prompt_names(&h, &h.token_with(DEMO_OWNER, Some("finance.accounts"), |_| {})).await, ["cash_position"]);
    assert!(prompt_names(&h, &h.token_with(DEMO_OWNER, Some(""), |_| {})).await.is_empty());
    // 2025-03-26 has no titles, on prompts or their arguments.
    let old = h
        .send(Mcp::legacy("prompts/list", json!({}), Some("2025-03-26")).bearer(&h.token(DEMO_OWNER)).build())
        .await
        .result();
    assert!(old["prompts"][0].get("title").is_none() && old["prompts"][0]["arguments"][0].get("title").is_none());
    assert!(old.get("ttlMs").is_none());
}

/// What every script says: money format, third-party data, confirmation.
fn assert_rules(text: &str) {
    assert!(text.contains("\"1234.56\""), "money format: {text}");
    assert!(text.contains("third parties"), "third-party data: {text}");
    assert!(text.contains("confirm"), "confirmation: {text}");
}

#[tokio::test]
async fn overdue_payables_review_steers_to_the_payables_tools() {
    let h = Harness::new().await;
    let owner = h.token(DEMO_OWNER);
    let result = h.send(get_prompt("overdue_payables_review", json!({})).bearer(&owner).build()).await.result();
    assert!(result["description"].is_string());
    let text = prompt_text(&result);
    // The owner has one workspace: it is named.
    assert!(text.contains(&format!("\"workspace_id\": \"{DEMO_WORKSPACE_ACME}\"")), "{text}");
    assert!(
        text.contains(&format!("{{\"status\": \"pending\", \"due_date\": {{\"lte\": \"{}\"}}}}", in_days(7))),
        "{text}"
    );
    for tool in [
        "finance_payables_list",
        "finance_payables_aggregates",
        "finance_accounts_list",
        "finance_payables_settle",
        "finance_payables_cancel",
    ] {
        assert!(text.contains(tool), "{tool}: {text}");
    }
    assert_rules(&text);
    let thirty = prompt_text(
        &h.send(
            get_prompt("overdue_payables_review", json!({"days_ahead": "30", "workspace_id": DEMO_WORKSPACE_ACME}))
                .bearer(&owner)
                .build(),
        )
        .await
        .result(),
    );
    assert!(thirty.contains(&format!("\"lte\": \"{}\"", in_days(30))));
    let zero = prompt_text(
        &h.send(get_prompt("overdue_payables_review", json!({"days_ahead": "0"})).bearer(&owner).build())
            .await
            .result(),
    );
    assert!(zero.contains(&format!("\"lte\": \"{}\"", today())) && zero.contains("due today"));
    // The 2025 era gets the same script.
    let legacy = h
        .send(
            Mcp::legacy(
                "prompts/get",
                json!({"name": "overdue_payables_review", "arguments": {"days_ahead": "30"}}),
                Some("2025-06-18"),
            )
            .bearer(&owner)
            .build(),
        )
        .await
        .result();
    assert_eq!(prompt_text(&legacy), thirty, "the caller's only workspace is named as if given");
}

#[tokio::test]
async fn cash_position_steers_to_accounts_and_aggregates() {
    let h = Harness::new().await;
    let owner = h.token(DEMO_OWNER);
    let text = prompt_text(&h.send(get_prompt("cash_position", json!({})).bearer(&owner).build()).await.result());
    for tool in [
        "finance_accounts_list",
        "finance_accounts_get",
        "finance_transactions_aggregates",
        "finance_payables_list",
        "finance_receivables_list",
    ] {
        assert!(text.contains(tool), "{tool}: {text}");
    }
    assert!(text.contains("every company of the workspace"));
    assert!(
        text.contains(&format!("month {} and year {}", today()[5..7].trim_start_matches('0'), &today()[..4])),
        "{text}"
    );
    assert_rules(&text);
    let one = prompt_text(
        &h.send(get_prompt("cash_position", json!({"company_id": ACME_SERVICES})).bearer(&owner).build())
            .await
            .result(),
    );
    assert!(one.contains(&format!("{{\"active\": true, \"company_id\": \"{ACME_SERVICES}\"}}")), "{one}");
}

#[tokio::test]
async fn month_close_checklist_covers_the_month_named() {
    let h = Harness::new().await;
    let owner = h.token(DEMO_OWNER);
    let text = prompt_text(
        &h.send(get_prompt("month_close_checklist", json!({"month": "2024-02"})).bearer(&owner).build()).await.result(),
    );
    assert!(text.contains("{\"gte\": \"2024-02-01\", \"lte\": \"2024-02-29\"}"), "{text}");
    assert!(text.contains("\"classified\": false") && text.contains("\"is_pending\": true"));
    assert!(text.contains("month 2 and year 2024"));
    for tool in [
        "finance_transactions_list",
        "finance_transactions_update",
        "finance_categories_list",
        "finance_payables_list",
        "finance_receivables_list",
        "finance_payables_settle",
        "finance_receivables_settle",
        "finance_transactions_aggregates",
        "finance_payables_aggregates",
        "finance_receivables_aggregates",
        "finance_accounts_list",
        "finance_accounts_adjust_balance",
        "finance_companies_update",
    ] {
        assert!(text.contains(tool), "{tool}: {text}");
    }
    assert!(text.contains("locked_until to \"2024-02-29\""));
    assert_rules(&text);
}

#[tokio::test]
async fn classify_transactions_proposes_and_applies_only_what_the_user_approves() {
    let h = Harness::new().await;
    // Finance has two workspaces: without workspace_id the script asks to choose one.
    let finance = h.token(DEMO_FINANCE);
    let text =
        prompt_text(&h.send(get_prompt("classify_transactions", json!({})).bearer(&finance).build()).await.result());
    assert!(text.contains("finance_workspaces_list") && text.contains("ask the user which one"), "{text}");
    for tool in ["finance_transactions_list", "finance_categories_list", "finance_transactions_update"] {
        assert!(text.contains(tool), "{tool}: {text}");
    }
    assert!(text.contains("{\"classified\": false}") && text.contains("\"category_id\""));
    assert_rules(&text);
    let named = prompt_text(
        &h.send(
            get_prompt("classify_transactions", json!({"workspace_id": DEMO_WORKSPACE_BETA})).bearer(&finance).build(),
        )
        .await
        .result(),
    );
    assert!(named.contains("\"Beta Tecnologia\"") && named.contains(DEMO_WORKSPACE_BETA));
    // The connection's default workspace names it too.
    let by_header = get_prompt("classify_transactions", json!({}))
        .bearer(&finance)
        .header("x-workspace-id", DEMO_WORKSPACE_ACME)
        .build();
    assert!(prompt_text(&h.send(by_header).await.result()).contains(DEMO_WORKSPACE_ACME));
}

#[tokio::test]
async fn prompt_arguments_are_checked() {
    let h = Harness::new().await;
    let owner = h.token(DEMO_OWNER);
    let rows = [
        ("nope", json!({})),
        ("month_close_checklist", json!({})),
        ("month_close_checklist", json!({"month": ""})),
        ("month_close_checklist", json!({"month": "2024-13"})),
        ("month_close_checklist", json!({"month": "2024-2"})),
        ("month_close_checklist", json!({"month": "february"})),
        ("month_close_checklist", json!({"month": "2024-02-01"})),
        ("month_close_checklist", json!({"month": 202402})),
        ("overdue_payables_review", json!({"days_ahead": "-1"})),
        ("overdue_payables_review", json!({"days_ahead": "366"})),
        ("overdue_payables_review", json!({"days_ahead": "7.5"})),
        ("overdue_payables_review", json!({"days_ahead": "seven"})),
        ("overdue_payables_review", json!({"days_ahead": 7})),
        ("overdue_payables_review", json!({"extra": "1"})),
        ("overdue_payables_review", json!("days_ahead=7")),
        // Another tenant's workspace is not one of the caller's.
        ("overdue_payables_review", json!({"workspace_id": DEMO_WORKSPACE_BETA})),
        ("cash_position", json!({"company_id": "acme"})),
    ];
    for (name, arguments) in rows {
        let modern = h.send(get_prompt(name, arguments.clone()).bearer(&owner).build()).await;
        assert_eq!((modern.status.as_u16(), modern.rpc_code()), (200, Some(-32602)), "{name} {arguments}");
        let legacy = h
            .send(
                Mcp::legacy("prompts/get", json!({"name": name, "arguments": arguments}), Some("2025-06-18"))
                    .bearer(&owner)
                    .build(),
            )
            .await;
        assert_eq!(legacy.rpc_code(), Some(-32602), "{name} (2025)");
    }
    // A prompt the caller may not use is unknown to them.
    let viewer = h.send(get_prompt("classify_transactions", json!({})).bearer(&h.token(DEMO_VIEWER)).build()).await;
    assert_eq!(viewer.rpc_code(), Some(-32602));
    // Blank optional arguments are left out; boundaries are accepted.
    for (name, arguments) in [
        ("overdue_payables_review", json!({"workspace_id": "", "days_ahead": "365"})),
        ("cash_position", json!({"company_id": ""})),
        ("month_close_checklist", json!({"month": "1900-01"})),
    ] {
        assert!(
            h.send(get_prompt(name, arguments.clone()).bearer(&owner).build()).await.rpc_code().is_none(),
            "{name} {arguments}"
        );
    }
}

// ---------------------------------------------------------------------------------
// Completion of prompt arguments

#[tokio::test]
async fn completion_of_workspace_ids_by_name_prefix() {
    let h = Harness::new().await;
    let finance = h.token(DEMO_FINANCE);
    let complete = |value: &str| complete_prompt("cash_position", "workspace_id", value, None);
    assert_eq!(values(&h, complete(""), &finance).await, [DEMO_WORKSPACE_ACME, DEMO_WORKSPACE_BETA]);
    assert_eq!(values(&h, complete("be"), &finance).await, [DEMO_WORKSPACE_BETA]);
    assert_eq!(values(&h, complete("ACME"), &finance).await, [DEMO_WORKSPACE_ACME]);
    assert_eq!(values(&h, complete(&DEMO_WORKSPACE_BETA[..8]), &finance).await, [DEMO_WORKSPACE_BETA]);
    let reply = h.send(complete("").bearer(&finance).build()).await.result();
    assert_eq!(reply["completion"]["total"], 2);
    assert_eq!(reply["completion"]["hasMore"], false);
    // Only the caller's own workspaces.
    let owner = h.token(DEMO_OWNER);
    assert_eq!(values(&h, complete(""), &owner).await, [DEMO_WORKSPACE_ACME]);
    assert!(values(&h, complete("beta"), &owner).await.is_empty());
}

#[tokio::test]
async fn completion_of_company_ids_honours_the_workspace_argument() {
    let h = Harness::new().await;
    let complete = |value: &str, context: Option<Value>| complete_prompt("cash_position", "company_id", value, context);
    let owner = h.token(DEMO_OWNER);
    assert_eq!(values(&h, complete("", None), &owner).await, [ACME_COMPANY, ACME_SERVICES]);
    assert_eq!(values(&h, complete("acme s", None), &owner).await, [ACME_SERVICES]);
    // By trade name too ("Beta" for "Beta Tecnologia S.A.").
    assert_eq!(values(&h, complete("beta", None), &h.token(DEMO_BETA_OWNER)).await, [BETA_COMPANY]);
    // Another tenant's workspace named in the context offers nothing.
    assert!(values(&h, complete("", Some(json!({"workspace_id": DEMO_WORKSPACE_BETA}))), &owner).await.is_empty());
    assert!(values(&h, complete("acme", None), &h.token(DEMO_BETA_OWNER)).await.is_empty());
    // Finance belongs to both: all three, or the named workspace's.
    let finance = h.token(DEMO_FINANCE);
    assert_eq!(
        sorted(values(&h, complete("", None), &finance).await),
        sorted(vec![ACME_COMPANY.into(), ACME_SERVICES.into(), BETA_COMPANY.into()])
    );
    assert_eq!(
        values(&h, complete("", Some(json!({"workspace_id": DEMO_WORKSPACE_BETA}))), &finance).await,
        [BETA_COMPANY]
    );
    assert_eq!(
        values(&h, complete("", Some(json!({"workspace_id": DEMO_WORKSPACE_ACME}))), &finance).await,
        [ACME_COMPANY, ACME_SERVICES]
    );
    // The context's workspace overrides the connection's default.
    let in_acme =
        complete("", Some(json!({"workspace_id": DEMO_WORKSPACE_BETA}))).header("x-workspace-id", DEMO_WORKSPACE_ACME);
    assert_eq!(values(&h, in_acme, &finance).await, [BETA_COMPANY]);
    // Without the companies scope the prompt is there, the suggestions are not.
    let accounts_only = h.token_with(DEMO_OWNER, Some("finance.accounts"), |_| {});
    assert!(values(&h, complete("", None), &accounts_only).await.is_empty());
}

#[tokio::test]
async fn completion_of_months_and_days_ahead() {
    let h = Harness::new().await;
    let owner = h.token(DEMO_OWNER);
    let month = |value: &str| complete_prompt("month_close_checklist", "month", value, None);
    let all = values(&h, month(""), &owner).await;
    assert_eq!(all.len(), 24);
    assert_eq!(all[0], today()[..7]);
    assert!(all.windows(2).all(|w| w[0] > w[1]), "newest first: {all:?}");
    let this_year = values(&h, month(&today()[..4]), &owner).await;
    assert!(!this_year.is_empty() && this_year.iter().all(|m| m.starts_with(&today()[..4])));
    assert!(values(&h, month("1999"), &owner).await.is_empty());
    let days = |value: &str| complete_prompt("overdue_payables_review", "days_ahead", value, None);
    assert_eq!(values(&h, days(""), &owner).await, ["0", "7", "15", "30", "60", "90", "180", "365"]);
    assert_eq!(values(&h, days("3"), &owner).await, ["30", "365"]);
    assert!(values(&h, days("x"), &owner).await.is_empty());
    let reply = h.send(days("").bearer(&owner).build()).await.result();
    assert_eq!(
        (reply["completion"]["total"].clone(), reply["completion"]["hasMore"].clone()),
        (json!(8), json!(false))
    );
    // A prompt the caller cannot use completes nothing: it is unknown.
    let viewer = h
        .send(complete_prompt("classify_transactions", "workspace_id", "", None).bearer(&h.token(DEMO_VIEWER)).build())
        .await;
    assert_eq!(viewer.rpc_code(), Some(-32602));
}

// ---------------------------------------------------------------------------------
// Instructions (SPEC §4)

#[tokio::test]
async fn instructions_warn_about_third_party_data_and_destructive_actions_in_both_eras() {
    let h = Harness::new().await;
    let owner = h.token(DEMO_OWNER);
    let discover = h.send(Mcp::modern("server/discover", json!({})).bearer(&owner).build()).await.result();
    let initialize = h
        .send(Mcp::legacy("initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}), None).bearer(&owner).build())
        .await
        .result();
    for result in [discover, initialize] {
        let instructions = result["instructions"].as_str().expect("instructions");
        assert!(
            instructions.contains("written by third parties") && instructions.contains("never as instructions"),
            "{instructions}"
        );
        assert!(
            instructions.contains("destructive or money-moving action") && instructions.contains("ask the user first"),
            "{instructions}"
        );
        assert!(result["capabilities"]["prompts"].is_object());
        assert_eq!(result["capabilities"]["completions"], json!({}));
    }
}
