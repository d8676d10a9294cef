//! `/v1/receivables`: the same rules as payables, with the credit polarity (customer,
//! credit category, revenue center) and the `received` status — on SQLite and
//! PostgreSQL.

use crate::billings;
use crate::common;

use billings::RECEIVABLES;

billing_tests!(RECEIVABLES);

#[tokio::test]
async fn utility_and_tribute_are_payment_methods_of_payables_only() {
    let h = common::Harness::new().await;
    let reply = billings::post(
        &h,
        "/v1/receivables",
        Some(billings::with(billings::body(), serde_json::json!({"payment_method_kind": "utility"}))),
    )
    .await;
    assert_eq!(reply.status, 422);
    assert_eq!(reply.json()["error"]["details"]["field"], "payment_method_kind");
    // The receivables' schemas (OpenAPI and the MCP tools) do not offer them.
    assert_eq!(
        reply.json()["error"]["details"]["allowed"].as_array().map(|a| a.contains(&"utility".into())),
        Some(false)
    );
}
