//! A payable paid through the bank (`send-to-bank`, `cancel-dispatch`, the gateway's
//! events, receipts), against the stand-in of Kobana's banking API on 127.0.0.1: both
//! doors, both backends. The stand-in counts the payments it made, so "paid once" is
//! checked on the bank's side.

use http::Method;
use serde_json::{json, Value};

use kobana_finance_mcp::domain::money::Cents;
use kobana_finance_mcp::gateway::{self, Event, PaymentStatus};
use kobana_finance_mcp::ops::bills::approval::{self, Decision};
use kobana_finance_mcp::storage::seed::ACME_CHECKING_KOBANA_UID;

use crate::common::gateway::*;
use crate::common::*;

const RENT: &str = ACME_RENT_DECEMBER;

/// The rent, to be paid from the connected checking account.
pub(crate) async fn from_checking(h: &Harness, token: &str, id: &str) {
    let body = json!({"expected_account_id": ACME_CHECKING_ACCOUNT});
    let reply = send(h, Method::PATCH, &format!("/v1/payables/{id}"), token, Some(body)).await;
    assert_eq!(reply.status, 200, "{}", text(&reply));
}

pub(crate) async fn dispatch(h: &Harness, token: &str, id: &str, key: &str) -> Reply {
    post_keyed(h, token, &format!("/v1/payables/{id}/send-to-bank"), None, key).await
}

async fn cancel(h: &Harness, token: &str, id: &str, key: &str) -> Reply {
    post_keyed(h, token, &format!("/v1/payables/{id}/cancel-dispatch"), None, key).await
}

async fn payable(h: &Harness, token: &str, id: &str) -> Value {
    let reply = send(h, Method::GET, &format!("/v1/payables/{id}"), token, None).await;
    assert_eq!(reply.status, 200, "{}", text(&reply));
    reply.json()
}

async fn settlements(h: &Harness, id: &str) -> i64 {
    count(h, "SELECT COUNT(*) FROM financial_transactions WHERE billing_id = $1", id).await
}

async fn receipts_of(h: &Harness, id: &str) -> i64 {
    count(h, "SELECT COUNT(*) FROM receipts WHERE payable_id = $1", id).await
}

#[tokio::test]
async fn a_boleto_sent_to_the_bank_is_paid_once_settled_and_its_receipt_filed() {
    let (h, standin) = with_gateway().await;
    let token = h.api_token(DEMO_OWNER);
    from_checking(&h, &token, RENT).await;

    let sent = dispatch(&h, &token, RENT, "rent-1").await;
    assert_eq!(sent.status, 200, "{}", text(&sent));
    let sent = sent.json();
    assert_eq!(sent["kobana_status"], "pending");
    assert_eq!(sent["status"], "pending");
    let uid = sent["kobana_payment_uid"].as_str().unwrap().to_string();
    assert_eq!(standin.payments_made(), 1);
    let made = &standin.payments()[0];
    assert_eq!(made.amount, Cents(450_000));
    assert_eq!(made.financial_account_uid, ACME_CHECKING_KOBANA_UID);
    assert_eq!(made.external_id.as_deref(), Some(RENT));

    // The same request again: the stored answer, no second payment.
    let again = dispatch(&h, &token, RENT, "rent-1").await;
    assert_eq!(again.status, 200);
    assert_eq!(again.json()["kobana_payment_uid"], uid.as_str());
    // Another request: the payable is with the bank already.
    let twice = dispatch(&h, &token, RENT, "rent-2").await;
    assert_eq!(twice.status, 409, "{}", text(&twice));
    assert_eq!(twice.json()["error"]["details"]["reason"], "already_dispatched");
    assert_eq!(standin.payments_made(), 1);

    // While the bank holds it, nobody settles, cancels or deletes it by hand.
    let settle = json!({"payment_date": "2026-12-10", "financial_account_id": ACME_CHECKING_ACCOUNT});
    let by_hand = send(&h, Method::POST, &format!("/v1/payables/{RENT}/settle"), &token, Some(settle)).await;
    assert_eq!(by_hand.status, 409, "{}", text(&by_hand));
    assert_eq!(by_hand.json()["error"]["details"]["reason"], "dispatched");
    let delete = send(&h, Method::DELETE, &format!("/v1/payables/{RENT}"), &token, None).await;
    assert_eq!(delete.status, 409, "{}", text(&delete));

    standin.advance(&uid, "scheduled").unwrap();
    let scheduled = deliver_all(&h, &standin).await;
    assert_eq!(scheduled.len(), 2, "the creation and the scheduling");
    let now = payable(&h, &token, RENT).await;
    assert_eq!((now["kobana_status"].as_str(), now["status"].as_str()), (Some("scheduled"), Some("pending")));

    standin.advance(&uid, "confirmed").unwrap();
    let confirmed = deliver_all(&h, &standin).await;
    let paid = payable(&h, &token, RENT).await;
    assert_eq!(paid["kobana_status"], "confirmed");
    assert_eq!(paid["status"], "paid");
    assert_eq!(paid["ticket_amount"], "4500.00");
    assert_eq!(paid["financial_account_id"], ACME_CHECKING_ACCOUNT);
    assert!(paid["transaction_id"].is_string());
    assert_eq!(settlements(&h, RENT).await, 1);
    let via =
        count(&h, "SELECT COUNT(*) FROM financial_transactions WHERE billing_id = $1 AND created_via = 'system'", RENT)
            .await;
    assert_eq!(via, 1, "the bank's settlement is the system's");

    let receipts = send(&h, Method::GET, &format!("/v1/receipts?payable_id={RENT}"), &token, None).await;
    assert_eq!(receipts.status, 200, "{}", text(&receipts));
    let rows = receipts.json()["data"].as_array().unwrap().clone();
    assert_eq!(rows.len(), 1);
    let receipt = &rows[0];
    assert_eq!(receipt["amount"], "4500.00");
    assert_eq!(receipt["source"], "kobana");
    assert_eq!(receipt["status"], "available");
    assert_eq!(receipt["external_uid"], uid.as_str());
    assert_eq!(receipt["payable_status"], "paid");
    assert_eq!(receipt["financial_account_id"], ACME_CHECKING_ACCOUNT);
    let one = send(&h, Method::GET, &format!("/v1/receipts/{}", id(receipt)), &token, None).await;
    assert_eq!(one.json()["id"], receipt["id"]);

    // Every event again, in any order: nothing changes twice.
    for (body, signature) in confirmed.iter().chain(scheduled.iter()).rev() {
        let replay = deliver(&h, body, signature).await;
        assert_eq!(replay.status, 200);
        assert_eq!(replay.json()["applied"], false);
    }
    // An older status under a new event id: out of order, ignored.
    let mut stale: Event = serde_json::from_slice(&scheduled[1].0).unwrap();
    stale.id = 9_999;
    let body = serde_json::to_vec(&stale).unwrap();
    let late = deliver(&h, &body, &gateway::sign(WEBHOOK_SECRET, &body)).await;
    assert_eq!((late.status.as_u16(), late.json()["applied"].clone()), (200, json!(false)));
    let after = payable(&h, &token, RENT).await;
    assert_eq!((after["kobana_status"].as_str(), after["status"].as_str()), (Some("confirmed"), Some("paid")));
    assert_eq!(settlements(&h, RENT).await, 1);
    assert_eq!(receipts_of(&h, RENT).await, 1);
    assert_eq!(standin.payments_made(), 1);
}

