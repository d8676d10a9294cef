//! Scenarios shared by `/v1/payables` and `/v1/receivables`: every rule runs on both
//! kinds (tests/payables.rs and tests/receivables.rs instantiate them with
//! `billing_tests!`).
#![allow(dead_code)]

use http::Method;
use serde_json::{json, Value};

use crate::common::*;

/// What tells the two kinds apart in the tests.
#[derive(Clone, Copy)]
pub struct K {
    pub path: &'static str,
    pub other: &'static str,
    pub settled: &'static str,
    pub tx_type: &'static str,
    pub center: &'static str,
    pub wrong_center: &'static str,
    pub scope: &'static str,
    pub person_flag: &'static str,
}

pub const PAYABLES: K = K {
    path: "/v1/payables",
    other: "/v1/receivables",
    settled: "paid",
    tx_type: "debit",
    center: "cost",
    wrong_center: "revenue",
    scope: "finance.payables",
    person_flag: "is_supplier",
};

pub const RECEIVABLES: K = K {
    path: "/v1/receivables",
    other: "/v1/payables",
    settled: "received",
    tx_type: "credit",
    center: "revenue",
    wrong_center: "cost",
    scope: "finance.receivables",
    person_flag: "is_customer",
};

impl K {
    fn wrong_category(self) -> &'static str {
        if self.tx_type == "debit" {
            "credit"
        } else {
            "debit"
        }
    }
}

const NOW: &str = "2026-01-01T00:00:00Z";

fn workspace_of(company: &str) -> &'static str {
    if company == BETA_COMPANY {
        DEMO_WORKSPACE_BETA
    } else {
        DEMO_WORKSPACE_ACME
    }
}

/// Rows the other resources' APIs would create, written directly.
pub async fn account(h: &Harness, company: &str) -> String {
    let id = uuid::Uuid::new_v4().to_string();
    exec(
        h,
        "INSERT INTO financial_accounts (id, workspace_id, company_id, name, account_type, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, 'Conta', 'checking', $4, $4, 'system', 'system')",
        &[&id, workspace_of(company), company, NOW],
    )
    .await;
    id
}

pub async fn category(h: &Harness, company: &str, kind: &str, name: &str) -> String {
    let id = uuid::Uuid::new_v4().to_string();
    exec(
        h,
        "INSERT INTO categories (id, workspace_id, company_id, name, level, category_type, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, $4, 1, $5, $6, $6, 'system', 'system')",
        &[&id, workspace_of(company), company, name, kind, NOW],
    )
    .await;
    id
}

pub async fn center(h: &Harness, company: &str, kind: &str) -> String {
    let id = uuid::Uuid::new_v4().to_string();
    exec(
        h,
        "INSERT INTO classification_centers (id, workspace_id, company_id, name, center_type, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, $4, $5, $6, $6, 'system', 'system')",
        &[&id, workspace_of(company), company, &format!("Centro {}", &id[..8]), kind, NOW],
    )
    .await;
    id
}

pub async fn person(h: &Harness, company: &str, name: &str) -> String {
    let id = uuid::Uuid::new_v4().to_string();
    exec(
        h,
        "INSERT INTO people (id, workspace_id, company_id, name, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, $4, $5, $5, 'system', 'system')",
        &[&id, workspace_of(company), company, name, NOW],
    )
    .await;
    id
}

pub async fn tax(h: &Harness, workspace: &str, name: &str) -> String {
    let id = uuid::Uuid::new_v4().to_string();
    exec(
        h,
        "INSERT INTO taxes (id, workspace_id, name, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, $4, $4, 'system', 'system')",
        &[&id, workspace, name, NOW],
    )
    .await;
    id
}

pub async fn lock(h: &Harness, company: &str, until: &str) {
    exec(h, "UPDATE companies SET locked_until = $1 WHERE id = $2", &[until, company]).await;
}

pub fn body() -> Value {
    json!({"company_id": ACME_COMPANY, "description": "Aluguel de março", "amount": "1000.00", "due_date": "2026-03-10", "person_name": "Imobiliária Central"})
}

pub fn with(mut base: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        if v.is_null() {
            base.as_object_mut().unwrap().remove(k);
        } else {
            base[k] = v.clone();
        }
    }
    base
}

pub async fn create(h: &Harness, k: K, body: Value) -> Value {
    let reply = h.send(rest(Method::POST, k.path, &h.api_token(DEMO_OWNER), Some(body)).build()).await;
    assert_eq!(reply.status, 201, "{}", String::from_utf8_lossy(&reply.bytes));
    reply.json()
}

pub async fn post(h: &Harness, path: &str, body: Option<Value>) -> Reply {
    h.send(rest(Method::POST, path, &h.api_token(DEMO_OWNER), body).build()).await
}

pub async fn get(h: &Harness, path: &str) -> Reply {
    h.send(rest(Method::GET, path, &h.api_token(DEMO_OWNER), None).build()).await
}

pub async fn patch(h: &Harness, path: &str, body: Value) -> Reply {
    h.send(rest(Method::PATCH, path, &h.api_token(DEMO_OWNER), Some(body)).build()).await
}

pub async fn delete(h: &Harness, path: &str) -> Reply {
    h.send(rest(Method::DELETE, path, &h.api_token(DEMO_OWNER), None).build()).await
}

fn reason(reply: &Reply) -> (u16, String, String) {
    let body = reply.json();
    (
        reply.status.as_u16(),
        body["error"]["details"]["reason"].as_str().unwrap_or_default().to_string(),
        body["error"]["details"]["field"].as_str().unwrap_or_default().to_string(),
    )
}

fn expect(reply: &Reply, status: u16, why: &str) {
    let (got, r, _) = reason(reply);
    assert_eq!((got, r.as_str()), (status, why), "{}", String::from_utf8_lossy(&reply.bytes));
}

async fn settled_transactions(h: &Harness, billing: &str) -> Vec<kobana_finance_mcp::storage::OwnedRow> {
    sql::query("SELECT id, transaction_type, amount_cents, financial_account_id, occurred_at, auto_created, category_id, person_id, company_id FROM financial_transactions WHERE billing_id = $1")
        .bind(billing)
        .fetch_all(&h.state.db)
        .await
        .unwrap()
}

// ---------------------------------------------------------------------------------

pub async fn create_returns_201_with_location_provenance_and_audit(k: K) {
    let h = Harness::new().await;
    let reply = h.send(rest(Method::POST, k.path, &h.api_token(DEMO_OWNER), Some(body())).build()).await;
    assert_eq!(reply.status, 201, "{}", String::from_utf8_lossy(&reply.bytes));
    let created = reply.json();
    let id = created["id"].as_str().unwrap();
    assert_eq!(reply.header("location"), Some(format!("{}/{id}", k.path).as_str()));
    assert_eq!(created["status"], "pending");
    assert_eq!(created["type"], "normal");
    assert_eq!(created["amount"], "1000.00");
    assert_eq!(created["nominal_amount"], "1000.00");
    assert_eq!(created["competence_date"], "2026-03-10", "defaults to the due date");
    assert_eq!(created["person_name"], "Imobiliária Central");
    assert_eq!(created["created_via"], "api");
    assert_eq!(created["created_by"], DEMO_OWNER);
    assert_eq!(created["series"], json!([id]));
    assert_eq!(created["classification_center_allocations"], json!([]));
    assert_eq!(created["tax_charges"], json!([]));
    let person = created["person_id"].as_str().unwrap();
    assert_eq!(count(&h, &format!("SELECT {} FROM people WHERE id = $1", k.person_flag), person).await, 1);
    let action = format!("{}.create", &k.path[4..]);
    assert_eq!(
        count(
            &h,
            &format!(
                "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = '{action}' AND channel = 'api'"
            ),
            id
        )
        .await,
        1
    );
    let mut got = get(&h, &format!("{}/{id}", k.path)).await.json();
    got["series"] = created["series"].clone();
    assert_eq!(got, created);
}

