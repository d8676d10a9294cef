//! `/v1/financial-accounts`: computed balance, opening balance, adjust-balance, delete
//! rules, validation, idempotency, pagination, isolation, scope and role — on SQLite and
//! PostgreSQL.

use crate::common;

use crate::billings::category;
use common::*;
use http::Method;
use serde_json::{json, Value};

async fn create_account(h: &Harness, token: &str, company: &str, name: &str, balance: Option<&str>) -> Value {
    let mut body = json!({"company_id": company, "name": name, "type": "checking"});
    if let Some(b) = balance {
        body["balance"] = json!(b);
    }
    let reply = send(h, Method::POST, "/v1/financial-accounts", token, Some(body)).await;
    assert_eq!(reply.status, 201, "{}", text(&reply));
    reply.json()
}

async fn post_transaction(
    h: &Harness,
    token: &str,
    company: &str,
    account: &str,
    amount: &str,
    kind: &str,
    pending: bool,
) -> Value {
    let body = json!({"company_id": company, "financial_account_id": account, "description": "Movimento", "amount": amount,
                      "occurred_at": "2026-05-10", "type": kind, "is_pending": pending});
    let reply = send(h, Method::POST, "/v1/financial-transactions", token, Some(body)).await;
    assert_eq!(reply.status, 201, "{}", text(&reply));
    reply.json()
}

async fn balance(h: &Harness, token: &str, account: &str) -> Value {
    let reply = send(h, Method::GET, &format!("/v1/financial-accounts/{account}"), token, None).await;
    assert_eq!(reply.status, 200, "{}", text(&reply));
    reply.json()["balance"].clone()
}

#[tokio::test]
async fn balance_is_computed_from_realised_transactions() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let account = create_account(&h, &token, ACME_COMPANY, "Itaú", Some("100.00")).await;
    let id = account["id"].as_str().unwrap();
    post_transaction(&h, &token, ACME_COMPANY, id, "50.25", "credit", false).await;
    post_transaction(&h, &token, ACME_COMPANY, id, "20.10", "debit", false).await;
    post_transaction(&h, &token, ACME_COMPANY, id, "0.05", "debit", false).await;
    assert_eq!(balance(&h, &token, id).await, "130.10");
    // Going below zero is a signed string.
    post_transaction(&h, &token, ACME_COMPANY, id, "200.00", "debit", false).await;
    assert_eq!(balance(&h, &token, id).await, "-69.90");
    // Another account's movements do not count.
    let other = create_account(&h, &token, ACME_COMPANY, "Outra", None).await;
    post_transaction(&h, &token, ACME_COMPANY, other["id"].as_str().unwrap(), "999.99", "credit", false).await;
    assert_eq!(balance(&h, &token, id).await, "-69.90");
    assert_eq!(balance(&h, &token, other["id"].as_str().unwrap()).await, "999.99");
}

#[tokio::test]
async fn pending_transactions_do_not_count_in_the_balance() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let account = create_account(&h, &token, ACME_COMPANY, "Itaú", Some("10.00")).await;
    let id = account["id"].as_str().unwrap();
    let forecast = post_transaction(&h, &token, ACME_COMPANY, id, "500.00", "credit", true).await;
    assert_eq!(forecast["is_pending"], true);
    post_transaction(&h, &token, ACME_COMPANY, id, "3.00", "debit", true).await;
    assert_eq!(balance(&h, &token, id).await, "10.00");
    // Realising the forecast makes it count.
    let path = format!("/v1/financial-transactions/{}", forecast["id"].as_str().unwrap());
    let reply = send(&h, Method::PATCH, &path, &token, Some(json!({"is_pending": false}))).await;
    assert_eq!(reply.status, 200, "{}", text(&reply));
    assert_eq!(balance(&h, &token, id).await, "510.00");
}

