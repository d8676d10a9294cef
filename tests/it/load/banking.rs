//! Money through the bank under load, with faults: clients send payables (boletos, TEDs
//! and tax guides by their data) to the bank, charge receivables by Pix and cancel
//! both, concurrently, for a bounded time, while the stand-in of the banking API fails
//! a share of its calls — before acting, or after acting with its answer lost, as a
//! timeout loses it — and moves every payment and charge on its own, delivering its
//! events late and in no particular order to the server over TCP (loopback). Then, once
//! the bank is done:
//!
//! * nothing paid twice: per payable at most one confirmed payment at the bank, per
//!   receivable at most one paid charge;
//! * nothing lost: every payment and charge the bank made is recorded on its record,
//!   every confirmed payment settled once (one ledger transaction, one receipt), every
//!   paid charge received once;
//! * every record's final state is the bank's: `kobana_status` is its current payment's
//!   status there, `charge_state` its current charge's;
//! * no answer but 200, 409, 422 and 503 (with `Retry-After`).
//!
//! `banking_load_with_faults` runs in `make test` (16 clients × 6 s, the suite's
//! database); `external_banking_load` (ignored; `make load`) at `LOAD_CLIENTS` (64) for
//! `LOAD_SECONDS` (60).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http::Method;
use serde_json::json;

use kobana_finance_mcp::gateway::standin::{Auto, Options, StandIn};
use kobana_finance_mcp::gateway::{ChargeStatus, PaymentStatus};
use kobana_finance_mcp::ops::bills::approval::set_gate;

use crate::common::gateway::{demo_banking_at, standin_options, API_TOKEN, WEBHOOK_SECRET};
use crate::common::*;

/// The demo boleto's barcode (its check digits hold).
/// A bank boleto's barcode (44 digits) whose free field carries `n`, its general check
/// digit computed: each payable its own slip (a slip is on one open payable at a time).
fn boleto(n: usize) -> String {
    let digits = format!("3419{}{n:025}", "16560000450000");
    let sum: u32 = digits.bytes().rev().zip((2..=9).cycle()).map(|(d, w)| u32::from(d - b'0') * w).sum();
    let check = match 11 - sum % 11 {
        0 | 10 | 11 => 1,
        digit => digit,
    };
    format!("{}{check}{}", &digits[..4], &digits[4..])
}