pub async fn validation_names_the_field(k: K) {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let cases = [
        (with(body(), json!({"description": null})), 400, "description", "required"),
        (with(body(), json!({"amount": "0.00"})), 400, "amount", "invalid_amount"),
        (with(body(), json!({"amount": "10.001"})), 400, "amount", "invalid_amount"),
        (with(body(), json!({"due_date": "2026-02-30"})), 400, "due_date", "invalid_date"),
        (with(body(), json!({"colour": "red"})), 400, "colour", "unknown_field"),
        (with(body(), json!({"status": "paid"})), 400, "status", "unknown_field"),
        (with(body(), json!({"type": "installment"})), 400, "total_installments", "required"),
        (
            with(body(), json!({"type": "installment", "total_installments": 121})),
            400,
            "total_installments",
            "out_of_range",
        ),
        (with(body(), json!({"type": "recurring"})), 400, "recurrence_period", "required"),
        (with(body(), json!({"company_id": BETA_COMPANY})), 422, "company_id", "invalid_reference"),
        (
            with(body(), json!({"tax_charges": [{"tax_id": MISSING, "amount": "1.00"}]})),
            422,
            "tax_charges[0].tax_id",
            "invalid_reference",
        ),
    ];
    for (b, status, field, why) in cases {
        let reply = h.send(rest(Method::POST, k.path, &token, Some(b.clone())).build()).await;
        let (got, r, f) = reason(&reply);
        assert_eq!(
            (got, r.as_str(), f.as_str()),
            (status, why, field),
            "{b}: {}",
            String::from_utf8_lossy(&reply.bytes)
        );
    }
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM billings WHERE workspace_id = $1", DEMO_WORKSPACE_ACME).await,
        0,
        "nothing half-written"
    );
}

pub async fn settle_creates_exactly_one_auto_created_transaction(k: K) {
    let h = Harness::new().await;
    let account = account(&h, ACME_COMPANY).await;
    let cat = category(&h, ACME_COMPANY, k.tx_type, "Aluguel").await;
    let c1 = center(&h, ACME_COMPANY, k.center).await;
    let c2 = center(&h, ACME_COMPANY, "both").await;
    let b = create(
        &h,
        k,
        with(body(), json!({"category_id": cat, "classification_centers": [{"classification_center_id": c1, "percentage": "70"}, {"classification_center_id": c2, "amount": "300.00"}]})),
    )
    .await;
    let id = b["id"].as_str().unwrap();
    let reply = post(
        &h,
        &format!("{}/{id}/settle", k.path),
        Some(json!({"payment_date": "2026-03-12", "financial_account_id": account, "interest_amount": "10.00"})),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.bytes));
    let settled = reply.json();
    assert_eq!(settled["status"], k.settled);
    assert_eq!(settled["payment_date"], "2026-03-12");
    assert_eq!(settled["financial_account_id"], account.as_str());
    assert_eq!(settled["ticket_amount"], "1010.00", "defaults to the nominal amount");
    let rows = settled_transactions(&h, id).await;
    assert_eq!(rows.len(), 1, "exactly one movement");
    let tx = &rows[0];
    assert_eq!(settled["transaction_id"].as_str(), Some(tx.try_get::<String, _>("id").unwrap().as_str()));
    assert_eq!(tx.try_get::<String, _>("transaction_type").unwrap(), k.tx_type);
    assert_eq!(tx.try_get::<i64, _>("amount_cents").unwrap(), 101_000);
    assert_eq!(tx.try_get::<String, _>("financial_account_id").unwrap(), account);
    assert_eq!(tx.try_get::<String, _>("occurred_at").unwrap(), "2026-03-12");
    assert_eq!(tx.try_get::<i64, _>("auto_created").unwrap(), 1);
    assert_eq!(tx.try_get::<Option<String>, _>("category_id").unwrap().as_deref(), Some(cat.as_str()));
    assert_eq!(tx.try_get::<Option<String>, _>("person_id").unwrap().as_deref(), b["person_id"].as_str());
    let tx_id: String = tx.try_get("id").unwrap();
    // The apportionment follows the transaction's amount: 70 % and the rest.
    let sum: i64 = sql::query("SELECT CAST(SUM(CASE WHEN amount_cents IS NULL THEN 0 ELSE amount_cents END) AS BIGINT) FROM allocations WHERE owner_type = 'transaction' AND owner_id = $1")
        .bind(&tx_id)
        .fetch_one(&h.state.db)
        .await
        .unwrap()
        .try_get(0)
        .unwrap();
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM allocations WHERE owner_type = 'transaction' AND owner_id = $1", &tx_id).await,
        2
    );
    assert_eq!(sum + 70_700, 101_000, "70 % of 1010.00 plus the amount item scaled to 303.00");
    // Settling again is an invalid transition and moves nothing.
    let again = post(
        &h,
        &format!("{}/{id}/settle", k.path),
        Some(json!({"payment_date": "2026-03-12", "financial_account_id": account})),
    )
    .await;
    expect(&again, 422, "invalid_transition");
    assert_eq!(settled_transactions(&h, id).await.len(), 1);
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action LIKE '%.settle'", id).await,
        1
    );
}

pub async fn settle_requires_payment_date_and_an_account_of_the_same_company(k: K) {
    let h = Harness::new().await;
    let b = create(&h, k, body()).await;
    let path = format!("{}/{}/settle", k.path, b["id"].as_str().unwrap());
    let mine = account(&h, ACME_COMPANY).await;
    let sister = account(&h, ACME_SERVICES).await;
    let foreign = account(&h, BETA_COMPANY).await;
    let no_date = post(&h, &path, Some(json!({"financial_account_id": mine}))).await;
    assert_eq!(reason(&no_date), (400, "required".into(), "payment_date".into()));
    let bad_date = post(&h, &path, Some(json!({"payment_date": "2026-13-01", "financial_account_id": mine}))).await;
    assert_eq!(reason(&bad_date), (400, "invalid_date".into(), "payment_date".into()));
    expect(&post(&h, &path, Some(json!({"payment_date": "2026-03-12"}))).await, 422, "account_required");
    expect(
        &post(&h, &path, Some(json!({"payment_date": "2026-03-12", "financial_account_id": sister}))).await,
        422,
        "account_company_mismatch",
    );
    expect(
        &post(&h, &path, Some(json!({"payment_date": "2026-03-12", "financial_account_id": foreign}))).await,
        422,
        "invalid_reference",
    );
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM financial_transactions WHERE workspace_id = $1", DEMO_WORKSPACE_ACME).await,
        0
    );
    assert_eq!(get(&h, &format!("{}/{}", k.path, b["id"].as_str().unwrap())).await.json()["status"], "pending");
    // Accounts given on create or update must belong to the company too.
    expect(
        &post(&h, k.path, Some(with(body(), json!({"expected_account_id": sister})))).await,
        422,
        "account_company_mismatch",
    );
    expect(
        &post(&h, k.path, Some(with(body(), json!({"financial_account_id": foreign})))).await,
        422,
        "invalid_reference",
    );
    expect(
        &patch(&h, &format!("{}/{}", k.path, b["id"].as_str().unwrap()), json!({"financial_account_id": sister})).await,
        422,
        "account_company_mismatch",
    );
    // An account set on the record beforehand is used.
    let b2 = create(&h, k, with(body(), json!({"financial_account_id": mine}))).await;
    let ok = post(
        &h,
        &format!("{}/{}/settle", k.path, b2["id"].as_str().unwrap()),
        Some(json!({"payment_date": "2026-03-12"})),
    )
    .await;
    assert_eq!(ok.status, 200, "{}", String::from_utf8_lossy(&ok.bytes));
    assert_eq!(ok.json()["status"], k.settled);
}