#[tokio::test]
async fn list_never_returns_balance_and_filters() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    create_account(&h, &token, ACME_COMPANY, "Banco A", Some("1.00")).await;
    create_account(&h, &token, ACME_SERVICES, "Banco B", None).await;
    let cash = json!({"company_id": ACME_COMPANY, "name": "Caixa", "type": "cash"});
    assert_eq!(send(&h, Method::POST, "/v1/financial-accounts", &token, Some(cash)).await.status, 201);
    let list = send(&h, Method::GET, "/v1/financial-accounts", &token, None).await.json();
    let rows = list["data"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r.get("balance").is_none()), "the list never returns balance");
    assert_eq!(
        rows.iter().map(|r| r["name"].as_str().unwrap()).collect::<Vec<_>>(),
        ["Banco A", "Banco B", "Caixa"],
        "default sort by name"
    );
    let by_company =
        send(&h, Method::GET, &format!("/v1/financial-accounts?company_id[in]={ACME_SERVICES}"), &token, None)
            .await
            .json();
    assert_eq!(by_company["data"].as_array().unwrap().len(), 1);
    assert_eq!(by_company["data"][0]["name"], "Banco B");
    let cash_only = send(&h, Method::GET, "/v1/financial-accounts?type[in]=cash,savings", &token, None).await.json();
    assert_eq!(cash_only["data"].as_array().unwrap().len(), 1);
    let sorted = send(&h, Method::GET, "/v1/financial-accounts?sort=-type", &token, None).await.json();
    assert_eq!(sorted["data"][0]["type"], "checking");
    for bad in [
        "?type=gold",
        "?colour=red",
        "?balance[gte]=1.00",
        "?sort=balance",
        "?limit=0",
        "?cursor=x",
        "?company_id=nope",
    ] {
        let reply = send(&h, Method::GET, &format!("/v1/financial-accounts{bad}"), &token, None).await;
        assert_eq!(reply.status, 400, "{bad}");
        assert_eq!(reply.json()["error"]["code"], "bad_request", "{bad}");
    }
}

#[tokio::test]
async fn pagination_walks_every_account_once() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    for i in 0..5 {
        create_account(&h, &token, ACME_COMPANY, &format!("Conta {i}"), None).await;
    }
    let mut seen = Vec::new();
    let mut path = "/v1/financial-accounts?limit=2".to_string();
    loop {
        let page = send(&h, Method::GET, &path, &token, None).await.json();
        seen.extend(page["data"].as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap().to_string()));
        match page["meta"]["next_cursor"].as_str() {
            Some(c) => path = format!("/v1/financial-accounts?limit=2&cursor={c}"),
            None => break,
        }
    }
    assert_eq!(seen, (0..5).map(|i| format!("Conta {i}")).collect::<Vec<_>>());
}

#[tokio::test]
async fn opening_balance_and_company_are_never_updatable() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let account = create_account(&h, &token, ACME_COMPANY, "Itaú", Some("100.00")).await;
    let path = format!("/v1/financial-accounts/{}", account["id"].as_str().unwrap());
    // The answer's balance and company, sent back, are dropped (as the real API
    // drops an answer's fields); a field of neither is refused.
    for field in ["balance", "company_id"] {
        let reply = send(&h, Method::PATCH, &path, &token, Some(json!({ field: "1.00" }))).await;
        assert_eq!(reply.status, 200, "{field}");
        assert_eq!(reply.json()[field], account[field], "{field}");
    }
    for field in ["opening_balance_cents"] {
        let reply = send(&h, Method::PATCH, &path, &token, Some(json!({ field: "1.00" }))).await;
        assert_eq!(reply.status, 422, "{field}");
        assert_eq!(reply.json()["error"]["details"], json!({"field": field, "reason": "unknown_field"}));
    }
    let reply = send(
        &h,
        Method::PATCH,
        &path,
        &token,
        Some(json!({"name": "Itaú PJ", "agency": null, "active": false, "type": "savings", "bank_code": "341"})),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", text(&reply));
    let updated = reply.json();
    assert_eq!(updated["name"], "Itaú PJ");
    assert_eq!(updated["type"], "savings");
    assert_eq!(updated["bank_id"], ITAU);
    assert_eq!(updated["bank"], json!({"code": "341", "name": "ITAÚ UNIBANCO S.A."}));
    assert_eq!(updated["active"], false);
    assert_eq!(updated["balance"], "100.00", "the opening balance stays");
    assert_eq!(updated["updated_via"], "api");
    assert_eq!(
        count(
            &h,
            "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = 'financial_accounts.update'",
            account["id"].as_str().unwrap()
        )
        .await,
        3,
        "the two PATCHes whose fields were all dropped, and this one"
    );
    let bad = send(&h, Method::PATCH, &path, &token, Some(json!({"bank_code": "abc"}))).await;
    assert_eq!(bad.status, 422);
    assert_eq!(bad.json()["error"]["details"]["field"], "bank_code");
}

