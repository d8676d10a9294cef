//! A stand-in of Kobana's banking API, for `make run` and the tests: the payment paths
//! the gateway client calls (`POST /v2/payment/{bank_billets|utilities|pix}`, `GET …/{uid}`,
//! `PUT …/{uid}/cancel`), with the same bodies, its own state, and the events a real
//! gateway sends, signed as it signs them. It listens on 127.0.0.1 only, on a port of
//! its own, and stops with the process that started it.
//!
//! A payment starts `pending`, is `scheduled`, then `confirmed` (paid); `rejected` and
//! `canceled` are the other ends. With [`Auto`] it moves each payment one step every
//! `step` and delivers each change to the webhook URL after `delay` (retried until
//! delivered); without it, a test moves payments with [`StandIn::advance`] and takes
//! the signed events with [`StandIn::take_events`]. Failures are injected on request:
//! a share of calls answered 503 before anything happens, or after the payment is made
//! (the answer lost, as a timeout loses it).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use bytes::Bytes;
use http_body_util::Full;

use super::{sign, Beneficiary, Envelope, ErrorBody, Event, NewPayment, Payment, PaymentKind, Reason, TERMINAL};

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
    /// The source accounts it knows (`financial_account_uid`).
    pub accounts: Vec<String>,
    pub auto: Option<Auto>,
    /// The share of calls answered 503 before anything happens (0 to 1).
    pub failure_rate: f64,
    /// The share of creations whose answer is lost: the payment is made, the caller
    /// gets a 503 (0 to 1).
    pub lost_answer_rate: f64,
}

/// What the stand-in holds.
#[derive(Default)]
struct Book {
    payments: Vec<Payment>,
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

    /// The next `n` calls answer 503 before anything happens.
    pub fn fail_next(&self, n: u32) {
        self.book().fail_next = n;
    }

    /// The next `n` creations make the payment and answer 503 (a lost answer).
    pub fn lose_next_answers(&self, n: u32) {
        self.book().lose_next = n;
    }

    /// Moves a payment to `status` now, as the bank would, and queues its event.
    pub fn advance(&self, uid: &str, status: &str) -> Option<Payment> {
        let mut book = self.book();
        let payment = book.payments.iter_mut().find(|p| p.uid == uid)?;
        moved(payment, status);
        let payment = payment.clone();
        book.event(&payment);
        Some(payment)
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
        self.next_event += 1;
        self.events.push(Event {
            id: self.next_event,
            code: "payment.db.updated".into(),
            data: payment.clone(),
            occurred_at: Some(payment.updated_at.clone()),
        });
        self.moved.insert(payment.uid.clone(), std::time::Instant::now());
    }