pub async fn reopen_removes_the_settlement_transaction(k: K) {
    let h = Harness::new().await;
    let account = account(&h, ACME_COMPANY).await;
    let b = create(&h, k, body()).await;
    let id = b["id"].as_str().unwrap();
    let settled = post(
        &h,
        &format!("{}/{id}/settle", k.path),
        Some(json!({"payment_date": "2026-03-12", "financial_account_id": account, "ticket_amount": "990.00"})),
    )
    .await;
    assert_eq!(settled.status, 200);
    let tx = settled.json()["transaction_id"].as_str().unwrap().to_string();
    let reopened = post(&h, &format!("{}/{id}/reopen", k.path), None).await;
    assert_eq!(reopened.status, 200, "{}", String::from_utf8_lossy(&reopened.bytes));
    let r = reopened.json();
    assert_eq!(r["status"], "pending");
    assert_eq!(r["payment_date"], Value::Null);
    assert_eq!(r["transaction_id"], Value::Null);
    assert_eq!(r["ticket_amount"], Value::Null);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM financial_transactions WHERE id = $1", &tx).await, 0);
    assert_eq!(settled_transactions(&h, id).await.len(), 0);
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = 'transactions.delete'", &tx)
            .await,
        1
    );
    // Reopening a pending record is not a transition; settling again works.
    expect(&post(&h, &format!("{}/{id}/reopen", k.path), None).await, 422, "invalid_transition");
    let again = post(&h, &format!("{}/{id}/settle", k.path), Some(json!({"payment_date": "2026-03-13"}))).await;
    assert_eq!(again.status, 200, "the settlement account stays on the record");
    assert_eq!(settled_transactions(&h, id).await.len(), 1);
}

pub async fn cancel_of_a_settled_record_requires_reopen(k: K) {
    let h = Harness::new().await;
    let account = account(&h, ACME_COMPANY).await;
    let b = create(&h, k, with(body(), json!({"financial_account_id": account}))).await;
    let id = b["id"].as_str().unwrap();
    assert_eq!(
        post(&h, &format!("{}/{id}/settle", k.path), Some(json!({"payment_date": "2026-03-12"}))).await.status,
        200
    );
    let refused = post(&h, &format!("{}/{id}/cancel", k.path), None).await;
    assert_eq!(reason(&refused), (422, "invalid_transition".into(), "status".into()));
    assert_eq!(settled_transactions(&h, id).await.len(), 1, "nothing changed");
    assert_eq!(post(&h, &format!("{}/{id}/reopen", k.path), None).await.status, 200);
    let cancelled = post(&h, &format!("{}/{id}/cancel", k.path), Some(json!({}))).await;
    assert_eq!(cancelled.status, 200);
    assert_eq!(cancelled.json()["status"], "cancelled");
    expect(&post(&h, &format!("{}/{id}/cancel", k.path), None).await, 422, "invalid_transition");
    expect(
        &post(&h, &format!("{}/{id}/settle", k.path), Some(json!({"payment_date": "2026-03-12"}))).await,
        422,
        "invalid_transition",
    );
    let reopened = post(&h, &format!("{}/{id}/reopen", k.path), None).await;
    assert_eq!(reopened.json()["status"], "pending");
    let unknown = post(&h, &format!("{}/{id}/cancel", k.path), Some(json!({"reason": "x"}))).await;
    assert_eq!(reason(&unknown), (400, "unknown_field".into(), "reason".into()));
}

pub async fn update_never_changes_status(k: K) {
    let h = Harness::new().await;
    let account = account(&h, ACME_COMPANY).await;
    let b = create(&h, k, body()).await;
    let path = format!("{}/{}", k.path, b["id"].as_str().unwrap());
    for field in [
        "status",
        "payment_date",
        "interest_amount",
        "discount_amount",
        "ticket_amount",
        "transaction_id",
        "company_id",
    ] {
        let reply = patch(&h, &path, json!({ field: "x" })).await;
        assert_eq!(reason(&reply), (400, "unknown_field".into(), field.to_string()), "{field}");
    }
    let changed =
        patch(&h, &path, json!({"description": "Aluguel de abril", "amount": "1200.00", "notes": "reajuste"})).await;
    assert_eq!(changed.status, 200, "{}", String::from_utf8_lossy(&changed.bytes));
    let changed = changed.json();
    assert_eq!(
        (changed["description"].as_str(), changed["amount"].as_str(), changed["status"].as_str()),
        (Some("Aluguel de abril"), Some("1200.00"), Some("pending"))
    );
    assert_eq!(changed["updated_via"], "api");
    let cleared = patch(&h, &path, json!({"notes": null})).await.json();
    assert_eq!(cleared["notes"], Value::Null);
    assert_eq!(cleared["description"], "Aluguel de abril", "fields not sent are kept");
    assert_eq!(
        post(
            &h,
            &format!("{path}/settle"),
            Some(json!({"payment_date": "2026-03-12", "financial_account_id": account}))
        )
        .await
        .status,
        200
    );
    expect(&patch(&h, &path, json!({"description": "x"})).await, 422, "invalid_transition");
    assert_eq!(get(&h, &path).await.json()["status"], k.settled);
}

