//! Scenarios shared by `/v1/payables` and `/v1/receivables`: every rule runs on both
//! kinds (tests/payables.rs and tests/receivables.rs instantiate them with
//! `billing_tests!`).
#![allow(dead_code)]

use http::Method;
use serde_json::{json, Value};

use crate::common::*;

/// A fresh harness whose workspaces have the approval gate off. These scenarios are the
/// lists', the totals' and the status machine's rules, the same for both kinds, on
/// official bills; the gate itself is tested in tests/approval_gate.rs.
pub async fn ungated() -> Harness {
    ungate(Harness::new().await).await
}

/// The harness `h` with the approval gate off in its workspaces.
pub async fn ungate(h: Harness) -> Harness {
    for workspace in [DEMO_WORKSPACE_ACME, DEMO_WORKSPACE_BETA] {
        kobana_finance_mcp::ops::bills::approval::set_gate(&h.state.db, workspace, false).await.unwrap();
    }
    h
}

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

mod lifecycle;
pub use lifecycle::*;
mod rules;
pub use rules::*;
mod reads;
pub use reads::*;

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
            a_patch_with_a_status_moves_it_as_the_actions_do,
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
            dates_may_be_sent_as_date_times,
            a_list_row_counts_the_parts_the_record_holds,
            payment_date_sorts_the_unsettled_first,
            operation_kind_is_a_payables_field,
            payment_coordinates_are_a_payables_checked_fields,
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
