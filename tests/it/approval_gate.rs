//! The approval gate (on by default): a payable made through the API or a tool waits
//! for a person's approval; no route and no tool approves it. One rule for every read: a
//! bill waiting there is owed — every figure counts it (totals, aging, cash flow, income
//! statement, the id sweep) — and a list shows it when asked for it (by
//! `payment_approval` or `id`); it is never sent to the bank nor reconciled, so the
//! suggestions leave it out. Both doors, both backends.

use http::Method;
use serde_json::{json, Value};

use kobana_finance_mcp::ops::bills::approval::{decide, set_gate, Decision};

use crate::common::*;

fn bill(description: &str, amount: &str) -> Value {
    json!({"company_id": ACME_COMPANY, "description": description, "amount": amount, "due_date": "2026-12-18",
           "person_name": "Fornecedor Novo", "expected_account_id": ACME_CHECKING_ACCOUNT})
}

async fn get_json(h: &Harness, token: &str, path: &str) -> Value {
    let reply = send(h, Method::GET, path, token, None).await;
    assert_eq!(reply.status, 200, "{path}: {}", text(&reply));
    reply.json()
}

fn ids_of(page: &Value) -> Vec<String> {
    page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap_or_else(|| r.as_str().unwrap()).to_string())
        .collect()
}

async fn tool(h: &Harness, token: &str, name: &str, arguments: Value) -> Value {
    h.send(call(name, arguments).bearer(token).build()).await.result()
}