pub async fn installments_split_to_the_cent_with_the_remainder_on_the_last(k: K) {
    let h = Harness::new().await;
    let c1 = center(&h, ACME_COMPANY, k.center).await;
    let c2 = center(&h, ACME_COMPANY, k.center).await;
    let tax = tax(&h, DEMO_WORKSPACE_ACME, "ISS").await;
    let created = create(
        &h,
        k,
        with(
            body(),
            json!({"amount": "100.00", "type": "installment", "total_installments": 3,
                   "classification_centers": [{"classification_center_id": c1, "percentage": "50"}, {"classification_center_id": c2, "amount": "50.00"}],
                   "tax_charges": [{"tax_id": tax, "amount": "2.00"}]}),
        ),
    )
    .await;
    let series: Vec<String> =
        created["series"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
    assert_eq!(series.len(), 3);
    assert_eq!(created["id"].as_str(), Some(series[0].as_str()), "the answer is the first installment");
    let mut amounts = Vec::new();
    let mut item_amounts = 0i64;
    for (i, id) in series.iter().enumerate() {
        let row = get(&h, &format!("{}/{id}", k.path)).await.json();
        amounts.push(row["amount"].as_str().unwrap().to_string());
        assert_eq!(row["installment_number"], json!(i + 1));
        assert_eq!(row["total_installments"], 3);
        assert_eq!(row["parcels_amount"], "100.00");
        assert_eq!(row["type"], "installment");
        let allocations = row["classification_center_allocations"].as_array().unwrap();
        assert_eq!(allocations.len(), 2, "the apportionment is spread to every installment");
        assert_eq!(allocations[0]["percentage"], "50.00");
        item_amounts += Cents::parse(allocations[1]["amount"].as_str().unwrap());
        assert_eq!(row["tax_charges"].as_array().unwrap().len(), if i == 0 { 1 } else { 0 }, "taxes on the first only");
    }
    assert_eq!(amounts, ["33.33", "33.33", "33.34"]);
    assert_eq!(item_amounts, 5000, "the amount item adds up over the series");
    let total = h
        .send(
            rest(
                Method::GET,
                &format!("{}?group_id={}", k.path, created["group_id"].as_str().unwrap()),
                &h.api_token(DEMO_OWNER),
                None,
            )
            .build(),
        )
        .await
        .json();
    assert_eq!(total["data"].as_array().unwrap().len(), 3);
    // The amount must cover one cent per installment.
    let reply =
        post(&h, k.path, Some(with(body(), json!({"amount": "0.02", "type": "installment", "total_installments": 3}))))
            .await;
    expect(&reply, 422, "amount_too_small");
}

/// Integer cents from a 2-decimal string (test helper).
pub struct Cents;
impl Cents {
    pub fn parse(s: &str) -> i64 {
        let (i, f) = s.split_once('.').unwrap();
        i.parse::<i64>().unwrap() * 100 + f.parse::<i64>().unwrap()
    }
}

pub async fn installments_are_one_month_apart_with_one_group_id(k: K) {
    let h = Harness::new().await;
    let created = create(&h, k, with(body(), json!({"due_date": "2026-01-31", "competence_date": "2026-01-15", "type": "installment", "total_installments": 4}))).await;
    let group = created["group_id"].as_str().unwrap().to_string();
    let mut dues = Vec::new();
    let mut competences = Vec::new();
    for id in created["series"].as_array().unwrap() {
        let row = get(&h, &format!("{}/{}", k.path, id.as_str().unwrap())).await.json();
        assert_eq!(row["group_id"].as_str(), Some(group.as_str()));
        dues.push(row["due_date"].as_str().unwrap().to_string());
        competences.push(row["competence_date"].as_str().unwrap().to_string());
    }
    assert_eq!(dues, ["2026-01-31", "2026-02-28", "2026-03-31", "2026-04-30"], "same day, clamped to the month's end");
    assert_eq!(competences, ["2026-01-15", "2026-02-15", "2026-03-15", "2026-04-15"]);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM billings WHERE group_id = $1", &group).await, 4);
    // Deleting one installment leaves the others.
    let first = created["id"].as_str().unwrap();
    assert_eq!(delete(&h, &format!("{}/{first}", k.path)).await.status, 204);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM billings WHERE group_id = $1", &group).await, 3);
}

pub async fn recurrence_creates_the_documented_horizon(k: K) {
    let h = Harness::new().await;
    let created = create(
        &h,
        k,
        with(body(), json!({"type": "recurring", "recurrence_period": "weekly", "due_date": "2026-12-25"})),
    )
    .await;
    let series = created["series"].as_array().unwrap();
    assert_eq!(series.len(), kobana_finance_mcp::domain::bills::RECURRENCE_HORIZON);
    assert_eq!(series.len(), 12);
    let last = get(&h, &format!("{}/{}", k.path, series[11].as_str().unwrap())).await.json();
    assert_eq!(last["due_date"], "2027-03-12", "11 weeks after the first");
    assert_eq!(last["amount"], "1000.00", "same amount each");
    assert_eq!(last["recurrence_period"], "weekly");
    assert_eq!(last["group_id"], created["group_id"]);
    assert_eq!(last["parcels_amount"], "12000.00");
    let monthly = create(
        &h,
        k,
        with(body(), json!({"type": "recurring", "recurrence_period": "quarterly", "due_date": "2026-11-30"})),
    )
    .await;
    let second = get(&h, &format!("{}/{}", k.path, monthly["series"][1].as_str().unwrap())).await.json();
    assert_eq!(second["due_date"], "2027-02-28");
    let bad = post(&h, k.path, Some(with(body(), json!({"type": "normal", "recurrence_period": "weekly"})))).await;
    assert_eq!(reason(&bad).0, 400);
}

pub async fn apportionment_sums_within_a_cent_and_matches_polarity(k: K) {
    let h = Harness::new().await;
    let c1 = center(&h, ACME_COMPANY, k.center).await;
    let c2 = center(&h, ACME_COMPANY, k.center).await;
    let c3 = center(&h, ACME_COMPANY, k.center).await;
    let wrong = center(&h, ACME_COMPANY, k.wrong_center).await;
    let sister = center(&h, ACME_SERVICES, k.center).await;
    let thirds = json!([{"classification_center_id": c1, "percentage": "33.33"}, {"classification_center_id": c2, "percentage": "33.33"}, {"classification_center_id": c3, "percentage": "33.33"}]);
    let ok = create(&h, k, with(body(), json!({"amount": "100.00", "classification_centers": thirds}))).await;
    assert_eq!(
        ok["classification_center_id"].as_str(),
        Some(c1.as_str()),
        "the first center mirrors into classification_center_id"
    );
    assert_eq!(ok["classification_center_allocations"].as_array().unwrap().len(), 3);
    let short = post(&h, k.path, Some(with(body(), json!({"amount": "100.00", "classification_centers": [{"classification_center_id": c1, "amount": "60.00"}, {"classification_center_id": c2, "amount": "39.98"}]})))).await;
    expect(&short, 422, "allocation_sum");
    let polarity = post(
        &h,
        k.path,
        Some(with(
            body(),
            json!({"classification_centers": [{"classification_center_id": wrong, "percentage": "100"}]}),
        )),
    )
    .await;
    expect(&polarity, 422, "type_mismatch");
    let company = post(
        &h,
        k.path,
        Some(with(
            body(),
            json!({"classification_centers": [{"classification_center_id": sister, "percentage": "100"}]}),
        )),
    )
    .await;
    expect(&company, 422, "company_mismatch");
    // Replace-all on update; [] clears.
    let path = format!("{}/{}", k.path, ok["id"].as_str().unwrap());
    let replaced =
        patch(&h, &path, json!({"classification_centers": [{"classification_center_id": c3, "amount": "100.00"}]}))
            .await
            .json();
    assert_eq!(
        replaced["classification_center_allocations"],
        json!([{"classification_center_id": c3, "classification_center_name": replaced["classification_center_allocations"][0]["classification_center_name"], "percentage": null, "amount": "100.00"}])
    );
    // A new amount must still be covered by the kept apportionment.
    expect(&patch(&h, &path, json!({"amount": "150.00"})).await, 422, "allocation_sum");
    let cleared = patch(&h, &path, json!({"classification_centers": []})).await.json();
    assert_eq!(cleared["classification_center_allocations"], json!([]));
    assert_eq!(cleared["classification_center_id"], Value::Null);
    let filtered = get(&h, &format!("{}?classification_center_id={c1}", k.path)).await.json();
    assert_eq!(filtered["data"].as_array().unwrap().len(), 0);
    let primary = get(&h, &format!("{}?classification_center_id[in]={c1},{c2}", k.path)).await.json();
    assert_eq!(primary["data"].as_array().unwrap().len(), 0, "only the first center of a record is filtered on");
    // The single-center shorthand and the full set do not mix.
    let mixed = post(&h, k.path, Some(with(body(), json!({"classification_center_id": c1, "classification_centers": [{"classification_center_id": c2, "percentage": "100"}]})))).await;
    assert_eq!(reason(&mixed), (400, "mutually_exclusive".into(), "classification_center_id".into()));
    let again = create(
        &h,
        k,
        with(body(), json!({"classification_centers": [{"classification_center_id": c2, "percentage": "100"}]})),
    )
    .await;
    let by_center = get(&h, &format!("{}?classification_center_id={c2}", k.path)).await.json();
    assert_eq!(by_center["data"][0]["id"], again["id"]);
}

pub async fn find_or_create_by_name_is_exclusive_with_id(k: K) {
    let h = Harness::new().await;
    let existing = person(&h, ACME_COMPANY, "Maria Silva").await;
    let both = post(&h, k.path, Some(with(body(), json!({"person_id": existing, "person_name": "Maria Silva"})))).await;
    assert_eq!(reason(&both), (400, "mutually_exclusive".into(), "person_id".into()));
    let cat = category(&h, ACME_COMPANY, k.tx_type, "Serviços").await;
    let both = post(&h, k.path, Some(with(body(), json!({"category_id": cat, "category_name": "Serviços"})))).await;
    assert_eq!(reason(&both), (400, "mutually_exclusive".into(), "category_id".into()));
    // By name: found (and marked with the kind's role), or created with the kind's polarity.
    let found = create(
        &h,
        k,
        with(
            body(),
            json!({"person_name": "Maria Silva", "category_name": "Serviços", "classification_center_name": "Obra 7"}),
        ),
    )
    .await;
    assert_eq!(found["person_id"].as_str(), Some(existing.as_str()));
    assert_eq!(count(&h, &format!("SELECT {} FROM people WHERE id = $1", k.person_flag), &existing).await, 1);
    assert_eq!(found["category_id"].as_str(), Some(cat.as_str()));
    assert_eq!(found["category_name"], "Serviços");
    let center_id = found["classification_center_id"].as_str().unwrap();
    assert_eq!(found["classification_center_name"], "Obra 7");
    assert_eq!(found["classification_center_allocations"][0]["percentage"], "100.00");
    let center_type: String = sql::query("SELECT center_type FROM classification_centers WHERE id = $1")
        .bind(center_id)
        .fetch_one(&h.state.db)
        .await
        .unwrap()
        .try_get(0)
        .unwrap();
    assert_eq!(center_type, k.center);
    let created =
        create(&h, k, with(body(), json!({"category_name": "Nova categoria", "person_name": "Pessoa Nova"}))).await;
    let kind: String = sql::query("SELECT category_type FROM categories WHERE id = $1")
        .bind(created["category_id"].as_str().unwrap())
        .fetch_one(&h.state.db)
        .await
        .unwrap()
        .try_get(0)
        .unwrap();
    assert_eq!(kind, k.tx_type);
    // A record created by name is audited as any create of its kind; one found is not.
    let audited = |action: &str, target: &str| {
        format!("SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = '{action}' AND target_type = '{target}' AND channel = 'api'")
    };
    assert_eq!(count(&h, &audited("categories.create", "category"), created["category_id"].as_str().unwrap()).await, 1);
    assert_eq!(count(&h, &audited("people.create", "person"), created["person_id"].as_str().unwrap()).await, 1);
    assert_eq!(count(&h, &audited("classification_centers.create", "classification_center"), center_id).await, 1);
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = 'people.create'", &existing)
            .await,
        0
    );
    // On update too: found or created by name.
    let renamed = patch(
        &h,
        &format!("{}/{}", k.path, created["id"].as_str().unwrap()),
        json!({"person_name": "Maria Silva", "category_id": null}),
    )
    .await
    .json();
    assert_eq!(renamed["person_id"].as_str(), Some(existing.as_str()));
    assert_eq!(renamed["category_id"], Value::Null);
    // A category of the other polarity is refused by id.
    let wrong = category(&h, ACME_COMPANY, k.wrong_category(), "Errada").await;
    expect(&post(&h, k.path, Some(with(body(), json!({"category_id": wrong})))).await, 422, "type_mismatch");
}

