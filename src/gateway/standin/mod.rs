//! A stand-in of Kobana's banking API, for `make run` and the tests: the payment paths
//! the gateway client calls (`POST /v2/payment/{bank_billets|utilities|pix|taxes}`,
//! `/v2/transfer/{pix|ted}`, `GET …/{uid}`, `PUT …/{uid}/cancel`) and the charges', with
//! the same bodies, its own state, and the events a real gateway sends (a transfer's
//! `transfer.db.updated`, any other payment's `payment.db.updated`), signed as it signs
//! them. It listens on 127.0.0.1 only, on a port of
//! its own, and stops with the process that started it.
//!
//! A payment starts `pending`, is `scheduled`, then `confirmed` (paid); `rejected` and
//! `canceled` are the other ends. With [`Auto`] it moves each payment one step every
//! `step` and delivers each change to the webhook URL after `delay` (retried until
//! delivered); without it, a test moves payments with [`StandIn::advance`] and takes
//! the signed events with [`StandIn::take_events`]. Failures are injected on request:
//! a share of calls answered 503 before anything happens, or after the payment is made
//! (the answer lost, as a timeout loses it).
//!
//! The payments' paths are in `payments.rs`, the charges' (Pix charges, boletos) in
//! `charges.rs`; here, what every call starts with, the state and the clock that moves it.

mod charges;
mod payments;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use bytes::Bytes;
use http_body_util::Full;

use self::charges::{billet_moved, cancel_billet, cancel_pix, create_billet, create_pix, pix_moved};
use self::payments::{cancel, create, moved, show};
use super::{
    sign, BankBillet, ChargeStatus, ErrorBody, Event, Payment, PaymentStatus, PixCharge, Reason, RegistrationStatus,
};

/// How the stand-in moves payments by itself and tells the product.
#[derive(Debug, Clone)]
pub struct Auto {
    /// Where events are posted (`…/v1/webhooks/kobana`).
    pub webhook_url: String,
    /// The time between two steps of a payment.
    pub step: Duration,
    /// How long an event waits before it is delivered.
    pub delay: Duration,
}

/// What the stand-in accepts and how it behaves.
#[derive(Debug, Clone)]
pub struct Options {
    pub api_token: String,
    pub webhook_secret: String,
    /// The accounts it knows (`financial_account_uid`, a Pix charge's `pix_account_uid`).
    pub accounts: Vec<String>,
    /// The boleto agreements it knows (`bank_billet_account_id`).
    pub billet_accounts: Vec<i64>,
    pub auto: Option<Auto>,
    /// The share of calls answered 503 before anything happens (0 to 1).
    pub failure_rate: f64,
    /// The share of creations (payments, Pix charges) whose answer is lost: the payment
    /// or charge is made, the caller gets a 503 (0 to 1).
    pub lost_answer_rate: f64,
}

/// What the stand-in holds.
#[derive(Default)]
struct Book {
    payments: Vec<Payment>,
    pix: Vec<PixCharge>,
    billets: Vec<BankBillet>,
    /// Pix charges whose cancellation was asked for (confirmed at their next step).
    cancelling: Vec<String>,
    /// The payment each idempotency key made.
    keys: HashMap<String, String>,
    /// Events not yet taken (manual mode) or delivered (auto mode).
    events: Vec<Event>,
    next_event: i64,
    /// Failures still to inject on the next calls, whatever the rates.
    fail_next: u32,
    lose_next: u32,
    /// A small deterministic generator for the rates.
    seed: u64,
    /// When each payment last moved, in steps of the clock below.
    moved: HashMap<String, std::time::Instant>,
    /// The body of each payment asked for, with its path, as received.
    requests: Vec<(String, serde_json::Value)>,
}

struct Shared {
    options: Options,
    book: Mutex<Book>,
}

/// A running stand-in.
pub struct StandIn {
    shared: Arc<Shared>,
    /// Its base URL: `http://127.0.0.1:{port}`.
    pub url: String,
}

