//! Money moves only as the person confirmed it (SPEC §5.2): a confirmation binds what
//! its question showed — the records as they were, a payment's destination and source
//! — and what the question says is safe to read and complete. Each scenario is run
//! through the tool itself and through find mode's runner, on both backends.
//!
//! The race each scenario plays: the agent asks, the question goes to the person, and
//! before they answer the record changes (an ordinary, unconfirmed write); the person's
//! "yes" to the old question then runs nothing and asks again with the new values.

use http::Method;
use serde_json::{json, Value};

use kobana_finance_mcp::domain::money::Cents;
use kobana_finance_mcp::ops::bills::approval;

use crate::common::gateway::*;
use crate::common::*;
use crate::tools_catalogue::{confirmable, through_runner};

mod gates;
mod questions;
mod totals;

/// How an agent reaches a confirmed tool: by its name, or through find mode's runner.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Door {
    Tool,
    Runner,
}

pub(crate) const DOORS: [Door; 2] = [Door::Tool, Door::Runner];

fn request(door: Door, tool: &str, arguments: &Value, extra: Value) -> Mcp {
    let request = confirmable(tool, arguments.clone(), extra);
    match door {
        Door::Tool => request,
        Door::Runner => through_runner(request),
    }
}

/// A confirmed tool's call, answered by the person with `answer` (none: the first call).
pub(crate) async fn call_as(
    h: &Harness,
    token: &str,
    door: Door,
    tool: &str,
    arguments: &Value,
    extra: Value,
) -> Value {
    let reply = h.send(request(door, tool, arguments, extra).bearer(token).build()).await;
    assert_eq!(reply.status, 200, "{tool} via {door:?}: {}", text(&reply));
    reply.result()
}

/// The question of an `input_required` result, and its `requestState`.
pub(crate) fn asked(result: &Value) -> (String, Value) {
    assert_eq!(result["resultType"], "input_required", "{result}");
    let message = result["inputRequests"]["confirm"]["params"]["message"].as_str().unwrap().to_string();
    (message, result["requestState"].clone())
}

/// The first call of a confirmed tool: its question and state.
pub(crate) async fn ask(h: &Harness, token: &str, door: Door, tool: &str, arguments: &Value) -> (String, Value) {
    asked(&call_as(h, token, door, tool, arguments, json!({})).await)
}