pub async fn person_is_required(k: K) {
    let h = Harness::new().await;
    let reply = post(&h, k.path, Some(with(body(), json!({"person_name": null})))).await;
    assert_eq!(reason(&reply), (422, "person_required".into(), "person_id".into()));
    let foreign = person(&h, BETA_COMPANY, "Fora").await;
    expect(
        &post(&h, k.path, Some(with(body(), json!({"person_name": null, "person_id": foreign})))).await,
        422,
        "invalid_reference",
    );
    let mine = person(&h, ACME_COMPANY, "Dentro").await;
    let ok = create(&h, k, with(body(), json!({"person_name": null, "person_id": mine}))).await;
    assert_eq!(ok["person_name"], "Dentro");
    let cannot_clear =
        patch(&h, &format!("{}/{}", k.path, ok["id"].as_str().unwrap()), json!({"person_id": null})).await;
    assert_eq!(cannot_clear.status, 400);
}

pub async fn period_closed_blocks_create_update_settle_reopen_and_delete(k: K) {
    let h = Harness::new().await;
    let account = account(&h, ACME_COMPANY).await;
    let open = create(&h, k, with(body(), json!({"due_date": "2026-02-10", "financial_account_id": account}))).await;
    let settled = create(&h, k, with(body(), json!({"due_date": "2026-02-11", "financial_account_id": account}))).await;
    let late = create(&h, k, with(body(), json!({"due_date": "2026-04-10", "financial_account_id": account}))).await;
    let open_path = format!("{}/{}", k.path, open["id"].as_str().unwrap());
    let settled_path = format!("{}/{}", k.path, settled["id"].as_str().unwrap());
    let late_path = format!("{}/{}", k.path, late["id"].as_str().unwrap());
    assert_eq!(
        post(&h, &format!("{settled_path}/settle"), Some(json!({"payment_date": "2026-02-11"}))).await.status,
        200
    );
    lock(&h, ACME_COMPANY, "2026-02-28").await;
    expect(&post(&h, k.path, Some(with(body(), json!({"due_date": "2026-02-28"})))).await, 422, "period_closed");
    expect(&patch(&h, &open_path, json!({"description": "x"})).await, 422, "period_closed");
    expect(&patch(&h, &late_path, json!({"due_date": "2026-01-31"})).await, 422, "period_closed");
    expect(
        &post(&h, &format!("{open_path}/settle"), Some(json!({"payment_date": "2026-03-05"}))).await,
        422,
        "period_closed",
    );
    expect(
        &post(&h, &format!("{late_path}/settle"), Some(json!({"payment_date": "2026-02-20"}))).await,
        422,
        "period_closed",
    );
    expect(&post(&h, &format!("{settled_path}/reopen"), None).await, 422, "period_closed");
    expect(&post(&h, &format!("{open_path}/cancel"), None).await, 422, "period_closed");
    expect(&delete(&h, &open_path).await, 422, "period_closed");
    let details = delete(&h, &settled_path).await.json()["error"]["details"].clone();
    assert_eq!(details["locked_until"], "2026-02-28");
    // After the lock: allowed.
    assert_eq!(post(&h, k.path, Some(with(body(), json!({"due_date": "2026-03-01"})))).await.status, 201);
    assert_eq!(post(&h, &format!("{late_path}/settle"), Some(json!({"payment_date": "2026-03-01"}))).await.status, 200);
    assert_eq!(post(&h, &format!("{late_path}/reopen"), None).await.status, 200);
    assert_eq!(delete(&h, &late_path).await.status, 204);
    assert_eq!(get(&h, &open_path).await.json()["status"], "pending");
}

pub async fn a_payable_is_not_a_receivable(k: K) {
    let h = Harness::new().await;
    let account = account(&h, ACME_COMPANY).await;
    let b = create(&h, k, body()).await;
    let id = b["id"].as_str().unwrap();
    let elsewhere = format!("{}/{id}", k.other);
    assert_eq!(get(&h, &elsewhere).await.status, 404);
    assert_eq!(patch(&h, &elsewhere, json!({"description": "x"})).await.status, 404);
    assert_eq!(
        post(
            &h,
            &format!("{elsewhere}/settle"),
            Some(json!({"payment_date": "2026-03-12", "financial_account_id": account}))
        )
        .await
        .status,
        404
    );
    assert_eq!(post(&h, &format!("{elsewhere}/cancel"), None).await.status, 404);
    assert_eq!(post(&h, &format!("{elsewhere}/reopen"), None).await.status, 404);
    assert_eq!(delete(&h, &elsewhere).await.status, 404);
    assert_eq!(get(&h, k.other).await.json()["data"], json!([]));
    assert_eq!(get(&h, &format!("{}/ids", k.other)).await.json()["data"], json!([]));
    assert_eq!(get(&h, &format!("{}/aggregates", k.other)).await.json()["count"], 0);
    assert_eq!(get(&h, &format!("{}/{id}", k.path)).await.json()["status"], "pending");
}

pub async fn settle_is_idempotent_with_a_key(k: K) {
    let h = Harness::new().await;
    let account = account(&h, ACME_COMPANY).await;
    let b = create(&h, k, body()).await;
    let id = b["id"].as_str().unwrap();
    let token = h.api_token(DEMO_OWNER);
    let settle = |body: Value| {
        rest(Method::POST, &format!("{}/{id}/settle", k.path), &token, Some(body))
            .header("x-idempotency-key", "settle-1")
            .build()
    };
    let request = json!({"payment_date": "2026-03-12", "financial_account_id": account});
    let first = h.send(settle(request.clone())).await;
    assert_eq!(first.status, 200, "{}", String::from_utf8_lossy(&first.bytes));
    assert!(first.header("x-idempotency-replayed").is_none());
    let again = h.send(settle(request.clone())).await;
    assert_eq!(again.status, 200);
    assert_eq!(again.header("x-idempotency-replayed"), Some("true"));
    assert_eq!(again.json(), first.json());
    assert_eq!(settled_transactions(&h, id).await.len(), 1, "a retried settle moves money once");
    let other = h.send(settle(json!({"payment_date": "2026-03-13", "financial_account_id": account}))).await;
    assert_eq!(other.status, 409);
    assert_eq!(other.json()["error"]["code"], "idempotency_key_reused");
    // Concurrent retries: one movement.
    let b2 = create(&h, k, body()).await;
    let id2 = b2["id"].as_str().unwrap().to_string();
    let race = || {
        rest(Method::POST, &format!("{}/{id2}/settle", k.path), &token, Some(request.clone()))
            .header("x-idempotency-key", "race")
            .build()
    };
    let (x, y) = tokio::join!(h.send(race()), h.send(race()));
    assert!([x.status.as_u16(), y.status.as_u16()].iter().all(|s| [200, 409, 422].contains(s)));
    assert!(x.status == 200 || y.status == 200);
    assert_eq!(settled_transactions(&h, &id2).await.len(), 1);
}

