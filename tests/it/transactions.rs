//! `/v1/financial-transactions`: money on the wire, references and polarity,
//! apportionment, closed periods, auto-created rows, aggregates, id sweep, pagination
//! and partial updates — on SQLite and PostgreSQL (transfers: `transfers.rs`; what
//! every plain resource shares: `records`).

use crate::common;

use crate::records::table::transaction as body;
use common::*;
use http::Method;
use serde_json::{json, Value};

pub fn details(reply: &Reply) -> Value {
    reply.json()["error"]["details"].clone()
}

async fn insert_row(
    h: &Harness,
    table: &str,
    kind_column: &str,
    workspace: &str,
    company: &str,
    name: &str,
    kind: &str,
) -> String {
    let id = uuid::Uuid::new_v4().to_string();
    let extra = if table == "categories" { ", parent_id, level" } else { "" };
    let extra_values = if table == "categories" { ", NULL, 1" } else { "" };
    sql::query(format!(
        "INSERT INTO {table} (id, workspace_id, company_id, name, {kind_column}, created_at, updated_at, created_via, updated_via{extra})
         VALUES ($1, $2, $3, $4, $5, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', 'system', 'system'{extra_values})"
    ))
    .bind(&id)
    .bind(workspace)
    .bind(company)
    .bind(name)
    .bind(kind)
    .execute(&h.state.db)
    .await
    .unwrap();
    id
}

/// A category inserted directly (the categories routes are another resource).
async fn category(h: &Harness, company: &str, name: &str, kind: &str) -> String {
    insert_row(h, "categories", "category_type", DEMO_WORKSPACE_ACME, company, name, kind).await
}

/// A classification center inserted directly.
async fn center(h: &Harness, company: &str, name: &str, kind: &str) -> String {
    insert_row(h, "classification_centers", "center_type", DEMO_WORKSPACE_ACME, company, name, kind).await
}

pub async fn account(h: &Harness, token: &str, company: &str, name: &str) -> String {
    let body = json!({"company_id": company, "name": name, "type": "checking"});
    let reply = send(h, Method::POST, "/v1/financial-accounts", token, Some(body)).await;
    assert_eq!(reply.status, 201, "{}", text(&reply));
    reply.json()["id"].as_str().unwrap().to_string()
}

pub async fn balance(h: &Harness, token: &str, account: &str) -> String {
    let reply = send(h, Method::GET, &format!("/v1/financial-accounts/{account}"), token, None).await;
    reply.json()["balance"].as_str().unwrap().to_string()
}

async fn create(h: &Harness, token: &str, body: Value) -> Value {
    let reply = send(h, Method::POST, "/v1/financial-transactions", token, Some(body.clone())).await;
    assert_eq!(reply.status, 201, "{body}: {}", text(&reply));
    reply.json()
}

async fn post(h: &Harness, token: &str, body: Value) -> Reply {
    send(h, Method::POST, "/v1/financial-transactions", token, Some(body)).await
}

pub struct Setup {
    pub h: Harness,
    pub token: String,
    pub account: String,
}

pub async fn setup() -> Setup {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let account = account(&h, &token, ACME_COMPANY, "Itaú").await;
    Setup { h, token, account }
}

#[tokio::test]
async fn money_is_two_decimal_strings_on_the_wire() {
    let Setup { h, token, account } = setup().await;
    let tx = create(&h, &token, body(&account, "0.5", "credit", "2026-05-10")).await;
    assert_eq!(tx["amount"], "0.50");
    let tx = create(&h, &token, body(&account, "9999999999999.99", "credit", "2026-05-10")).await;
    assert_eq!(tx["amount"], "9999999999999.99", "13 integer digits, no float rounding");
    for (amount, reason) in [
        (json!(10.5), "wrong_type"),
        (json!(10), "wrong_type"),
        (json!("10"), "too_short"),
        (json!("10.555"), "invalid_amount"),
        (json!("1,50"), "invalid_amount"),
        (json!("-1.00"), "invalid_amount"),
        (json!("0.00"), "invalid_amount"),
        (json!("1e3.00"), "invalid_amount"),
    ] {
        let mut b = body(&account, "1.00", "credit", "2026-05-10");
        b["amount"] = amount.clone();
        let reply = post(&h, &token, b).await;
        assert_eq!(reply.status, 422, "{amount}: {}", text(&reply));
        assert_eq!(details(&reply)["field"], "amount", "{amount}");
        assert_eq!(details(&reply)["reason"], reason, "{amount}");
    }
    let totals = send(&h, Method::GET, "/v1/financial-transactions/aggregates", &token, None).await.json();
    assert_eq!(totals, json!({"count": 2, "credit": "10000000000000.49", "debit": "0.00", "net": "10000000000000.49"}));
    assert_eq!(balance(&h, &token, &account).await, "10000000000000.49");
}

#[tokio::test]
async fn account_of_another_company_is_refused() {
    let Setup { h, token, account } = setup().await;
    let servicos = self::account(&h, &token, ACME_SERVICES, "Conta Serviços").await;
    let reply = post(&h, &token, body(&servicos, "10.00", "debit", "2026-05-10")).await;
    assert_eq!(reply.status, 422, "{}", text(&reply));
    assert_eq!(details(&reply), json!({"field": "financial_account_id", "reason": "account_company_mismatch"}));
    // Another workspace's account, or a missing one, is an invalid reference.
    let beta = h.api_token(DEMO_BETA_OWNER);
    let beta_account = self::account(&h, &beta, BETA_COMPANY, "Conta Beta").await;
    for other in [beta_account.as_str(), MISSING] {
        let reply = post(&h, &token, body(other, "10.00", "debit", "2026-05-10")).await;
        assert_eq!(reply.status, 422);
        assert_eq!(details(&reply), json!({"field": "financial_account_id", "reason": "invalid_reference"}));
    }
    // Another workspace's company too.
    let mut b = body(&account, "10.00", "debit", "2026-05-10");
    b["company_id"] = json!(BETA_COMPANY);
    let reply = post(&h, &token, b).await;
    assert_eq!(reply.status, 422);
    assert_eq!(details(&reply), json!({"field": "company_id", "reason": "invalid_reference"}));
    // The account cannot be moved afterwards: the answer's account and company, sent
    // back, are dropped.
    let tx = create(&h, &token, body(&account, "10.00", "debit", "2026-05-10")).await;
    let path = format!("/v1/financial-transactions/{}", tx["id"].as_str().unwrap());
    for field in ["financial_account_id", "company_id"] {
        let reply = send(&h, Method::PATCH, &path, &token, Some(json!({ field: servicos }))).await;
        assert_eq!(reply.status, 200);
        assert_eq!(reply.json()[field], tx[field], "{field}");
    }
}

#[tokio::test]
async fn find_or_create_by_name_is_exclusive_with_id() {
    let Setup { h, token, account } = setup().await;
    let existing = category(&h, ACME_COMPANY, "Aluguel", "debit").await;
    for (id_field, name_field) in [
        ("category_id", "category_name"),
        ("person_id", "person_name"),
        ("classification_center_id", "classification_center_name"),
    ] {
        let mut b = body(&account, "10.00", "debit", "2026-05-10");
        b[id_field] = json!(existing);
        b[name_field] = json!("Aluguel");
        let reply = post(&h, &token, b).await;
        assert_eq!(reply.status, 400, "{id_field}: {}", text(&reply));
        assert_eq!(details(&reply), json!({"field": id_field, "reason": "mutually_exclusive"}));
    }
    // By name: an existing category of the right type is found, not duplicated.
    let mut b = body(&account, "10.00", "debit", "2026-05-10");
    b["category_name"] = json!("Aluguel");
    b["person_name"] = json!("Imobiliária Central");
    b["classification_center_name"] = json!("Administrativo");
    let tx = create(&h, &token, b.clone()).await;
    assert_eq!(tx["category_id"], existing.as_str());
    let person = tx["person_id"].as_str().unwrap().to_string();
    let center = tx["classification_center_id"].as_str().unwrap().to_string();
    assert_eq!(
        tx["classification_center_allocations"],
        json!([{"classification_center_id": center, "classification_center_name": "Administrativo", "percentage": "100.00", "amount": null}])
    );
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM people WHERE id = $1 AND is_supplier = 1 AND is_customer = 0", &person).await,
        1,
        "a supplier for a debit"
    );
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM classification_centers WHERE id = $1 AND center_type = 'cost'", &center).await,
        1,
        "a cost center for a debit"
    );
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = 'people.create'", &person).await,
        1
    );
    // Again: the same records are found.
    let again = create(&h, &token, b).await;
    assert_eq!(
        (again["person_id"].as_str(), again["classification_center_id"].as_str()),
        (Some(person.as_str()), Some(center.as_str()))
    );
    assert_eq!(count(&h, "SELECT COUNT(*) FROM categories WHERE name = $1", "Aluguel").await, 1);
    // A credit with the same category name gets a credit category of its own, and the
    // person becomes a customer too.
    let mut credit = body(&account, "10.00", "credit", "2026-05-10");
    credit["category_name"] = json!("Aluguel");
    credit["person_name"] = json!("Imobiliária Central");
    let tx = create(&h, &token, credit).await;
    assert_ne!(tx["category_id"], existing.as_str());
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM categories WHERE name = $1 AND category_type = 'credit'", "Aluguel").await,
        1
    );
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM people WHERE id = $1 AND is_supplier = 1 AND is_customer = 1", &person).await,
        1
    );
    // Names that a failed create would have made are rolled back with it.
    let mut failing = body(&account, "10.00", "debit", "2026-05-10");
    failing["category_name"] = json!("Nunca criada");
    failing["classification_center_id"] = json!(MISSING);
    assert_eq!(post(&h, &token, failing).await.status, 422);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM categories WHERE name = $1", "Nunca criada").await, 0);
}