#[tokio::test]
async fn a_payable_made_through_a_door_waits_hidden_until_a_person_approves_it() {
    let h = Harness::with_demo().await;
    let api = h.api_token(DEMO_OWNER);
    let mcp = h.token(DEMO_OWNER);
    let totals_before = get_json(&h, &api, "/v1/payables/aggregates").await;
    let flow = "/v1/cash-flow?from=2026-12-01&to=2026-12-31";
    let flow_before = get_json(&h, &api, flow).await;

    let by_api = create_at(&h, "/v1/payables", &api, bill("Consultoria", "700.00")).await;
    assert_eq!(by_api["payment_approval"], "pending_approval");
    assert!(by_api["approved_at"].is_null() && by_api["rejected_at"].is_null());
    let made = tool(&h, &mcp, "finance_payables_create", bill("Licença anual", "1200.00")).await;
    assert!(made["isError"].is_null(), "{made}");
    let by_tool = made["structuredContent"].clone();
    assert_eq!(by_tool["payment_approval"], "pending_approval");
    let series = create_at(
        &h,
        "/v1/payables",
        &api,
        json!({"company_id": ACME_COMPANY, "description": "Parcelas", "amount": "300.00", "due_date": "2026-12-20",
               "person_name": "Fornecedor Novo", "type": "installment", "total_installments": 3}),
    )
    .await;
    let waiting: Vec<String> = [id(&by_api), id(&by_tool)]
        .into_iter()
        .chain(series["series"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()))
        .collect();
    assert_eq!(waiting.len(), 5);

    // Readable by id, through both doors.
    for payable in &waiting {
        let one = get_json(&h, &api, &format!("/v1/payables/{payable}")).await;
        assert_eq!(one["payment_approval"], "pending_approval");
    }
    let got = tool(&h, &mcp, "finance_payables_get", json!({"id": id(&by_tool)})).await;
    assert_eq!(got["structuredContent"]["payment_approval"], "pending_approval");

    // Left out of the default list (whole and projected, both doors); in the id sweep;
    // counted by the totals and the cash flow.
    let listed = ids_of(&get_json(&h, &api, "/v1/payables?limit=100").await);
    let swept = ids_of(&get_json(&h, &api, "/v1/payables/ids?limit=1000").await);
    let projected = tool(&h, &mcp, "finance_payables_list", json!({"limit": 100, "fields": ["id"]})).await;
    let projected = ids_of(&projected["structuredContent"]);
    let whole = tool(&h, &mcp, "finance_payables_list", json!({"limit": 100})).await;
    let whole = ids_of(&whole["structuredContent"]);
    for payable in &waiting {
        for (path, ids) in [("list", &listed), ("projected tool list", &projected), ("tool list", &whole)] {
            assert!(!ids.contains(payable), "{payable} is in the {path}");
        }
        assert!(swept.contains(payable), "{payable} is not in the id sweep");
    }
    assert_eq!(listed.len(), 6, "the demo's six payables");
    let totals = get_json(&h, &api, "/v1/payables/aggregates").await;
    assert_eq!(totals["count"].as_i64(), totals_before["count"].as_i64().map(|c| c + 5), "{totals}");
    assert_ne!(get_json(&h, &api, flow).await, flow_before, "the cash flow projects them");

    // Listed when asked for by their place at the gate.
    let asked = ids_of(&get_json(&h, &api, "/v1/payables?payment_approval=pending_approval&limit=100").await);
    assert_eq!(asked.len(), 5);
    assert!(waiting.iter().all(|p| asked.contains(p)));
    let asked = tool(
        &h,
        &mcp,
        "finance_payables_list",
        json!({"filters": {"payment_approval": {"in": ["pending_approval"]}}, "fields": ["id", "payment_approval"]}),
    )
    .await;
    assert_eq!(asked["structuredContent"]["data"].as_array().unwrap().len(), 5, "{asked}");

    // Nothing a client sends approves: PATCH drops the answer field, the tool refuses it,
    // no route or tool is an approval.
    let patched = send(
        &h,
        Method::PATCH,
        &format!("/v1/payables/{}", id(&by_api)),
        &api,
        Some(json!({"payment_approval": "creation_approved", "notes": "x"})),
    )
    .await;
    assert_eq!(patched.status, 200, "{}", text(&patched));
    assert_eq!(patched.json()["payment_approval"], "pending_approval");
    let refused =
        tool(&h, &mcp, "finance_payables_update", json!({"id": id(&by_tool), "payment_approval": "creation_approved"}))
            .await;
    assert_eq!(refused["isError"], true, "{refused}");
    let names = h.send(Mcp::modern("tools/list", json!({})).bearer(&mcp).build()).await.result();
    for t in names["tools"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        assert!(!name.contains("approv"), "{name}");
    }
    let document = get_json(&h, &api, "/v1/openapi.json").await;
    for path in document["paths"].as_object().unwrap().keys() {
        assert!(!path.contains("approv"), "{path}");
    }
    // Not reconciled, not sent to the bank while it waits.
    let debit = create_at(
        &h,
        "/v1/financial-transactions",
        &api,
        json!({"company_id": ACME_COMPANY, "financial_account_id": ACME_CHECKING_ACCOUNT, "description": "Consultoria",
               "amount": "700.00", "occurred_at": "2026-12-18", "type": "debit"}),
    )
    .await;
    let group = json!({"billings": [{"kind": "payable", "id": id(&by_api)}], "transaction_ids": [id(&debit)]});
    let reconciled = send(&h, Method::POST, "/v1/reconciliations", &api, Some(group)).await;
    assert_eq!(
        (reconciled.status.as_u16(), details(&reconciled).1),
        (422, Some("not_approved".into())),
        "{}",
        text(&reconciled)
    );
    let suggested = get_json(
        &h,
        &api,
        &format!("/v1/reconciliations/suggestions?account_id={ACME_CHECKING_ACCOUNT}&from=2026-12-01&to=2026-12-31"),
    )
    .await;
    assert!(!suggested.to_string().contains(&id(&by_api)), "{suggested}");

    // A person approves one (the dashboard's act) and rejects another.
    assert_eq!(decide(&h.state.db, &id(&by_api), &Decision::Approve).await, Ok("creation_approved"));
    let reason = Decision::Reject { reason: "Fornecedor desconhecido".into() };
    assert_eq!(decide(&h.state.db, &id(&by_tool), &reason).await, Ok("creation_rejected"));
    assert!(decide(&h.state.db, &id(&by_api), &Decision::Approve).await.is_err(), "decided once");
    assert!(
        decide(&h.state.db, ACME_RENT_DECEMBER, &Decision::Approve).await.is_err(),
        "an official bill does not wait"
    );
    let approved = get_json(&h, &api, &format!("/v1/payables/{}", id(&by_api))).await;
    assert_eq!(approved["payment_approval"], "creation_approved");
    assert!(approved["approved_at"].is_string());
    let rejected = get_json(&h, &api, &format!("/v1/payables/{}", id(&by_tool))).await;
    assert_eq!(rejected["payment_approval"], "creation_rejected");
    assert_eq!(rejected["rejection_reason"], "Fornecedor desconhecido");
    assert!(rejected["rejected_at"].is_string());

    let listed = ids_of(&get_json(&h, &api, "/v1/payables?limit=100").await);
    let swept = ids_of(&get_json(&h, &api, "/v1/payables/ids?limit=1000").await);
    assert!(listed.contains(&id(&by_api)) && swept.contains(&id(&by_api)), "approved: listed");
    assert!(!listed.contains(&id(&by_tool)) && !swept.contains(&id(&by_tool)), "rejected: gone for good");
    let asked = ids_of(&get_json(&h, &api, "/v1/payables?payment_approval=creation_rejected").await);
    assert_eq!(asked, vec![id(&by_tool)]);
    let totals = get_json(&h, &api, "/v1/payables/aggregates").await;
    assert_eq!(totals["count"].as_i64(), totals_before["count"].as_i64().map(|c| c + 4), "all but the rejected");
    // The approved one joins the reports' totals, the rejected one never does.
    assert_report_totals_agree(&h).await;
}