/// What the clients were answered, by operation and status.
type Tally = BTreeMap<(&'static str, u16), u64>;

async fn run(clients: usize, seconds: u64, records: usize) -> String {
    // The server's address first: the stand-in posts its events there.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let standin = StandIn::start(Options {
        auto: Some(Auto {
            webhook_url: format!("http://{addr}/v1/webhooks/kobana"),
            step: Duration::from_millis(400),
            delay: Duration::from_millis(250),
        }),
        failure_rate: 0.10,
        lost_answer_rate: 0.05,
        ..standin_options(API_TOKEN, WEBHOOK_SECRET)
    })
    .await
    .unwrap();
    let h = demo_banking_at(standin.url.clone()).await;
    let app = h.app.clone();
    tokio::spawn(async move { axum::serve(listener, app).await });
    set_gate(&h.state.db, DEMO_WORKSPACE_ACME, false).await.unwrap();
    let token = h.api_token(DEMO_OWNER);
    let mut payables = Vec::new();
    let mut receivables = Vec::new();
    for i in 0..records {
        let amount = format!("{}.{:02}", 100 + i, i % 100);
        // A boleto, a TED and a DARF by its data in turn: every kind of payment the
        // bank makes through its own path.
        let mut payable = json!({"company_id": ACME_COMPANY, "description": format!("Payable {i}"), "amount": amount,
            "due_date": "2026-12-20", "person_id": ACME_LANDLORD, "expected_account_id": ACME_CHECKING_ACCOUNT});
        let coordinates = match i % 3 {
            0 => json!({"payment_method_kind": "bank_billet", "barcode": boleto(i)}),
            1 => crate::dispatch::ted_coordinates(),
            _ => crate::dispatch::darf_coordinates(),
        };
        payable.as_object_mut().unwrap().extend(coordinates.as_object().unwrap().clone());
        payables.push(id(&create_at(&h, "/v1/payables", &token, payable).await));
        let receivable = json!({"company_id": ACME_COMPANY, "description": format!("Venda {i}"), "amount": amount,
            "due_date": "2026-12-20", "person_id": ACME_CUSTOMER_MARIA, "expected_account_id": ACME_CHECKING_ACCOUNT});
        receivables.push(id(&create_at(&h, "/v1/receivables", &token, receivable).await));
    }

    let h = Arc::new(h);
    let (payables, receivables) = (Arc::new(payables), Arc::new(receivables));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut tasks = Vec::new();
    for client in 0..clients {
        let (h, token, payables, receivables) =
            (Arc::clone(&h), token.clone(), Arc::clone(&payables), Arc::clone(&receivables));
        tasks.push(tokio::spawn(async move {
            let mut tally = Tally::new();
            let mut seed = 0x2545_f491_4f6c_dd1d_u64 ^ (client as u64 + 1).wrapping_mul(0x9e37_79b9);
            let mut next = move |n: usize| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed % n as u64) as usize
            };
            let mut sent = 0u64;
            while Instant::now() < deadline {
                sent += 1;
                let roll = next(100);
                let (what, path, body) = if roll < 45 {
                    ("send-to-bank", format!("/v1/payables/{}/send-to-bank", payables[next(payables.len())]), None)
                } else if roll < 90 {
                    let id = &receivables[next(receivables.len())];
                    ("charge", format!("/v1/receivables/{id}/charge"), Some(json!({"kind": "pix"})))
                } else if roll < 95 {
                    (
                        "cancel-dispatch",
                        format!("/v1/payables/{}/cancel-dispatch", payables[next(payables.len())]),
                        None,
                    )
                } else {
                    (
                        "charge/cancel",
                        format!("/v1/receivables/{}/charge/cancel", receivables[next(receivables.len())]),
                        None,
                    )
                };
                let key = format!("load-{client}-{sent}");
                let request = rest(Method::POST, &path, &token, body).header("x-idempotency-key", &key).build();
                let reply = h.send(request).await;
                let status = reply.status.as_u16();
                assert!(
                    matches!(status, 200 | 409 | 422) || (status == 503 && reply.header("retry-after").is_some()),
                    "{what} {path}: {status} {}",
                    text(&reply)
                );
                *tally.entry((what, status)).or_default() += 1;
            }
            tally
        }));
    }
    let mut tally = Tally::new();
    for task in tasks {
        for (k, v) in task.await.unwrap() {
            *tally.entry(k).or_default() += v;
        }
    }

    // Until the bank is done and its last events are taken (on a busy machine the events
    // answered 503 are delivered again, every 2 s at most); past the wait, the first
    // difference is the failure.
    let settle_by = Instant::now() + Duration::from_secs(240);
    loop {
        let bank_done =
            standin.payments().iter().all(|p| ["confirmed", "rejected", "canceled"].contains(&p.status.as_str()))
                && standin.pix_charges().iter().all(|c| ["paid", "canceled"].contains(&c.state.status.as_str()));
        let strict = Instant::now() >= settle_by;
        assert!(bank_done || !strict, "the bank's payments and charges did not end within the wait");
        if bank_done && consistent(&h, &token, &standin, &payables, &receivables, strict).await {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // The settlements, events and cancellations under load kept the reports' totals.
    assert_report_totals_agree(&h).await;
    let lines: Vec<String> = tally.iter().map(|((what, status), n)| format!("{what} {status}: {n}")).collect();
    format!(
        "{clients} clients × {seconds} s: {} payments and {} Pix charges at the bank; {}",
        standin.payments_made(),
        standin.pix_charges().len(),
        lines.join(", ")
    )
}

/// Whether every record agrees with the bank (asserting it, when `strict`).
async fn consistent(
    h: &Harness,
    token: &str,
    standin: &StandIn,
    payables: &[String],
    receivables: &[String],
    strict: bool,
) -> bool {
    let check = |ok: bool, why: String| {
        assert!(ok || !strict, "{why}");
        ok
    };
    let payments = standin.payments();
    for payable in payables {
        let made: Vec<_> = payments.iter().filter(|p| p.external_id.as_deref() == Some(payable.as_str())).collect();
        let confirmed = made.iter().filter(|p| p.status == PaymentStatus::Confirmed).count();
        if !check(confirmed <= 1, format!("{payable} paid {confirmed} times by the bank")) {
            return false;
        }
        for payment in &made {
            let known = count(h, "SELECT COUNT(*) FROM payment_dispatches WHERE payment_uid = $1", &payment.uid).await;
            if !check(known == 1, format!("{payable}: the bank's payment {} is not recorded", payment.uid)) {
                return false;
            }
        }
        let record = send(h, Method::GET, &format!("/v1/payables/{payable}"), token, None).await.json();
        let settled = count(h, "SELECT COUNT(*) FROM financial_transactions WHERE billing_id = $1", payable).await;
        let receipts = count(h, "SELECT COUNT(*) FROM receipts WHERE payable_id = $1", payable).await;
        let paid = if confirmed == 1 { "paid" } else { "pending" };
        if !check(
            record["status"] == paid && settled == confirmed as i64 && receipts == confirmed as i64,
            format!(
                "{payable}: {} with {settled} transactions and {receipts} receipts; the bank confirmed {confirmed}",
                record["status"]
            ),
        ) {
            return false;
        }
        if let Some(uid) = record["kobana_payment_uid"].as_str() {
            let theirs = payments.iter().find(|p| p.uid == uid).map(|p| p.status.as_str());
            if !check(
                record["kobana_status"].as_str() == theirs,
                format!("{payable}: {} here, {theirs:?} at the bank", record["kobana_status"]),
            ) {
                return false;
            }
        }
    }
    let charges = standin.pix_charges();
    for receivable in receivables {
        let made: Vec<_> = charges.iter().filter(|c| c.external_id.as_deref() == Some(receivable.as_str())).collect();
        let paid = made.iter().filter(|c| c.state.status == ChargeStatus::Paid).count();
        if paid > 1 && strict {
            // What the bank and the books hold of it, to tell how a second charge came.
            let rows = sql::query(
                "SELECT charge_uid || ' attempt ' || attempt || ' current ' || current || ' ' || status || ' at ' || created_at
                   FROM receivable_charges WHERE billing_id = $1 ORDER BY created_at",
            )
            .bind(receivable.clone())
            .map_all(&h.state.db, |r| r.try_get::<String, _>(0))
            .await
            .unwrap();
            let audit = sql::query(
                "SELECT action || ' ' || channel || ' ' || occurred_at || ' ' || outcome || ' ' || COALESCE(details, '')
                   FROM audit_events WHERE target_id = $1 ORDER BY occurred_at",
            )
            .bind(receivable.clone())
            .map_all(&h.state.db, |r| r.try_get::<String, _>(0))
            .await
            .unwrap_or_default();
            let bank: Vec<String> = made
                .iter()
                .map(|c| format!("{} {} created {} updated {}", c.uid, c.state.status, c.created_at, c.updated_at))
                .collect();
            panic!("{receivable} paid {paid} times\nbank: {bank:#?}\nbooks: {rows:#?}\naudit: {audit:#?}");
        }
        if !check(paid <= 1, format!("{receivable} paid {paid} times")) {
            return false;
        }
        for charge in &made {
            let known = count(h, "SELECT COUNT(*) FROM receivable_charges WHERE charge_uid = $1", &charge.uid).await;
            if !check(known == 1, format!("{receivable}: the bank's charge {} is not recorded", charge.uid)) {
                return false;
            }
        }
        let record = send(h, Method::GET, &format!("/v1/receivables/{receivable}"), token, None).await.json();
        let settled = count(h, "SELECT COUNT(*) FROM financial_transactions WHERE billing_id = $1", receivable).await;
        let status = if paid == 1 { "received" } else { "pending" };
        if !check(
            record["status"] == status && settled == paid as i64,
            format!("{receivable}: {} with {settled} transactions; {paid} paid at the bank", record["status"]),
        ) {
            return false;
        }
        if let Some(uid) = record["kobana_charge_uid"].as_str() {
            let theirs = charges.iter().find(|c| c.uid == uid).map(|c| c.state.status.as_str());
            if !check(
                record["kobana_status"].as_str() == theirs,
                format!("{receivable}: {} here, {theirs:?} at the bank", record["kobana_status"]),
            ) {
                return false;
            }
        }
    }
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn banking_load_with_faults() {
    let report = run(16, 6, 24).await;
    eprintln!("{report}");
}

/// `make load`: `LOAD_CLIENTS` (64) clients for `LOAD_SECONDS` (60).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "make load: 64 clients for 60 s"]
async fn external_banking_load() {
    let number = |name: &str, default: u64| std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    let report = run(number("LOAD_CLIENTS", 64) as usize, number("LOAD_SECONDS", 60), 64).await;
    println!("{report}");
    if let Ok(path) = std::env::var("KFIN_LOAD_BANKING_REPORT") {
        std::fs::write(path, format!("# Banking load with faults\n\n{report}\n")).unwrap();
    }
}