#[tokio::test]
async fn adjust_balance_creates_one_auto_created_transaction() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let account = create_account(&h, &token, ACME_COMPANY, "Itaú", Some("130.00")).await;
    let id = account["id"].as_str().unwrap().to_string();
    let credit = category(&h, ACME_COMPANY, "credit", "Ajustes (entrada)").await;
    let debit = category(&h, ACME_COMPANY, "debit", "Ajustes (saída)").await;
    let path = format!("/v1/financial-accounts/{id}/adjust-balance");
    let body = json!({"target_balance": "200.00", "category_id": credit, "occurred_at": "2026-05-31"});
    let reply = send(&h, Method::POST, &path, &token, Some(body)).await;
    assert_eq!(reply.status, 201, "{}", text(&reply));
    let adjustment = reply.json();
    let tx_id = adjustment["transaction_id"].as_str().unwrap().to_string();
    assert_eq!(
        adjustment,
        json!({"transaction_id": tx_id, "difference": "70.00", "previous_balance": "130.00", "new_balance": "200.00"})
    );
    assert_eq!(reply.header("location"), Some(format!("/v1/financial-transactions/{tx_id}").as_str()));
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM financial_transactions WHERE financial_account_id = $1", &id).await,
        1,
        "exactly one transaction"
    );
    let tx = send(&h, Method::GET, &format!("/v1/financial-transactions/{tx_id}"), &token, None).await.json();
    assert_eq!(tx["auto_created"], true);
    assert_eq!(tx["type"], "credit");
    assert_eq!(tx["amount"], "70.00");
    assert_eq!(tx["description"], "Ajuste de saldo");
    assert_eq!(tx["occurred_at"], "2026-05-31");
    assert_eq!(tx["category_id"], credit.as_str());
    assert_eq!(balance(&h, &token, &id).await, "200.00");

    // Down: a debit category is needed; the credit one is a type mismatch.
    let wrong =
        send(&h, Method::POST, &path, &token, Some(json!({"target_balance": "-5.00", "category_id": credit}))).await;
    assert_eq!(wrong.status, 422, "{}", text(&wrong));
    assert_eq!(wrong.json()["error"]["details"]["reason"], "type_mismatch");
    let down = send(
        &h,
        Method::POST,
        &path,
        &token,
        Some(json!({"target_balance": "-5.00", "category_id": debit, "description": "Conferência"})),
    )
    .await;
    assert_eq!(down.status, 201, "{}", text(&down));
    assert_eq!(down.json()["difference"], "-205.00");
    assert_eq!(down.json()["new_balance"], "-5.00");
    let tx = send(
        &h,
        Method::GET,
        &format!("/v1/financial-transactions/{}", down.json()["transaction_id"].as_str().unwrap()),
        &token,
        None,
    )
    .await
    .json();
    assert_eq!(
        (tx["type"].as_str(), tx["amount"].as_str(), tx["description"].as_str()),
        (Some("debit"), Some("205.00"), Some("Conferência"))
    );
    let today = kobana_finance_mcp::clock::now_rfc3339()[..10].to_string();
    assert_eq!(tx["occurred_at"], today.as_str(), "occurred_at defaults to today (UTC)");

    // Already there: no_change, and nothing is written.
    let same =
        send(&h, Method::POST, &path, &token, Some(json!({"target_balance": "-5.00", "category_id": debit}))).await;
    assert_eq!(same.status, 422);
    assert_eq!(same.json()["error"]["details"]["reason"], "no_change");
    assert_eq!(count(&h, "SELECT COUNT(*) FROM financial_transactions WHERE financial_account_id = $1", &id).await, 2);

    // Validation and references.
    let bad = send(&h, Method::POST, &path, &token, Some(json!({"target_balance": "1", "category_id": debit}))).await;
    assert_eq!(bad.status, 422);
    assert_eq!(bad.json()["error"]["details"]["field"], "target_balance");
    let missing = send(&h, Method::POST, &path, &token, Some(json!({"target_balance": "1.00"}))).await;
    assert_eq!(missing.json()["error"]["details"], json!({"field": "category_id", "reason": "required"}));
    let other_company = category(&h, ACME_SERVICES, "credit", "Outra").await;
    let reply =
        send(&h, Method::POST, &path, &token, Some(json!({"target_balance": "10.00", "category_id": other_company})))
            .await;
    assert_eq!(reply.status, 422);
    assert_eq!(reply.json()["error"]["details"]["reason"], "company_mismatch");

    // The company's closed period applies to the adjustment's date.
    close_period(&h, &token, ACME_COMPANY, "2026-06-30").await;
    let closed = send(
        &h,
        Method::POST,
        &path,
        &token,
        Some(json!({"target_balance": "10.00", "category_id": credit, "occurred_at": "2026-06-30"})),
    )
    .await;
    assert_eq!(closed.status, 422);
    assert_eq!(closed.json()["error"]["details"]["reason"], "period_closed");
    assert_eq!(
        count(
            &h,
            "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = 'financial_accounts.adjust_balance'",
            &id
        )
        .await,
        2
    );
}

