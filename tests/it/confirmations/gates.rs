//! The gates between a record and the money it moves: a changed payee goes back to the
//! approval gate, the closed period holds every date a record is booked by, the bank's
//! hold on a payable holds, a payment the bank made is not undone by a reopen, and what a
//! confirmed tool can check is checked before the person is asked.

use http::Method;
use serde_json::{json, Value};

use kobana_finance_mcp::ops::bills::approval::{self, Decision};

use super::{accept, ask, Door, DOORS};
use crate::common::gateway::*;
use crate::common::*;
use crate::dispatch::{dispatch, from_checking, official, ted_coordinates};

async fn approval_of(h: &Harness, token: &str, id: &str) -> Value {
    let reply = send(h, Method::GET, &format!("/v1/payables/{id}"), token, None).await;
    assert_eq!(reply.status, 200, "{}", text(&reply));
    reply.json()["payment_approval"].clone()
}

async fn patch(h: &Harness, token: &str, id: &str, body: Value) -> Reply {
    send(h, Method::PATCH, &format!("/v1/payables/{id}"), token, Some(body)).await
}

#[tokio::test]
async fn a_changed_payee_or_amount_sends_an_approved_payable_back_for_approval() {
    let h = Harness::with_demo().await;
    let api = h.api_token(DEMO_OWNER);
    let mcp = h.token(DEMO_OWNER);
    // One made through a door waits, is approved by a person, then its coordinates change.
    let body = json!({"company_id": ACME_COMPANY, "description": "Frete", "amount": "1250.00", "due_date": "2026-12-20",
        "person_id": ACME_LANDLORD, "payment_method_kind": "ted", "bank_code": "341", "agency": "0001",
        "account_number": "12345", "account_digit": "6", "beneficiary_name": "Transportadora Rápida Ltda",
        "beneficiary_document": "11.222.333/0001-81"});
    let made = id(&create_at(&h, "/v1/payables", &api, body).await);
    assert_eq!(approval_of(&h, &api, &made).await, "pending_approval");
    approval::decide(&h.state.db, &made, &Decision::Approve).await.unwrap();
    assert_eq!(approval_of(&h, &api, &made).await, "creation_approved");

    // What does not touch the payee keeps the approval.
    assert_eq!(patch(&h, &api, &made, json!({"notes": "Frete da semana"})).await.status, 200);
    assert_eq!(approval_of(&h, &api, &made).await, "creation_approved");

    let changes = [
        json!({"account_number": "99999", "account_digit": "9"}),
        json!({"beneficiary_name": "Mallory", "beneficiary_document": "52998224725"}),
        json!({"amount": "1300.00"}),
        json!({"due_date": "2026-12-21"}),
    ];
    for change in changes {
        approval::decide(&h.state.db, &made, &Decision::Approve).await.ok();
        assert_eq!(approval_of(&h, &api, &made).await, "creation_approved");
        let reply = patch(&h, &api, &made, change.clone()).await;
        assert_eq!(reply.status, 200, "{}", text(&reply));
        assert_eq!(reply.json()["payment_approval"], "pending_approval", "{change}");
    }
    let audited = count(
        &h,
        "SELECT COUNT(*) FROM audit_events WHERE action = 'payables.approval_reset' AND target_id = $1",
        &made,
    )
    .await;
    assert_eq!(audited, 4);

    // An official demo payable changed through a tool: back to the gate, so it is not paid.
    let (h, standin) = with_gateway().await;
    let api = h.api_token(DEMO_OWNER);
    assert!(approval_of(&h, &api, ACME_SERVICE_CHARGE_DECEMBER).await.is_null());
    let arguments = json!({"id": ACME_SERVICE_CHARGE_DECEMBER, "account_number": "11111", "account_digit": "1"});
    let updated = h.send(call("finance_payables_update", arguments).bearer(&mcp).build()).await.result();
    assert_eq!(updated["structuredContent"]["payment_approval"], "pending_approval", "{updated}");
    let refused = dispatch(&h, &api, ACME_SERVICE_CHARGE_DECEMBER, "after-change").await;
    assert_eq!((refused.status.as_u16(), details(&refused)), (422, pair("payment_approval", "not_approved")));
    assert_eq!(standin.payments_made(), 0);
}

