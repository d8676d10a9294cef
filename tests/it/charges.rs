//! A receivable charged through the bank (`charge`, `charge/cancel`, the gateway's
//! events), against the stand-in of Kobana's banking API: Pix and boleto, both doors,
//! both backends; the stand-in counts the charges it issued.

use http::Method;
use serde_json::{json, Value};

use kobana_finance_mcp::gateway::{self, Event};

use crate::common::gateway::*;
use crate::common::*;

const SALE: &str = ACME_SALE_PENDING;

/// The sale, received in the connected checking account.
async fn into_checking(h: &Harness, token: &str, id: &str) {
    let body = json!({"expected_account_id": ACME_CHECKING_ACCOUNT});
    let reply = send(h, Method::PATCH, &format!("/v1/receivables/{id}"), token, Some(body)).await;
    assert_eq!(reply.status, 200, "{}", text(&reply));
}

async fn charge(h: &Harness, token: &str, id: &str, kind: &str, key: &str) -> Reply {
    post_keyed(h, token, &format!("/v1/receivables/{id}/charge"), Some(json!({"kind": kind})), key).await
}

async fn cancel(h: &Harness, token: &str, id: &str, key: &str) -> Reply {
    post_keyed(h, token, &format!("/v1/receivables/{id}/charge/cancel"), None, key).await
}

async fn receivable(h: &Harness, token: &str, id: &str) -> Value {
    let reply = send(h, Method::GET, &format!("/v1/receivables/{id}"), token, None).await;
    assert_eq!(reply.status, 200, "{}", text(&reply));
    reply.json()
}

async fn settlements(h: &Harness, id: &str) -> i64 {
    count(h, "SELECT COUNT(*) FROM financial_transactions WHERE billing_id = $1", id).await
}