#[tokio::test]
async fn adjust_balance_is_serialised_per_account() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let account = create_account(&h, &token, ACME_COMPANY, "Itaú", Some("10.00")).await;
    let id = account["id"].as_str().unwrap().to_string();
    let credit = category(&h, ACME_COMPANY, "credit", "Ajustes").await;
    let path = format!("/v1/financial-accounts/{id}/adjust-balance");
    let request =
        || rest(Method::POST, &path, &token, Some(json!({"target_balance": "100.00", "category_id": credit}))).build();
    let (a, b, c) = tokio::join!(h.send(request()), h.send(request()), h.send(request()));
    let mut statuses = [a.status.as_u16(), b.status.as_u16(), c.status.as_u16()];
    statuses.sort();
    assert_eq!(statuses, [201, 422, 422], "one adjustment, then no_change: {} {} {}", text(&a), text(&b), text(&c));
    assert_eq!(balance(&h, &token, &id).await, "100.00", "never adjusted twice from the same balance");
    assert_eq!(count(&h, "SELECT COUNT(*) FROM financial_transactions WHERE financial_account_id = $1", &id).await, 1);
}

#[tokio::test]
async fn adjust_balance_is_idempotent_with_a_key() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let account = create_account(&h, &token, ACME_COMPANY, "Itaú", None).await;
    let id = account["id"].as_str().unwrap().to_string();
    let credit = category(&h, ACME_COMPANY, "credit", "Ajustes").await;
    let path = format!("/v1/financial-accounts/{id}/adjust-balance");
    let body = json!({"target_balance": "50.00", "category_id": credit, "occurred_at": "2026-05-01"});
    let first = h
        .send(rest(Method::POST, &path, &token, Some(body.clone())).header("x-idempotency-key", "adj-1").build())
        .await;
    assert_eq!(first.status, 201, "{}", text(&first));
    let again =
        h.send(rest(Method::POST, &path, &token, Some(body)).header("x-idempotency-key", "adj-1").build()).await;
    assert_eq!(again.status, 201);
    assert_eq!(again.header("x-idempotency-replayed"), Some("true"));
    assert_eq!(again.json(), first.json());
    assert_eq!(again.header("location"), first.header("location"));
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM financial_transactions WHERE financial_account_id = $1", &id).await,
        1,
        "a retried adjustment moves money once"
    );
    let other = h
        .send(
            rest(Method::POST, &path, &token, Some(json!({"target_balance": "60.00", "category_id": credit})))
                .header("x-idempotency-key", "adj-1")
                .build(),
        )
        .await;
    assert_eq!(other.status, 409);
    assert_eq!(other.json()["error"]["code"], "conflict");
    assert_eq!(other.json()["error"]["details"]["reason"], "idempotency_key_reused");
}

