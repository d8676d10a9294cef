//! The payments' paths: `POST /v2/payment/{bank_billets|utilities|pix|taxes}` and
//! `/v2/transfer/{pix|ted}`, `GET …/{uid}`, `PUT …/{uid}/cancel`. A body is checked as
//! the banking API checks it: a field its kind requires and lacks, or a value it does not
//! take, is 422 with the API's error body (`validation_error`, each field in `param`).

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use bytes::Bytes;

use super::{is_document, key_of, refusal, refusal_of, unavailable, Book, Shared};
use crate::domain::coordinates::TaxKind;
use crate::gateway::{
    Beneficiary, Envelope, ErrorBody, NewPayment, Payment, PaymentKind, PaymentStatus, Reason, Target, TaxGuide,
    TransferPurpose,
};

pub(super) fn moved(payment: &mut Payment, status: PaymentStatus) {
    let now = crate::clock::now_rfc3339();
    match status {
        PaymentStatus::Confirmed => {
            payment.confirmed_at = Some(now.clone());
            payment.transaction_date = Some(now.clone());
            payment.transaction_code = Some(format!("E{}", payment.uid.replace('-', "")[..20].to_uppercase()));
        }
        PaymentStatus::Rejected => {
            payment.rejected_at = Some(now.clone());
            payment.rejected_error = Some("Saldo insuficiente".into());
        }
        _ => {}
    }
    payment.status = status;
    payment.updated_at = now;
}

/// The kind whose payments live at `path` (its creation, one of them, its cancel).
fn kind_at(path: &str) -> Option<PaymentKind> {
    PaymentKind::ALL
        .into_iter()
        .find(|k| path.strip_prefix(k.path()).is_some_and(|rest| rest.is_empty() || rest.starts_with('/')))
}

fn not_found() -> Response {
    refusal(StatusCode::NOT_FOUND, "not_found", None, "Recurso não encontrado")
}

/// The payment `uid` if it is of the kind whose path `uri` is under.
fn payment_at<'a>(book: &'a mut Book, uri: &Uri, uid: &str) -> Option<&'a mut Payment> {
    let kind = kind_at(uri.path());
    book.payments.iter_mut().find(|p| p.uid == uid && Some(p.kind) == kind)
}

/// What `act` answers with the book, for a caller the banking API does not refuse.
fn with_book(shared: &Shared, headers: &HeaderMap, act: impl FnOnce(&mut Book) -> Response) -> Response {
    if let Some(refused) = refusal_of(shared, headers) {
        return refused;
    }
    let mut book = shared.book.lock().unwrap_or_else(|e| e.into_inner());
    act(&mut book)
}

fn no_payment() -> Response {
    refusal(StatusCode::NOT_FOUND, "not_found", None, "Pagamento não encontrado")
}