pub async fn idempotency_key_replays_a_create(k: K) {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let send =
        |b: Value, header: &'static str| rest(Method::POST, k.path, &token, Some(b)).header(header, "create-1").build();
    let series = with(body(), json!({"type": "installment", "total_installments": 3}));
    let first = h.send(send(series.clone(), "x-idempotency-key")).await;
    assert_eq!(first.status, 201);
    let again = h.send(send(series.clone(), "idempotency-key")).await;
    assert_eq!(again.status, 201);
    assert_eq!(again.header("x-idempotency-replayed"), Some("true"));
    assert_eq!(again.json(), first.json());
    assert_eq!(again.header("location"), first.header("location"));
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM billings WHERE workspace_id = $1", DEMO_WORKSPACE_ACME).await,
        3,
        "the series is written once"
    );
    let reused = h.send(send(body(), "x-idempotency-key")).await;
    assert_eq!(reused.status, 409);
    assert_eq!(reused.json()["error"]["code"], "idempotency_key_reused");
}

pub async fn aggregates_count_overdue_pending(k: K) {
    let h = Harness::new().await;
    let account = account(&h, ACME_COMPANY).await;
    create(&h, k, with(body(), json!({"amount": "100.00", "due_date": "2020-01-10"}))).await; // pending, overdue
    create(&h, k, with(body(), json!({"amount": "200.00", "due_date": "2999-01-10"}))).await; // pending, not overdue
    let paid = create(
        &h,
        k,
        with(body(), json!({"amount": "300.00", "due_date": "2020-01-15", "financial_account_id": account})),
    )
    .await;
    let cancelled = create(&h, k, with(body(), json!({"amount": "400.00", "due_date": "2020-01-20"}))).await;
    create(&h, k, with(body(), json!({"amount": "50.00", "due_date": "2020-01-05", "company_id": ACME_SERVICES})))
        .await;
    assert_eq!(
        post(
            &h,
            &format!("{}/{}/settle", k.path, paid["id"].as_str().unwrap()),
            Some(json!({"payment_date": "2020-01-15"}))
        )
        .await
        .status,
        200
    );
    assert_eq!(post(&h, &format!("{}/{}/cancel", k.path, cancelled["id"].as_str().unwrap()), None).await.status, 200);
    let all = get(&h, &format!("{}/aggregates?company_id={ACME_COMPANY}", k.path)).await;
    assert_eq!(all.status, 200, "{}", String::from_utf8_lossy(&all.bytes));
    let expected = json!({"count": 4, "total": "600.00", "pending": "300.00", k.settled: "300.00", "overdue_count": 1});
    assert_eq!(all.json(), expected);
    let everything = get(&h, &format!("{}/aggregates", k.path)).await.json();
    assert_eq!((everything["count"].as_i64(), everything["overdue_count"].as_i64()), (Some(5), Some(2)));
    let january = get(&h, &format!("{}/aggregates?month=1&year=2020", k.path)).await.json();
    assert_eq!(january["count"], 4);
    let range = get(&h, &format!("{}/aggregates?start_date=2999-01-01&end_date=2999-12-31", k.path)).await.json();
    assert_eq!((range["count"].as_i64(), range["pending"].as_str()), (Some(1), Some("200.00")));
    // The one period parser of every aggregates route (`ops/period.rs`).
    for (bad, field, reason) in AGGREGATES_REFUSALS {
        let reply = get(&h, &format!("{}/aggregates?{bad}", k.path)).await;
        assert_eq!(reply.status, 400, "{bad}");
        assert_eq!(details(&reply), pair(field, reason), "{bad}");
    }
    // The overdue filter of the list.
    let overdue = get(&h, &format!("{}?status=pending&due_date[lt]=2026-01-01", k.path)).await.json();
    assert_eq!(overdue["data"].as_array().unwrap().len(), 2);
}

pub async fn nominal_amount_is_amount_plus_interest_minus_discount(k: K) {
    let h = Harness::new().await;
    let account = account(&h, ACME_COMPANY).await;
    let b = create(&h, k, with(body(), json!({"amount": "2000.00"}))).await;
    let id = b["id"].as_str().unwrap();
    let settled = post(&h, &format!("{}/{id}/settle", k.path), Some(json!({"payment_date": "2026-03-12", "financial_account_id": account, "interest_amount": "25.00", "discount_amount": "0.50", "ticket_amount": "2024.20"}))).await;
    assert_eq!(settled.status, 200, "{}", String::from_utf8_lossy(&settled.bytes));
    let s = settled.json();
    assert_eq!(s["amount"], "2000.00");
    assert_eq!(s["interest_amount"], "25.00");
    assert_eq!(s["discount_amount"], "0.50");
    assert_eq!(s["nominal_amount"], "2024.50");
    assert_eq!(s["ticket_amount"], "2024.20");
    let rows = settled_transactions(&h, id).await;
    assert_eq!(rows[0].try_get::<i64, _>("amount_cents").unwrap(), 202_420, "the ticket amount moved");
    let listed = get(&h, &format!("{}?id={id}", k.path)).await.json();
    assert_eq!(listed["data"][0]["nominal_amount"], "2024.50");
    let b2 = create(&h, k, with(body(), json!({"amount": "10.00"}))).await;
    let all_discount = post(
        &h,
        &format!("{}/{}/settle", k.path, b2["id"].as_str().unwrap()),
        Some(json!({"payment_date": "2026-03-12", "financial_account_id": account, "discount_amount": "10.00"})),
    )
    .await;
    expect(&all_discount, 422, "invalid_amount");
}

pub async fn delete_removes_the_settlement_allocations_taxes_and_links(k: K) {
    let h = Harness::new().await;
    let account = account(&h, ACME_COMPANY).await;
    let c1 = center(&h, ACME_COMPANY, k.center).await;
    let tax = tax(&h, DEMO_WORKSPACE_ACME, "IRRF").await;
    let b = create(&h, k, with(body(), json!({"financial_account_id": account, "classification_center_id": c1, "tax_charges": [{"tax_id": tax, "amount": "15.00", "withholding": false}]}))).await;
    assert_eq!(b["tax_charges"], json!([{"tax_id": tax, "tax_name": "IRRF", "amount": "15.00", "withholding": false}]));
    let id = b["id"].as_str().unwrap();
    let path = format!("{}/{id}", k.path);
    assert_eq!(post(&h, &format!("{path}/settle"), Some(json!({"payment_date": "2026-03-12"}))).await.status, 200);
    let tx = get(&h, &path).await.json()["transaction_id"].as_str().unwrap().to_string();
    exec(&h, "INSERT INTO attachments (id, workspace_id, file_name, mime_type, file_size, sha256, uploaded_by, uploaded_at, created_via) VALUES ('a0000000-0000-4000-8000-000000000001', $1, 'nf.pdf', 'application/pdf', 1, 'x', 'u', $2, 'system')", &[DEMO_WORKSPACE_ACME, NOW]).await;
    let kind = &k.path[4..k.path.len() - 1];
    exec(&h, "INSERT INTO attachment_links (attachment_id, workspace_id, target_type, target_id, created_at, created_via) VALUES ('a0000000-0000-4000-8000-000000000001', $1, $2, $3, $4, 'system')", &[DEMO_WORKSPACE_ACME, kind, id, NOW]).await;
    exec(&h, "INSERT INTO attachment_links (attachment_id, workspace_id, target_type, target_id, created_at, created_via) VALUES ('a0000000-0000-4000-8000-000000000001', $1, 'transaction', $2, $3, 'system')", &[DEMO_WORKSPACE_ACME, &tx, NOW]).await;
    assert_eq!(delete(&h, &path).await.status, 204);
    assert_eq!(delete(&h, &path).await.status, 404);
    assert_eq!(get(&h, &path).await.status, 404);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM financial_transactions WHERE id = $1", &tx).await, 0);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM allocations WHERE owner_id = $1", id).await, 0);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM billing_tax_charges WHERE billing_id = $1", id).await, 0);
    assert_eq!(
        count(
            &h,
            "SELECT COUNT(*) FROM attachment_links WHERE attachment_id = $1",
            "a0000000-0000-4000-8000-000000000001"
        )
        .await,
        0
    );
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM attachments WHERE id = $1", "a0000000-0000-4000-8000-000000000001").await,
        1,
        "the file itself stays"
    );
    let action = format!("{}.delete", &k.path[4..]);
    assert_eq!(
        count(&h, &format!("SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = '{action}'"), id).await,
        1
    );
}