#[tokio::test]
async fn an_event_with_a_bad_signature_changes_nothing() {
    let (h, standin) = with_gateway().await;
    let token = h.api_token(DEMO_OWNER);
    from_checking(&h, &token, RENT).await;
    let uid = dispatch(&h, &token, RENT, "k").await.json()["kobana_payment_uid"].as_str().unwrap().to_string();
    standin.advance(&uid, "confirmed").unwrap();
    for (body, signature) in standin.take_events() {
        let forged = gateway::sign("another-secret", &body);
        for bad in [forged.as_str(), "", "sha256=00", signature.trim_start_matches("sha256=")] {
            let reply = deliver(&h, &body, bad).await;
            assert_eq!(reply.status, 401, "{bad}: {}", text(&reply));
        }
        let mut tampered = body.clone();
        let at = tampered.len() / 2;
        tampered[at] ^= 1;
        assert_eq!(deliver(&h, &tampered, &signature).await.status, 401);
    }
    let now = payable(&h, &token, RENT).await;
    assert_eq!((now["kobana_status"].as_str(), now["status"].as_str()), (Some("pending"), Some("pending")));
    assert_eq!(settlements(&h, RENT).await, 0);
    assert_eq!(receipts_of(&h, RENT).await, 0);
}

#[tokio::test]
async fn a_payment_whose_answer_was_lost_is_recorded_from_its_event_and_an_unknown_one_asked_again() {
    let (h, standin) = with_gateway().await;
    let token = h.api_token(DEMO_OWNER);
    from_checking(&h, &token, RENT).await;
    // The stand-in makes the payment but the answer is lost: nothing is recorded here.
    standin.lose_next_answers(1);
    let lost = dispatch(&h, &token, RENT, "lost").await;
    assert_eq!(lost.status, 503, "{}", text(&lost));
    assert!(lost.header("retry-after").is_some());
    assert!(payable(&h, &token, RENT).await["kobana_status"].is_null());
    // Its event names the payable: the payment is recorded, never lost to the books.
    let (body, signature) = standin.take_events().pop().unwrap();
    let taken = deliver(&h, &body, &signature).await;
    assert_eq!(taken.status, 200, "{}", text(&taken));
    let uid = standin.payments()[0].uid.clone();
    let now = payable(&h, &token, RENT).await;
    assert_eq!(
        (now["kobana_payment_uid"].as_str(), now["kobana_status"].as_str()),
        (Some(uid.as_str()), Some("pending"))
    );
    // A retry finds it with the bank already; the bank pays it once and it is settled.
    let retried = dispatch(&h, &token, RENT, "retry").await;
    assert_eq!(retried.json()["error"]["details"]["reason"], "already_dispatched");
    assert_eq!(standin.payments_made(), 1);
    standin.advance(&uid, "confirmed").unwrap();
    deliver_all(&h, &standin).await;
    assert_eq!(payable(&h, &token, RENT).await["status"], "paid");
    assert_eq!(settlements(&h, RENT).await, 1);

    // A payment that names no payable here is asked again later, and changes nothing.
    let mut stranger: Event = serde_json::from_slice(&body).unwrap();
    stranger.id = 5_555;
    stranger.data["uid"] = json!("0190ffff-0000-7000-8000-000000000001");
    stranger.data["external_id"] = json!(MISSING);
    let body = serde_json::to_vec(&stranger).unwrap();
    let early = deliver(&h, &body, &gateway::sign(WEBHOOK_SECRET, &body)).await;
    assert_eq!(early.status, 503, "{}", text(&early));
    assert!(early.header("retry-after").is_some());
}

#[tokio::test]
async fn the_gateway_down_writes_nothing_and_a_retry_after_a_lost_answer_pays_once() {
    let (h, standin) = with_gateway().await;
    let token = h.api_token(DEMO_OWNER);
    from_checking(&h, &token, RENT).await;
    standin.fail_next(1);
    let down = dispatch(&h, &token, RENT, "a").await;
    assert_eq!(down.status, 503, "{}", text(&down));
    assert_eq!(down.json()["error"]["code"], "service_unavailable");
    assert!(down.header("retry-after").is_some());
    assert_eq!(standin.payments_made(), 0);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM payment_dispatches WHERE billing_id = $1", RENT).await, 0);
    assert!(payable(&h, &token, RENT).await["kobana_status"].is_null());

    standin.lose_next_answers(1);
    let lost = dispatch(&h, &token, RENT, "b").await;
    assert_eq!(lost.status, 503);
    assert_eq!(standin.payments_made(), 1, "the bank made it");
    assert!(payable(&h, &token, RENT).await["kobana_status"].is_null(), "nothing recorded here");

    let retried = dispatch(&h, &token, RENT, "c").await;
    assert_eq!(retried.status, 200, "{}", text(&retried));
    assert_eq!(standin.payments_made(), 1, "the retry found the payment the lost answer made");
    assert_eq!(retried.json()["kobana_payment_uid"].as_str(), Some(standin.payments()[0].uid.as_str()));
}

