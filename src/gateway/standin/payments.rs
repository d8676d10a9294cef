//! The payments' paths: `POST /v2/payment/{collection}` and `/v2/transfer/pix`, `GET
//! …/{uid}`, `PUT …/{uid}/cancel`.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use bytes::Bytes;

use super::{refusal, refusal_of, unavailable, Shared};
use crate::gateway::{Beneficiary, Envelope, NewPayment, Payment, PaymentKind, TERMINAL};

pub(super) fn moved(payment: &mut Payment, status: &str) {
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

pub(super) async fn create(
    State(shared): State<Arc<Shared>>,
    Path(collection): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(kind) = [PaymentKind::BankBillet, PaymentKind::Utility, PaymentKind::Pix]
        .into_iter()
        .find(|k| k.collection() == collection)
    else {
        return refusal(StatusCode::NOT_FOUND, "not_found", None, "Recurso não encontrado");
    };
    make(&shared, kind, &headers, &body)
}

/// `POST /v2/transfer/pix`: a Pix to a key.
pub(super) async fn create_transfer(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    make(&shared, PaymentKind::PixTransfer, &headers, &body)
}

/// Makes a payment of `kind`, or answers the one its idempotency key made.
fn make(shared: &Shared, kind: PaymentKind, headers: &HeaderMap, body: &[u8]) -> Response {
    if let Some(refused) = refusal_of(shared, headers) {
        return refused;
    }
    let Ok(new) = serde_json::from_slice::<NewPayment>(body) else {
        return refusal(StatusCode::UNPROCESSABLE_ENTITY, "invalid", None, "Corpo inválido");
    };
    let (code, param) = match kind {
        PaymentKind::Pix => (new.qrcode.clone(), "qrcode"),
        PaymentKind::PixTransfer => (new.key.clone().filter(|_| new.target.as_deref() == Some("key")), "key"),
        _ => (new.code.clone(), "code"),
    };
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
    if book.answer_lost(shared.options.lost_answer_rate) {
        return unavailable();
    }
    (StatusCode::CREATED, Json(Envelope { status: 201, data: payment })).into_response()
}

pub(super) async fn show(
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

pub(super) async fn cancel_transfer(
    state: State<Arc<Shared>>,
    Path(uid): Path<String>,
    headers: HeaderMap,
) -> Response {
    cancel(state, Path(("pix".to_string(), uid)), headers).await
}

pub(super) async fn cancel(
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
