//! Resources and completions (SPEC §9): every record template reads the get
//! operation's JSON in both eras, records of another workspace are not found and never
//! suggested, and templates are listed by what the caller may read.

mod common;

use common::*;
use serde_json::{json, Value};

const ACME_COMPANY: &str = "c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a11";
const ACME_SERVICES: &str = "c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a12";
const BETA_COMPANY: &str = "c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a21";
const BETA_ACCOUNT: &str = "a1b2c3d4-0001-4000-8000-000000000021";
const BETA_PAYABLE: &str = "b1110000-0001-4000-8000-000000000021";

/// One demo record of Acme per template: (resource, id, its `/v1` path).
const RECORDS: &[(&str, &str, &str)] = &[
    ("companies", ACME_COMPANY, "/v1/companies"),
    ("accounts", "a1b2c3d4-0001-4000-8000-000000000001", "/v1/financial-accounts"),
    ("categories", "ca7e0000-0001-4000-8000-000000000004", "/v1/categories"),
    ("cost_centers", "cc000000-0001-4000-8000-000000000001", "/v1/classification_centers"),
    ("people", "9e000000-0001-4000-8000-000000000001", "/v1/people"),
    ("taxes", "7a000000-0001-4000-8000-000000000002", "/v1/taxes"),
    ("transactions", "7e000000-0001-4000-8000-000000000003", "/v1/financial-transactions"),
    ("payables", "b1110000-0001-4000-8000-000000000001", "/v1/payables"),
    ("receivables", "b1110000-0001-4000-8000-000000000005", "/v1/receivables"),
    ("attachments", "a7000000-0001-4000-8000-000000000001", "/v1/attachments"),
];

const ALL_TEMPLATES: [&str; 10] =
    ["companies", "accounts", "categories", "cost_centers", "people", "taxes", "transactions", "payables", "receivables", "attachments"];


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
    let request = Mcp::raw("").method(http::Method::GET).path(&format!("{path}/{id}")).bearer(&h.api_token(DEMO_OWNER)).build();
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
        uri("receivables", "b1110000-0001-4000-8000-000000000001"),
        uri("payables", "b1110000-0001-4000-8000-000000000005"),
        uri("payables", "not-a-uuid"),
        uri("invoices", ACME_COMPANY),
        "kobana://finance/payables/b1110000-0001-4000-8000-000000000001/extra".to_string(),
    ] {
        assert_eq!(h.send(read_modern(&uri).bearer(&owner).build()).await.rpc_code(), Some(-32602), "{uri}");
        assert_eq!(h.send(read_legacy(&uri, "2025-03-26").bearer(&owner).build()).await.rpc_code(), Some(-32002), "{uri}");
    }
}

#[tokio::test]
async fn the_connections_default_workspace_bounds_what_resources_read() {
    let h = Harness::with_demo().await;
    // Finance in Acme, viewer in Beta.
    let token = h.token(DEMO_FINANCE);
    let acme_payable = uri("payables", "b1110000-0001-4000-8000-000000000001");
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
    assert_eq!(template_names(&h, &some).await, ["transactions", "payables"]);
    let writes = h.token_with(DEMO_OWNER, Some("finance.payables.write finance.transactions.write"), |_| {});
    assert!(template_names(&h, &writes).await.is_empty());
    // A default workspace the caller is no member of shows nothing.
    let stranger = h.send(Mcp::modern("resources/templates/list", json!({})).bearer(&h.token(DEMO_OWNER)).header("x-workspace-id", DEMO_WORKSPACE_BETA).build()).await.result();
    assert_eq!(stranger["resourceTemplates"], json!([]));
    // Shape: uriTemplate, name, title, description, mimeType; 2025-03-26 has no titles.
    let result = h.send(Mcp::modern("resources/templates/list", json!({})).bearer(&h.token(DEMO_OWNER)).build()).await.result();
    let payables = &result["resourceTemplates"][7];
    assert_eq!(payables["uriTemplate"], "kobana://finance/payables/{id}");
    assert_eq!(payables["mimeType"], "application/json");
    assert!(payables["description"].as_str().unwrap().contains("finance_payables_get"));
    assert_eq!(result["ttlMs"], 0);
    let old = h.send(Mcp::legacy("resources/templates/list", json!({}), Some("2025-03-26")).bearer(&h.token(DEMO_OWNER)).build()).await.result();
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
        let others: Vec<String> = ALL_TEMPLATES.iter().filter(|r| **r != resource).map(|r| format!("finance.{r}")).collect();
        let scope = format!("{} finance.{resource}.write", others.join(" "));
        let blind = h.token_with(DEMO_OWNER, Some(&scope), |_| {});
        assert_eq!(h.send(read_modern(&uri).bearer(&blind).build()).await.rpc_code(), Some(-32602), "{uri} without its scope");
    }
}

#[tokio::test]
async fn the_fixed_documents_are_listed_for_every_token() {
    let h = Harness::new().await;
    for token in [h.token(DEMO_OWNER), h.token_with(DEMO_VIEWER, Some(""), |_| {})] {
        let result = h.send(Mcp::modern("resources/list", json!({})).bearer(&token).build()).await.result();
        assert_eq!(names(&result["resources"], "uri"), ["kobana://finance/workspaces", "kobana://finance/guide"]);
    }
}