#[tokio::test]
async fn a_dispatch_is_cancelled_while_the_bank_holds_it_and_sent_again_as_a_new_payment() {
    let (h, standin) = with_gateway().await;
    let token = h.api_token(DEMO_OWNER);
    from_checking(&h, &token, RENT).await;
    let never = cancel(&h, &token, RENT, "c0").await;
    assert_eq!(never.status, 422, "{}", text(&never));
    assert_eq!(details(&never), pair("id", "not_dispatched"));

    let first = dispatch(&h, &token, RENT, "d1").await.json();
    let cancelled = cancel(&h, &token, RENT, "c1").await;
    assert_eq!(cancelled.status, 200, "{}", text(&cancelled));
    let cancelled = cancelled.json();
    assert_eq!(cancelled["kobana_status"], "canceled");
    assert_eq!(cancelled["status"], "pending");
    assert_eq!(standin.payments()[0].status, PaymentStatus::Cancelled);
    let again = cancel(&h, &token, RENT, "c2").await;
    assert_eq!(details(&again), pair("id", "dispatch_terminal"));

    // Back on the manual rail, or sent again: a new payment.
    let second = dispatch(&h, &token, RENT, "d2").await;
    assert_eq!(second.status, 200, "{}", text(&second));
    assert_ne!(second.json()["kobana_payment_uid"], first["kobana_payment_uid"]);
    assert_eq!(standin.payments_made(), 2);
    // The first payment's late events change nothing.
    let first_uid = first["kobana_payment_uid"].as_str().unwrap();
    for (body, signature) in standin.take_events() {
        assert_eq!(deliver(&h, &body, &signature).await.status, 200);
    }
    assert!(standin.advance(first_uid, "canceled").is_some());
    deliver_all(&h, &standin).await;
    assert_eq!(payable(&h, &token, RENT).await["kobana_status"], "pending");

    // A payment already made cannot be stopped.
    let uid = second.json()["kobana_payment_uid"].as_str().unwrap().to_string();
    standin.advance(&uid, "confirmed").unwrap();
    deliver_all(&h, &standin).await;
    let late = cancel(&h, &token, RENT, "c3").await;
    assert_eq!(details(&late), pair("id", "dispatch_terminal"));
    assert_eq!(settlements(&h, RENT).await, 1);
}

#[tokio::test]
async fn what_a_dispatch_needs_is_named() {
    let (h, standin) = with_gateway().await;
    let token = h.api_token(DEMO_OWNER);
    // No account to pay from.
    let none = dispatch(&h, &token, RENT, "1").await;
    assert_refused(&none, 422, "financial_account_id", "missing");
    // An account the gateway does not know.
    let body = json!({"expected_account_id": ACME_CASH_ACCOUNT});
    assert_eq!(send(&h, Method::PATCH, &format!("/v1/payables/{RENT}"), &token, Some(body)).await.status, 200);
    let cash = dispatch(&h, &token, RENT, "2").await;
    assert_eq!((cash.status.as_u16(), details(&cash)), (422, pair("financial_account_id", "account_not_connected")));
    // A Pix without its code or key names them; a payable without coordinates names the
    // barcode.
    approval::set_gate(&h.state.db, DEMO_WORKSPACE_ACME, false).await.unwrap();
    let body = json!({"company_id": ACME_COMPANY, "description": "Pix sem chave", "amount": "10.00", "due_date": "2026-12-20",
        "person_name": "Fornecedor Y", "payment_method_kind": "pix", "expected_account_id": ACME_CHECKING_ACCOUNT});
    let keyless = create_at(&h, "/v1/payables", &token, body).await;
    let refused = dispatch(&h, &token, &id(&keyless), "3").await;
    assert_eq!((refused.status.as_u16(), details(&refused)), (422, pair("pix_copia_e_cola", "missing")));
    approval::set_gate(&h.state.db, DEMO_WORKSPACE_ACME, true).await.unwrap();
    let body = json!({"company_id": ACME_COMPANY, "description": "Sem boleto", "amount": "10.00", "due_date": "2026-12-20",
        "person_name": "Fornecedor X", "expected_account_id": ACME_CHECKING_ACCOUNT});
    let bare = create_at(&h, "/v1/payables", &token, body).await;
    // Made through the API, it waits at the approval gate: not sent until a person approves it.
    assert_eq!(bare["payment_approval"], "pending_approval");
    let waiting = dispatch(&h, &token, &id(&bare), "4a").await;
    assert_eq!((waiting.status.as_u16(), details(&waiting)), (422, pair("payment_approval", "not_approved")));
    approval::decide(&h.state.db, &id(&bare), &Decision::Approve).await.unwrap();
    let missing = dispatch(&h, &token, &id(&bare), "4").await;
    assert_eq!((missing.status.as_u16(), details(&missing)), (422, pair("barcode", "missing")), "{}", text(&missing));
    // Only a pending payable: the paid November rent is not.
    let paid = dispatch(&h, &token, ACME_RENT_NOVEMBER, "5").await;
    assert_eq!(paid.status, 409, "{}", text(&paid));
    // Its own scope, and a role that may move money.
    let scoped = v1_token(&h, DEMO_OWNER, "finance.payables finance.payables.write");
    let refused = dispatch(&h, &scoped, RENT, "6").await;
    assert_eq!(refused.status, 403);
    assert_eq!(refused.json()["error"]["details"]["required"], "finance.payables.dispatch");
    let viewer = dispatch(&h, &h.api_token(DEMO_VIEWER), RENT, "7").await;
    assert_eq!(viewer.status, 403);
    assert_eq!(standin.payments_made(), 0);
}

