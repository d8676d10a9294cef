//! The charges' paths: a Pix charge (`POST /v2/charge/pix`, `PUT …/{uid}/cancel`) and a
//! boleto (`POST /v1/bank_billets`, `PUT …/{id}/cancel`).

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use bytes::Bytes;

use super::{is_document, key_of, refusal, refusal_of, unavailable, Shared};
use crate::domain::money::Cents;
use crate::gateway::{
    BankBillet, ChargeState, ChargeStatus, Envelope, NewBankBillet, NewPixCharge, PixCharge, PixCode,
    RegistrationStatus,
};

/// What a move to `to` does to either kind's state: "paid" pays the whole `amount` now,
/// "rejected" rejects its registration, "registered" confirms it (each kind adds its own
/// codes), any other word is the status it moves to.
fn state_moved(state: &mut ChargeState, amount: Cents, to: &str, now: &str) {
    match to {
        "registered" => state.registration_status = Some(RegistrationStatus::Confirmed),
        "paid" => {
            state.status = ChargeStatus::Paid;
            state.paid_at = Some(now.to_string());
            state.paid_amount = Some(amount);
        }
        "rejected" => state.registration_status = Some(RegistrationStatus::Rejected),
        other => state.status = ChargeStatus::from(other),
    }
}

pub(super) fn pix_moved(charge: &mut PixCharge, to: &str) {
    let now = crate::clock::now_rfc3339();
    state_moved(&mut charge.state, charge.amount, to, &now);
    if to == "registered" {
        charge.qrcode =
            Some(PixCode { emv: Some(format!("00020126580014br.gov.bcb.pix0136{}5204000053039865802BR", charge.uid)) });
    }
    charge.updated_at = now;
}

pub(super) fn billet_moved(billet: &mut BankBillet, to: &str) {
    let now = crate::clock::now_rfc3339();
    state_moved(&mut billet.state, billet.amount, to, &now);
    if to == "registered" {
        billet.state.status = ChargeStatus::Opened;
        billet.barcode = Some("34191090080000000000000000000018316560000450000".into());
        billet.line = Some("34191.09008 00000.000000 00000.000018 3 16560000450000".into());
    }
    billet.updated_at = Some(now);
}

pub(super) async fn create_pix(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    if let Some(refused) = refusal_of(&shared, &headers) {
        return refused;
    }
    let Ok(new) = serde_json::from_slice::<NewPixCharge>(&body) else {
        return refusal(StatusCode::UNPROCESSABLE_ENTITY, "invalid", None, "Corpo inválido");
    };
    if !shared.options.accounts.contains(&new.pix_account_uid) {
        return refusal(
            StatusCode::UNPROCESSABLE_ENTITY,
            "not_found",
            Some("pix_account_uid"),
            "Conta Pix não encontrada",
        );
    }
    if !is_document(&new.payer.document_number) {
        return refusal(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
            Some("payer.document_number"),
            "CPF/CNPJ inválido",
        );
    }
    let mut book = shared.book.lock().unwrap_or_else(|e| e.into_inner());
    let key = key_of(&headers);
    if let Some(uid) = key.as_ref().and_then(|k| book.keys.get(k)).cloned() {
        if let Some(charge) = book.pix.iter().find(|c| c.uid == uid).cloned() {
            return (StatusCode::CREATED, Json(Envelope { status: 201, data: charge })).into_response();
        }
    }
    let now = crate::clock::now_rfc3339();
    let charge = PixCharge {
        uid: uuid::Uuid::new_v4().to_string(),
        amount: new.amount,
        pix_account_uid: Some(new.pix_account_uid.clone()),
        state: ChargeState {
            status: ChargeStatus::Opened,
            registration_status: Some(RegistrationStatus::Pending),
            paid_at: None,
            paid_amount: None,
            url: None,
        },
        qrcode: None,
        external_id: new.external_id.clone(),
        created_at: now.clone(),
        updated_at: now,
    };
    if let Some(key) = key {
        book.keys.insert(key, charge.uid.clone());
    }
    book.pix.push(charge.clone());
    book.pix_event(&charge);
    if book.answer_lost(shared.options.lost_answer_rate) {
        return unavailable();
    }
    (StatusCode::CREATED, Json(Envelope { status: 201, data: charge })).into_response()
}