/// The person's "yes" to the question whose state is `state`.
pub(crate) async fn accept(
    h: &Harness,
    token: &str,
    door: Door,
    tool: &str,
    arguments: &Value,
    state: &Value,
) -> Value {
    let yes = json!({"requestState": state, "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}});
    call_as(h, token, door, tool, arguments, yes).await
}

/// Asks `tool`, lets `change` run before the person answers, then answers yes: the
/// answer must be the question again, naming every one of `now` (the changed values),
/// with a new state. Returns the first question, the new one and its state.
async fn changed_before_the_answer(
    h: &Harness,
    token: &str,
    door: Door,
    tool: &str,
    arguments: &Value,
    change: impl AsyncFnOnce(),
    now: &[&str],
) -> (String, String, Value) {
    let (first, state) = ask(h, token, door, tool, arguments).await;
    change().await;
    let again = accept(h, token, door, tool, arguments, &state).await;
    let (second, new_state) = asked(&again);
    assert_ne!(new_state, state, "{tool} via {door:?}: a new state");
    assert_ne!(second, first, "{tool} via {door:?}: the question names what changed");
    for part in now {
        assert!(second.contains(part), "{tool} via {door:?}: {part:?} in {second}");
    }
    (first, second, new_state)
}

async fn patch(h: &Harness, token: &str, path: &str, body: Value) {
    let reply = send(h, Method::PATCH, path, token, Some(body)).await;
    assert_eq!(reply.status, 200, "PATCH {path}: {}", text(&reply));
}

async fn get(h: &Harness, token: &str, path: &str) -> Value {
    let reply = send(h, Method::GET, path, token, None).await;
    assert_eq!(reply.status, 200, "GET {path}: {}", text(&reply));
    reply.json()
}

async fn balance(h: &Harness, token: &str, account: &str) -> String {
    get(h, token, &format!("/v1/financial-accounts/{account}")).await["balance"].as_str().unwrap().to_string()
}

/// A CPF with right check digits (the payee an attacker names).
const MALLORY_CPF: &str = "52998224725";

#[tokio::test]
async fn a_payment_sent_to_the_bank_runs_on_the_values_the_person_saw_never_on_changed_ones() {
    for door in DOORS {
        let (h, standin) = with_gateway().await;
        let api = h.api_token(DEMO_OWNER);
        let mcp = h.token(DEMO_OWNER);
        // The gate off: the change below keeps the payable official, so only the
        // confirmation stands between it and the bank.
        approval::set_gate(&h.state.db, DEMO_WORKSPACE_ACME, false).await.unwrap();
        let bill = ACME_SERVICE_CHARGE_DECEMBER;
        let arguments = json!({"id": bill});
        let path = format!("/v1/payables/{bill}");
        let (first, second, state) = changed_before_the_answer(
            &h,
            &mcp,
            door,
            "finance_payables_send_to_bank",
            &arguments,
            async || {
                let mallory = json!({"amount": "85000.00", "bank_code": "001", "agency": "1111", "account_number": "99999",
                    "account_digit": "9", "beneficiary_name": "Mallory", "beneficiary_document": MALLORY_CPF});
                patch(&h, &api, &path, mallory).await;
            },
            &["R$ 85.000,00", "“Mallory”", "CPF ***.982.247-**", "bank 001", "branch 1111", "account ***999-9"],
        )
        .await;
        for part in ["R$ 850,00", "“Imobiliária Central Ltda”", "CNPJ 45.997.418/0001-53", "bank 341", "branch 0912"]
        {
            assert!(first.contains(part), "{door:?}: {part} in {first}");
        }
        assert!(!second.contains("R$ 850,00 "), "{door:?}: {second}");
        assert_eq!(standin.payments_made(), 0, "{door:?}: the yes to the old question paid nothing");
        assert!(get(&h, &api, &path).await["kobana_status"].is_null());
        // The yes to the question that named the new values pays them.
        let done = accept(&h, &mcp, door, "finance_payables_send_to_bank", &arguments, &state).await;
        assert_eq!(done.get("isError"), None, "{door:?}: {done}");
        assert_eq!(standin.payments_made(), 1);
        let paid = &standin.payments()[0];
        assert_eq!(paid.amount, Cents(8_500_000));
        assert_eq!(paid.payee().name.as_deref(), Some("Mallory"));
    }
}

#[tokio::test]
async fn a_settle_records_the_amount_the_person_saw_never_a_changed_one() {
    for door in DOORS {
        let h = Harness::with_demo().await;
        let api = h.api_token(DEMO_OWNER);
        let mcp = h.token(DEMO_OWNER);
        let bill = ACME_SUPPLIES_PENDING;
        let before = balance(&h, &api, ACME_CHECKING_ACCOUNT).await;
        let arguments =
            json!({"id": bill, "payment_date": "2026-11-20", "financial_account_id": ACME_CHECKING_ACCOUNT});
        let path = format!("/v1/payables/{bill}");
        let (first, _, _) = changed_before_the_answer(
            &h,
            &mcp,
            door,
            "finance_payables_settle",
            &arguments,
            async || patch(&h, &api, &path, json!({"amount": "99999.00"})).await,
            &["R$ 99.999,00"],
        )
        .await;
        assert!(first.contains("R$ 150,00"), "{first}");
        assert_eq!(balance(&h, &api, ACME_CHECKING_ACCOUNT).await, before, "{door:?}: nothing recorded");
        assert_eq!(get(&h, &api, &path).await["status"], "pending");
    }
}

#[tokio::test]
async fn a_charge_bills_the_amount_the_person_saw_never_a_changed_one() {
    for door in DOORS {
        let (h, standin) = with_gateway().await;
        let api = h.api_token(DEMO_OWNER);
        let mcp = h.token(DEMO_OWNER);
        let sale = ACME_SALE_PENDING;
        let path = format!("/v1/receivables/{sale}");
        patch(&h, &api, &path, json!({"expected_account_id": ACME_CHECKING_ACCOUNT})).await;
        let arguments = json!({"id": sale, "kind": "pix"});
        changed_before_the_answer(
            &h,
            &mcp,
            door,
            "finance_receivables_charge",
            &arguments,
            async || patch(&h, &api, &path, json!({"amount": "1.00"})).await,
            &["R$ 1,00"],
        )
        .await;
        assert_eq!(standin.charges_made(), 0, "{door:?}");
    }
}

#[tokio::test]
async fn a_cancel_and_a_delete_act_on_the_bill_the_person_saw() {
    for door in DOORS {
        let h = Harness::with_demo().await;
        let api = h.api_token(DEMO_OWNER);
        let mcp = h.token(DEMO_OWNER);
        let bill = ACME_SUPPLIES_PENDING;
        let path = format!("/v1/payables/{bill}");
        let arguments = json!({"id": bill});
        changed_before_the_answer(
            &h,
            &mcp,
            door,
            "finance_payables_cancel",
            &arguments,
            async || patch(&h, &api, &path, json!({"description": "Outra conta"})).await,
            &["“Outra conta”"],
        )
        .await;
        assert_eq!(get(&h, &api, &path).await["status"], "pending", "{door:?}");
        changed_before_the_answer(
            &h,
            &mcp,
            door,
            "finance_payables_delete",
            &arguments,
            async || patch(&h, &api, &path, json!({"amount": "7000.00"})).await,
            &["R$ 7.000,00"],
        )
        .await;
        assert_eq!(get(&h, &api, &path).await["amount"], "7000.00", "{door:?}: not deleted");
    }
}

/// A posted debit of R$ 150,00 in the checking account: what paid the stationery bill.
async fn stationery_debit(h: &Harness, token: &str) -> String {
    let body = json!({"company_id": ACME_COMPANY, "financial_account_id": ACME_CHECKING_ACCOUNT,
        "description": "PIX PAPELARIA", "amount": "150.00", "occurred_at": "2026-11-21", "type": "debit"});
    id(&create_at(h, "/v1/financial-transactions", token, body).await)
}

#[tokio::test]
async fn a_reconciliation_is_made_and_undone_on_the_members_the_person_saw() {
    for door in DOORS {
        let h = Harness::with_demo().await;
        let api = h.api_token(DEMO_OWNER);
        let mcp = h.token(DEMO_OWNER);
        let debit = stationery_debit(&h, &api).await;
        let arguments =
            json!({"billings": [{"kind": "payable", "id": ACME_SUPPLIES_PENDING}], "transaction_ids": [debit]});
        let transaction = format!("/v1/financial-transactions/{debit}");
        changed_before_the_answer(
            &h,
            &mcp,
            door,
            "finance_reconciliations_create",
            &arguments,
            async || patch(&h, &api, &transaction, json!({"description": "PIX MALLORY"})).await,
            &["“PIX MALLORY”"],
        )
        .await;
        let bill = get(&h, &api, &format!("/v1/payables/{ACME_SUPPLIES_PENDING}")).await;
        assert_eq!(bill["status"], "pending", "{door:?}: not reconciled");

        let made = create_at(&h, "/v1/reconciliations", &api, arguments.clone()).await;
        let vendor = bill["person_id"].as_str().unwrap().to_string();
        let vendor_path = format!("/v1/people/{vendor}");
        changed_before_the_answer(
            &h,
            &mcp,
            door,
            "finance_reconciliations_delete",
            &json!({"id": id(&made)}),
            async || patch(&h, &api, &vendor_path, json!({"name": "Papelaria Trocada"})).await,
            &["“Papelaria Trocada”"],
        )
        .await;
        assert_eq!(get(&h, &api, &format!("/v1/reconciliations/{}", id(&made))).await["id"], made["id"]);
    }
}

#[tokio::test]
async fn a_transfer_and_a_balance_adjustment_move_money_between_the_accounts_the_person_saw() {
    for door in DOORS {
        let h = Harness::with_demo().await;
        let api = h.api_token(DEMO_OWNER);
        let mcp = h.token(DEMO_OWNER);
        let before = balance(&h, &api, ACME_CASH_ACCOUNT).await;
        let arguments = json!({"from_account_id": ACME_CHECKING_ACCOUNT, "to_account_id": ACME_CASH_ACCOUNT,
            "amount": "300.00", "occurred_at": "2026-12-01", "description": "Troco do caixa"});
        let cash = format!("/v1/financial-accounts/{ACME_CASH_ACCOUNT}");
        changed_before_the_answer(
            &h,
            &mcp,
            door,
            "finance_transfers_create",
            &arguments,
            async || patch(&h, &api, &cash, json!({"name": "Caixa do Mallory"})).await,
            &["“Caixa do Mallory”"],
        )
        .await;
        assert_eq!(balance(&h, &api, ACME_CASH_ACCOUNT).await, before, "{door:?}: nothing moved");

        // The balance the question started from moved: the adjustment would record
        // another amount than the one the person read.
        let cents = |text: String| Cents::parse(&text, true).unwrap();
        let start = cents(balance(&h, &api, ACME_CASH_ACCOUNT).await);
        let target = Cents(start.0 + 100_000);
        let arguments = json!({"id": ACME_CASH_ACCOUNT, "target_balance": format!("{}.{:02}", target.0 / 100, target.0 % 100),
            "category_id": ACME_SALES_CATEGORY});
        let moved = Cents(start.0 + 20_000).brl();
        let (first, second, _) = changed_before_the_answer(
            &h,
            &mcp,
            door,
            "finance_accounts_adjust_balance",
            &arguments,
            async || {
                let body = json!({"company_id": ACME_COMPANY, "financial_account_id": ACME_CASH_ACCOUNT,
                    "description": "Venda no balcão", "amount": "200.00", "occurred_at": "2026-12-02", "type": "credit"});
                create_at(&h, "/v1/financial-transactions", &api, body).await;
            },
            &[&moved, &Cents(80_000).brl()],
        )
        .await;
        assert!(first.contains(&start.brl()) && first.contains(&Cents(100_000).brl()), "{first}");
        assert!(!second.contains(&format!("from {}", start.brl())), "{second}");
    }
}

/// What a question binds is what the operation depends on, no more: a movement posted in
/// the source account meanwhile (its balance moves) does not ask a payment again.
#[tokio::test]
async fn a_movement_elsewhere_in_the_source_account_does_not_ask_again() {
    let (h, standin) = with_gateway().await;
    let api = h.api_token(DEMO_OWNER);
    let mcp = h.token(DEMO_OWNER);
    let arguments = json!({"id": ACME_SERVICE_CHARGE_DECEMBER});
    let (_, state) = ask(&h, &mcp, Door::Tool, "finance_payables_send_to_bank", &arguments).await;
    let body = json!({"company_id": ACME_COMPANY, "financial_account_id": ACME_CHECKING_ACCOUNT,
        "description": "Tarifa bancária", "amount": "12.00", "occurred_at": "2026-12-03", "type": "debit"});
    create_at(&h, "/v1/financial-transactions", &api, body).await;
    let done = accept(&h, &mcp, Door::Tool, "finance_payables_send_to_bank", &arguments, &state).await;
    assert_eq!(done["resultType"], "complete", "{done}");
    assert_eq!(standin.payments_made(), 1);
}
