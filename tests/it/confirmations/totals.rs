//! Totals that cannot overflow: a workspace's books hold at most 10^17 cents in all their
//! amounts together, so no balance, aggregate, cash flow or report can pass what a
//! 64-bit count of cents holds; a write that would pass it is refused (422), never a 500
//! and never a total silently cut.

use http::Method;
use serde_json::{json, Value};

use crate::common::*;

/// The largest amount a record takes: 13 digits and 2 decimals.
const LARGEST: &str = "9999999999999.99";

/// Cents of a wire amount (`"-12.50"`), of any size.
fn cents(text: &Value) -> i64 {
    text.as_str().unwrap().replace('.', "").parse().unwrap()
}

async fn read(h: &Harness, token: &str, path: &str) -> Value {
    let reply = send(h, Method::GET, path, token, None).await;
    assert_eq!(reply.status, 200, "GET {path}: {}", text(&reply));
    reply.json()
}

#[tokio::test]
async fn no_total_passes_what_the_books_hold_and_the_write_that_would_is_refused() {
    let h = Harness::with_demo().await;
    let api = h.api_token(DEMO_OWNER);
    let account = format!("/v1/financial-accounts/{ACME_CASH_ACCOUNT}");
    let opening = cents(&read(&h, &api, &account).await["balance"]);
    let movement = |n: usize| {
        json!({"company_id": ACME_COMPANY, "financial_account_id": ACME_CASH_ACCOUNT, "description": format!("Depósito grande {n}"),
            "amount": LARGEST, "occurred_at": "2026-12-01", "type": "credit"})
    };
    let mut made = 0;
    let refused = loop {
        let reply = send(&h, Method::POST, "/v1/financial-transactions", &api, Some(movement(made))).await;
        if reply.status != 201 {
            break reply;
        }
        made += 1;
        assert!(made <= 100, "100 of the largest amounts pass the bound: none was refused");
    };
    assert!(made >= 99, "refused after {made}: {}", text(&refused));
    assert_eq!((refused.status.as_u16(), details(&refused)), (422, pair("amount", "total_out_of_range")));
    // The refused write left nothing: the count is what was made, and a bill of the same
    // size is refused as well (it adds to the same books).
    let count_made = count(
        &h,
        "SELECT COUNT(*) FROM financial_transactions WHERE description LIKE 'Depósito grande %' AND workspace_id = $1",
        DEMO_WORKSPACE_ACME,
    )
    .await;
    assert_eq!(count_made, made as i64);
    let bill = json!({"company_id": ACME_COMPANY, "description": "Enorme", "amount": LARGEST, "due_date": "2026-12-20",
        "person_id": ACME_LANDLORD});
    let reply = send(&h, Method::POST, "/v1/payables", &api, Some(bill)).await;
    assert_eq!(
        (reply.status.as_u16(), details(&reply)),
        (422, pair("amount", "total_out_of_range")),
        "{}",
        text(&reply)
    );

    // Every read answers the whole figure.
    let largest = cents(&json!(LARGEST));
    let expected = opening + largest * made as i64;
    let balance = read(&h, &api, &account).await;
    assert_eq!(cents(&balance["balance"]), expected);
    let aggregates =
        read(&h, &api, "/v1/financial-transactions/aggregates?start_date=2026-12-01&end_date=2026-12-31").await;
    assert!(cents(&aggregates["credit"]) >= largest * made as i64, "{aggregates}");
    let flow =
        read(&h, &api, &format!("/v1/cash-flow?from=2026-12-01&to=2026-12-31&account_id={ACME_CASH_ACCOUNT}")).await;
    assert!(flow.to_string().contains(&format!("{}.{:02}", expected / 100, expected % 100)), "{flow}");
    let statement = read(&h, &api, "/v1/reports/income-statement?from=2026-12-01&to=2026-12-31&basis=cash").await;
    assert!(!statement.to_string().contains("92233720368547758"), "{statement}");
    // A workspace apart has books of its own.
    let beta = h.api_token(DEMO_BETA_OWNER);
    let theirs = json!({"company_id": BETA_COMPANY, "financial_account_id": BETA_ACCOUNT, "description": "Aporte",
        "amount": LARGEST, "occurred_at": "2026-12-01", "type": "credit"});
    assert_eq!(send(&h, Method::POST, "/v1/financial-transactions", &beta, Some(theirs)).await.status, 201);
    assert_report_totals_agree(&h).await;
}