#[tokio::test]
async fn apportionment_must_sum_to_the_amount() {
    let Setup { h, token, account } = setup().await;
    let admin = center(&h, ACME_COMPANY, "Administrativo", "cost").await;
    let sales = center(&h, ACME_COMPANY, "Comercial", "both").await;
    let split = |items: Value| {
        let mut b = body(&account, "1000.00", "debit", "2026-05-10");
        b["classification_centers"] = items;
        b
    };
    let reply = post(&h, &token, split(json!([{"classification_center_id": admin, "percentage": "50"}, {"classification_center_id": sales, "percentage": "40"}]))).await;
    assert_eq!(reply.status, 422, "{}", text(&reply));
    assert_eq!(details(&reply)["reason"], "allocation_sum");
    assert_eq!(
        (details(&reply)["expected"].as_str(), details(&reply)["actual"].as_str()),
        (Some("1000.00"), Some("900.00"))
    );
    let reply = post(&h, &token, split(json!([{"classification_center_id": admin, "amount": "600.00"}, {"classification_center_id": sales, "amount": "400.02"}]))).await;
    assert_eq!(reply.status, 422, "more than a cent off");
    // 70 % + R$ 300.00 of 1000.00 (both forms read back as given).
    let tx = create(&h, &token, split(json!([{"classification_center_id": admin, "percentage": "70"}, {"classification_center_id": sales, "amount": "300.00"}]))).await;
    assert_eq!(tx["classification_center_id"], admin.as_str(), "the first center mirrors into the row");
    assert_eq!(
        tx["classification_center_allocations"],
        json!([
            {"classification_center_id": admin, "classification_center_name": "Administrativo", "percentage": "70.00", "amount": null},
            {"classification_center_id": sales, "classification_center_name": "Comercial", "percentage": null, "amount": "300.00"},
        ])
    );
    // Single center and split together are refused.
    let mut both = split(json!([{"classification_center_id": admin, "percentage": "100"}]));
    both["classification_center_id"] = json!(admin);
    let reply = post(&h, &token, both).await;
    assert_eq!(reply.status, 400);
    assert_eq!(details(&reply), json!({"field": "classification_centers", "reason": "mutually_exclusive"}));
    // Changing the amount re-checks the apportionment it keeps: R$ 300.00 fixed + 70 %
    // no longer adds up to 500.00.
    let path = format!("/v1/financial-transactions/{}", tx["id"].as_str().unwrap());
    let reply = send(&h, Method::PATCH, &path, &token, Some(json!({"amount": "500.00"}))).await;
    assert_eq!(reply.status, 422, "{}", text(&reply));
    assert_eq!(details(&reply)["reason"], "allocation_sum");
    // ... or replaces it when classification_centers is sent.
    let reply = send(&h, Method::PATCH, &path, &token, Some(json!({"amount": "500.00", "classification_centers": [{"classification_center_id": sales, "percentage": "60"}, {"classification_center_id": admin, "amount": "200.00"}]}))).await;
    assert_eq!(reply.status, 200, "{}", text(&reply));
    let updated = reply.json();
    assert_eq!(updated["amount"], "500.00");
    assert_eq!(updated["classification_center_id"], sales.as_str());
    assert_eq!(updated["classification_center_allocations"][1]["amount"], "200.00");
    // Percentages follow a new amount.
    let reply = send(&h, Method::PATCH, &path, &token, Some(json!({"classification_centers": [{"classification_center_id": sales, "percentage": "25"}, {"classification_center_id": admin, "percentage": "75"}]}))).await;
    assert_eq!(reply.status, 200);
    let reply = send(&h, Method::PATCH, &path, &token, Some(json!({"amount": "80.00"}))).await;
    assert_eq!(reply.status, 200, "{}", text(&reply));
    // [] clears; a single center replaces with 100 %; null clears.
    let reply = send(&h, Method::PATCH, &path, &token, Some(json!({"classification_centers": []}))).await;
    assert_eq!(reply.json()["classification_center_allocations"], json!([]));
    assert_eq!(reply.json()["classification_center_id"], Value::Null);
    let reply = send(&h, Method::PATCH, &path, &token, Some(json!({"classification_center_id": admin}))).await;
    assert_eq!(reply.json()["classification_center_allocations"][0]["percentage"], "100.00");
    let reply = send(&h, Method::PATCH, &path, &token, Some(json!({"classification_center_id": null}))).await;
    assert_eq!(reply.json()["classification_center_id"], Value::Null);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM allocations WHERE owner_id = $1", tx["id"].as_str().unwrap()).await, 0);
    // The largest amount splits by percentage without overflowing.
    let mut top = body(&account, "9999999999999.99", "debit", "2026-05-10");
    top["classification_centers"] = json!([{"classification_center_id": admin, "percentage": "50"}, {"classification_center_id": sales, "percentage": "50"}]);
    let tx = create(&h, &token, top).await;
    assert_eq!(tx["classification_center_allocations"][1]["percentage"], "50.00");
    let mut top = body(&account, "9999999999999.99", "debit", "2026-05-10");
    top["classification_center_id"] = json!(admin);
    assert_eq!(create(&h, &token, top).await["amount"], "9999999999999.99");
}