#[tokio::test]
async fn delete_of_a_used_account_is_in_use_with_the_usage() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let used = create_account(&h, &token, ACME_COMPANY, "Usada", None).await;
    let used_id = used["id"].as_str().unwrap().to_string();
    post_transaction(&h, &token, ACME_COMPANY, &used_id, "10.00", "credit", false).await;
    post_transaction(&h, &token, ACME_COMPANY, &used_id, "1.00", "debit", true).await;
    for (kind, column) in [
        ("payable", "expected_account_id"),
        ("receivable", "financial_account_id"),
        ("receivable", "expected_account_id"),
    ] {
        sql::query(format!(
            "INSERT INTO billings (id, workspace_id, company_id, kind, description, amount_cents, due_date, competence_date, billing_type,
                                   status, {column}, created_at, updated_at, created_via, updated_via)
             VALUES ($1, $2, $3, $4, 'Conta', 1000, '2026-06-10', '2026-06-10', 'normal', 'pending', $5,
                     '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', 'system', 'system')"
        ))
        .bind(uuid::Uuid::new_v4().to_string())
        .bind(DEMO_WORKSPACE_ACME)
        .bind(ACME_COMPANY)
        .bind(kind)
        .bind(&used_id)
        .execute(&h.state.db)
        .await
        .unwrap();
    }
    let path = format!("/v1/financial-accounts/{used_id}");
    let reply = send(&h, Method::DELETE, &path, &token, None).await;
    assert_eq!(reply.status, 422, "{}", text(&reply));
    assert_eq!(reply.json()["error"]["code"], "unprocessable_entity");
    assert_eq!(
        reply.json()["error"]["details"],
        json!({"reason": "in_use", "usage": {"transactions": 2, "payables": 1, "receivables": 2}})
    );
    assert_eq!(send(&h, Method::GET, &path, &token, None).await.status, 200, "still there");
}

#[tokio::test]
async fn without_an_opening_balance_an_account_starts_at_zero_and_may_start_below() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    assert_eq!(create_account(&h, &token, ACME_COMPANY, "Caixa", None).await["balance"], "0.00");
    assert_eq!(create_account(&h, &token, ACME_COMPANY, "Cheque", Some("-20.5")).await["balance"], "-20.50");
}

#[tokio::test]
async fn the_company_of_an_account_is_of_the_callers_workspace() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    for company in [BETA_COMPANY, MISSING] {
        let body = json!({"company_id": company, "name": "Conta", "type": "checking"});
        let reply = send(&h, Method::POST, "/v1/financial-accounts", &token, Some(body)).await;
        assert_eq!(reply.status, 422, "{}", text(&reply));
        assert_eq!(reply.json()["error"]["details"], json!({"field": "company_id", "reason": "invalid_reference"}));
    }
}

#[tokio::test]
async fn another_workspaces_account_cannot_be_adjusted() {
    let h = Harness::new().await;
    let theirs = create_account(&h, &h.api_token(DEMO_BETA_OWNER), BETA_COMPANY, "Conta Beta", Some("1.00")).await;
    let credit = category(&h, ACME_COMPANY, "credit", "Ajustes").await;
    let path = format!("/v1/financial-accounts/{}/adjust-balance", theirs["id"].as_str().unwrap());
    let body = json!({"target_balance": "9.00", "category_id": credit});
    let reply = send(&h, Method::POST, &path, &h.api_token(DEMO_OWNER), Some(body)).await;
    assert_eq!(reply.status, 404);
    assert_eq!(reply.json()["error"]["code"], "not_found");
}

#[tokio::test]
async fn openapi_shows_the_balance_on_an_account_not_in_the_list() {
    let h = Harness::new().await;
    let doc = crate::records::openapi(&h).await;
    let list = crate::records::response_schema(&doc, "/v1/financial-accounts", "get", 200);
    assert!(list["properties"]["data"]["items"]["properties"]["balance"].is_null(), "the list schema has no balance");
    let detail = crate::records::response_schema(&doc, "/v1/financial-accounts/{id}", "get", 200);
    assert!(detail["properties"]["balance"].is_object(), "{detail}");
}