#[tokio::test]
async fn a_closed_period_holds_every_date_a_record_is_booked_by_competence_included() {
    let h = Harness::with_demo().await;
    let api = h.api_token(DEMO_OWNER);
    close_period(&h, &api, ACME_COMPANY, "2026-11-30").await;
    let closed = |reply: &Reply, field: &str| {
        assert_eq!((reply.status.as_u16(), details(reply)), (422, pair(field, "period_closed")), "{}", text(reply));
    };
    // A bill due in December booked in November.
    let bill = json!({"company_id": ACME_COMPANY, "description": "Serviço de novembro", "amount": "100.00",
        "due_date": "2026-12-15", "competence_date": "2026-11-15", "person_id": ACME_LANDLORD});
    closed(&send(&h, Method::POST, "/v1/payables", &api, Some(bill)).await, "competence_date");
    // A movement of December booked in November.
    let movement = json!({"company_id": ACME_COMPANY, "financial_account_id": ACME_CHECKING_ACCOUNT,
        "description": "Ajuste", "amount": "100.00", "occurred_at": "2026-12-02", "competence_date": "2026-11-15",
        "type": "debit"});
    closed(&send(&h, Method::POST, "/v1/financial-transactions", &api, Some(movement)).await, "competence_date");
    // A December bill moved into November's books.
    let rent = patch(&h, &api, ACME_RENT_DECEMBER, json!({"competence_date": "2026-11-10"})).await;
    closed(&rent, "competence_date");
    // A bill already booked in November (due later) cannot change or go.
    let booked = json!({"company_id": ACME_COMPANY, "description": "Reforma", "amount": "100.00",
        "due_date": "2026-12-28", "competence_date": "2026-11-20", "person_id": ACME_LANDLORD});
    exec(&h, "UPDATE companies SET locked_until = NULL WHERE id = $1", &[ACME_COMPANY]).await;
    let made = id(&create_at(&h, "/v1/payables", &api, booked).await);
    let movement = json!({"company_id": ACME_COMPANY, "financial_account_id": ACME_CHECKING_ACCOUNT,
        "description": "Ajuste", "amount": "100.00", "occurred_at": "2026-12-02", "competence_date": "2026-11-15",
        "type": "debit"});
    let moved = id(&create_at(&h, "/v1/financial-transactions", &api, movement).await);
    close_period(&h, &api, ACME_COMPANY, "2026-11-30").await;
    closed(&patch(&h, &api, &made, json!({"notes": "x"})).await, "competence_date");
    closed(&send(&h, Method::DELETE, &format!("/v1/payables/{made}"), &api, None).await, "competence_date");
    let settle = json!({"payment_date": "2026-12-28", "financial_account_id": ACME_CHECKING_ACCOUNT});
    closed(
        &send(&h, Method::POST, &format!("/v1/payables/{made}/settle"), &api, Some(settle)).await,
        "competence_date",
    );
    closed(
        &send(&h, Method::DELETE, &format!("/v1/financial-transactions/{moved}"), &api, None).await,
        "competence_date",
    );
    let renamed = json!({"description": "Ajuste de dezembro"});
    let reply = send(&h, Method::PATCH, &format!("/v1/financial-transactions/{moved}"), &api, Some(renamed)).await;
    closed(&reply, "competence_date");
    // A tool's confirmation refuses before it asks.
    let mcp = h.token(DEMO_OWNER);
    for door in DOORS {
        let result = super::call_as(&h, &mcp, door, "finance_payables_delete", &json!({"id": made}), json!({})).await;
        assert_eq!(result["isError"], true, "{door:?}: {result}");
    }
    assert_report_totals_agree(&h).await;
}

#[tokio::test]
async fn a_payable_the_bank_holds_keeps_its_amount_dates_payee_and_coordinates() {
    let (h, standin) = with_gateway().await;
    let api = h.api_token(DEMO_OWNER);
    from_checking(&h, &api, ACME_RENT_DECEMBER).await;
    let sent = dispatch(&h, &api, ACME_RENT_DECEMBER, "rent").await;
    assert_eq!(sent.status, 200, "{}", text(&sent));
    for change in [
        json!({"amount": "1.00"}),
        json!({"account_number": "11111"}),
        json!({"due_date": "2026-12-11"}),
        json!({"competence_date": "2026-12-11"}),
        json!({"person_id": ACME_CUSTOMER_MARIA}),
        json!({"barcode": null}),
        json!({"expected_account_id": ACME_CASH_ACCOUNT}),
    ] {
        let reply = patch(&h, &api, ACME_RENT_DECEMBER, change.clone()).await;
        assert_eq!(reply.status, 409, "{change}: {}", text(&reply));
        assert_eq!(reply.json()["error"]["details"]["reason"], "dispatched", "{change}");
    }
    assert_eq!(patch(&h, &api, ACME_RENT_DECEMBER, json!({"notes": "pago pelo banco"})).await.status, 200);
    let uid = sent.json()["kobana_payment_uid"].as_str().unwrap().to_string();
    standin.advance(&uid, "confirmed").unwrap();
    deliver_all(&h, &standin).await;
    let paid = send(&h, Method::GET, &format!("/v1/payables/{ACME_RENT_DECEMBER}"), &api, None).await.json();
    assert_eq!((paid["status"].as_str(), paid["amount"].as_str()), (Some("paid"), Some("4500.00")));
    assert_eq!(paid["barcode"], "34191090080000000000000000000018316560000450000");
}