impl StandIn {
    /// Starts it on a free port of 127.0.0.1.
    pub async fn start(options: Options) -> Result<StandIn, String> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("the banking stand-in cannot listen: {e}"))?;
        let url = format!("http://{}", listener.local_addr().map_err(|e| e.to_string())?);
        let auto = options.auto.clone();
        let shared =
            Arc::new(Shared { options, book: Mutex::new(Book { seed: 0x9e37_79b9_7f4a_7c15, ..Book::default() }) });
        let router = Router::new()
            .route("/v2/payment/{collection}", post(create))
            .route("/v2/payment/{collection}/{uid}", get(show))
            .route("/v2/payment/{collection}/{uid}/cancel", put(cancel))
            .route("/v2/transfer/{collection}", post(create))
            .route("/v2/transfer/{collection}/{uid}", get(show))
            .route("/v2/transfer/{collection}/{uid}/cancel", put(cancel))
            .route("/v2/charge/pix", post(create_pix))
            .route("/v2/charge/pix/{uid}/cancel", put(cancel_pix))
            .route("/v1/bank_billets", post(create_billet))
            .route("/v1/bank_billets/{id}/cancel", put(cancel_billet))
            .with_state(Arc::clone(&shared));
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        if let Some(auto) = auto {
            tokio::spawn(run_auto(Arc::clone(&shared), auto));
        }
        Ok(StandIn { shared, url })
    }

    /// How many payments it has made (each idempotency key makes one at most).
    pub fn payments_made(&self) -> usize {
        self.book().payments.len()
    }

    /// Every payment as it stands.
    pub fn payments(&self) -> Vec<Payment> {
        self.book().payments.clone()
    }

    /// The body of every payment asked for (answered or refused), with its path, in the
    /// order received: what a client sent, to hold against the banking API's document.
    pub fn payment_requests(&self) -> Vec<(String, serde_json::Value)> {
        self.book().requests.clone()
    }

    /// Every Pix charge as it stands.
    pub fn pix_charges(&self) -> Vec<PixCharge> {
        self.book().pix.clone()
    }

    /// The next `n` calls answer 503 before anything happens.
    pub fn fail_next(&self, n: u32) {
        self.book().fail_next = n;
    }

    /// The next `n` creations (payments, Pix charges) make what they were asked for and
    /// answer 503 (a lost answer).
    pub fn lose_next_answers(&self, n: u32) {
        self.book().lose_next = n;
    }

    /// Moves a payment to `status` now, as the bank would, and queues its event.
    pub fn advance(&self, uid: &str, status: &str) -> Option<Payment> {
        let mut book = self.book();
        let payment = book.payments.iter_mut().find(|p| p.uid == uid)?;
        moved(payment, PaymentStatus::from(status));
        let payment = payment.clone();
        book.event(&payment);
        Some(payment)
    }

    /// How many charges (Pix and boletos) it has issued.
    pub fn charges_made(&self) -> usize {
        let book = self.book();
        book.pix.len() + book.billets.len()
    }

    /// Moves a charge (a Pix uid, or a boleto id) as the bank would — `registered`,
    /// `paid`, `overdue`, `canceled`, `rejected` — and queues its event.
    pub fn advance_charge(&self, key: &str, to: &str) -> bool {
        let mut book = self.book();
        if let Some(charge) = book.pix.iter_mut().find(|c| c.uid == key) {
            pix_moved(charge, to);
            let charge = charge.clone();
            book.pix_event(&charge);
            return true;
        }
        if let Some(billet) = book.billets.iter_mut().find(|b| b.id.to_string() == key) {
            billet_moved(billet, to);
            let billet = billet.clone();
            book.billet_event(&billet);
            return true;
        }
        false
    }

    /// The events queued since the last call, each with its body and signature header.
    pub fn take_events(&self) -> Vec<(Vec<u8>, String)> {
        let events = std::mem::take(&mut self.book().events);
        events.iter().map(|e| self.signed(e)).collect()
    }

    /// An event's body and its signature.
    pub fn signed(&self, event: &Event) -> (Vec<u8>, String) {
        let body = serde_json::to_vec(event).unwrap_or_default();
        let signature = sign(&self.shared.options.webhook_secret, &body);
        (body, signature)
    }

    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        self.shared.book.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Book {
    fn event(&mut self, payment: &Payment) {
        let data = serde_json::to_value(payment).unwrap_or_default();
        let code = match payment.kind.is_transfer() {
            true => "transfer.db.updated",
            false => "payment.db.updated",
        };
        self.record(code, &payment.uid, data, &payment.updated_at);
    }

    fn pix_event(&mut self, charge: &PixCharge) {
        let data = serde_json::to_value(charge).unwrap_or_default();
        self.record("pix.db.updated", &charge.uid, data, &charge.updated_at);
    }

    fn billet_event(&mut self, billet: &BankBillet) {
        let data = serde_json::to_value(billet).unwrap_or_default();
        let at = billet.updated_at.clone().unwrap_or_default();
        self.record("bank_billet.updated", &billet.id.to_string(), data, &at);
    }

    fn record(&mut self, code: &str, key: &str, data: serde_json::Value, at: &str) {
        self.next_event += 1;
        self.events.push(Event { id: self.next_event, code: code.into(), data, occurred_at: Some(at.to_string()) });
        self.moved.insert(key.to_string(), std::time::Instant::now());
    }

    /// Whether to inject a failure now, given a rate (xorshift: deterministic per run).
    /// Whether the answer of a creation just made is lost: the next ones asked for by
    /// [`StandIn::lose_next_answers`], else a share `rate` of them.
    fn answer_lost(&mut self, rate: f64) -> bool {
        if self.lose_next > 0 {
            self.lose_next -= 1;
            return true;
        }
        self.roll(rate)
    }

    fn roll(&mut self, rate: f64) -> bool {
        if rate <= 0.0 {
            return false;
        }
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        ((self.seed >> 11) as f64 / (1u64 << 53) as f64) < rate
    }
}

