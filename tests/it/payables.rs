//! `/v1/payables`: the status machine, settlement, series, apportionment, closed
//! periods, isolation, scopes and roles — on SQLite and PostgreSQL. The same scenarios
//! run for receivables (tests/receivables.rs).

use crate::billings;
use crate::common;

use billings::PAYABLES;

billing_tests!(PAYABLES;
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
    ids_sweep_every_id_in_order,
    openapi_lists_every_operation,
);

#[tokio::test]
async fn payment_methods_of_payables_include_utility_and_tribute() {
    let h = common::Harness::new().await;
    let created = billings::create(&h, PAYABLES, billings::with(billings::body(), serde_json::json!({"payment_method_kind": "tribute"}))).await;
    assert_eq!(created["payment_method_kind"], "tribute");
}