#[tokio::test]
async fn a_payment_the_bank_made_is_not_undone_by_a_reopen() {
    let (h, standin) = with_gateway().await;
    let api = h.api_token(DEMO_OWNER);
    let mcp = h.token(DEMO_OWNER);
    from_checking(&h, &api, ACME_RENT_DECEMBER).await;
    let sent = dispatch(&h, &api, ACME_RENT_DECEMBER, "rent").await;
    standin.advance(sent.json()["kobana_payment_uid"].as_str().unwrap(), "confirmed").unwrap();
    deliver_all(&h, &standin).await;
    let account = format!("/v1/financial-accounts/{ACME_CHECKING_ACCOUNT}");
    let before = send(&h, Method::GET, &account, &api, None).await.json()["balance"].clone();
    let receipt = send(&h, Method::GET, &format!("/v1/receipts?payable_id={ACME_RENT_DECEMBER}"), &api, None)
        .await
        .json()["data"][0]["id"]
        .clone();
    let reopen = send(&h, Method::POST, &format!("/v1/payables/{ACME_RENT_DECEMBER}/reopen"), &api, None).await;
    assert_eq!(reopen.status, 409, "{}", text(&reopen));
    let error = &reopen.json()["error"];
    assert_eq!(error["details"]["reason"], "paid_by_bank");
    assert_eq!(error["details"]["receipt_id"], receipt);
    assert!(error["message"].as_str().unwrap().contains(receipt.as_str().unwrap()), "{error}");
    let by_status = patch(&h, &api, ACME_RENT_DECEMBER, json!({"status": "pending"})).await;
    assert_eq!(by_status.status, 409, "{}", text(&by_status));
    // The tool refuses before it asks, in both doors.
    for door in DOORS {
        let result =
            super::call_as(&h, &mcp, door, "finance_payables_reopen", &json!({"id": ACME_RENT_DECEMBER}), json!({}))
                .await;
        assert_eq!(result["isError"], true, "{door:?}: {result}");
    }
    assert_eq!(send(&h, Method::GET, &account, &api, None).await.json()["balance"], before);
}

#[tokio::test]
async fn what_a_confirmed_tool_can_check_is_checked_before_the_question() {
    let (h, standin) = with_gateway().await;
    let api = h.api_token(DEMO_OWNER);
    let mcp = h.token(DEMO_OWNER);
    // A payable with no account it is paid from, a receivable with none it is received in.
    let no_account = official(&h, &api, "Sem conta", "10.00", ted_coordinates()).await;
    exec(&h, "UPDATE billings SET expected_account_id = NULL WHERE id = $1", &[&no_account]).await;
    let cases = [
        ("finance_payables_send_to_bank", json!({"id": no_account}), "financial_account_id"),
        ("finance_receivables_charge", json!({"id": ACME_SALE_PENDING, "kind": "pix"}), "financial_account_id"),
        ("finance_payables_cancel_dispatch", json!({"id": ACME_RENT_DECEMBER}), "id"),
        (
            "finance_payables_settle",
            json!({"id": ACME_SUPPLIES_PENDING, "payment_date": "2026-11-20"}),
            "financial_account_id",
        ),
    ];
    for door in DOORS {
        for (tool, arguments, field) in &cases {
            let result = super::call_as(&h, &mcp, door, tool, arguments, json!({})).await;
            assert_eq!(result["isError"], true, "{tool} via {door:?}: asked instead of refused: {result}");
            let error: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
            assert_eq!(error["error"]["details"]["field"], *field, "{tool} via {door:?}: {error}");
        }
        // A cancelled bill is refused before the question too.
        let result = super::call_as(
            &h,
            &mcp,
            door,
            "finance_payables_cancel",
            &json!({"id": ACME_SUPPLIES_CANCELLED}),
            json!({}),
        )
        .await;
        assert_eq!(result["isError"], true, "{door:?}: {result}");
    }
    assert_eq!(standin.payments_made() + standin.charges_made(), 0);
    // A precondition lost between the question and the yes is answered, nothing done.
    let (_, state) =
        ask(&h, &mcp, Door::Tool, "finance_payables_send_to_bank", &json!({"id": ACME_SERVICE_CHARGE_DECEMBER})).await;
    exec(&h, "UPDATE billings SET expected_account_id = NULL WHERE id = $1", &[ACME_SERVICE_CHARGE_DECEMBER]).await;
    let answer = accept(
        &h,
        &mcp,
        Door::Tool,
        "finance_payables_send_to_bank",
        &json!({"id": ACME_SERVICE_CHARGE_DECEMBER}),
        &state,
    )
    .await;
    assert_eq!(answer["isError"], true, "{answer}");
    assert_eq!(standin.payments_made(), 0);
}