#[tokio::test]
async fn apportionment_polarity_must_match() {
    let Setup { h, token, account } = setup().await;
    let cost = center(&h, ACME_COMPANY, "Produção", "cost").await;
    let revenue = center(&h, ACME_COMPANY, "Vendas", "revenue").await;
    let both = center(&h, ACME_COMPANY, "Geral", "both").await;
    let elsewhere = center(&h, ACME_SERVICES, "Outra empresa", "cost").await;
    let mut b = body(&account, "100.00", "debit", "2026-05-10");
    b["classification_centers"] = json!([{"classification_center_id": cost, "percentage": "50"}, {"classification_center_id": revenue, "percentage": "50"}]);
    let reply = post(&h, &token, b).await;
    assert_eq!(reply.status, 422, "{}", text(&reply));
    assert_eq!(
        details(&reply),
        json!({"field": "classification_centers[1].classification_center_id", "reason": "type_mismatch"})
    );
    let mut b = body(&account, "100.00", "credit", "2026-05-10");
    b["classification_center_id"] = json!(cost);
    assert_eq!(details(&post(&h, &token, b).await)["reason"], "type_mismatch");
    let mut b = body(&account, "100.00", "debit", "2026-05-10");
    b["classification_center_id"] = json!(elsewhere);
    assert_eq!(details(&post(&h, &token, b).await)["reason"], "company_mismatch");
    // A category's type must match too.
    let income = category(&h, ACME_COMPANY, "Receita", "credit").await;
    let mut b = body(&account, "100.00", "debit", "2026-05-10");
    b["category_id"] = json!(income);
    let reply = post(&h, &token, b).await;
    assert_eq!(details(&reply), json!({"field": "category_id", "reason": "type_mismatch"}));
    // Changing the type re-checks what the transaction keeps.
    let mut b = body(&account, "100.00", "debit", "2026-05-10");
    b["classification_centers"] = json!([{"classification_center_id": cost, "percentage": "50"}, {"classification_center_id": both, "percentage": "50"}]);
    let tx = create(&h, &token, b).await;
    let path = format!("/v1/financial-transactions/{}", tx["id"].as_str().unwrap());
    let reply = send(&h, Method::PATCH, &path, &token, Some(json!({"type": "credit"}))).await;
    assert_eq!(reply.status, 422, "{}", text(&reply));
    assert_eq!(details(&reply)["reason"], "type_mismatch");
    let reply = send(&h, Method::PATCH, &path, &token, Some(json!({"type": "credit", "classification_centers": [{"classification_center_id": revenue, "percentage": "100"}]}))).await;
    assert_eq!(reply.status, 200, "{}", text(&reply));
    assert_eq!(reply.json()["type"], "credit");
    let outgoing = category(&h, ACME_COMPANY, "Despesa", "debit").await;
    let reply = send(&h, Method::PATCH, &path, &token, Some(json!({"category_id": outgoing}))).await;
    assert_eq!(details(&reply)["reason"], "type_mismatch");
}