/// `POST {path}`: makes a payment of the path's kind, or answers the one its
/// idempotency key made.
pub(super) async fn create(State(shared): State<Arc<Shared>>, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let Some(kind) = kind_at(uri.path()).filter(|k| k.path() == uri.path()) else { return not_found() };
    if let Some(refused) = refusal_of(&shared, &headers) {
        return refused;
    }
    if let Ok(sent) = serde_json::from_slice(&body) {
        shared.book.lock().unwrap_or_else(|e| e.into_inner()).requests.push((uri.path().to_string(), sent));
    }
    let Ok(new) = serde_json::from_slice::<NewPayment>(&body) else {
        return refusal(StatusCode::UNPROCESSABLE_ENTITY, "invalid", None, "Corpo inválido");
    };
    let mut invalid = lacking(kind, &new);
    if new.amount.0 <= 0 {
        invalid.push(("amount".into(), "Quantia deve ser maior que 0"));
    }
    if !invalid.is_empty() {
        return validation_errors(&invalid);
    }
    if !shared.options.accounts.contains(&new.financial_account_uid) {
        return refusal(
            StatusCode::UNPROCESSABLE_ENTITY,
            "not_found",
            Some("financial_account_uid"),
            "Conta financeira não encontrada",
        );
    }
    let key = key_of(&headers);
    let mut book = shared.book.lock().unwrap_or_else(|e| e.into_inner());
    let existing = key.as_ref().and_then(|k| book.keys.get(k)).cloned();
    let payment = match existing.and_then(|uid| book.payments.iter().find(|p| p.uid == uid).cloned()) {
        Some(payment) => payment,
        None => {
            let payment = made(kind, &new);
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

/// What a body of `kind` lacks or holds that the API does not take: each field (its
/// `param`) and why.
fn lacking(kind: PaymentKind, new: &NewPayment) -> Vec<(String, &'static str)> {
    let blank = |text: &Option<String>| text.as_deref().is_none_or(|t| t.trim().is_empty());
    let required: Vec<(String, bool)> = match kind {
        PaymentKind::BankBillet | PaymentKind::Utility => vec![("code".into(), blank(&new.code))],
        PaymentKind::Pix => vec![("qrcode".into(), blank(&new.qrcode))],
        PaymentKind::PixTransfer => vec![("key".into(), new.target.as_deref() != Some("key") || blank(&new.key))],
        PaymentKind::Ted => match &new.bank_account {
            None => vec![("bank_account".into(), true)],
            Some(account) => vec![
                ("bank_account.compe_number".into(), account.compe_number.is_none() && account.ispb_number.is_none()),
                ("bank_account.agency_number".into(), blank(&account.agency_number)),
                ("bank_account.account_number".into(), blank(&account.account_number)),
            ],
        },
        PaymentKind::Tax => {
            let guide = match (new.format.as_deref(), &new.data) {
                (None | Some("code"), _) => vec![("code".into(), blank(&new.code))],
                (Some("data"), None) => vec![("data".into(), true)],
                (Some("data"), Some(data)) => data.missing().into_iter().map(|m| (format!("data.{m}"), true)).collect(),
                (Some(_), _) => Vec::new(),
            };
            [vec![("kind".into(), blank(&new.tax_kind))], guide].concat()
        }
    };
    let tax = kind == PaymentKind::Tax;
    let taxpayer = new.data.as_ref().and_then(|d| d.taxpayer_type.as_deref());
    let not_listed = [
        ("kind", tax && new.tax_kind.as_deref().is_some_and(|k| TaxKind::parse(k).is_none())),
        ("format", tax && new.format.as_deref().is_some_and(|f| !["code", "data"].contains(&f))),
        ("data.taxpayer_type", tax && taxpayer.is_some_and(|t| !["cpf", "cnpj"].contains(&t))),
    ];
    let document = new.beneficiary.as_ref().and_then(|b| b.document_number.as_deref());
    let not_a_document = kind == PaymentKind::Ted && document.is_some_and(|d| !is_document(d));
    required
        .into_iter()
        .filter(|(_, lacks)| *lacks)
        .map(|(param, _)| (param, BLANK))
        .chain(not_listed.into_iter().filter(|(_, refused)| *refused).map(|(param, _)| (param.to_string(), NOT_LISTED)))
        .chain(not_a_document.then(|| ("beneficiary.document_number".to_string(), "não é um CPF ou CNPJ válido")))
        .collect()
}

const BLANK: &str = "não pode ficar em branco";
const NOT_LISTED: &str = "não está incluído na lista";

/// 422 with the API's error body: one `validation_error` for each field.
fn validation_errors(invalid: &[(String, &str)]) -> Response {
    let errors = invalid
        .iter()
        .map(|(param, detail)| Reason {
            title: None,
            code: Some("validation_error".into()),
            param: Some(param.clone()),
            detail: Some(serde_json::Value::String(detail.to_string())),
        })
        .collect();
    (StatusCode::UNPROCESSABLE_ENTITY, Json(ErrorBody { status: 422, errors })).into_response()
}

/// A new payment of `kind` as the API answers it: pending, with whom it pays — the
/// slip's or key's beneficiary as the bank reads it, a TED's payee and account, a tax
/// guide's form and data.
fn made(kind: PaymentKind, new: &NewPayment) -> Payment {
    let now = crate::clock::now_rfc3339();
    let read_from = |code: &str| Beneficiary {
        name: Some(format!("Beneficiário {}", code.chars().filter(char::is_ascii_digit).take(3).collect::<String>())),
        document_number: None,
    };
    let paid = [&new.code, &new.qrcode, &new.key].into_iter().flatten().next().cloned().unwrap_or_default();
    let mut payment = Payment {
        uid: uuid::Uuid::new_v4().to_string(),
        kind,
        amount: new.amount,
        status: PaymentStatus::Pending,
        scheduled_to: new.scheduled_to.clone(),
        confirmed_at: None,
        rejected_at: None,
        rejected_error: None,
        transaction_code: None,
        transaction_date: None,
        financial_account_uid: new.financial_account_uid.clone(),
        external_id: new.external_id.clone(),
        beneficiary: Some(read_from(&paid)),
        target: None,
        transfer_purpose: None,
        tax: None,
        created_at: now.clone(),
        updated_at: now,
    };
    match kind {
        PaymentKind::Ted => {
            let beneficiary = new.beneficiary.clone().unwrap_or_default();
            let account = new.bank_account.clone().map(|account| crate::gateway::BankAccount {
                account_type: Some("checkings".into()),
                document_number: beneficiary.document_number.clone(),
                ..account
            });
            // A TED without a purpose is sent as 98, the one the document's examples show.
            let code = new.transfer_purpose.clone().unwrap_or_else(|| "98".into());
            let description = (code == "98").then(|| "Pagamentos Diversos".to_string());
            payment.beneficiary = Some(beneficiary.clone());
            payment.target = Some(Target {
                transfer_kind: Some("ted".into()),
                bank_account: account,
                beneficiary: Some(beneficiary),
            });
            payment.transfer_purpose = Some(TransferPurpose { code: Some(code), description });
        }
        PaymentKind::Tax => {
            // The bank names a guide's beneficiary (the collecting body) once it is paid.
            payment.beneficiary = Some(Beneficiary::default());
            payment.tax = Some(TaxGuide {
                format: Some(new.format.clone().unwrap_or_else(|| "code".into())),
                kind: new.tax_kind.clone(),
                code: new.code.clone(),
                data: new.data.as_ref().and_then(|d| serde_json::to_value(d).ok()),
                beneficiary: Some(Beneficiary::default()),
            });
        }
        _ => {}
    }
    payment
}

/// `GET {path}/{uid}`
pub(super) async fn show(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    Path((_collection, uid)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    with_book(&shared, &headers, |book| match payment_at(book, &uri, &uid) {
        Some(payment) => Json(Envelope { status: 200, data: payment.clone() }).into_response(),
        None => no_payment(),
    })
}

/// `PUT {path}/{uid}/cancel`: a payment not made yet is cancelled at once (the real API
/// answers a cancellation order and confirms it by an event). The answer is the kind's:
/// a transfer's order (`financial_transfer`), a payment's (`payment`), a tax payment's
/// message.
pub(super) async fn cancel(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    Path((_collection, uid)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    with_book(&shared, &headers, |book| {
        let Some(payment) = payment_at(book, &uri, &uid) else { return no_payment() };
        if payment.status != PaymentStatus::Cancelled && payment.status.is_terminal() {
            let (what, detail) = match payment.kind.is_transfer() {
                true => ("Transferência", "Transferência já foi confirmada ou rejeitada."),
                false => ("Pagamento", "Pagamento já foi confirmado ou rejeitado."),
            };
            let reason = Reason {
                title: Some(format!("Não foi possível gerar Comando de Cancelamento de {what}.")),
                code: Some("unprocessable_content".into()),
                param: None,
                detail: Some(serde_json::Value::String(detail.into())),
            };
            return (StatusCode::UNPROCESSABLE_ENTITY, Json(ErrorBody { status: 422, errors: vec![reason] }))
                .into_response();
        }
        if payment.status != PaymentStatus::Cancelled {
            moved(payment, PaymentStatus::Cancelled);
            let payment = payment.clone();
            book.event(&payment);
        }
        let Some(payment) = book.payments.iter().find(|p| p.uid == uid).cloned() else { return not_found() };
        let object = match payment.kind {
            PaymentKind::Tax => {
                return Json(serde_json::json!({"status": 200, "message": "Pagamento cancelado"})).into_response();
            }
            kind if kind.is_transfer() => "financial_transfer",
            _ => "payment",
        };
        let mut data = serde_json::json!({"status": "success", "operation": "cancel"});
        data[object] = serde_json::to_value(&payment).unwrap_or_default();
        Json(Envelope { status: 200, data }).into_response()
    })
}