#[tokio::test]
async fn the_demo_is_gated_and_its_bills_official_and_receivables_never_wait() {
    let h = Harness::with_demo().await;
    let api = h.api_token(DEMO_OWNER);
    for workspace in [DEMO_WORKSPACE_ACME, DEMO_WORKSPACE_BETA] {
        assert_eq!(count(&h, "SELECT payment_approval_gate FROM workspaces WHERE id = $1", workspace).await, 1);
    }
    assert_eq!(
        count(
            &h,
            "SELECT COUNT(*) FROM billings WHERE payment_approval IS NOT NULL AND workspace_id = $1",
            DEMO_WORKSPACE_ACME
        )
        .await,
        0
    );
    let body = json!({"company_id": ACME_COMPANY, "description": "Venda", "amount": "10.00", "due_date": "2026-12-18", "person_name": "Cliente"});
    let receivable = create_at(&h, "/v1/receivables", &api, body).await;
    assert!(receivable.get("payment_approval").is_none(), "{receivable}");
    assert!(ids_of(&get_json(&h, &api, "/v1/receivables?limit=100").await).contains(&id(&receivable)));
}

#[tokio::test]
async fn with_the_gate_off_a_payable_is_official_from_its_creation() {
    let h = Harness::with_demo().await;
    let api = h.api_token(DEMO_OWNER);
    set_gate(&h.state.db, DEMO_WORKSPACE_ACME, false).await.unwrap();
    let made = create_at(&h, "/v1/payables", &api, bill("Consultoria", "700.00")).await;
    assert!(made["payment_approval"].is_null(), "{made}");
    assert!(ids_of(&get_json(&h, &api, "/v1/payables?limit=100").await).contains(&id(&made)));
    set_gate(&h.state.db, DEMO_WORKSPACE_ACME, true).await.unwrap();
    let gated = create_at(&h, "/v1/payables", &api, bill("Consultoria", "800.00")).await;
    assert_eq!(gated["payment_approval"], "pending_approval");
    assert!(set_gate(&h.state.db, MISSING, false).await.is_err());
}

/// Cents of a 2-decimal money string.
fn cents(amount: &Value) -> i64 {
    let text = amount.as_str().unwrap_or_else(|| panic!("not money: {amount}"));
    let (units, decimals) = text.split_once('.').unwrap_or((text, "00"));
    let sign = if units.starts_with('-') { -1 } else { 1 };
    sign * (units.trim_start_matches('-').parse::<i64>().unwrap() * 100 + decimals.parse::<i64>().unwrap())
}