#[tokio::test]
async fn period_closed_blocks_create_update_and_delete() {
    let Setup { h, token, account } = setup().await;
    let march = create(&h, &token, body(&account, "10.00", "debit", "2026-03-10")).await;
    let april = create(&h, &token, body(&account, "20.00", "debit", "2026-04-10")).await;
    close_period(&h, &token, ACME_COMPANY, "2026-03-31").await;
    let closed = |reply: &Reply| {
        assert_eq!(reply.status, 422, "{}", text(reply));
        assert_eq!(reply.json()["error"]["code"], "unprocessable_entity");
        assert_eq!(
            details(reply),
            json!({"field": "occurred_at", "reason": "period_closed", "locked_until": "2026-03-31"})
        );
    };
    // Create on or before the lock date.
    closed(&post(&h, &token, body(&account, "1.00", "debit", "2026-03-31")).await);
    assert_eq!(post(&h, &token, body(&account, "1.00", "debit", "2026-04-01")).await.status, 201);
    // Update a closed row (even a harmless field), or move an open row into the period.
    let march_path = format!("/v1/financial-transactions/{}", march["id"].as_str().unwrap());
    closed(&send(&h, Method::PATCH, &march_path, &token, Some(json!({"notes": "tarde demais"}))).await);
    closed(&send(&h, Method::PATCH, &march_path, &token, Some(json!({"occurred_at": "2026-04-15"}))).await);
    let april_path = format!("/v1/financial-transactions/{}", april["id"].as_str().unwrap());
    closed(&send(&h, Method::PATCH, &april_path, &token, Some(json!({"occurred_at": "2026-03-01"}))).await);
    assert_eq!(
        send(&h, Method::PATCH, &april_path, &token, Some(json!({"occurred_at": "2026-04-02"}))).await.status,
        200
    );
    // Delete a closed row.
    closed(&send(&h, Method::DELETE, &march_path, &token, None).await);
    assert_eq!(send(&h, Method::GET, &march_path, &token, None).await.json()["amount"], "10.00", "unchanged");
    // Transfers: each leg's company and date.
    let other = self::account(&h, &token, ACME_SERVICES, "Serviços").await;
    let transfer = json!({"from_account_id": other, "to_account_id": account, "amount": "5.00", "occurred_at": "2026-03-15", "description": "Aporte"});
    closed(&send(&h, Method::POST, "/v1/transfers", &token, Some(transfer)).await);
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM financial_transactions WHERE financial_account_id = $1", &other).await,
        0,
        "no half transfer"
    );
    assert_eq!(send(&h, Method::DELETE, &april_path, &token, None).await.status, 204);
}