    /// Whether to inject a failure now, given a rate (xorshift: deterministic per run).
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

fn moved(payment: &mut Payment, status: &str) {
    let now = crate::clock::now_rfc3339();
    payment.status = status.to_string();
    match status {
        "confirmed" => {
            payment.confirmed_at = Some(now.clone());
            payment.transaction_date = Some(now.clone());
            payment.transaction_code = Some(format!("E{}", payment.uid.replace('-', "")[..20].to_uppercase()));
        }
        "rejected" => {
            payment.rejected_at = Some(now.clone());
            payment.rejected_error = Some("Saldo insuficiente".into());
        }
        _ => {}
    }
    payment.updated_at = now;
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

async fn create(
    State(shared): State<Arc<Shared>>,
    Path(collection): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(refused) = refusal_of(&shared, &headers) {
        return refused;
    }
    let Some(kind) = [PaymentKind::BankBillet, PaymentKind::Utility, PaymentKind::Pix]
        .into_iter()
        .find(|k| k.collection() == collection)
    else {
        return refusal(StatusCode::NOT_FOUND, "not_found", None, "Recurso não encontrado");
    };
    let Ok(new) = serde_json::from_slice::<NewPayment>(&body) else {
        return refusal(StatusCode::UNPROCESSABLE_ENTITY, "invalid", None, "Corpo inválido");
    };
    let code = match kind {
        PaymentKind::Pix => new.qrcode.clone(),
        _ => new.code.clone(),
    };
    let param = if kind == PaymentKind::Pix { "qrcode" } else { "code" };
    let Some(code) = code.filter(|c| !c.trim().is_empty()) else {
        return refusal(StatusCode::UNPROCESSABLE_ENTITY, "blank", Some(param), "não pode ficar em branco");
    };
    if !shared.options.accounts.contains(&new.financial_account_uid) {
        return refusal(
            StatusCode::UNPROCESSABLE_ENTITY,
            "not_found",
            Some("financial_account_uid"),
            "Conta financeira não encontrada",
        );
    }
    if new.amount.is_nan() || new.amount <= 0.0 {
        return refusal(StatusCode::UNPROCESSABLE_ENTITY, "invalid", Some("amount"), "deve ser maior que 0");
    }
    let key = headers.get("x-idempotency-key").and_then(|v| v.to_str().ok()).map(str::to_string);
    let mut book = shared.book.lock().unwrap_or_else(|e| e.into_inner());
    let existing = key.as_ref().and_then(|k| book.keys.get(k)).cloned();
    let payment = match existing.and_then(|uid| book.payments.iter().find(|p| p.uid == uid).cloned()) {
        Some(payment) => payment,
        None => {
            let now = crate::clock::now_rfc3339();
            let payment = Payment {
                uid: uuid::Uuid::new_v4().to_string(),
                kind,
                amount: new.amount,
                status: "pending".into(),
                scheduled_to: new.scheduled_to.clone(),
                confirmed_at: None,
                rejected_at: None,
                rejected_error: None,
                transaction_code: None,
                transaction_date: None,
                financial_account_uid: new.financial_account_uid.clone(),
                external_id: new.external_id.clone(),
                beneficiary: Some(Beneficiary {
                    name: Some(format!(
                        "Beneficiário {}",
                        &code.chars().filter(char::is_ascii_digit).take(3).collect::<String>()
                    )),
                    document_number: None,
                }),
                created_at: now.clone(),
                updated_at: now,
            };
            if let Some(key) = key {
                book.keys.insert(key, payment.uid.clone());
            }
            book.payments.push(payment.clone());
            book.event(&payment);
            payment
        }
    };
    if book.lose_next > 0 {
        book.lose_next -= 1;
        return unavailable();
    }
    let rate = shared.options.lost_answer_rate;
    if book.roll(rate) {
        return unavailable();
    }
    (StatusCode::CREATED, Json(Envelope { status: 201, data: payment })).into_response()
}

async fn show(
    State(shared): State<Arc<Shared>>,
    Path((_collection, uid)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    if let Some(refused) = refusal_of(&shared, &headers) {
        return refused;
    }
    let book = shared.book.lock().unwrap_or_else(|e| e.into_inner());
    match book.payments.iter().find(|p| p.uid == uid) {
        Some(payment) => Json(Envelope { status: 200, data: payment.clone() }).into_response(),
        None => refusal(StatusCode::NOT_FOUND, "not_found", None, "Pagamento não encontrado"),
    }
}

async fn cancel(
    State(shared): State<Arc<Shared>>,
    Path((_collection, uid)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    if let Some(refused) = refusal_of(&shared, &headers) {
        return refused;
    }
    let mut book = shared.book.lock().unwrap_or_else(|e| e.into_inner());
    let Some(payment) = book.payments.iter_mut().find(|p| p.uid == uid) else {
        return refusal(StatusCode::NOT_FOUND, "not_found", None, "Pagamento não encontrado");
    };
    if payment.status == "canceled" {
        let payment = payment.clone();
        return Json(Envelope { status: 200, data: serde_json::json!({"status": "success", "payment": payment}) })
            .into_response();
    }
    if TERMINAL.contains(&payment.status.as_str()) {
        return refusal(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_status",
            Some("status"),
            "O pagamento não pode mais ser cancelado",
        );
    }
    moved(payment, "canceled");
    let payment = payment.clone();
    book.event(&payment);
    Json(Envelope {
        status: 200,
        data: serde_json::json!({"status": "success", "operation": "cancel", "payment": payment}),
    })
    .into_response()
}

/// Moves each live payment one step per `step` and delivers the events.
async fn run_auto(shared: Arc<Shared>, auto: Auto) {
    let http = Arc::new(crate::aws::Https::new());
    let mut tick = tokio::time::interval(auto.step.min(Duration::from_millis(500)));
    loop {
        tick.tick().await;
        let due: Vec<Event> = {
            let mut book = shared.book.lock().unwrap_or_else(|e| e.into_inner());
            let now = std::time::Instant::now();
            let moving: Vec<(String, &'static str)> = book
                .payments
                .iter()
                .filter(|p| book.moved.get(&p.uid).is_none_or(|at| now.duration_since(*at) >= auto.step))
                .filter_map(|p| match p.status.as_str() {
                    "pending" => Some((p.uid.clone(), "scheduled")),
                    "scheduled" => Some((p.uid.clone(), "confirmed")),
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
            std::mem::take(&mut book.events)
        };
        for event in due {
            // Each delivered on its own after the delay, retried until the product takes
            // it (events may arrive out of order, as a real gateway's may).
            let body = serde_json::to_vec(&event).unwrap_or_default();
            let signature = sign(&shared.options.webhook_secret, &body);
            let (http, url, delay) = (Arc::clone(&http), auto.webhook_url.clone(), auto.delay);
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                deliver(&http, &url, body, &signature, event.id).await;
            });
        }
    }
}

/// Posts one event to the product until it is taken (2xx) or refused (4xx).
async fn deliver(http: &crate::aws::Https, url: &str, body: Vec<u8>, signature: &str, id: i64) {
    for attempt in 0..20u64 {
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
            _ => tokio::time::sleep(Duration::from_millis(200 * (attempt + 1))).await,
        }
    }
    tracing::warn!(event = id, "an event was given up after 20 attempts");
}