/// Every figure a read answers of what is owed: the totals' pending, the aging's total,
/// the cash flow's projected expenses, the income statement's expenses (competence).
async fn figures(h: &Harness, api: &str, from: &str, to: &str) -> [i64; 4] {
    let totals = get_json(h, api, "/v1/payables/aggregates").await;
    let aging = get_json(h, api, "/v1/reports/aging?kind=payable").await;
    let flow = get_json(h, api, &format!("/v1/cash-flow?from={from}&to={to}&granularity=day")).await;
    let projected: i64 = flow["buckets"].as_array().unwrap().iter().map(|b| cents(&b["projected_expenses"])).sum();
    let statement = get_json(h, api, &format!("/v1/reports/income-statement?from={from}&to={to}")).await;
    [
        cents(&totals["pending"]),
        cents(&aging["total"]["amount"]),
        projected,
        cents(&statement["expenses"]["total"]["amount"]),
    ]
}

/// One rule, every read: a payable waiting for approval is owed — the totals, the aging,
/// the cash flow's projections and the income statement count it, the id sweep covers
/// it — and a list shows it when asked for it by `id` or `payment_approval` (both
/// doors), not by default; the suggestions leave it out until it is approved. Rejected,
/// it leaves every figure and the sweep.
#[tokio::test]
async fn a_payable_waiting_for_approval_is_owed_by_every_read_and_listed_when_asked_for() {
    use kobana_finance_mcp::domain::dates::{Date, Zone};
    let h = Harness::with_demo().await;
    let api = h.api_token(DEMO_OWNER);
    let mcp = h.token(DEMO_OWNER);
    let today = Date::today_in(Zone::SaoPaulo);
    let (from, due, to) =
        (today.to_string(), today.add_days(10).unwrap().to_string(), today.add_days(40).unwrap().to_string());
    let before = figures(&h, &api, &from, &to).await;
    let body = |description: &str| {
        json!({"company_id": ACME_COMPANY, "description": description, "amount": "777.00", "due_date": due,
               "person_name": "Fornecedor Novo", "category_id": ACME_RENT_CATEGORY})
    };
    let waiting = create_at(&h, "/v1/payables", &api, body("Consultoria")).await;
    assert_eq!(waiting["payment_approval"], "pending_approval");
    let made = tool(&h, &mcp, "finance_payables_create", body("Licença")).await;
    let by_tool = made["structuredContent"].clone();
    assert_eq!(by_tool["payment_approval"], "pending_approval", "{made}");
    let after = figures(&h, &api, &from, &to).await;
    for (at, figure) in
        ["aggregates pending", "aging total", "cash flow projected expenses", "income statement expenses"]
            .iter()
            .enumerate()
    {
        assert_eq!(after[at] - before[at], 2 * 77_700, "{figure}: {before:?} → {after:?}");
    }
    // Lists: left out by default, shown when asked for by id or by payment_approval, on
    // both doors; the id sweep covers them.
    for payable in [id(&waiting), id(&by_tool)] {
        let default = ids_of(&get_json(&h, &api, "/v1/payables?limit=100").await);
        assert!(!default.contains(&payable));
        let by_id = ids_of(&get_json(&h, &api, &format!("/v1/payables?id={payable}")).await);
        assert_eq!(by_id, vec![payable.clone()]);
        let by_id = tool(&h, &mcp, "finance_payables_list", json!({"filters": {"id": payable}})).await;
        assert_eq!(ids_of(&by_id["structuredContent"]), vec![payable.clone()], "{by_id}");
        let by_id =
            tool(&h, &mcp, "finance_payables_list", json!({"filters": {"id": payable}, "fields": ["id"]})).await;
        assert_eq!(ids_of(&by_id["structuredContent"]), vec![payable.clone()], "{by_id}");
        let asked = ids_of(&get_json(&h, &api, "/v1/payables?payment_approval=pending_approval&limit=100").await);
        assert!(asked.contains(&payable));
        let swept = ids_of(&get_json(&h, &api, "/v1/payables/ids?limit=1000").await);
        assert!(swept.contains(&payable));
    }
    // The suggestions leave a waiting bill out (it cannot be reconciled yet), and find it
    // once approved.
    let debit = create_at(
        &h,
        "/v1/financial-transactions",
        &api,
        json!({"company_id": ACME_COMPANY, "financial_account_id": ACME_CHECKING_ACCOUNT, "description": "Consultoria",
               "amount": "777.00", "occurred_at": due, "type": "debit"}),
    )
    .await;
    let suggestions = format!("/v1/reconciliations/suggestions?account_id={ACME_CHECKING_ACCOUNT}&from={from}&to={to}");
    let suggested = get_json(&h, &api, &suggestions).await;
    assert!(!suggested.to_string().contains(&id(&waiting)), "{suggested}");
    assert!(suggested.to_string().contains(&id(&debit)), "the transaction is looked at: {suggested}");
    let with_debit = figures(&h, &api, &from, &to).await;
    assert_eq!(decide(&h.state.db, &id(&waiting), &Decision::Approve).await, Ok("creation_approved"));
    assert!(get_json(&h, &api, &suggestions).await.to_string().contains(&id(&waiting)));
    assert_eq!(figures(&h, &api, &from, &to).await, with_debit, "approved: counted as it was");
    // Rejected: out of every figure and the sweep; still listed when asked for.
    let reason = Decision::Reject { reason: "Fornecedor desconhecido".into() };
    assert_eq!(decide(&h.state.db, &id(&by_tool), &reason).await, Ok("creation_rejected"));
    let rejected = figures(&h, &api, &from, &to).await;
    for at in 0..4 {
        assert_eq!(with_debit[at] - rejected[at], 77_700, "{at}: {with_debit:?} → {rejected:?}");
    }
    assert!(!ids_of(&get_json(&h, &api, "/v1/payables/ids?limit=1000").await).contains(&id(&by_tool)));
    let by_id = ids_of(&get_json(&h, &api, &format!("/v1/payables?id={}", id(&by_tool))).await);
    assert_eq!(by_id, vec![id(&by_tool)]);
    assert_report_totals_agree(&h).await;
}