pub async fn another_workspace_is_indistinguishable_from_missing(k: K) {
    let h = Harness::new().await;
    let beta = h.api_token(DEMO_BETA_OWNER);
    let theirs = h
        .send(rest(Method::POST, k.path, &beta, Some(with(body(), json!({"company_id": BETA_COMPANY})))).build())
        .await;
    assert_eq!(theirs.status, 201, "{}", String::from_utf8_lossy(&theirs.bytes));
    let id = theirs.json()["id"].as_str().unwrap().to_string();
    let path = format!("{}/{id}", k.path);
    for reply in [
        get(&h, &path).await,
        get(&h, &format!("{}/7f000000-0000-4000-8000-000000000000", k.path)).await,
        get(&h, &format!("{}/not-a-uuid", k.path)).await,
        patch(&h, &path, json!({"description": "mine"})).await,
        delete(&h, &path).await,
        post(&h, &format!("{path}/cancel"), None).await,
        post(&h, &format!("{path}/reopen"), None).await,
        post(&h, &format!("{path}/settle"), Some(json!({"payment_date": "2026-03-12"}))).await,
    ] {
        assert_eq!(reply.status, 404);
        assert_eq!(reply.json()["error"]["code"], "not_found");
    }
    let list = get(&h, k.path).await.json();
    assert!(!list.to_string().contains(&id));
    assert!(!get(&h, &format!("{}/ids", k.path)).await.json().to_string().contains(&id));
    assert_eq!(get(&h, &format!("{}/aggregates", k.path)).await.json()["count"], 0);
    // Their references are not ours either.
    let their_account = account(&h, BETA_COMPANY).await;
    expect(
        &post(&h, k.path, Some(with(body(), json!({"financial_account_id": their_account})))).await,
        422,
        "invalid_reference",
    );
}

pub async fn scope_and_role_are_checked_inside_the_operation(k: K) {
    let h = Harness::new().await;
    let aud = |c: &mut kobana_finance_mcp::auth::jwt::Claims| {
        c.aud = kobana_finance_mcp::auth::jwt::Audience::One(format!("{PUBLIC_URL}/v1"))
    };
    let b = create(&h, k, body()).await;
    let id = b["id"].as_str().unwrap();
    let read_only = h.token_with(DEMO_OWNER, Some(k.scope), aud);
    for (method, path, body) in [
        (Method::POST, k.path.to_string(), Some(body())),
        (Method::POST, format!("{}/{id}/cancel", k.path), None),
        (Method::POST, format!("{}/{id}/settle", k.path), Some(json!({"payment_date": "2026-03-12"}))),
        (Method::POST, format!("{}/{id}/reopen", k.path), None),
        (Method::DELETE, format!("{}/{id}", k.path), None),
        (Method::PATCH, format!("{}/{id}", k.path), Some(json!({"description": "x"}))),
    ] {
        let reply = h.send(rest(method, &path, &read_only, body).build()).await;
        assert_eq!(reply.status, 403, "{path}");
        assert_eq!(reply.json()["error"]["code"], "insufficient_scope");
        assert_eq!(reply.json()["error"]["details"]["required"], json!([format!("{}.write", k.scope)]));
    }
    assert_eq!(h.send(rest(Method::GET, k.path, &read_only, None).build()).await.status, 200);
    let other_scope = h.token_with(
        DEMO_OWNER,
        Some(if k.scope == "finance.payables" {
            "finance.receivables finance.receivables.write"
        } else {
            "finance.payables finance.payables.write"
        }),
        aud,
    );
    let reply = h.send(rest(Method::GET, &format!("{}/{id}", k.path), &other_scope, None).build()).await;
    assert_eq!(reply.json()["error"]["code"], "insufficient_scope");
    let viewer = h.api_token(DEMO_VIEWER);
    for (method, path, body) in [
        (Method::POST, k.path.to_string(), Some(body())),
        (Method::POST, format!("{}/{id}/cancel", k.path), None),
        (Method::DELETE, format!("{}/{id}", k.path), None),
    ] {
        let reply = h.send(rest(method, &path, &viewer, body).build()).await;
        assert_eq!(reply.status, 403);
        assert_eq!(reply.json()["error"]["code"], "forbidden");
    }
    assert_eq!(h.send(rest(Method::GET, &format!("{}/{id}", k.path), &viewer, None).build()).await.status, 200);
    // The finance role may change and delete bills.
    let finance = h.api_token(DEMO_FINANCE);
    let ws = format!("workspace_id={DEMO_WORKSPACE_ACME}");
    let reply = h.send(rest(Method::POST, &format!("{}/{id}/cancel?{ws}", k.path), &finance, None).build()).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["updated_by"], DEMO_FINANCE);
    assert_eq!(
        h.send(rest(Method::DELETE, &format!("{}/{id}?{ws}", k.path), &finance, None).build()).await.status,
        204
    );
}

pub async fn list_filters_sorts_and_pages(k: K) {
    let h = Harness::new().await;
    for (i, (amount, due)) in [
        ("10.00", "2026-03-05"),
        ("20.00", "2026-03-01"),
        ("30.00", "2026-03-03"),
        ("40.00", "2026-03-02"),
        ("50.00", "2026-03-04"),
    ]
    .iter()
    .enumerate()
    {
        create(&h, k, with(body(), json!({"amount": amount, "due_date": due, "description": format!("Conta {i}")})))
            .await;
    }
    let dues = |v: &Value| {
        v["data"].as_array().unwrap().iter().map(|b| b["due_date"].as_str().unwrap().to_string()).collect::<Vec<_>>()
    };
    let default = get(&h, k.path).await.json();
    assert_eq!(
        dues(&default),
        ["2026-03-01", "2026-03-02", "2026-03-03", "2026-03-04", "2026-03-05"],
        "due_date ascending by default"
    );
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("{}?sort=-amount&limit=2&cursor={c}", k.path),
            None => format!("{}?sort=-amount&limit=2", k.path),
        };
        let page = get(&h, &path).await.json();
        seen.extend(page["data"].as_array().unwrap().iter().map(|b| b["amount"].as_str().unwrap().to_string()));
        match page["meta"]["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    assert_eq!(seen, ["50.00", "40.00", "30.00", "20.00", "10.00"]);
    let ranged = get(&h, &format!("{}?amount[gte]=20.00&amount[lt]=40.00", k.path)).await.json();
    assert_eq!(ranged["data"].as_array().unwrap().len(), 2);
    let window = get(
        &h,
        &format!(
            "{}?due_date[gte]=2026-03-02&due_date[lte]=2026-03-03&status[in]=pending,cancelled&type=normal",
            k.path
        ),
    )
    .await
    .json();
    assert_eq!(dues(&window), ["2026-03-02", "2026-03-03"]);
    let synced = get(&h, &format!("{}?updated_at[gte]=2000-01-01&sort=updated_at", k.path)).await.json();
    assert_eq!(synced["data"].as_array().unwrap().len(), 5);
    for bad in [
        "colour=red",
        "amount[gte]=abc",
        &format!("status={}", if k.settled == "paid" { "received" } else { "paid" }),
        "sort=payment_date",
        "limit=101",
        "cursor=nope",
        "type[gte]=normal",
    ] {
        let reply = get(&h, &format!("{}?{bad}", k.path)).await;
        assert_eq!(reply.status, 400, "{bad}");
        assert_eq!(reply.json()["error"]["code"], "bad_request");
    }
}