#[tokio::test]
async fn without_a_gateway_the_integration_is_not_connected() {
    let h = Harness::with_demo().await;
    let token = h.api_token(DEMO_OWNER);
    from_checking(&h, &token, RENT).await;
    let reply = dispatch(&h, &token, RENT, "x").await;
    assert_eq!((reply.status.as_u16(), details(&reply)), (422, pair("integration", "integration_not_connected")));
    let body = br#"{"id":1,"code":"payment.db.updated","data":{}}"#;
    assert_eq!(deliver(&h, body, &gateway::sign("anything", body)).await.status, 401);
}

#[tokio::test]
async fn the_tool_asks_the_user_naming_payee_amount_method_and_account_then_pays_once() {
    let (h, standin) = with_gateway().await;
    let token = h.api_token(DEMO_OWNER);
    from_checking(&h, &token, RENT).await;
    let mcp = h.token(DEMO_OWNER);
    let args = json!({"id": RENT});
    let capable = |extra: Value| {
        crate::tools_catalogue::confirmable("finance_payables_send_to_bank", args.clone(), extra).bearer(&mcp).build()
    };
    let ask = h.send(capable(json!({}))).await.result();
    assert_eq!(ask["resultType"], "input_required", "{ask}");
    let message = ask["inputRequests"]["confirm"]["params"]["message"].as_str().unwrap().to_string();
    for part in ["Aluguel", "Imobiliária", "R$ 4.500,00", "boleto", "Conta corrente"] {
        assert!(message.contains(part), "{part} in {message}");
    }
    assert_eq!(standin.payments_made(), 0, "asking sends nothing");
    let accept = json!({"requestState": ask["requestState"], "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}});
    let done = h.send(capable(accept.clone())).await.result();
    assert_eq!(done["resultType"], "complete", "{done}");
    assert_eq!(done["structuredContent"]["kobana_status"], "pending");
    let replay = h.send(capable(accept)).await.result();
    assert_eq!(replay["structuredContent"], done["structuredContent"]);
    assert_eq!(standin.payments_made(), 1);
    let via = count(&h, "SELECT COUNT(*) FROM audit_events WHERE action = 'payables.send_to_bank' AND channel = 'mcp' AND target_id = $1", RENT)
        .await;
    assert_eq!(via, 1);
}

/// The gateway's credentials from AWS Secrets Manager (`KFIN_KOBANA_SECRET_ID`), for real,
/// against moto on 127.0.0.1: the API token the gateway is called with and the secret
/// its events are verified with are the secret's.
#[tokio::test]
async fn the_gateways_credentials_come_from_secrets_manager() {
    use kobana_finance_mcp::config::{GatewayConfig, GatewayCredentials};
    use kobana_finance_mcp::gateway::standin::StandIn;

    let _env = environment().await;
    let Some(moto) = crate::common::moto::start("the banking gateway's secret") else { return };
    crate::common::moto::aws_test_environment();
    std::env::set_var("AWS_ENDPOINT_URL", &moto.endpoint);
    let secret_id = "kobana-finance/banking";
    crate::common::moto::secrets_client(&moto.endpoint)
        .create_secret()
        .name(secret_id)
        .secret_string(json!({"api_token": "token-from-the-secret", "webhook_secret": "events-secret"}).to_string())
        .send()
        .await
        .expect("create secret in moto");
    let standin = StandIn::start(standin_options("token-from-the-secret", "events-secret")).await.unwrap();
    let url = standin.url.clone();
    let h = Harness::with_demo_and(move |c| {
        c.gateway = GatewayConfig {
            url: Some(url),
            credentials: GatewayCredentials::Secret { secret_id: secret_id.into() },
            embedded: false,
        }
    })
    .await;
    let token = h.api_token(DEMO_OWNER);
    from_checking(&h, &token, RENT).await;
    let sent = dispatch(&h, &token, RENT, "from-secret").await;
    assert_eq!(sent.status, 200, "the stand-in took the secret's token: {}", text(&sent));
    let uid = sent.json()["kobana_payment_uid"].as_str().unwrap().to_string();
    standin.advance(&uid, "confirmed").unwrap();
    let events = deliver_all(&h, &standin).await;
    assert_eq!(payable(&h, &token, RENT).await["status"], "paid", "the events were verified with the secret's key");
    // The same event signed with any other key is refused.
    let body = &events.last().unwrap().0;
    assert_eq!(deliver(&h, body, &gateway::sign(WEBHOOK_SECRET, body)).await.status, 401);
}

#[tokio::test]
async fn a_pix_key_is_paid_by_a_transfer_stopped_and_sent_again() {
    let (h, standin) = with_gateway().await;
    let token = h.api_token(DEMO_OWNER);
    let supplies = ACME_SUPPLIES_PENDING;
    from_checking(&h, &token, supplies).await;
    let first = dispatch(&h, &token, supplies, "k1").await;
    assert_eq!(first.status, 200, "{}", text(&first));
    let made = standin.payments()[0].clone();
    assert_eq!(made.kind, kobana_finance_mcp::gateway::PaymentKind::PixTransfer);
    assert_eq!(made.amount, Cents(15_000));
    let stopped = cancel(&h, &token, supplies, "c1").await;
    assert_eq!(stopped.json()["kobana_status"], "canceled", "{}", text(&stopped));
    assert_eq!(standin.payments()[0].status, PaymentStatus::Cancelled);
    let again = dispatch(&h, &token, supplies, "k2").await.json();
    let uid = again["kobana_payment_uid"].as_str().unwrap().to_string();
    assert_ne!(uid, made.uid);
    standin.advance(&uid, "confirmed").unwrap();
    let events = deliver_all(&h, &standin).await;
    let codes: Vec<String> =
        events.iter().map(|(body, _)| serde_json::from_slice::<Event>(body).unwrap().code).collect();
    assert!(codes.iter().all(|c| c == "transfer.db.updated"), "{codes:?}");
    let paid = payable(&h, &token, supplies).await;
    assert_eq!((paid["status"].as_str(), paid["kobana_status"].as_str()), (Some("paid"), Some("confirmed")));
    assert_eq!(settlements(&h, supplies).await, 1);
    assert_eq!(receipts_of(&h, supplies).await, 1);
}

/// A payee's account for a TED: Itaú (341), branch 0001, account 12345-6, the holder's
/// CNPJ.
pub(crate) fn ted_coordinates() -> Value {
    json!({"payment_method_kind": "ted", "bank_code": "341", "agency": "0001", "account_number": "12345",
        "account_digit": "6", "beneficiary_name": "Transportadora Rápida Ltda", "beneficiary_document": "11.222.333/0001-81",
        "transfer_purpose": "98"})
}

/// A DARF paid by its data: the revenue code, the taxpayer and its dates.
pub(crate) fn darf_coordinates() -> Value {
    json!({"payment_method_kind": "tribute", "tax_kind": "darf", "tax_data": {"tax_code": "0561", "taxpayer_type": "cnpj",
        "taxpayer_number": "11222333000181", "taxpayer_name": "Acme Comércio Ltda", "calculation_date": "2026-11-30",
        "expire_at": "2026-12-20", "fine_amount": 0, "interest_amount": 0}})
}

/// An official payable of Acme (the approval gate off while it is made), to be paid from
/// the connected checking account, with `coordinates`.
pub(crate) async fn official(h: &Harness, token: &str, description: &str, amount: &str, coordinates: Value) -> String {
    approval::set_gate(&h.state.db, DEMO_WORKSPACE_ACME, false).await.unwrap();
    let mut body = json!({"company_id": ACME_COMPANY, "description": description, "amount": amount,
        "due_date": "2026-12-20", "person_name": "Fornecedor TED", "expected_account_id": ACME_CHECKING_ACCOUNT});
    body.as_object_mut().unwrap().extend(coordinates.as_object().unwrap().clone());
    let made = create_at(h, "/v1/payables", token, body).await;
    approval::set_gate(&h.state.db, DEMO_WORKSPACE_ACME, true).await.unwrap();
    assert!(made["payment_approval"].is_null(), "{made}");
    id(&made)
}

fn codes(events: &[(Vec<u8>, String)]) -> Vec<String> {
    events.iter().map(|(body, _)| serde_json::from_slice::<Event>(body).unwrap().code).collect()
}

/// The receipt of payable `id`, as `GET /v1/receipts` lists it.
async fn receipt_of(h: &Harness, token: &str, id: &str) -> Value {
    let receipts = send(h, Method::GET, &format!("/v1/receipts?payable_id={id}"), token, None).await;
    assert_eq!(receipts.status, 200, "{}", text(&receipts));
    let rows = receipts.json()["data"].as_array().unwrap().clone();
    assert_eq!(rows.len(), 1, "{rows:?}");
    rows[0].clone()
}

#[tokio::test]
async fn a_ted_is_sent_to_the_payees_account_confirmed_and_paid_with_its_receipt() {
    let (h, standin) = with_gateway().await;
    let token = h.api_token(DEMO_OWNER);
    let freight = official(&h, &token, "Frete de dezembro", "1250.00", ted_coordinates()).await;

    let sent = dispatch(&h, &token, &freight, "freight-1").await;
    assert_eq!(sent.status, 200, "{}", text(&sent));
    assert_eq!(sent.json()["kobana_status"], "pending");
    assert_eq!(standin.payments_made(), 1);
    let made = standin.payments()[0].clone();
    assert_eq!(made.kind, gateway::PaymentKind::Ted);
    assert_eq!((made.amount, made.financial_account_uid.as_str()), (Cents(125_000), ACME_CHECKING_KOBANA_UID));
    assert_eq!(made.external_id.as_deref(), Some(freight.as_str()));
    let target = made.target.clone().unwrap();
    let account = target.bank_account.unwrap();
    assert_eq!(target.transfer_kind.as_deref(), Some("ted"));
    assert_eq!(
        (account.compe_number, account.agency_number.as_deref(), account.account_number.as_deref()),
        (Some(341), Some("0001"), Some("12345"))
    );
    assert_eq!(account.account_digit.as_deref(), Some("6"));
    let payee = made.payee();
    assert_eq!(payee.name.as_deref(), Some("Transportadora Rápida Ltda"));
    assert_eq!(payee.document_number.as_deref(), Some("11222333000181"));
    assert_eq!(made.transfer_purpose.unwrap().code.as_deref(), Some("98"));

    standin.advance(&made.uid, "scheduled").unwrap();
    standin.advance(&made.uid, "confirmed").unwrap();
    let events = deliver_all(&h, &standin).await;
    assert_eq!(codes(&events), ["transfer.db.updated"; 3], "a TED's changes are a transfer's");
    let paid = payable(&h, &token, &freight).await;
    assert_eq!((paid["status"].as_str(), paid["kobana_status"].as_str()), (Some("paid"), Some("confirmed")));
    assert_eq!(paid["ticket_amount"], "1250.00");
    assert_eq!(paid["financial_account_id"], ACME_CHECKING_ACCOUNT);
    assert!(paid["transaction_id"].is_string());
    assert_eq!(settlements(&h, &freight).await, 1);
    let receipt = receipt_of(&h, &token, &freight).await;
    assert_eq!(receipt["amount"], "1250.00");
    assert_eq!(receipt["payment_method_kind"], "ted");
    assert_eq!(receipt["payee_name"], "Transportadora Rápida Ltda");
    assert_eq!(receipt["payee_document"], "11222333000181");
    assert_eq!(receipt["external_uid"], made.uid.as_str());

    // Delivered again, in any order: nothing twice.
    for (body, signature) in events.iter().rev() {
        assert_eq!(deliver(&h, body, signature).await.json()["applied"], false);
    }
    assert_eq!((settlements(&h, &freight).await, receipts_of(&h, &freight).await), (1, 1));
    assert_eq!(standin.payments_made(), 1);
}

#[tokio::test]
async fn a_tax_guide_without_a_barcode_is_paid_by_its_data_and_one_with_a_barcode_as_a_slip() {
    let (h, standin) = with_gateway().await;
    let token = h.api_token(DEMO_OWNER);
    let darf = official(&h, &token, "DARF IRPJ novembro", "830.45", darf_coordinates()).await;

    let sent = dispatch(&h, &token, &darf, "darf-1").await;
    assert_eq!(sent.status, 200, "{}", text(&sent));
    let made = standin.payments()[0].clone();
    assert_eq!(made.kind, gateway::PaymentKind::Tax);
    assert_eq!(made.amount, Cents(83_045));
    let guide = made.tax.clone().unwrap();
    assert_eq!((guide.format.as_deref(), guide.kind.as_deref()), (Some("data"), Some("darf")));
    let data = guide.data.unwrap();
    assert_eq!((data["tax_code"].as_str(), data["taxpayer_number"].as_str()), (Some("0561"), Some("11222333000181")));

    standin.advance(&made.uid, "confirmed").unwrap();
    let events = deliver_all(&h, &standin).await;
    assert_eq!(codes(&events), ["payment.db.updated"; 2]);
    let paid = payable(&h, &token, &darf).await;
    assert_eq!((paid["status"].as_str(), paid["kobana_status"].as_str()), (Some("paid"), Some("confirmed")));
    assert_eq!(paid["ticket_amount"], "830.45");
    assert_eq!(settlements(&h, &darf).await, 1);
    let receipt = receipt_of(&h, &token, &darf).await;
    assert_eq!(
        (receipt["amount"].as_str(), receipt["payment_method_kind"].as_str()),
        (Some("830.45"), Some("tribute"))
    );
    assert_eq!(receipt["payee_name"], "Fornecedor TED", "the bank names no payee: the payable's person");

    // A tax slip with its barcode is a slip, as before.
    let slip = json!({"payment_method_kind": "tribute", "barcode": "84670000001435900240200240500024384221010811"});
    let iptu = official(&h, &token, "IPTU parcela 12", "143.59", slip).await;
    assert_eq!(dispatch(&h, &token, &iptu, "iptu-1").await.status, 200);
    let made = standin.payments()[1].clone();
    assert_eq!((made.kind, made.tax.is_none()), (gateway::PaymentKind::Utility, true));
}

#[tokio::test]
async fn what_a_ted_and_a_tax_guide_need_is_named() {
    let (h, standin) = with_gateway().await;
    let token = h.api_token(DEMO_OWNER);
    for (field, cleared) in [
        ("bank_code", json!({"bank_code": null})),
        ("agency", json!({"agency": null})),
        ("account_number", json!({"account_number": null})),
        ("account_digit", json!({"account_digit": null})),
        ("beneficiary_document", json!({"beneficiary_document": null})),
    ] {
        let mut coordinates = ted_coordinates();
        coordinates.as_object_mut().unwrap().extend(cleared.as_object().unwrap().clone());
        let ted = official(&h, &token, &format!("TED sem {field}"), "10.00", coordinates).await;
        let refused = dispatch(&h, &token, &ted, &format!("ted-{field}")).await;
        assert_eq!((refused.status.as_u16(), details(&refused)), (422, pair(field, "missing")), "{}", text(&refused));
        assert!(refused.json()["error"]["message"].as_str().unwrap().contains(field), "{}", text(&refused));
    }
    // The bank by its ISPB alone is enough (Banco do Brasil's is 00000000).
    let by_ispb = json!({"bank_code": null, "bank_ispb": "00000000"});
    let mut coordinates = ted_coordinates();
    coordinates.as_object_mut().unwrap().extend(by_ispb.as_object().unwrap().clone());
    let ted = official(&h, &token, "TED pelo ISPB", "10.00", coordinates).await;
    assert_eq!(dispatch(&h, &token, &ted, "ted-ispb").await.status, 200);
    let account = standin.payments()[0].target.clone().unwrap().bank_account.unwrap();
    assert_eq!((account.compe_number, account.ispb_number), (None, Some(0)));

    // A tax guide without a barcode needs its data, and every member of its form.
    let bare = official(&h, &token, "Guia sem dados", "10.00", json!({"payment_method_kind": "tribute"})).await;
    let refused = dispatch(&h, &token, &bare, "tax-bare").await;
    assert_eq!((refused.status.as_u16(), details(&refused)), (422, pair("tax_data", "missing")), "{}", text(&refused));
    let partial = json!({"payment_method_kind": "tribute", "tax_kind": "darf",
        "tax_data": {"tax_code": "0561", "taxpayer_type": "cnpj", "taxpayer_number": "11222333000181", "expire_at": "2026-12-20"}});
    let partial = official(&h, &token, "DARF incompleto", "10.00", partial).await;
    let refused = dispatch(&h, &token, &partial, "tax-partial").await;
    assert_eq!(details(&refused), pair("tax_data.taxpayer_name", "missing"), "{}", text(&refused));
    let message = refused.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(message.contains("taxpayer_name, calculation_date"), "{message}");
    // A guide's totals are its other form.
    let totals = json!({"payment_method_kind": "tribute", "tax_kind": "gps",
        "tax_data": {"total_amount": 10.0, "expire_at": "2026-12-20"}});
    let gps = official(&h, &token, "GPS por totais", "10.00", totals).await;
    assert_eq!(dispatch(&h, &token, &gps, "tax-totals").await.status, 200);
    assert_eq!(standin.payments_made(), 2, "only the complete ones reached the bank");
}

/// The stand-in refuses what the banking API refuses, with its error body, and the
/// client reads the reasons: a body its kind's required fields are missing from.
#[tokio::test]
async fn the_banking_stand_in_names_each_field_a_ted_or_a_tax_body_lacks() {
    use kobana_finance_mcp::config::{GatewayConfig, GatewayCredentials};
    use kobana_finance_mcp::gateway::{BankAccount, Credentials, Gateway, GatewayError, NewPayment, PaymentKind};

    let (_h, standin) = with_gateway().await;
    let client = Gateway::new(
        &GatewayConfig {
            url: Some(standin.url.clone()),
            credentials: GatewayCredentials::Static(Credentials {
                api_token: API_TOKEN.into(),
                webhook_secret: WEBHOOK_SECRET.into(),
            }),
            embedded: false,
        },
        &kobana_finance_mcp::aws::Aws::default(),
    );
    let base = NewPayment {
        amount: Cents(1_000),
        financial_account_uid: ACME_CHECKING_KOBANA_UID.into(),
        ..NewPayment::default()
    };
    let refused = |kind, new: NewPayment| {
        let client = &client;
        async move {
            match client.create_payment(kind, &new, "k").await {
                Err(GatewayError::Refused { status, reasons }) => {
                    assert_eq!(status.as_u16(), 422);
                    assert!(reasons.iter().all(|r| r.code.as_deref() == Some("validation_error")), "{reasons:?}");
                    reasons.into_iter().map(|r| r.param.unwrap_or_default()).collect::<Vec<_>>()
                }
                other => panic!("{other:?}"),
            }
        }
    };
    assert_eq!(refused(PaymentKind::Ted, base.clone()).await, ["bank_account"]);
    let no_account =
        BankAccount { compe_number: Some(341), agency_number: Some("0001".into()), ..BankAccount::default() };
    let ted = NewPayment { bank_account: Some(no_account), amount: Cents(0), ..base.clone() };
    assert_eq!(refused(PaymentKind::Ted, ted).await, ["bank_account.account_number", "amount"]);
    assert_eq!(refused(PaymentKind::Tax, base.clone()).await, ["kind", "code"]);
    let by_data = NewPayment { tax_kind: Some("darf".into()), format: Some("data".into()), ..base.clone() };
    assert_eq!(refused(PaymentKind::Tax, by_data.clone()).await, ["data"]);
    let data =
        serde_json::from_value(json!({"tax_code": "0561", "taxpayer_type": "cpf", "taxpayer_number": "39053344705",
        "taxpayer_name": "Maria", "calculation_date": "2026-11-30"}))
        .unwrap();
    let no_expiry = NewPayment { data: Some(data), tax_kind: Some("irpf".into()), ..by_data };
    assert_eq!(refused(PaymentKind::Tax, no_expiry).await, ["data.expire_at", "kind"]);
    assert_eq!(standin.payments_made(), 0);
}

#[tokio::test]
async fn a_ted_and_a_tax_guide_are_cancelled_at_their_paths_while_the_bank_holds_them() {
    let (h, standin) = with_gateway().await;
    let token = h.api_token(DEMO_OWNER);
    for (n, coordinates) in [ted_coordinates(), darf_coordinates()].into_iter().enumerate() {
        let bill = official(&h, &token, &format!("A cancelar {n}"), "99.90", coordinates).await;
        let first = dispatch(&h, &token, &bill, &format!("d{n}")).await.json();
        let stopped = cancel(&h, &token, &bill, &format!("c{n}")).await;
        assert_eq!(stopped.status, 200, "{}", text(&stopped));
        assert_eq!(
            (stopped.json()["kobana_status"].as_str(), stopped.json()["status"].as_str()),
            (Some("canceled"), Some("pending"))
        );
        let uid = first["kobana_payment_uid"].as_str().unwrap();
        let at_bank = standin.payments().into_iter().find(|p| p.uid == uid).unwrap();
        assert_eq!(at_bank.status, PaymentStatus::Cancelled, "the stand-in cancelled it at {}", at_bank.kind.path());
        // Sent again, a new payment; once paid, it cannot be stopped.
        let second = dispatch(&h, &token, &bill, &format!("e{n}")).await.json();
        let uid = second["kobana_payment_uid"].as_str().unwrap().to_string();
        standin.advance(&uid, "confirmed").unwrap();
        deliver_all(&h, &standin).await;
        let late = cancel(&h, &token, &bill, &format!("f{n}")).await;
        assert_eq!(details(&late), pair("id", "dispatch_terminal"));
        assert_eq!(
            (payable(&h, &token, &bill).await["status"].as_str(), settlements(&h, &bill).await),
            (Some("paid"), 1)
        );
    }
    assert_eq!(standin.payments_made(), 4);
}

#[tokio::test]
async fn a_ted_or_a_tax_guide_retried_after_a_lost_answer_pays_once_and_the_gateway_down_writes_nothing() {
    let (h, standin) = with_gateway().await;
    let token = h.api_token(DEMO_OWNER);
    for (n, coordinates) in [ted_coordinates(), darf_coordinates()].into_iter().enumerate() {
        let bill = official(&h, &token, &format!("Repetido {n}"), "321.00", coordinates).await;
        let before = standin.payments_made();
        standin.fail_next(1);
        let down = dispatch(&h, &token, &bill, &format!("a{n}")).await;
        assert_eq!(down.status, 503, "{}", text(&down));
        assert_eq!(down.json()["error"]["code"], "service_unavailable");
        assert!(down.header("retry-after").is_some());
        assert_eq!(standin.payments_made(), before);
        assert_eq!(count(&h, "SELECT COUNT(*) FROM payment_dispatches WHERE billing_id = $1", &bill).await, 0);
        assert_eq!(
            count(
                &h,
                "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = 'payables.send_to_bank'",
                &bill
            )
            .await,
            0
        );

        standin.lose_next_answers(1);
        let lost = dispatch(&h, &token, &bill, &format!("b{n}")).await;
        assert_eq!(lost.status, 503, "{}", text(&lost));
        assert_eq!(standin.payments_made(), before + 1, "the bank made it");
        assert!(payable(&h, &token, &bill).await["kobana_status"].is_null(), "nothing recorded here");

        let retried = dispatch(&h, &token, &bill, &format!("c{n}")).await;
        assert_eq!(retried.status, 200, "{}", text(&retried));
        assert_eq!(standin.payments_made(), before + 1, "the retry found the payment the lost answer made");
        let uid = retried.json()["kobana_payment_uid"].as_str().unwrap().to_string();
        assert_eq!(uid, standin.payments()[before].uid);
        standin.advance(&uid, "confirmed").unwrap();
        deliver_all(&h, &standin).await;
        assert_eq!((settlements(&h, &bill).await, receipts_of(&h, &bill).await), (1, 1));
    }
}

#[tokio::test]
async fn the_tool_sends_a_ted_and_a_tax_guide_once_the_user_confirms_and_names_what_they_lack() {
    let (h, standin) = with_gateway().await;
    let token = h.api_token(DEMO_OWNER);
    let mcp = h.token(DEMO_OWNER);
    let ted = official(&h, &token, "Frete pelo TED", "1250.00", ted_coordinates()).await;
    let darf = official(&h, &token, "DARF pela ferramenta", "830.45", darf_coordinates()).await;
    for (bill, parts) in [
        (&ted, ["Frete pelo TED", "R$ 1.250,00", "TED", "Conta corrente"]),
        (&darf, ["DARF pela ferramenta", "R$ 830,45", "tax guide", "Conta corrente"]),
    ] {
        let capable = |extra: Value| {
            crate::tools_catalogue::confirmable("finance_payables_send_to_bank", json!({"id": bill}), extra)
                .bearer(&mcp)
                .build()
        };
        let ask = h.send(capable(json!({}))).await.result();
        assert_eq!(ask["resultType"], "input_required", "{ask}");
        let message = ask["inputRequests"]["confirm"]["params"]["message"].as_str().unwrap().to_string();
        for part in parts {
            assert!(message.contains(part), "{part} in {message}");
        }
        let accept = json!({"requestState": ask["requestState"], "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}});
        let done = h.send(capable(accept)).await.result();
        assert_eq!(done["structuredContent"]["kobana_status"], "pending", "{done}");
    }
    let kinds: Vec<_> = standin.payments().iter().map(|p| p.kind).collect();
    assert_eq!(kinds, [gateway::PaymentKind::Ted, gateway::PaymentKind::Tax]);

    // What a TED lacks is named before the user is asked.
    let mut coordinates = ted_coordinates();
    coordinates["account_number"] = Value::Null;
    let lacking = official(&h, &token, "TED sem conta", "10.00", coordinates).await;
    let asked = crate::tools_catalogue::confirmable("finance_payables_send_to_bank", json!({"id": lacking}), json!({}));
    let refused = h.send(asked.bearer(&mcp).build()).await.result();
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(tool_error(&refused)["details"]["field"], "account_number", "{refused}");
    assert_eq!(standin.payments_made(), 2);
}

/// The demo's walkthrough: December's service charge goes by TED and November's DARF by
/// its data, each straight from the demo (their method, coordinates and account seeded),
/// and both are paid with their receipts.
#[tokio::test]
async fn the_demos_service_charge_goes_by_ted_and_its_darf_by_its_data() {
    let (h, standin) = with_gateway().await;
    let token = h.api_token(DEMO_OWNER);
    for (n, bill) in [ACME_SERVICE_CHARGE_DECEMBER, ACME_DARF_NOVEMBER].into_iter().enumerate() {
        let sent = dispatch(&h, &token, bill, &format!("demo-{n}")).await;
        assert_eq!(sent.status, 200, "{}", text(&sent));
        let uid = sent.json()["kobana_payment_uid"].as_str().unwrap().to_string();
        standin.advance(&uid, "confirmed").unwrap();
    }
    deliver_all(&h, &standin).await;
    let kinds: Vec<_> = standin.payments().iter().map(|p| (p.kind, p.amount)).collect();
    assert_eq!(kinds, [(gateway::PaymentKind::Ted, Cents(85_000)), (gateway::PaymentKind::Tax, Cents(83_045))]);
    for (bill, payee, method) in [
        (ACME_SERVICE_CHARGE_DECEMBER, "Imobiliária Central Ltda", "ted"),
        (ACME_DARF_NOVEMBER, "Receita Federal do Brasil", "tribute"),
    ] {
        assert_eq!(payable(&h, &token, bill).await["status"], "paid");
        let receipt = receipt_of(&h, &token, bill).await;
        assert_eq!(
            (receipt["payee_name"].as_str(), receipt["payment_method_kind"].as_str()),
            (Some(payee), Some(method))
        );
    }
}

/// The README's walkthrough: December's rent paid by its boleto from the checking
/// account. Its receipt names the landlord the bill names as the slip's beneficiary, not
/// what the bank made of the barcode; a bill that names no beneficiary, its person.
#[tokio::test]
async fn a_receipt_names_the_payee_the_bill_names() {
    let (h, standin) = with_gateway().await;
    let token = h.api_token(DEMO_OWNER);
    let body = json!({"expected_account_id": ACME_CHECKING_ACCOUNT});
    let reply = send(&h, Method::PATCH, &format!("/v1/payables/{ACME_RENT_DECEMBER}"), &token, Some(body)).await;
    assert_eq!(reply.status, 200, "{}", text(&reply));
    let sent = dispatch(&h, &token, ACME_RENT_DECEMBER, "rent-december").await;
    assert_eq!(sent.status, 200, "{}", text(&sent));
    let uid = sent.json()["kobana_payment_uid"].as_str().unwrap().to_string();
    standin.advance(&uid, "confirmed").unwrap();
    deliver_all(&h, &standin).await;
    assert_eq!(payable(&h, &token, ACME_RENT_DECEMBER).await["status"], "paid");
    let receipt = receipt_of(&h, &token, ACME_RENT_DECEMBER).await;
    assert_eq!(
        (receipt["payee_name"].as_str(), receipt["payee_document"].as_str()),
        (Some("Imobiliária Central Ltda"), Some("45997418000153")),
        "{receipt}"
    );
}