#[tokio::test]
async fn auto_created_transactions_cannot_be_deleted() {
    let Setup { h, token, account } = setup().await;
    let credit = category(&h, ACME_COMPANY, "Ajustes", "credit").await;
    let adjust = send(
        &h,
        Method::POST,
        &format!("/v1/financial-accounts/{account}/adjust-balance"),
        &token,
        Some(json!({"target_balance": "100.00", "category_id": credit, "occurred_at": "2026-05-01"})),
    )
    .await;
    assert_eq!(adjust.status, 201, "{}", text(&adjust));
    let path = format!("/v1/financial-transactions/{}", adjust.json()["transaction_id"].as_str().unwrap());
    let reply = send(&h, Method::DELETE, &path, &token, None).await;
    assert_eq!(reply.status, 422, "{}", text(&reply));
    assert_eq!(details(&reply)["reason"], "auto_created");
    // Its money is managed by the server; its description and notes are not.
    for change in [
        json!({"amount": "1.00"}),
        json!({"type": "debit"}),
        json!({"occurred_at": "2026-05-02"}),
        json!({"is_pending": true}),
    ] {
        let reply = send(&h, Method::PATCH, &path, &token, Some(change.clone())).await;
        assert_eq!(reply.status, 422, "{change}");
        assert_eq!(details(&reply)["reason"], "auto_created", "{change}");
    }
    let reply = send(
        &h,
        Method::PATCH,
        &path,
        &token,
        Some(json!({"description": "Ajuste conferido", "notes": "ok", "amount": "100.00"})),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", text(&reply));
    assert_eq!(reply.json()["description"], "Ajuste conferido");
    assert_eq!(balance(&h, &token, &account).await, "100.00");
    let settled = send(&h, Method::GET, "/v1/financial-transactions?auto_created=true", &token, None).await.json();
    assert_eq!(settled["data"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn pagination_is_stable_under_concurrent_inserts() {
    let Setup { h, token, account } = setup().await;
    for day in 10..15 {
        create(&h, &token, body(&account, "1.00", "debit", &format!("2026-05-{day}"))).await;
    }
    // Two on the same day: the id breaks the tie.
    create(&h, &token, body(&account, "1.00", "debit", "2026-05-12")).await;
    let mut seen: Vec<(String, String)> = Vec::new();
    let mut path = "/v1/financial-transactions?limit=2".to_string();
    let mut pages = 0;
    loop {
        let reply = send(&h, Method::GET, &path, &token, None).await;
        assert_eq!(reply.status, 200, "{}", text(&reply));
        let page = reply.json();
        seen.extend(
            page["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| (t["occurred_at"].as_str().unwrap().to_string(), t["id"].as_str().unwrap().to_string())),
        );
        pages += 1;
        if pages == 1 {
            // Newer than the cursor in the default -occurred_at order: not seen, nothing shifts.
            create(&h, &token, body(&account, "1.00", "debit", "2026-05-31")).await;
        }
        match page["meta"]["next_cursor"].as_str() {
            Some(c) => path = format!("/v1/financial-transactions?limit=2&cursor={c}"),
            None => break,
        }
    }
    assert_eq!(seen.len(), 6, "no row skipped");
    let unique: std::collections::HashSet<_> = seen.iter().map(|(_, id)| id.clone()).collect();
    assert_eq!(unique.len(), 6, "none repeated");
    let dates: Vec<_> = seen.iter().map(|(d, _)| d.as_str()).collect();
    assert_eq!(dates, ["2026-05-14", "2026-05-13", "2026-05-12", "2026-05-12", "2026-05-11", "2026-05-10"]);
    assert_eq!(pages, 3);
    // A cursor belongs to its sort.
    let first = send(&h, Method::GET, "/v1/financial-transactions?limit=1&sort=amount", &token, None).await.json();
    let cursor = first["meta"]["next_cursor"].as_str().unwrap();
    let reply =
        send(&h, Method::GET, &format!("/v1/financial-transactions?limit=1&cursor={cursor}"), &token, None).await;
    assert_eq!(reply.status, 400);
    let reply =
        send(&h, Method::GET, &format!("/v1/financial-transactions?limit=1&sort=amount&cursor={cursor}"), &token, None)
            .await;
    assert_eq!(reply.status, 200);
}

#[tokio::test]
async fn list_filters_and_bad_queries() {
    let Setup { h, token, account } = setup().await;
    let center_id = center(&h, ACME_COMPANY, "Administrativo", "cost").await;
    let mut with_center = body(&account, "150.00", "debit", "2026-05-10");
    with_center["classification_center_id"] = json!(center_id);
    let a = create(&h, &token, with_center).await;
    let b = create(&h, &token, body(&account, "10.50", "credit", "2026-05-11")).await;
    let mut pending = body(&account, "99.99", "credit", "2026-06-01");
    pending["is_pending"] = json!(true);
    let c = create(&h, &token, pending).await;
    let ids = |reply: Reply| -> Vec<String> {
        assert_eq!(reply.status, 200, "{}", text(&reply));
        reply.json()["data"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap().to_string()).collect()
    };
    let id = |t: &Value| t["id"].as_str().unwrap().to_string();
    let get = |q: &str| {
        let path = format!("/v1/financial-transactions?{q}");
        let (h, token) = (&h, &token);
        async move { send(h, Method::GET, &path, token, None).await }
    };
    assert_eq!(ids(get("").await), [id(&c), id(&b), id(&a)], "default -occurred_at");
    assert_eq!(ids(get("type[in]=credit").await), [id(&c), id(&b)]);
    assert_eq!(ids(get("amount[gte]=10.5&amount[lt]=100.00").await), [id(&c), id(&b)], "amounts compare as cents");
    assert_eq!(ids(get("amount=150.00").await), [id(&a)]);
    assert_eq!(ids(get("sort=amount").await), [id(&b), id(&c), id(&a)]);
    assert_eq!(ids(get("sort=-amount&limit=1").await), [id(&a)]);
    assert_eq!(ids(get("occurred_at[gte]=2026-05-11&occurred_at[lte]=2026-05-31").await), [id(&b)]);
    assert_eq!(ids(get(&format!("classification_center_id={center_id}")).await), [id(&a)]);
    assert_eq!(ids(get("is_pending=true").await), [id(&c)]);
    assert_eq!(
        ids(get(&format!("financial_account_id[in]={account},{account}&company_id={ACME_COMPANY}")).await).len(),
        3
    );
    // An account the workspace does not have, among others: an invalid reference.
    let unknown = get(&format!("financial_account_id[in]={account},{MISSING}&company_id={ACME_COMPANY}")).await;
    assert_eq!(
        (unknown.status.as_u16(), details(&unknown)),
        (422, json!({"field": "financial_account_id", "reason": "invalid_reference"}))
    );
    assert_eq!(ids(get("updated_at[gte]=2000-01-01").await).len(), 3);
    // The apportionment comes with every row of the page.
    let page = get("").await.json();
    assert_eq!(page["data"][2]["classification_center_allocations"][0]["classification_center_id"], center_id.as_str());
    for bad in [
        "colour=red",
        "amount=abc",
        "amount[gte]=10",
        "type=transfer",
        "type[gte]=debit",
        "occurred_at=2026-02-30",
        "sort=description",
        "limit=101",
        "cursor=nope",
        "company_id=x",
    ] {
        let reply = get(bad).await;
        assert_eq!(reply.status, 400, "{bad}");
        assert_eq!(reply.json()["error"]["code"], "bad_request", "{bad}");
    }
}

#[tokio::test]
async fn aggregates_count_realised_rows_only() {
    let Setup { h, token, account } = setup().await;
    let servicos = self::account(&h, &token, ACME_SERVICES, "Serviços").await;
    create(&h, &token, body(&account, "100.00", "credit", "2026-05-01")).await;
    create(&h, &token, body(&account, "30.25", "debit", "2026-05-31")).await;
    create(&h, &token, body(&account, "7.00", "debit", "2026-06-01")).await;
    let mut pending = body(&account, "1000.00", "credit", "2026-05-15");
    pending["is_pending"] = json!(true);
    create(&h, &token, pending).await;
    let mut other = body(&servicos, "5.00", "credit", "2026-05-10");
    other["company_id"] = json!(ACME_SERVICES);
    create(&h, &token, other).await;
    let agg = |q: String| {
        let h = &h;
        let token = &token;
        async move {
            let reply = send(h, Method::GET, &format!("/v1/financial-transactions/aggregates{q}"), token, None).await;
            assert_eq!(reply.status, 200, "{q}: {}", text(&reply));
            reply.json()
        }
    };
    assert_eq!(
        agg(String::new()).await,
        json!({"count": 4, "credit": "105.00", "debit": "37.25", "net": "67.75"}),
        "all time, pending excluded"
    );
    assert_eq!(
        agg(format!("?company_id={ACME_COMPANY}&month=5&year=2026")).await,
        json!({"count": 2, "credit": "100.00", "debit": "30.25", "net": "69.75"})
    );
    assert_eq!(
        agg("?month=06&year=2026".into()).await,
        json!({"count": 1, "credit": "0.00", "debit": "7.00", "net": "-7.00"})
    );
    assert_eq!(
        agg("?start_date=2026-05-10&end_date=2026-06-01".into()).await,
        json!({"count": 3, "credit": "5.00", "debit": "37.25", "net": "-32.25"})
    );
    assert_eq!(
        agg("?month=2&year=2026".into()).await,
        json!({"count": 0, "credit": "0.00", "debit": "0.00", "net": "0.00"})
    );
    // The one period parser of every aggregates route (`ops/machinery/period.rs`).
    for (q, field, reason) in AGGREGATES_REFUSALS {
        let reply = send(&h, Method::GET, &format!("/v1/financial-transactions/aggregates?{q}"), &token, None).await;
        assert_eq!(reply.status, 400, "{q}");
        assert_eq!(
            (details(&reply)["field"].as_str(), details(&reply)["reason"].as_str()),
            (Some(field), Some(reason)),
            "{q}"
        );
    }
    // Another workspace's rows never count.
    let beta = h.api_token(DEMO_BETA_OWNER);
    let beta_totals = send(&h, Method::GET, "/v1/financial-transactions/aggregates", &beta, None).await.json();
    assert_eq!(beta_totals["count"], 0);
}

#[tokio::test]
async fn ids_sweep_lists_every_id_ascending() {
    let Setup { h, token, account } = setup().await;
    let mut expected = Vec::new();
    for i in 0..5 {
        expected.push(
            create(&h, &token, body(&account, &format!("{i}.01"), "debit", "2026-05-10")).await["id"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    expected.sort();
    let all = send(&h, Method::GET, "/v1/financial-transactions/ids", &token, None).await.json();
    assert_eq!(all["data"], json!(expected));
    assert_eq!(all["meta"]["next_cursor"], Value::Null);
    let mut seen = Vec::new();
    let mut path = "/v1/financial-transactions/ids?limit=2".to_string();
    loop {
        let page = send(&h, Method::GET, &path, &token, None).await.json();
        seen.extend(page["data"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()));
        match page["meta"]["next_cursor"].as_str() {
            Some(c) => path = format!("/v1/financial-transactions/ids?limit=2&cursor={c}"),
            None => break,
        }
    }
    assert_eq!(seen, expected);
    assert_eq!(send(&h, Method::GET, "/v1/financial-transactions/ids?limit=10000", &token, None).await.status, 200);
    for bad in ["limit=10001", "limit=0", "type=debit", "sort=amount", "cursor=nope"] {
        let reply = send(&h, Method::GET, &format!("/v1/financial-transactions/ids?{bad}"), &token, None).await;
        assert_eq!(reply.status, 400, "{bad}");
    }
    let beta = h.api_token(DEMO_BETA_OWNER);
    assert_eq!(send(&h, Method::GET, "/v1/financial-transactions/ids", &beta, None).await.json()["data"], json!([]));
}

#[tokio::test]
async fn update_is_partial_and_null_clears() {
    let Setup { h, token, account } = setup().await;
    let mut b = body(&account, "10.00", "debit", "2026-05-10");
    b["notes"] = json!("Nota");
    b["document"] = json!("NF 1");
    let tx = create(&h, &token, b).await;
    let path = format!("/v1/financial-transactions/{}", tx["id"].as_str().unwrap());
    let reply = send(
        &h,
        Method::PATCH,
        &path,
        &token,
        Some(json!({"notes": null, "description": "Nova descrição", "amount": "12.34", "person_name": "Fornecedor X"})),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", text(&reply));
    let updated = reply.json();
    assert_eq!(updated["notes"], Value::Null);
    assert_eq!(updated["description"], "Nova descrição");
    assert_eq!(updated["amount"], "12.34");
    assert_eq!(updated["document"], "NF 1", "fields not sent are kept");
    assert!(updated["person_id"].is_string());
    assert_eq!(updated["updated_via"], "api");
    assert_eq!(updated["created_at"], tx["created_at"]);
    let reply = send(&h, Method::PATCH, &path, &token, Some(json!({"person_id": null}))).await;
    assert_eq!(reply.json()["person_id"], Value::Null);
    assert_eq!(
        count(
            &h,
            "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = 'financial_transactions.update'",
            tx["id"].as_str().unwrap()
        )
        .await,
        2
    );
    // The answer's own fields, sent back, are dropped: never written.
    for (change, field) in [(json!({"auto_created": true}), "auto_created"), (json!({"id": MISSING}), "id")] {
        let reply = send(&h, Method::PATCH, &path, &token, Some(change.clone())).await;
        assert_eq!(reply.status, 200, "{change}");
        assert_eq!(reply.json()[field], tx[field], "{change}");
    }
    let reply = send(&h, Method::PATCH, &path, &token, Some(json!({"amount": "0.00"}))).await;
    assert_eq!(reply.status, 422);
    assert_eq!(details(&reply)["field"], "amount");
}

#[tokio::test]
async fn a_retried_create_moves_money_once() {
    let Setup { h, token, account } = setup().await;
    let b = body(&account, "42.00", "credit", "2026-05-10");
    for _ in 0..2 {
        let request = rest(Method::POST, "/v1/financial-transactions", &token, Some(b.clone()));
        assert_eq!(h.send(request.header("x-idempotency-key", "tx-1").build()).await.status, 201);
    }
    assert_eq!(balance(&h, &token, &account).await, "42.00", "a retried create moves money once");
}

#[tokio::test]
async fn openapi_documents_transfers_and_what_an_update_cannot_change() {
    let h = Harness::new().await;
    let doc = crate::records::openapi(&h).await;
    assert!(doc["paths"]["/v1/transfers"]["post"].is_object());
    assert!(doc["paths"]["/v1/transfers/{id}"]["get"].is_object());
    assert_eq!(doc["paths"]["/v1/transfers"]["post"]["security"][0]["bearer"][0], "finance.transactions.write");
    let update = crate::records::request_schema(&doc, "/v1/financial-transactions/{id}", "patch");
    for fixed in ["company_id", "financial_account_id", "auto_created", "transfer_id"] {
        assert!(update["properties"][fixed].is_null(), "{fixed} is not updatable");
    }
}
