//! `/v1/payables`: the status machine, settlement, series, apportionment, closed
//! periods, isolation, scopes and roles — on SQLite and PostgreSQL. The same scenarios
//! run for receivables (tests/receivables.rs).

use crate::billings;
use crate::common;

use billings::PAYABLES;

billing_tests!(PAYABLES);

#[tokio::test]
async fn payment_methods_of_payables_include_utility_and_tribute() {
    let h = common::Harness::new().await;
    let created = billings::create(
        &h,
        PAYABLES,
        billings::with(billings::body(), serde_json::json!({"payment_method_kind": "tribute"})),
    )
    .await;
    assert_eq!(created["payment_method_kind"], "tribute");
}