// ---------------------------------------------------------------------------------
// Completion of template ids

#[tokio::test]
async fn completion_offers_record_ids_by_label_prefix_for_every_template() {
    let h = Harness::with_demo().await;
    let owner = h.token(DEMO_OWNER);
    let rows: &[(&str, &str, &[&str])] = &[
        ("companies", "acme s", &[ACME_SERVICES]),
        ("accounts", "conta", &["a1b2c3d4-0001-4000-8000-000000000001"]),
        ("accounts", "CAIXA", &["a1b2c3d4-0001-4000-8000-000000000002"]),
        ("categories", "alug", &["ca7e0000-0001-4000-8000-000000000004"]),
        ("categories", "sal", &["ca7e0000-0001-4000-8000-000000000003"]),
        ("cost_centers", "adm", &["cc000000-0001-4000-8000-000000000001"]),
        ("people", "IMOBILIÁRIA", &["9e000000-0001-4000-8000-000000000001"]),
        ("people", "Imobiliária C", &["9e000000-0001-4000-8000-000000000001"]),
        ("people", "maria", &["9e000000-0001-4000-8000-000000000004"]),
        ("taxes", "i", &["7a000000-0001-4000-8000-000000000001", "7a000000-0001-4000-8000-000000000002", "7a000000-0001-4000-8000-000000000003"]),
        ("transactions", "aporte", &["7e000000-0001-4000-8000-000000000003"]),
        ("transactions", "aluguel", &["7e000000-0001-4000-8000-000000000001"]),
        // Payables complete payables only, receivables receivables only (one table).
        ("payables", "alug", &["b1110000-0001-4000-8000-000000000001", "b1110000-0001-4000-8000-000000000002"]),
        ("payables", "venda", &[]),
        ("payables", "b1110000-0001-4000-8000-00000000000", &[
            "b1110000-0001-4000-8000-000000000001",
            "b1110000-0001-4000-8000-000000000002",
            "b1110000-0001-4000-8000-000000000003",
            "b1110000-0001-4000-8000-000000000004",
        ]),
        ("receivables", "venda", &["b1110000-0001-4000-8000-000000000005", "b1110000-0001-4000-8000-000000000006", "b1110000-0001-4000-8000-000000000007"]),
        ("receivables", "alug", &[]),
        // Attachments by file name or title.
        ("attachments", "recibo-", &["a7000000-0001-4000-8000-000000000001"]),
        ("attachments", "recibo do", &["a7000000-0001-4000-8000-000000000001"]),
        ("attachments", "%", &[]),
        ("payables", "_", &[]),
    ];
    for &(resource, prefix, expected) in rows {
        let got = sorted(values(&h, complete_id(resource, prefix), &owner).await);
        assert_eq!(got, expected, "{resource} / {prefix:?}");
    }
    let reply = h.send(complete_id("payables", "").bearer(&owner).build()).await.result();
    assert_eq!(reply["completion"]["values"].as_array().unwrap().len(), 4);
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
    assert_eq!(values(&h, complete_id("accounts", "conta corrente n"), &h.token(DEMO_OWNER)).await, Vec::<String>::new());
    // Finance (member of both) with Beta as the connection's workspace: Beta's only.
    let finance = h.token(DEMO_FINANCE);
    assert_eq!(sorted(values(&h, complete_id("accounts", ""), &finance).await).len(), 3);
    let in_beta = complete_id("accounts", "").header("x-workspace-id", DEMO_WORKSPACE_BETA);
    assert_eq!(values(&h, in_beta, &finance).await, [BETA_ACCOUNT]);
    // Without the read scope nothing is offered.
    let blind = h.token_with(DEMO_OWNER, Some("finance.companies finance.payables.write"), |_| {});
    assert!(values(&h, complete_id("payables", ""), &blind).await.is_empty());
}

#[tokio::test]
async fn completion_offers_live_rows_only_and_at_most_100() {
    let h = Harness::with_demo().await;
    let owner = h.token(DEMO_OWNER);
    // A soft-deleted person is no longer offered.
    sqlx::query("UPDATE people SET deleted_at = $1 WHERE id = $2")
        .bind(kobana_finance_mcp::clock::now_rfc3339())
        .bind("9e000000-0001-4000-8000-000000000004")
        .execute(&h.state.db.pool)
        .await
        .unwrap();
    assert!(values(&h, complete_id("people", "maria"), &owner).await.is_empty());
    // 105 taxes named "Taxa …": 100 values and hasMore.
    let now = kobana_finance_mcp::clock::now_rfc3339();
    for i in 0..105 {
        sqlx::query(
            "INSERT INTO taxes (id, workspace_id, name, created_at, updated_at, created_via, updated_via)
             VALUES ($1, $2, $3, $4, $4, 'system', 'system')",
        )
        .bind(uuid::Uuid::new_v4().to_string())
        .bind(DEMO_WORKSPACE_ACME)
        .bind(format!("Taxa {i:03}"))
        .bind(&now)
        .execute(&h.state.db.pool)
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
        let legacy = h.send(Mcp::legacy("completion/complete", params.clone(), Some("2025-06-18")).bearer(&owner).build()).await;
        assert_eq!(legacy.rpc_code(), Some(-32602), "{params} (2025)");
    }
}