/// The rule is said where an agent reads: the create and list tools' descriptions (their
/// first sentence, which find mode's summary keeps).
#[tokio::test]
async fn the_create_and_list_tools_say_where_a_waiting_payable_counts_and_how_to_list_it() {
    let h = Harness::new().await;
    let listed = h.send(Mcp::modern("tools/list", json!({})).bearer(&h.token(DEMO_OWNER)).build()).await.result();
    let description = |name: &str| {
        let tools = listed["tools"].as_array().unwrap();
        tools.iter().find(|t| t["name"] == name).unwrap()["description"].as_str().unwrap().to_string()
    };
    let create = description("finance_payables_create");
    let first = create.split(". ").next().unwrap();
    for said in [
        "approval",
        "pending_approval",
        "totals and reports count it",
        "{\"id\":…}",
        "{\"payment_approval\":\"pending_approval\"}",
    ] {
        assert!(first.contains(said), "{said:?} not in {first:?}");
    }
    let list = description("finance_payables_list");
    let first = list.split(". ").next().unwrap();
    for said in ["waiting for approval", "filtered by id or payment_approval", "totals and reports count it"] {
        assert!(first.contains(said), "{said:?} not in {first:?}");
    }
}

/// A newcomer who creates a payable learns where it went before reading about the gate:
/// the create tool's description and the create operation's OpenAPI description say it
/// waits for approval and how to list it; a receivable's create says nothing of a gate.
#[tokio::test]
async fn creating_a_payable_says_it_waits_for_approval_and_how_to_list_it() {
    let h = Harness::with_demo().await;
    let listed = h.send(Mcp::modern("tools/list", json!({})).bearer(&h.token(DEMO_OWNER)).build()).await.result();
    let described = |name: &str| {
        let tools = listed["tools"].as_array().unwrap();
        let tool = tools.iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("{name} listed"));
        tool["description"].as_str().unwrap().to_string()
    };
    let payable = described("finance_payables_create");
    for words in ["approval", "pending_approval", r#"{"payment_approval":"pending_approval"}"#] {
        assert!(payable.contains(words), "{words:?} in {payable}");
    }
    assert!(!described("finance_receivables_create").contains("approval"));

    let document = get_json(&h, &h.api_token(DEMO_OWNER), "/v1/openapi.json").await;
    let create = document["paths"]["/v1/payables"]["post"]["description"].as_str().unwrap_or_default().to_string();
    for words in ["approval gate", "pending_approval", "GET /v1/payables?payment_approval=pending_approval"] {
        assert!(create.contains(words), "{words:?} in {create:?}");
    }
    assert!(document["paths"]["/v1/receivables"]["post"].get("description").is_none());
}