fn refusal(status: StatusCode, code: &str, param: Option<&str>, title: &str) -> Response {
    let body = ErrorBody {
        status: status.as_u16(),
        errors: vec![Reason {
            title: Some(title.to_string()),
            code: Some(code.to_string()),
            param: param.map(str::to_string),
            detail: None,
        }],
    };
    (status, Json(body)).into_response()
}

fn unavailable() -> Response {
    refusal(StatusCode::SERVICE_UNAVAILABLE, "unavailable", None, "Serviço temporariamente indisponível")
}

/// The caller's token, then an injected failure: the checks every call starts with
/// (`Some`: the answer that refuses the call).
fn refusal_of(shared: &Shared, headers: &HeaderMap) -> Option<Response> {
    let token = headers.get("authorization").and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
    if token != Some(shared.options.api_token.as_str()) {
        return Some(refusal(StatusCode::UNAUTHORIZED, "unauthorized", None, "Token de API inválido"));
    }
    let mut book = shared.book.lock().unwrap_or_else(|e| e.into_inner());
    if book.fail_next > 0 {
        book.fail_next -= 1;
        return Some(unavailable());
    }
    let rate = shared.options.failure_rate;
    book.roll(rate).then(unavailable)
}

/// The idempotency key of a call, if it sent one.
fn key_of(headers: &HeaderMap) -> Option<String> {
    headers.get("x-idempotency-key").and_then(|v| v.to_str().ok()).map(str::to_string)
}

fn is_document(text: &str) -> bool {
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    digits.len() == 11 || digits.len() == 14
}