/// A list tool's `fields` reads only the columns those fields come from; each field
/// still shows exactly what the whole record shows, in every sort, with the same
/// cursor — for every field a record has (demo records in every status, with taxes,
/// apportionment, a settlement and an installment series).
pub async fn a_projected_list_shows_each_field_as_the_whole_record_does(k: K) {
    let h = Harness::with_demo().await;
    create(&h, k, with(body(), json!({"type": "installment", "total_installments": 3, "amount": "100.00"}))).await;
    let settled = create(&h, k, with(body(), json!({"amount": "2000.00", "due_date": "2026-02-10"}))).await;
    let account = account(&h, ACME_COMPANY).await;
    let settle = json!({"payment_date": "2026-02-12", "financial_account_id": account, "interest_amount": "25.00", "discount_amount": "0.50", "ticket_amount": "2024.20"});
    assert_eq!(
        post(&h, &format!("{}/{}/settle", k.path, settled["id"].as_str().unwrap()), Some(settle)).await.status,
        200
    );
    let token = h.token(DEMO_OWNER);
    let tool = format!("finance_{}_list", k.path.trim_start_matches("/v1/"));
    let list = |arguments: Value| {
        let reply = h.send(call(&tool, arguments).bearer(&token).build());
        async move {
            let reply = reply.await;
            assert!(reply.result()["isError"].is_null(), "{:?}", reply.bytes);
            reply.result()["structuredContent"].clone()
        }
    };
    for sort in [None, Some("-amount"), Some("competence_date"), Some("-updated_at")] {
        let with_sort = |mut arguments: Value| {
            if let Some(sort) = sort {
                arguments["sort"] = json!(sort);
            }
            arguments
        };
        let whole = list(with_sort(json!({"limit": 100}))).await;
        let rows = whole["data"].as_array().unwrap();
        assert!(rows.len() >= 5, "{whole}");
        let first_page = list(with_sort(json!({"limit": 2}))).await;
        for field in rows[0].as_object().unwrap().keys() {
            let projected = list(with_sort(json!({"limit": 100, "fields": [field]}))).await;
            let picked = projected["data"].as_array().unwrap();
            assert_eq!(picked.len(), rows.len(), "{field}");
            for (row, one) in rows.iter().zip(picked) {
                assert_eq!(one, &json!({ field.as_str(): row[field] }), "{field}, sort {sort:?}");
            }
            let page = list(with_sort(json!({"limit": 2, "fields": [field]}))).await;
            assert_eq!(page["meta"], first_page["meta"], "{field}: the cursor is the whole list's");
        }
    }
}

pub async fn ids_sweep_every_id_in_order(k: K) {
    let h = Harness::new().await;
    let created = create(&h, k, with(body(), json!({"type": "recurring", "recurrence_period": "monthly"}))).await;
    let mut expected: Vec<String> =
        created["series"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
    expected.sort();
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("{}/ids?limit=5&cursor={c}", k.path),
            None => format!("{}/ids?limit=5", k.path),
        };
        let page = get(&h, &path).await.json();
        seen.extend(page["data"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()));
        match page["meta"]["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    assert_eq!(seen, expected);
    assert_eq!(get(&h, &format!("{}/ids", k.path)).await.json()["data"].as_array().unwrap().len(), 12);
    // The sweep of every resource answers alike (the people sweep's table).
    for (bad, field) in [
        ("status=pending", "status"),
        ("status[in]=pending,paid", "status"),
        ("sort=id", "sort"),
        ("limit=10001", "limit"),
        ("limit=0", "limit"),
        ("limit=ten", "limit"),
        ("cursor=nope", "cursor"),
    ] {
        let reply = get(&h, &format!("{}/ids?{bad}", k.path)).await;
        assert_eq!(reply.status, 400, "{bad}");
        assert_eq!(reply.json()["error"]["code"], "bad_request", "{bad}");
        assert_eq!(reply.json()["error"]["details"]["field"], field, "{bad}");
    }
}

pub async fn openapi_lists_every_operation(k: K) {
    let h = Harness::new().await;
    let doc = h.send(Mcp::raw("").method(Method::GET).path("/v1/openapi.json").build()).await.json();
    let paths = &doc["paths"];
    for (path, method) in [
        (k.path.to_string(), "get"),
        (k.path.to_string(), "post"),
        (format!("{}/aggregates", k.path), "get"),
        (format!("{}/ids", k.path), "get"),
        (format!("{}/{{id}}", k.path), "get"),
        (format!("{}/{{id}}", k.path), "patch"),
        (format!("{}/{{id}}", k.path), "delete"),
        (format!("{}/{{id}}/settle", k.path), "post"),
        (format!("{}/{{id}}/cancel", k.path), "post"),
        (format!("{}/{{id}}/reopen", k.path), "post"),
    ] {
        assert!(paths[&path][method].is_object(), "{method} {path}");
    }
    let create = &paths[k.path]["post"]["requestBody"]["content"]["application/json"]["schema"];
    assert_eq!(create["required"], json!(["company_id", "description", "amount", "due_date"]));
    let update = &paths[format!("{}/{{id}}", k.path)]["patch"]["requestBody"]["content"]["application/json"]["schema"];
    assert!(update["properties"].get("status").is_none(), "update never carries a status");
    assert_eq!(
        paths[format!("{}/aggregates", k.path)]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
            ["required"][3],
        k.settled
    );
}

/// One `#[tokio::test]` per scenario of this module, for the kind `$k` (PAYABLES or
/// RECEIVABLES): both kinds run the same list.
#[macro_export]
macro_rules! billing_tests {
    ($k:expr) => {
        $crate::billing_tests!($k;
            create_returns_201_with_location_provenance_and_audit,
            validation_names_the_field,
            settle_creates_exactly_one_auto_created_transaction,
            settle_requires_payment_date_and_an_account_of_the_same_company,
            reopen_removes_the_settlement_transaction,
            cancel_of_a_settled_record_requires_reopen,
            update_never_changes_status,
            installments_split_to_the_cent_with_the_remainder_on_the_last,
            installments_are_one_month_apart_with_one_group_id,
            recurrence_creates_the_documented_horizon,
            apportionment_sums_within_a_cent_and_matches_polarity,
            find_or_create_by_name_is_exclusive_with_id,
            person_is_required,
            period_closed_blocks_create_update_settle_reopen_and_delete,
            a_payable_is_not_a_receivable,
            settle_is_idempotent_with_a_key,
            idempotency_key_replays_a_create,
            aggregates_count_overdue_pending,
            nominal_amount_is_amount_plus_interest_minus_discount,
            delete_removes_the_settlement_allocations_taxes_and_links,
            another_workspace_is_indistinguishable_from_missing,
            scope_and_role_are_checked_inside_the_operation,
            list_filters_sorts_and_pages,
            a_projected_list_shows_each_field_as_the_whole_record_does,
            ids_sweep_every_id_in_order,
            openapi_lists_every_operation,
        );
    };
    ($k:expr; $($name:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $name() {
                $crate::billings::$name($k).await
            }
        )*
    };
}