pub(super) async fn cancel_pix(
    State(shared): State<Arc<Shared>>,
    Path(uid): Path<String>,
    headers: HeaderMap,
) -> Response {
    if let Some(refused) = refusal_of(&shared, &headers) {
        return refused;
    }
    let mut book = shared.book.lock().unwrap_or_else(|e| e.into_inner());
    let Some(charge) = book.pix.iter().find(|c| c.uid == uid).cloned() else {
        return refusal(StatusCode::NOT_FOUND, "not_found", None, "Pix não encontrado");
    };
    if charge.state.status.is_ended() {
        return refusal(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_status",
            Some("status"),
            "O Pix não pode ser cancelado",
        );
    }
    if !book.cancelling.contains(&uid) {
        book.cancelling.push(uid);
    }
    Json(Envelope { status: 200, data: serde_json::json!({"status": "pending", "operation": "cancel"}) })
        .into_response()
}

pub(super) async fn create_billet(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    if let Some(refused) = refusal_of(&shared, &headers) {
        return refused;
    }
    let Ok(new) = serde_json::from_slice::<NewBankBillet>(&body) else {
        return refusal(StatusCode::UNPROCESSABLE_ENTITY, "invalid", None, "Corpo inválido");
    };
    if !shared.options.billet_accounts.contains(&new.bank_billet_account_id) {
        return refusal(
            StatusCode::UNPROCESSABLE_ENTITY,
            "not_found",
            Some("bank_billet_account_id"),
            "Carteira não encontrada",
        );
    }
    let address = [
        &new.customer_zipcode,
        &new.customer_address,
        &new.customer_neighborhood,
        &new.customer_city_name,
        &new.customer_state,
    ];
    if !is_document(&new.customer_cnpj_cpf) || address.iter().any(|f| f.trim().is_empty()) {
        return refusal(StatusCode::UNPROCESSABLE_ENTITY, "invalid", Some("customer"), "Dados do pagador incompletos");
    }
    let mut book = shared.book.lock().unwrap_or_else(|e| e.into_inner());
    let key = key_of(&headers);
    if let Some(id) = key.as_ref().and_then(|k| book.keys.get(k)).cloned() {
        if let Some(billet) = book.billets.iter().find(|b| b.id.to_string() == id).cloned() {
            return (StatusCode::CREATED, Json(billet)).into_response();
        }
    }
    let now = crate::clock::now_rfc3339();
    let id = 1000 + book.billets.len() as i64 + 1;
    let billet = BankBillet {
        id,
        uid: Some(uuid::Uuid::new_v4().to_string()),
        amount: new.amount,
        state: ChargeState {
            status: ChargeStatus::Generating,
            registration_status: Some(RegistrationStatus::Pending),
            paid_at: None,
            paid_amount: None,
            url: Some(format!("https://bole.to/{id}")),
        },
        line: None,
        barcode: None,
        created_at: Some(now.clone()),
        updated_at: Some(now),
    };
    if let Some(key) = key {
        book.keys.insert(key, id.to_string());
    }
    book.billets.push(billet.clone());
    book.billet_event(&billet);
    (StatusCode::CREATED, Json(billet)).into_response()
}

pub(super) async fn cancel_billet(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    if let Some(refused) = refusal_of(&shared, &headers) {
        return refused;
    }
    let mut book = shared.book.lock().unwrap_or_else(|e| e.into_inner());
    let Some(billet) = book.billets.iter_mut().find(|b| b.id.to_string() == id) else {
        return refusal(StatusCode::NOT_FOUND, "not_found", None, "Boleto não encontrado");
    };
    if matches!(billet.state.status, ChargeStatus::Paid | ChargeStatus::Cancelled) {
        return refusal(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_status",
            Some("status"),
            "O boleto não pode ser cancelado",
        );
    }
    billet_moved(billet, "canceled");
    let billet = billet.clone();
    book.billet_event(&billet);
    Json(billet).into_response()
}
