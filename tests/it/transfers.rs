//! `/v1/transfers`: a linked debit and credit written at once, idempotent, moving
//! balances only when realised, of the caller's workspace only, under the transactions'
//! scopes — on SQLite and PostgreSQL.

use crate::common::*;
use crate::transactions::{account, balance, details, setup, Setup};
use http::Method;
use serde_json::json;

#[tokio::test]
async fn transfer_creates_a_linked_debit_and_credit_atomically() {
    let Setup { h, token, account } = setup().await;
    let to = self::account(&h, &token, ACME_SERVICES, "Serviços (outra empresa)").await;
    let body = json!({"from_account_id": account, "to_account_id": to, "amount": "250.75", "occurred_at": "2026-05-20",
                      "description": "Transferência entre empresas", "notes": "mútuo", "competence_date": "2026-05-01"});
    let reply = send(&h, Method::POST, "/v1/transfers", &token, Some(body.clone())).await;
    assert_eq!(reply.status, 201, "{}", text(&reply));
    let transfer = reply.json();
    let transfer_id = transfer["transfer_id"].as_str().unwrap().to_string();
    assert_eq!(reply.header("location"), Some(format!("/v1/transfers/{transfer_id}").as_str()));
    assert_eq!(transfer["amount"], "250.75");
    assert_eq!(transfer["from_account_id"], account.as_str());
    assert_eq!(transfer["to_account_id"], to.as_str());
    assert_eq!(transfer["is_pending"], false);
    assert_eq!(transfer["notes"], "mútuo");
    assert_eq!(transfer["competence_date"], "2026-05-01");
    let got = send(&h, Method::GET, &format!("/v1/transfers/{transfer_id}"), &token, None).await;
    assert_eq!(got.status, 200);
    assert_eq!(got.json(), transfer);
    let debit = send(
        &h,
        Method::GET,
        &format!("/v1/financial-transactions/{}", transfer["from_transaction_id"].as_str().unwrap()),
        &token,
        None,
    )
    .await
    .json();
    let credit = send(
        &h,
        Method::GET,
        &format!("/v1/financial-transactions/{}", transfer["to_transaction_id"].as_str().unwrap()),
        &token,
        None,
    )
    .await
    .json();
    assert_eq!((debit["type"].as_str(), credit["type"].as_str()), (Some("debit"), Some("credit")));
    assert_eq!(
        (debit["transfer_id"].as_str(), credit["transfer_id"].as_str()),
        (Some(transfer_id.as_str()), Some(transfer_id.as_str()))
    );
    assert_eq!(
        (debit["company_id"].as_str(), credit["company_id"].as_str()),
        (Some(ACME_COMPANY), Some(ACME_SERVICES)),
        "each leg in its account's company"
    );
    assert_eq!(balance(&h, &token, &account).await, "-250.75");
    assert_eq!(balance(&h, &token, &to).await, "250.75");
    assert_eq!(
        count(
            &h,
            "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = 'transfers.create'",
            &transfer_id
        )
        .await,
        1
    );
    // A leg's money cannot change alone.
    let leg = format!("/v1/financial-transactions/{}", credit["id"].as_str().unwrap());
    let reply = send(&h, Method::PATCH, &leg, &token, Some(json!({"amount": "1.00"}))).await;
    assert_eq!(details(&reply)["reason"], "transfer_leg");
    // Refusals leave nothing behind.
    let before =
        count(&h, "SELECT COUNT(*) FROM financial_transactions WHERE workspace_id = $1", DEMO_WORKSPACE_ACME).await;
    let mut same = body.clone();
    same["to_account_id"] = json!(account);
    let reply = send(&h, Method::POST, "/v1/transfers", &token, Some(same)).await;
    assert_eq!(reply.status, 422);
    assert_eq!(details(&reply), json!({"field": "to_account_id", "reason": "same_account"}));
    let beta_account = self::account(&h, &h.api_token(DEMO_BETA_OWNER), BETA_COMPANY, "Beta").await;
    let mut foreign = body.clone();
    foreign["to_account_id"] = json!(beta_account);
    let reply = send(&h, Method::POST, "/v1/transfers", &token, Some(foreign)).await;
    assert_eq!(reply.status, 422);
    assert_eq!(details(&reply), json!({"field": "to_account_id", "reason": "invalid_reference"}));
    assert_eq!(reply.json()["error"]["message"], "Financial account not found in this workspace");
    let mut bad = body.clone();
    bad["amount"] = json!("0.00");
    assert_eq!(send(&h, Method::POST, "/v1/transfers", &token, Some(bad)).await.status, 422);
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM financial_transactions WHERE workspace_id = $1", DEMO_WORKSPACE_ACME).await,
        before
    );
    // Deleting one leg deletes the pair.
    assert_eq!(send(&h, Method::DELETE, &leg, &token, None).await.status, 204);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM financial_transactions WHERE transfer_id = $1", &transfer_id).await, 0);
    assert_eq!(send(&h, Method::GET, &format!("/v1/transfers/{transfer_id}"), &token, None).await.status, 404);
    assert_eq!(balance(&h, &token, &account).await, "0.00");
    assert_eq!(balance(&h, &token, &to).await, "0.00");
}