/// Moves each live payment one step per `step` and delivers the events.
async fn run_auto(shared: Arc<Shared>, auto: Auto) {
    // The client that delivers the events, made with the first one (not at start).
    let mut http: Option<Arc<crate::https::Https>> = None;
    let mut tick = tokio::time::interval(auto.step.min(Duration::from_millis(500)));
    loop {
        tick.tick().await;
        let due: Vec<Event> = {
            let mut book = shared.book.lock().unwrap_or_else(|e| e.into_inner());
            let now = std::time::Instant::now();
            let moving: Vec<(String, PaymentStatus)> = book
                .payments
                .iter()
                .filter(|p| book.moved.get(&p.uid).is_none_or(|at| now.duration_since(*at) >= auto.step))
                .filter_map(|p| match p.status {
                    PaymentStatus::Pending => Some((p.uid.clone(), PaymentStatus::Scheduled)),
                    PaymentStatus::Scheduled => Some((p.uid.clone(), PaymentStatus::Confirmed)),
                    _ => None,
                })
                .collect();
            for (uid, status) in moving {
                if let Some(payment) = book.payments.iter_mut().find(|p| p.uid == uid) {
                    moved(payment, status);
                    let payment = payment.clone();
                    book.event(&payment);
                }
            }
            // Charges: registered after a step, paid after another (the customer pays);
            // a Pix whose cancellation was asked for is cancelled instead.
            let due = |key: &str| book.moved.get(key).is_none_or(|at| now.duration_since(*at) >= auto.step);
            let pix: Vec<(String, &'static str)> = book
                .pix
                .iter()
                .filter(|c| due(&c.uid))
                .filter_map(|c| match (&c.state.status, &c.state.registration_status) {
                    (ChargeStatus::Opened, _) if book.cancelling.contains(&c.uid) => Some((c.uid.clone(), "canceled")),
                    (ChargeStatus::Opened, Some(RegistrationStatus::Pending)) => Some((c.uid.clone(), "registered")),
                    (ChargeStatus::Opened, Some(RegistrationStatus::Confirmed)) => Some((c.uid.clone(), "paid")),
                    _ => None,
                })
                .collect();
            let billets: Vec<(String, &'static str)> = book
                .billets
                .iter()
                .filter(|b| due(&b.id.to_string()))
                .filter_map(|b| match b.state.status {
                    ChargeStatus::Generating => Some((b.id.to_string(), "registered")),
                    ChargeStatus::Opened => Some((b.id.to_string(), "paid")),
                    _ => None,
                })
                .collect();
            for (key, to) in pix.into_iter().chain(billets) {
                if let Some(charge) = book.pix.iter_mut().find(|c| c.uid == key) {
                    pix_moved(charge, to);
                    let charge = charge.clone();
                    book.pix_event(&charge);
                } else if let Some(billet) = book.billets.iter_mut().find(|b| b.id.to_string() == key) {
                    billet_moved(billet, to);
                    let billet = billet.clone();
                    book.billet_event(&billet);
                }
            }
            std::mem::take(&mut book.events)
        };
        if !due.is_empty() && http.is_none() {
            http = Some(Arc::new(crate::https::Https::new()));
        }
        let Some(client) = &http else { continue };
        for event in due {
            // Each delivered on its own after the delay, retried until the product takes
            // it (events may arrive out of order, as a real gateway's may).
            let body = serde_json::to_vec(&event).unwrap_or_default();
            let signature = sign(&shared.options.webhook_secret, &body);
            let (http, url, delay) = (Arc::clone(client), auto.webhook_url.clone(), auto.delay);
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                deliver(&http, &url, body, &signature, event.id).await;
            });
        }
    }
}

/// Posts one event to the product until it is taken (2xx) or refused (4xx), as a
/// gateway does: for as long as the stand-in runs, at most every 2 s once it has failed
/// a few times.
async fn deliver(http: &crate::https::Https, url: &str, body: Vec<u8>, signature: &str, id: i64) {
    for attempt in 0u64.. {
        let request = http::Request::builder()
            .method("POST")
            .uri(url)
            .header("content-type", "application/json")
            .header(super::SIGNATURE_HEADER, signature)
            .body(Full::new(Bytes::from(body.clone())));
        let Ok(request) = request else { return };
        match http.send(request).await {
            Ok(answer) if answer.status.is_success() => return,
            Ok(answer) if answer.status.is_client_error() => {
                tracing::warn!(status = %answer.status, event = id, "the product refused an event");
                return;
            }
            _ => tokio::time::sleep(Duration::from_millis((200 * (attempt + 1)).min(2_000))).await,
        }
    }
}