#[tokio::test]
async fn a_pix_charge_is_registered_then_paid_and_the_receivable_received_once() {
    let (h, standin) = with_gateway().await;
    let token = h.api_token(DEMO_OWNER);
    into_checking(&h, &token, SALE).await;
    let sent = charge(&h, &token, SALE, "pix", "pix-1").await;
    assert_eq!(sent.status, 200, "{}", text(&sent));
    let sent = sent.json();
    assert_eq!(
        (sent["charge_state"].as_str(), sent["kobana_charge_kind"].as_str()),
        (Some("registering"), Some("pix"))
    );
    let uid = sent["kobana_charge_uid"].as_str().unwrap().to_string();
    assert!(sent["kobana_pix_qrcode"].is_null());
    // The same request again answers the same; another is refused: already charged.
    assert_eq!(charge(&h, &token, SALE, "pix", "pix-1").await.json()["kobana_charge_uid"], uid.as_str());
    let again = charge(&h, &token, SALE, "bank_billet", "pix-2").await;
    assert_eq!(
        (again.status.as_u16(), again.json()["error"]["details"]["reason"].clone()),
        (409, json!("already_charged"))
    );
    assert_eq!(standin.charges_made(), 1);
    // The lock: what the customer was billed does not change; the row is not deleted.
    let path = format!("/v1/receivables/{SALE}");
    for change in
        [json!({"amount": "1.00"}), json!({"due_date": "2027-01-31"}), json!({"person_id": ACME_CUSTOMER_MARIA})]
    {
        let reply = send(&h, Method::PATCH, &path, &token, Some(change.clone())).await;
        assert_eq!(
            (reply.status.as_u16(), reply.json()["error"]["details"]["reason"].clone()),
            (409, json!("charge_locked")),
            "{change}"
        );
    }
    let same =
        send(&h, Method::PATCH, &path, &token, Some(json!({"amount": "12000.00", "notes": "Cobrado por Pix"}))).await;
    assert_eq!(same.status, 200, "the same amount is no change: {}", text(&same));
    assert_eq!(send(&h, Method::DELETE, &path, &token, None).await.status, 409);

    assert!(standin.advance_charge(&uid, "registered"));
    let registered = deliver_all(&h, &standin).await;
    let now = receivable(&h, &token, SALE).await;
    assert_eq!(now["charge_state"], "registered");
    assert!(now["kobana_pix_qrcode"].as_str().is_some_and(|q| q.starts_with("000201")), "{now}");
    assert_eq!(now["kobana_registration_status"], "confirmed");
    // Listed with its state, and found by the charge filters.
    let listed = send(&h, Method::GET, "/v1/receivables?kobana_charge_kind=pix", &token, None).await.json();
    assert_eq!(listed["data"].as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(listed["data"][0]["charge_state"], "registered");

    assert!(standin.advance_charge(&uid, "paid"));
    let paid = deliver_all(&h, &standin).await;
    let received = receivable(&h, &token, SALE).await;
    assert_eq!((received["status"].as_str(), received["charge_state"].as_str()), (Some("received"), Some("paid")));
    assert_eq!(received["ticket_amount"], "12000.00");
    assert_eq!(received["financial_account_id"], ACME_CHECKING_ACCOUNT);
    assert_eq!(settlements(&h, SALE).await, 1);
    // Every event again, in reverse: nothing twice.
    for (body, signature) in paid.iter().chain(registered.iter()).rev() {
        assert_eq!(deliver(&h, body, signature).await.json()["applied"], false);
    }
    let mut stale: Event = serde_json::from_slice(&registered[0].0).unwrap();
    stale.id = 77_777;
    let body = serde_json::to_vec(&stale).unwrap();
    assert_eq!(deliver(&h, &body, &gateway::sign(WEBHOOK_SECRET, &body)).await.json()["applied"], false);
    assert_eq!(receivable(&h, &token, SALE).await["charge_state"], "paid");
    assert_eq!(settlements(&h, SALE).await, 1);
    // Nothing left to cancel, nothing to charge again.
    assert_eq!(cancel(&h, &token, SALE, "c").await.status, 409);
    assert_eq!(charge(&h, &token, SALE, "pix", "pix-3").await.status, 409);
}

#[tokio::test]
async fn a_boleto_stops_at_once_and_a_pix_once_the_bank_confirms() {
    let (h, standin) = with_gateway().await;
    let token = h.api_token(DEMO_OWNER);
    into_checking(&h, &token, SALE).await;
    let sent = charge(&h, &token, SALE, "bank_billet", "b-1").await;
    assert_eq!(sent.status, 200, "{}", text(&sent));
    let sent = sent.json();
    assert!(sent["kobana_charge_id"].is_i64(), "{sent}");
    assert!(sent["kobana_charge_url"].is_string());
    let billet = sent["kobana_charge_uid"].as_str().unwrap().to_string();
    assert!(standin.advance_charge(&billet, "registered"));
    deliver_all(&h, &standin).await;
    let registered = receivable(&h, &token, SALE).await;
    assert!(
        registered["kobana_digitable_line"].is_string() && registered["kobana_barcode"].is_string(),
        "{registered}"
    );

    let stopped = cancel(&h, &token, SALE, "c-1").await;
    assert_eq!(stopped.status, 200, "{}", text(&stopped));
    assert_eq!(
        (stopped.json()["charge_state"].as_str(), stopped.json()["status"].as_str()),
        (Some("canceled"), Some("pending"))
    );
    // Unlocked again: the amount may change, and a new charge is a new one.
    let path = format!("/v1/receivables/{SALE}");
    assert_eq!(send(&h, Method::PATCH, &path, &token, Some(json!({"amount": "11000.00"}))).await.status, 200);
    let pix = charge(&h, &token, SALE, "pix", "p-1").await.json();
    let uid = pix["kobana_charge_uid"].as_str().unwrap().to_string();
    assert_ne!(uid, billet);
    assert_eq!(standin.charges_made(), 2);
    // A Pix cancellation is asked for; the charge is live until the bank confirms it.
    let asked = cancel(&h, &token, SALE, "c-2").await;
    assert_eq!(asked.status, 200, "{}", text(&asked));
    assert_eq!(asked.json()["charge_state"], "registering");
    deliver_all(&h, &standin).await;
    assert!(standin.advance_charge(&uid, "canceled"));
    deliver_all(&h, &standin).await;
    let cancelled = receivable(&h, &token, SALE).await;
    assert_eq!((cancelled["charge_state"].as_str(), cancelled["status"].as_str()), (Some("canceled"), Some("pending")));
    assert_eq!(settlements(&h, SALE).await, 0);
}

#[tokio::test]
async fn what_a_charge_needs_is_named() {
    let (h, standin) = with_gateway().await;
    let token = h.api_token(DEMO_OWNER);
    // No account to receive in.
    let none = charge(&h, &token, SALE, "pix", "1").await;
    assert_refused(&none, 422, "financial_account_id", "missing");
    // The cash account has no Pix account nor boleto agreement at the gateway.
    let body = json!({"expected_account_id": ACME_CASH_ACCOUNT});
    assert_eq!(send(&h, Method::PATCH, &format!("/v1/receivables/{SALE}"), &token, Some(body)).await.status, 200);
    let pix = charge(&h, &token, SALE, "pix", "2").await;
    assert_eq!(details(&pix), pair("financial_account_id", "pix_account_missing"));
    let billet = charge(&h, &token, SALE, "bank_billet", "3").await;
    assert_eq!(details(&billet), pair("financial_account_id", "billet_account_missing"));
    // Maria has a CPF but no billing address: a Pix, not a boleto.
    let body = json!({"company_id": ACME_COMPANY, "description": "Venda balcão", "amount": "90.00", "due_date": "2026-12-20",
        "person_id": ACME_CUSTOMER_MARIA, "expected_account_id": ACME_CHECKING_ACCOUNT});
    let maria = id(&create_at(&h, "/v1/receivables", &token, body).await);
    let boleto = charge(&h, &token, &maria, "bank_billet", "4").await;
    assert_eq!((boleto.status.as_u16(), details(&boleto)), (422, pair("person.billing_address", "missing")));
    // A payer without a document.
    let body = json!({"company_id": ACME_COMPANY, "description": "Venda avulsa", "amount": "50.00", "due_date": "2026-12-20",
        "person_name": "Cliente sem documento", "expected_account_id": ACME_CHECKING_ACCOUNT});
    let anonymous = id(&create_at(&h, "/v1/receivables", &token, body).await);
    let refused = charge(&h, &token, &anonymous, "pix", "5").await;
    assert_eq!(details(&refused), pair("person.document_number", "missing"));
    // A bad kind; received and cancelled receivables.
    let bad =
        send(&h, Method::POST, &format!("/v1/receivables/{maria}/charge"), &token, Some(json!({"kind": "card"}))).await;
    assert_eq!(bad.status, 422, "{}", text(&bad));
    for settled in [ACME_SALE_RECEIVED, ACME_SALE_CANCELLED] {
        assert_eq!(charge(&h, &token, settled, "pix", "6").await.status, 409, "{settled}");
    }
    // Nothing to cancel; its own scope; the viewer may not.
    assert_eq!(cancel(&h, &token, &maria, "7").await.status, 409);
    let scoped = v1_token(&h, DEMO_OWNER, "finance.receivables finance.receivables.write finance.payables.dispatch");
    let wrong = charge(&h, &scoped, &maria, "pix", "8").await;
    assert_eq!(
        (wrong.status.as_u16(), wrong.json()["error"]["details"]["required"].clone()),
        (403, json!("finance.receivables.charge"))
    );
    assert_eq!(charge(&h, &h.api_token(DEMO_VIEWER), &maria, "pix", "9").await.status, 403);
    assert_eq!(standin.charges_made(), 0);
    // The gateway down: 503, nothing written.
    standin.fail_next(1);
    let down = charge(&h, &token, &maria, "pix", "10").await;
    assert_eq!(down.status, 503);
    assert!(down.header("retry-after").is_some());
    assert!(receivable(&h, &token, &maria).await["charge_state"].is_null());
    assert_eq!(charge(&h, &token, &maria, "pix", "11").await.status, 200);
}

#[tokio::test]
async fn the_charge_tool_asks_the_user_naming_customer_amount_and_account() {
    let (h, standin) = with_gateway().await;
    let token = h.api_token(DEMO_OWNER);
    into_checking(&h, &token, SALE).await;
    let mcp = h.token(DEMO_OWNER);
    let args = json!({"id": SALE, "kind": "pix"});
    let capable = |extra: Value| {
        crate::tools_catalogue::confirmable("finance_receivables_charge", args.clone(), extra).bearer(&mcp).build()
    };
    let ask = h.send(capable(json!({}))).await.result();
    assert_eq!(ask["resultType"], "input_required", "{ask}");
    let message = ask["inputRequests"]["confirm"]["params"]["message"].as_str().unwrap().to_string();
    for part in ["Pix", "R$ 12.000,00", "Venda NF-1001", "Cliente Exemplo", "Conta corrente"] {
        assert!(message.contains(part), "{part} in {message}");
    }
    assert_eq!(standin.charges_made(), 0);
    let accept = json!({"requestState": ask["requestState"], "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}});
    let done = h.send(capable(accept.clone())).await.result();
    assert_eq!(done["structuredContent"]["charge_state"], "registering", "{done}");
    assert_eq!(h.send(capable(accept)).await.result()["structuredContent"], done["structuredContent"]);
    assert_eq!(standin.charges_made(), 1);
}

#[tokio::test]
async fn a_charge_whose_answer_was_lost_and_the_customer_paid_is_received_by_the_retry_once() {
    let (h, standin) = with_gateway().await;
    let owner = h.api_token(DEMO_OWNER);
    into_checking(&h, &owner, SALE).await;
    // A token that may charge but not settle: the bank's payment is applied by the server.
    let token = v1_token(&h, DEMO_OWNER, "finance.receivables finance.receivables.charge");
    standin.lose_next_answers(1);
    let lost = charge(&h, &token, SALE, "pix", "lost").await;
    assert_eq!(lost.status, 503, "{}", text(&lost));
    assert!(receivable(&h, &token, SALE).await["kobana_charge_uid"].is_null(), "nothing recorded here");
    // The customer pays before any event of the charge reaches the server.
    let uid = standin.pix_charges()[0].uid.clone();
    assert!(standin.advance_charge(&uid, "registered") && standin.advance_charge(&uid, "paid"));
    let late = standin.take_events();

    let retried = charge(&h, &token, SALE, "pix", "retry").await;
    assert_eq!(retried.status, 200, "{}", text(&retried));
    let retried = retried.json();
    assert_eq!(
        (retried["status"].as_str(), retried["charge_state"].as_str(), retried["kobana_charge_uid"].as_str()),
        (Some("received"), Some("paid"), Some(uid.as_str()))
    );
    assert_eq!(standin.charges_made(), 1, "the retry found the charge the lost answer made");
    assert_eq!(settlements(&h, SALE).await, 1);
    // The late events change nothing; nothing is charged again.
    for (body, signature) in &late {
        let reply = deliver(&h, body, signature).await;
        assert_eq!((reply.status.as_u16(), reply.json()["applied"].clone()), (200, json!(false)), "{}", text(&reply));
    }
    assert_eq!(settlements(&h, SALE).await, 1);
    assert_eq!(charge(&h, &token, SALE, "pix", "again").await.status, 409);
    assert_eq!(standin.charges_made(), 1);
}

/// Many charge requests for one receivable at once (each with its own key): the gateway
/// makes one charge, one request records it and the others are refused (409) — the
/// attempt a request asks the gateway for is read with the current charge it checked,
/// so none of them asks for a second charge.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn charges_at_once_make_one_charge_at_the_bank() {
    let (h, standin) = with_gateway().await;
    let token = h.api_token(DEMO_OWNER);
    into_checking(&h, &token, SALE).await;
    let h = std::sync::Arc::new(h);
    let tasks: Vec<_> = (0..12)
        .map(|n| {
            let (h, token) = (std::sync::Arc::clone(&h), token.clone());
            tokio::spawn(async move { charge(&h, &token, SALE, "pix", &format!("at-once-{n}")).await })
        })
        .collect();
    let mut statuses = Vec::new();
    for task in tasks {
        let reply = task.await.unwrap();
        assert!(matches!(reply.status.as_u16(), 200 | 409), "{}", text(&reply));
        statuses.push(reply.status.as_u16());
    }
    assert_eq!(standin.charges_made(), 1, "one charge at the bank: {statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 200).count(), 1, "{statuses:?}");
    assert_eq!(count(&h, "SELECT COUNT(*) FROM receivable_charges WHERE billing_id = $1", SALE).await, 1);
}