#[tokio::test]
async fn transfers_are_idempotent_and_pending_transfers_do_not_move_balances() {
    let Setup { h, token, account } = setup().await;
    let to = self::account(&h, &token, ACME_COMPANY, "Caixa").await;
    let body = json!({"from_account_id": account, "to_account_id": to, "amount": "10.00", "occurred_at": "2026-05-20", "description": "Sangria", "is_pending": true});
    let first = h
        .send(
            rest(Method::POST, "/v1/transfers", &token, Some(body.clone())).header("x-idempotency-key", "tr-1").build(),
        )
        .await;
    assert_eq!(first.status, 201, "{}", text(&first));
    let again = h
        .send(rest(Method::POST, "/v1/transfers", &token, Some(body)).header("x-idempotency-key", "tr-1").build())
        .await;
    assert_eq!(again.header("x-idempotency-replayed"), Some("true"));
    assert_eq!(again.json(), first.json());
    assert_eq!(again.header("location"), first.header("location"));
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM financial_transactions WHERE workspace_id = $1", DEMO_WORKSPACE_ACME).await,
        2
    );
    assert_eq!(balance(&h, &token, &account).await, "0.00");
    assert_eq!(first.json()["is_pending"], true);
    assert_report_totals_agree(&h).await;
}

#[tokio::test]
async fn another_workspaces_transfer_is_not_found() {
    let h = Harness::new().await;
    let beta = h.api_token(DEMO_BETA_OWNER);
    let from = self::account(&h, &beta, BETA_COMPANY, "Beta").await;
    let to = self::account(&h, &beta, BETA_COMPANY, "Beta 2").await;
    let body = json!({"from_account_id": from, "to_account_id": to, "amount": "1.00", "occurred_at": "2026-05-10", "description": "Beta"});
    let transfer = send(&h, Method::POST, "/v1/transfers", &beta, Some(body)).await;
    assert_eq!(transfer.status, 201);
    let path = format!("/v1/transfers/{}", transfer.json()["transfer_id"].as_str().unwrap());
    assert_eq!(send(&h, Method::GET, &path, &h.api_token(DEMO_OWNER), None).await.status, 404);
    assert_eq!(send(&h, Method::GET, &path, &beta, None).await.status, 200);
}

#[tokio::test]
async fn a_transfer_needs_the_write_scope_of_transactions() {
    let Setup { h, account, .. } = setup().await;
    let read_only = v1_token(&h, DEMO_OWNER, "finance.transactions");
    let transfer = json!({"from_account_id": account, "to_account_id": account, "amount": "1.00", "occurred_at": "2026-05-10", "description": "x"});
    let reply = send(&h, Method::POST, "/v1/transfers", &read_only, Some(transfer)).await;
    assert_eq!(reply.json()["error"]["code"], "insufficient_scope");
}
