//! A payable paid through the bank: `POST /v1/payables/{id}/send-to-bank` hands it to
//! Kobana's banking gateway (`crate::gateway`), `…/cancel-dispatch` takes it back, and
//! the gateway's events (`POST /v1/webhooks/kobana`) bring its status home. The
//! mirror is `payment_dispatches`, one row per payable; the record shows it as
//! `kobana_payment_uid`, `kobana_status`, `kobana_status_updated_at`.
//!
//! * **What a dispatch needs** (422 naming it otherwise): a pending, official payable
//!   (`payment_approval` null or `creation_approved`), the payment coordinates of its
//!   method — the barcode of a boleto, a utility bill or a tax slip, the copia-e-cola
//!   of a Pix or a Pix key (a transfer), the payee's bank account and CPF or CNPJ for a
//!   TED, a tax guide's kind and data when it has no barcode — and a settlement account
//!   the gateway knows (`kobana_account_uid`).
//! * **Paid once.** The gateway's idempotency key is the payable's id and the number
//!   of dispatches cancelled before this one: a dispatch retried after a timeout finds
//!   the payment the first attempt made. Nothing is written unless the gateway made the
//!   payment; when it does not answer, 503 with `Retry-After`.
//! * **Events.** Each is applied once (its id in `gateway_events`), and only when it is
//!   newer than the status kept (the gateway's time, then the order pending → scheduled
//!   → an end): a late or repeated event changes nothing. `confirmed` settles the
//!   payable from the source account (its ledger transaction, exactly once) and files
//!   a receipt; `rejected` and `canceled` leave it pending, back on the manual rail.
//! * **While the bank holds it** (pending or scheduled there), the payable is not
//!   settled, cancelled, reopened or deleted by hand: 409 `dispatched`.

use serde_json::json;

use super::coordinates::PaymentCoordinates;
use super::rows::find;
use super::wire::{Billing, KindRecord, SettleRequest};
use crate::domain::bills::Payable;
use crate::domain::channel::Channel;
use crate::domain::dates::{Date, Timestamp};
use crate::domain::money::Amount;
use crate::domain::roles::{Access, Resource};
use crate::domain::shown;
use crate::domain::text::quoted;
use crate::error::{ApiError, ErrorCode};
use crate::gateway::{self, GatewayError, NewPayment, Payment, PaymentKind, PaymentStatus};
use crate::ops::machinery::common::{audit_write, audit_write_with, conflict_on_unique, unprocessable};
use crate::ops::OpContext;
use crate::storage::identity::Membership;
use crate::storage::{sql, Conn};

/// A payable's dispatch as kept.
#[derive(Debug, Clone)]
pub struct Dispatch {
    pub attempt: i64,
    pub payment_uid: String,
    pub kind: PaymentKind,
    pub source_account_id: String,
    pub status: PaymentStatus,
    pub status_updated_at: Timestamp,
    pub dispatched_by: Option<String>,
}

impl Dispatch {
    /// Whether the bank still holds it: it may yet pay.
    pub fn is_live(&self) -> bool {
        !self.status.is_terminal()
    }
}

/// The order of a payment's statuses: an event never moves one back.
fn rank(status: &PaymentStatus) -> u8 {
    match status {
        PaymentStatus::Pending => 0,
        PaymentStatus::Scheduled => 1,
        _ => 2,
    }
}

const DISPATCH: &str =
    "SELECT attempt, payment_uid, payment_kind, source_account_id, status, status_updated_at, dispatched_by
       FROM payment_dispatches";

/// The current dispatch of payable `id` (its last), if it was ever sent.
pub async fn of(conn: &mut Conn, ws: &Membership, id: &str) -> Result<Option<Dispatch>, ApiError> {
    read(
        conn,
        sql::query(format!("{DISPATCH} WHERE workspace_id = $1 AND billing_id = $2 ORDER BY attempt DESC LIMIT 1"))
            .bind(&ws.workspace_id)
            .bind(id),
    )
    .await
}

/// The dispatch of payable `id` that made the payment `uid`.
async fn of_payment(conn: &mut Conn, ws: &Membership, id: &str, uid: &str) -> Result<Option<Dispatch>, ApiError> {
    read(
        conn,
        sql::query(format!("{DISPATCH} WHERE workspace_id = $1 AND billing_id = $2 AND payment_uid = $3"))
            .bind(&ws.workspace_id)
            .bind(id)
            .bind(uid),
    )
    .await
}

async fn read(conn: &mut Conn, query: sql::Query<'_>) -> Result<Option<Dispatch>, ApiError> {
    Ok(query
        .map_optional(&mut *conn, |row| {
            let kind: String = row.try_get(2)?;
            let at: String = row.try_get(5)?;
            let status: String = row.try_get(4)?;
            Ok(Dispatch {
                attempt: row.try_get(0)?,
                payment_uid: row.try_get(1)?,
                kind: PaymentKind::parse(&kind).unwrap_or(PaymentKind::BankBillet),
                source_account_id: row.try_get(3)?,
                status: PaymentStatus::from(status.as_str()),
                status_updated_at: Timestamp::parse(&at).unwrap_or_else(|| Timestamp::from_unix(0)),
                dispatched_by: row.try_get(6)?,
            })
        })
        .await?)
}

/// 409 `dispatched` while the bank holds the payable: a move by hand would race the
/// bank's payment.
pub async fn refuse_if_dispatched(conn: &mut Conn, ws: &Membership, id: &str, what: &str) -> Result<(), ApiError> {
    match of(conn, ws, id).await? {
        Some(dispatch) if dispatch.is_live() => Err(ApiError::new(
            ErrorCode::Conflict,
            format!("The payable is with the bank (status {}): cancel the dispatch before it is {what}", dispatch.status),
        )
        .with_details(json!({ "reason": "dispatched", "kobana_payment_uid": dispatch.payment_uid, "kobana_status": dispatch.status.as_str() }))),
        _ => Ok(()),
    }
}

/// The dispatch the bank still holds for payable `id`: what a cancellation stops (422
/// naming why there is none).
pub async fn live(conn: &mut Conn, ws: &Membership, id: &str) -> Result<Dispatch, ApiError> {
    let Some(dispatch) = of(conn, ws, id).await? else {
        return Err(unprocessable("id", "not_dispatched", "The payable was never sent to the bank"));
    };
    if !dispatch.is_live() {
        return Err(unprocessable(
            "id",
            "dispatch_terminal",
            &format!("The bank's payment is already {}: nothing to cancel", dispatch.status),
        ));
    }
    Ok(dispatch)
}

/// Where an order's money goes, as the person confirming it reads it ([`shown`]): how
/// the bank pays and to whom — a TED's payee, bank, branch and account, a Pix key and
/// whose it is, the payee a Pix code names, a slip's digitable line, a tax guide's data.
pub fn destination(order: &Order) -> String {
    let payment = &order.payment;
    let payee = |beneficiary: &Option<gateway::Beneficiary>| match beneficiary {
        Some(gateway::Beneficiary { name, document_number }) => {
            let name = name.as_deref().map(quoted).unwrap_or_else(|| "the payee".into());
            match document_number {
                Some(document) => format!("{name} ({})", shown::document(document)),
                None => name,
            }
        }
        None => "the payee".into(),
    };
    match order.kind {
        PaymentKind::Ted => {
            let account = payment.bank_account.clone().unwrap_or_default();
            let bank = match (account.compe_number, account.ispb_number) {
                (Some(compe), _) => format!("bank {compe:03}"),
                (None, Some(ispb)) => format!("bank ISPB {ispb:08}"),
                (None, None) => "bank ?".into(),
            };
            let branch = match (account.agency_number.as_deref(), account.agency_digit.as_deref()) {
                (Some(agency), Some(digit)) => format!("{agency}-{digit}"),
                (agency, _) => agency.unwrap_or_default().to_string(),
            };
            format!(
                "by TED to {}, {bank}, branch {branch}, account {}",
                payee(&payment.beneficiary),
                shown::account(account.account_number.as_deref().unwrap_or_default(), account.account_digit.as_deref())
            )
        }
        PaymentKind::PixTransfer => format!(
            "by Pix to the {} of {}",
            shown::pix_key(payment.key_type.as_deref(), payment.key.as_deref().unwrap_or_default()),
            payee(&payment.beneficiary)
        ),
        PaymentKind::Pix => {
            let code = shown::br_code_payee(payment.qrcode.as_deref().unwrap_or_default());
            let name = code.name.as_deref().map_or_else(|| "a payee it does not name".to_string(), quoted);
            let key = code.key.as_deref().map(|key| format!(", key {}", quoted(key))).unwrap_or_default();
            let city = code.city.as_deref().map(|city| format!(", {}", quoted(city))).unwrap_or_default();
            format!("by Pix, its copia-e-cola code naming {name}{key}{city}")
        }
        PaymentKind::BankBillet => {
            format!("by boleto, digitable line {}", shown::barcode(payment.code.as_deref().unwrap_or_default()))
        }
        PaymentKind::Utility => {
            format!("by the slip's barcode {}", shown::barcode(payment.code.as_deref().unwrap_or_default()))
        }
        PaymentKind::Tax => {
            let kind = payment.tax_kind.as_deref().unwrap_or("tax").to_uppercase();
            let data = serde_json::to_value(&payment.data).unwrap_or_default();
            let field = |name: &str| data.get(name).and_then(serde_json::Value::as_str).map(str::to_string);
            let code = field("tax_code").map(|c| format!(", revenue code {}", quoted(&c))).unwrap_or_default();
            let taxpayer =
                field("taxpayer_number").map(|n| format!(", taxpayer {}", shown::document(&n))).unwrap_or_default();
            format!("by its tax guide's {kind} data{code}{taxpayer}")
        }
    }
}

/// 409 `paid_by_bank` when the bank paid the payable: its money left the account, so
/// reopening it (which removes its settlement from the books) would make the books
/// disagree with the bank. Undoing a real payment is a reversal the books record.
pub async fn refuse_if_paid_by_the_bank(conn: &mut Conn, ws: &Membership, id: &str) -> Result<(), ApiError> {
    let paid: Option<(Option<String>, String)> = sql::query(
        "SELECT (SELECT r.id FROM receipts r WHERE r.workspace_id = d.workspace_id AND r.external_uid = d.payment_uid),
                d.payment_uid
           FROM payment_dispatches d
          WHERE d.workspace_id = $1 AND d.billing_id = $2 AND d.status = 'confirmed'
          ORDER BY d.attempt DESC LIMIT 1",
    )
    .bind(&ws.workspace_id)
    .bind(id)
    .map_optional(&mut *conn, |row| Ok((row.try_get(0)?, row.try_get(1)?)))
    .await?;
    match paid {
        None => Ok(()),
        Some((receipt, uid)) => Err(ApiError::new(
            ErrorCode::Conflict,
            match &receipt {
                Some(receipt) => format!(
                    "The bank paid this payable (receipt {receipt}): reopening it would remove a payment the bank made \
                     from the books; record its reversal instead"
                ),
                None => {
                    "The bank paid this payable: reopening it would remove a payment the bank made from the books; \
                         record its reversal instead"
                        .to_string()
                }
            },
        )
        .with_details(json!({ "reason": "paid_by_bank", "receipt_id": receipt, "kobana_payment_uid": uid }))),
    }
}

/// The gateway's payment for the payable's method, from its coordinates: its kind and
/// what it pays (the amount, source account, day and payable's id are the caller's).
/// 422 naming what is missing.
fn payment_of(bill: &Billing, coordinates: &PaymentCoordinates) -> Result<(PaymentKind, NewPayment), ApiError> {
    let method = bill.row.payment_method_kind.as_deref();
    let barcode = coordinates.barcode.clone();
    let pix = coordinates.pix_copia_e_cola.clone();
    let needs = |field: &str, what: &str| {
        unprocessable(field, "missing", &format!("Sending this payable to the bank needs {what} ({field})"))
    };
    let by_code = |kind, code| Ok((kind, NewPayment { code: Some(code), ..NewPayment::default() }));
    let by_qrcode = |code| Ok((PaymentKind::Pix, NewPayment { qrcode: Some(code), ..NewPayment::default() }));
    let by_key = |key| Ok((PaymentKind::PixTransfer, pix_transfer(bill, coordinates, key)));
    match method {
        Some("bank_billet") => by_code(PaymentKind::BankBillet, barcode.ok_or_else(|| needs("barcode", "the boleto's barcode"))?),
        Some("utility") => by_code(PaymentKind::Utility, barcode.ok_or_else(|| needs("barcode", "the slip's barcode"))?),
        Some("tribute") => match barcode {
            Some(code) => by_code(PaymentKind::Utility, code),
            None => Ok((PaymentKind::Tax, tax_guide(coordinates).map_err(|(field, what)| needs(&field, &what))?)),
        },
        Some("ted") => Ok((PaymentKind::Ted, ted(bill, coordinates).map_err(|(field, what)| needs(field, what))?)),
        Some("pix") => match (pix, coordinates.pix_key.clone()) {
            (Some(code), _) => by_qrcode(code),
            (None, Some(key)) => by_key(key),
            (None, None) => Err(needs("pix_copia_e_cola", "the Pix copia-e-cola code or a Pix key")),
        },
        None => match (barcode, pix, coordinates.pix_key.clone()) {
            (Some(code), _, _) => by_code(PaymentKind::BankBillet, code),
            (None, Some(code), _) => by_qrcode(code),
            (None, None, Some(key)) => by_key(key),
            (None, None, None) => Err(needs(
                "barcode",
                "a payment method and its coordinates: a barcode, a Pix code or a Pix key (a TED or a tax guide by its \
                 data, its payment_method_kind)",
            )),
        },
        Some(other) => Err(unprocessable(
            "payment_method_kind",
            "unsupported",
            &format!("A payable paid by {other} is not sent to the bank: pay it and settle it"),
        )),
    }
}

/// Whom a transfer pays: the beneficiary named on the payable, else its person.
fn beneficiary_of(bill: &Billing, coordinates: &PaymentCoordinates) -> gateway::Beneficiary {
    gateway::Beneficiary {
        name: coordinates.beneficiary_name.clone().or_else(|| bill.row.person_name.clone()),
        document_number: coordinates.beneficiary_document.clone(),
    }
}

/// A Pix to the payee's key.
fn pix_transfer(bill: &Billing, coordinates: &PaymentCoordinates, key: String) -> NewPayment {
    NewPayment {
        target: Some("key".into()),
        key_type: coordinates.pix_key_type.clone(),
        key: Some(key),
        beneficiary: Some(beneficiary_of(bill, coordinates)),
        ..NewPayment::default()
    }
}

/// A TED to the payee's account: its bank (COMPE code or ISPB), branch, account and its
/// digit, and the holder's CPF or CNPJ, else the first of them it lacks (the field and
/// what it is). The branch's digit and the transfer's purpose go when the payable has
/// them.
fn ted(bill: &Billing, coordinates: &PaymentCoordinates) -> Result<NewPayment, (&'static str, &'static str)> {
    let number = |code: &Option<String>| code.as_deref().and_then(|c| c.parse::<u32>().ok());
    let (compe_number, ispb_number) = (number(&coordinates.bank_code), number(&coordinates.bank_ispb));
    let required = [
        ("bank_code", "the payee's bank (bank_code or bank_ispb)", compe_number.is_some() || ispb_number.is_some()),
        ("agency", "the payee's branch", coordinates.agency.is_some()),
        ("account_number", "the payee's account number", coordinates.account_number.is_some()),
        ("account_digit", "the payee's account check digit", coordinates.account_digit.is_some()),
        ("beneficiary_document", "the account holder's CPF or CNPJ", coordinates.beneficiary_document.is_some()),
    ];
    if let Some((field, what, _)) = required.into_iter().find(|(_, _, present)| !present) {
        return Err((field, what));
    }
    Ok(NewPayment {
        bank_account: Some(gateway::BankAccount {
            compe_number,
            ispb_number,
            agency_number: coordinates.agency.clone(),
            agency_digit: coordinates.agency_digit.clone(),
            account_number: coordinates.account_number.clone(),
            account_digit: coordinates.account_digit.clone(),
            ..gateway::BankAccount::default()
        }),
        transfer_purpose: coordinates.transfer_purpose.clone(),
        beneficiary: Some(beneficiary_of(bill, coordinates)),
        ..NewPayment::default()
    })
}

/// A tax guide paid by its data (`format` `data`): its kind and data, whose form the
/// gateway requires complete, else the first field it lacks and what it is.
fn tax_guide(coordinates: &PaymentCoordinates) -> Result<NewPayment, (String, String)> {
    let Some(data) = coordinates.tax_data.clone() else {
        return Err(("tax_data".into(), "the guide's barcode, or its tax_kind and tax_data".into()));
    };
    let Some(kind) = coordinates.tax_kind.clone() else { return Err(("tax_kind".into(), "the guide's kind".into())) };
    let missing = data.missing();
    if let Some(member) = missing.first() {
        return Err((
            format!("tax_data.{member}"),
            format!("the guide's data the bank requires: {}", missing.join(", ")),
        ));
    }
    Ok(NewPayment { tax_kind: Some(kind), format: Some("data".into()), data: Some(data), ..NewPayment::default() })
}

/// How the gateway pays the payable, from its method and coordinates: 422 naming what
/// is missing.
pub fn kind_of(bill: &Billing) -> Result<PaymentKind, ApiError> {
    payment_of(bill, &coordinates_of(bill)).map(|(kind, _)| kind)
}

/// The coordinates kept with the payable's record.
fn coordinates_of(bill: &Billing) -> PaymentCoordinates {
    match &bill.kind {
        Some(KindRecord::Payable(fields)) => (*fields.coordinates).clone(),
        _ => PaymentCoordinates::default(),
    }
}

/// The gateway's account of the payable's settlement account: 422 when it has none.
async fn source_account(conn: &mut Conn, ws: &Membership, bill: &Billing) -> Result<(String, String), ApiError> {
    let Some(account) = bill.row.financial_account_id.clone().or_else(|| bill.row.expected_account_id.clone()) else {
        return Err(unprocessable(
            "financial_account_id",
            "missing",
            "Sending this payable to the bank needs the account it is paid from (financial_account_id or \
             expected_account_id)",
        ));
    };
    let uid: Option<Option<String>> =
        sql::query("SELECT kobana_account_uid FROM financial_accounts WHERE workspace_id = $1 AND id = $2")
            .bind(&ws.workspace_id)
            .bind(&account)
            .map_optional(&mut *conn, |row| row.try_get(0))
            .await?;
    match uid.flatten() {
        Some(uid) => Ok((account, uid)),
        None => Err(unprocessable(
            "financial_account_id",
            "account_not_connected",
            "The payable's account is not connected to the banking gateway: connect it in the dashboard or pay from another",
        )),
    }
}

/// What the gateway said, as this API says it.
pub(super) fn gateway_error(e: GatewayError) -> ApiError {
    match e {
        GatewayError::NotConnected => unprocessable(
            "integration",
            "integration_not_connected",
            "The banking integration is not connected for this workspace",
        ),
        GatewayError::Unavailable(why) => {
            tracing::warn!(error = %why, "the banking gateway is unavailable");
            ApiError::unavailable("banking gateway")
        }
        GatewayError::Refused { status, reasons } => {
            let message = GatewayError::Refused { status, reasons: reasons.clone() }.to_string();
            ApiError::unprocessable(message).with_details(json!({
                "reason": "gateway_refused",
                "gateway_status": status.as_u16(),
                "errors": reasons,
            }))
        }
    }
}

/// The payable's approval, where the gate holds it back: only an official bill goes
/// to the bank (the row read already says).
fn check_official(bill: &Billing) -> Result<(), ApiError> {
    match bill.row.payment_approval() {
        approval if super::approval::is_official(approval) => Ok(()),
        approval => Err(unprocessable(
            "payment_approval",
            "not_approved",
            &format!("The payable is {}: only an approved payable is sent to the bank", approval.unwrap_or_default()),
        )),
    }
}

/// What a dispatch of a payable sends to the bank, decided from its record as read: how
/// it pays (its kind), the gateway's payment (destination, amount, source account, day),
/// the account it is paid from and the attempt. Its confirmation shows it and binds it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Order {
    pub kind: PaymentKind,
    pub payment: NewPayment,
    /// The payable's account it is paid from (a gateway account).
    pub account_id: String,
    pub attempt: i64,
}

/// The order a dispatch of `bill` sends, after every check a dispatch makes before it
/// calls the bank (a pending, official payable not already with the bank, its method's
/// coordinates, an account connected to the gateway): what the confirmation asks about,
/// so nothing it can check is refused after the user's yes.
pub async fn order(conn: &mut Conn, ws: &Membership, bill: &Billing) -> Result<Order, ApiError> {
    if !bill.row.status.is_open() {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!("The payable is {}: only a pending payable is sent to the bank", bill.row.status.as_str()),
        )
        .with_details(json!({ "reason": "invalid_transition", "status": bill.row.status.as_str() })));
    }
    let earlier = of(conn, ws, &bill.row.id).await?;
    if let Some(dispatch) =
        earlier.as_ref().filter(|d| !matches!(d.status, PaymentStatus::Cancelled | PaymentStatus::Rejected))
    {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!("The payable was already sent to the bank (status {})", dispatch.status),
        )
        .with_details(json!({ "reason": "already_dispatched", "kobana_payment_uid": dispatch.payment_uid })));
    }
    check_official(bill)?;
    let coordinates = coordinates_of(bill);
    let (kind, paid) = payment_of(bill, &coordinates)?;
    let (account_id, account_uid) = source_account(conn, ws, bill).await?;
    let payment = NewPayment {
        amount: bill.row.nominal_amount,
        financial_account_uid: account_uid,
        scheduled_to: coordinates.scheduled_to.map(|t| t.date().to_string()),
        external_id: Some(bill.row.id.clone()),
        ..paid
    };
    Ok(Order { kind, payment, account_id, attempt: earlier.map_or(0, |d| d.attempt + 1) })
}

/// `POST /v1/payables/{id}/send-to-bank`
pub async fn send_to_bank(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
) -> Result<Billing, ApiError> {
    ctx.authorize(ws, Resource::Payables, Access::Bank)?;
    let bill = find::<Payable>(conn, ws, id).await?;
    let Order { kind, payment: new, account_id, attempt } = order(conn, ws, &bill).await?;
    let amount = bill.row.nominal_amount;
    let key = format!("kfin-dispatch-{}-{attempt}", bill.row.id);
    let payment = ctx.state.gateway.create_payment(kind, &new, &key).await.map_err(gateway_error)?;
    let now = Timestamp::now();
    let stamp = Timestamp::parse_input(&payment.created_at).unwrap_or(now);
    sql::query(
        "INSERT INTO payment_dispatches (billing_id, workspace_id, attempt, payment_uid, payment_kind, source_account_id,
                status, status_updated_at, dispatched_by, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $8, $9, $9)",
    )
    .bind(&bill.row.id)
    .bind(&ws.workspace_id)
    .bind(attempt)
    .bind(&payment.uid)
    .bind(kind.as_str())
    .bind(&account_id)
    .bind(stamp.to_string())
    .bind(&ctx.identity.user_id)
    .bind(now.to_string())
    .execute(&mut *conn)
    .await
    .map_err(|e| conflict_on_unique(e, "id", "The payable was sent to the bank by another request at the same time"))?;
    audit_write_with(
        ctx,
        conn,
        ws,
        ("payables.send_to_bank", "payable", &bill.row.id),
        Some(json!({ "kobana_payment_uid": payment.uid, "kind": kind.as_str(), "amount": amount.brl() })),
    )
    .await?;
    // The gateway may already have moved it (a retry after a lost answer): applied by
    // the server as for the gateway's event.
    if payment.status != PaymentStatus::Pending {
        let identity = super::events::system_identity(Some(ctx.identity.user_id.clone()));
        let system = OpContext { identity: &identity, channel: Channel::System, ..*ctx };
        mirror(&system, conn, ws, &bill.row.id, &payment).await?;
    }
    find::<Payable>(conn, ws, &bill.row.id).await
}

/// `POST /v1/payables/{id}/cancel-dispatch`
pub async fn cancel_dispatch(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
) -> Result<Billing, ApiError> {
    ctx.authorize(ws, Resource::Payables, Access::Bank)?;
    let bill = find::<Payable>(conn, ws, id).await?;
    let dispatch = live(conn, ws, &bill.row.id).await?;
    let key = format!("kfin-cancel-{}-{}", bill.row.id, dispatch.attempt);
    ctx.state.gateway.cancel_payment(dispatch.kind, &dispatch.payment_uid, &key).await.map_err(gateway_error)?;
    let now = Timestamp::now().to_string();
    sql::query(
        "UPDATE payment_dispatches SET status = 'canceled', status_updated_at = $1, updated_at = $1
          WHERE workspace_id = $2 AND payment_uid = $3",
    )
    .bind(&now)
    .bind(&ws.workspace_id)
    .bind(&dispatch.payment_uid)
    .execute(&mut *conn)
    .await?;
    audit_write_with(
        ctx,
        conn,
        ws,
        ("payables.cancel_dispatch", "payable", &bill.row.id),
        Some(json!({ "kobana_payment_uid": dispatch.payment_uid })),
    )
    .await?;
    find::<Payable>(conn, ws, &bill.row.id).await
}

/// 409 when a mirror's row changed between its read and its update (another event
/// applied at once); the webhook door answers it 503, for the gateway to deliver again.
pub(super) fn changed_meanwhile() -> ApiError {
    ApiError::new(ErrorCode::Conflict, "The bank's record was changed by another event at the same time")
        .with_details(json!({ "reason": "concurrent_update" }))
}

/// Applies a payment's status to the payable it pays, when it is newer than the one
/// kept: `confirmed` settles the payable and files its receipt.
pub async fn mirror(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
    payment: &Payment,
) -> Result<bool, ApiError> {
    let Some(kept) = of_payment(conn, ws, id, &payment.uid).await? else { return Ok(false) };
    let at = Timestamp::parse_input(&payment.updated_at).unwrap_or_else(Timestamp::now);
    let newer = !kept.status.is_terminal()
        && (at, rank(&payment.status)) > (kept.status_updated_at, rank(&kept.status))
        && payment.status != kept.status;
    if !newer {
        return Ok(false);
    }
    // Conditional on the status read: of two events applied at once, the second finds it
    // changed and is delivered again, to be weighed against the first.
    let updated = sql::query(
        "UPDATE payment_dispatches SET status = $1, status_updated_at = $2, updated_at = $3
          WHERE workspace_id = $4 AND payment_uid = $5 AND status = $6",
    )
    .bind(payment.status.as_str())
    .bind(at.to_string())
    .bind(Timestamp::now().to_string())
    .bind(&ws.workspace_id)
    .bind(&payment.uid)
    .bind(kept.status.as_str())
    .execute(&mut *conn)
    .await?;
    if updated == 0 {
        return Err(changed_meanwhile());
    }
    if payment.status == PaymentStatus::Confirmed {
        paid(ctx, conn, ws, id, &kept, payment).await?;
    }
    Ok(true)
}

/// The bank paid: the payable is settled from the source account (unless it already
/// was) and the payment's receipt is filed.
async fn paid(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
    kept: &Dispatch,
    payment: &Payment,
) -> Result<(), ApiError> {
    let bill = find::<Payable>(conn, ws, id).await?;
    let cents = payment.amount;
    let when = payment.transaction_date.as_deref().or(payment.confirmed_at.as_deref()).unwrap_or(&payment.updated_at);
    let paid_at = Timestamp::parse_input(when).unwrap_or_else(Timestamp::now);
    let day = Date::parse(when).unwrap_or_else(|| paid_at.date());
    if bill.row.status.is_open() {
        let request = SettleRequest {
            payment_date: day,
            financial_account_id: Some(kept.source_account_id.clone()),
            amounts: super::wire::SettlementAmounts { ticket_amount: Some(Amount(cents)), ..Default::default() },
        };
        if let Err(e) = super::status::settle::<Payable>(ctx, conn, ws, id, request).await {
            // The bank paid whatever the books say (a closed period): the receipt is
            // filed, the payable waits for a person.
            if matches!(e.code, ErrorCode::InternalError | ErrorCode::ServiceUnavailable) {
                return Err(e);
            }
            tracing::warn!(payable = id, error = %e, "a payment the bank confirmed could not be settled");
            audit_write_with(ctx, conn, ws, ("payables.settle", "payable", id), Some(json!({ "refused": e.message })))
                .await?;
        }
    }
    // Whom it paid: as the payable names them — the beneficiary of its coordinates, the
    // one the user confirmed, else its person — and as the gateway does only for a
    // payable that names nobody (a slip's name as the bank read it is no better).
    let (payee, named) = (payment.payee(), coordinates_of(&bill));
    let payee_name = named.beneficiary_name.or_else(|| bill.row.person_name.clone()).or(payee.name);
    let payee_document = named.beneficiary_document.or(payee.document_number);
    let receipt = uuid::Uuid::new_v4().to_string();
    let now = Timestamp::now().to_string();
    let inserted = sql::query(
        "INSERT INTO receipts (id, workspace_id, company_id, payable_id, financial_account_id, source, status, paid_at,
                amount_cents, payee_name, payee_document, payment_method_kind, external_uid, received_at, created_at, updated_at)
         SELECT $1, $2, $3, $4, $5, 'kobana', 'available', $6, $7, $8, $9, $10, $11, $12, $12, $12
          WHERE NOT EXISTS (SELECT 1 FROM receipts WHERE workspace_id = $2 AND external_uid = $11)",
    )
    .bind(&receipt)
    .bind(&ws.workspace_id)
    .bind(&bill.row.company_id)
    .bind(id)
    .bind(&kept.source_account_id)
    .bind(paid_at.to_string())
    .bind(cents.0)
    .bind(payee_name)
    .bind(payee_document)
    .bind(bill.row.payment_method_kind.clone().unwrap_or_else(|| kept.kind.as_str().to_string()))
    .bind(&payment.uid)
    .bind(&now)
    .execute(&mut *conn)
    .await?;
    if inserted > 0 {
        audit_write(ctx, conn, ws, "receipts.create", "receipt", &receipt).await?;
    }
    Ok(())
}

/// Records a payment the gateway made for one of this server's payables although no
/// dispatch here holds it: the dispatch's answer was lost (a timeout) and the request
/// was not sent again. The gateway's signed event names the payable (`external_id`) and
/// the source account (`financial_account_uid`), so the bank's payment is never lost to
/// the books. Nothing is adopted while the payable has another payment in flight, or
/// when the event names no payable or account of one workspace. Answers as [`owner`].
pub async fn adopt(conn: &mut Conn, payment: &Payment) -> Result<Option<(String, String, Option<String>)>, ApiError> {
    let Some(payable) = payment.external_id.as_deref() else { return Ok(None) };
    let workspace: Option<String> = sql::query("SELECT workspace_id FROM billings WHERE id = $1 AND kind = 'payable'")
        .bind(payable)
        .map_optional(&mut *conn, |row| row.try_get(0))
        .await?;
    let Some(workspace) = workspace else { return Ok(None) };
    let account: Option<String> = sql::query(
        "SELECT id FROM financial_accounts WHERE workspace_id = $1 AND kobana_account_uid = $2 ORDER BY id LIMIT 1",
    )
    .bind(&workspace)
    .bind(&payment.financial_account_uid)
    .map_optional(&mut *conn, |row| row.try_get(0))
    .await?;
    let Some(account) = account else { return Ok(None) };
    let (live, attempts): (i64, i64) = sql::query(
        "SELECT CAST(COALESCE(SUM(CASE WHEN status IN ('pending', 'scheduled') THEN 1 ELSE 0 END), 0) AS BIGINT),
                COUNT(*)
           FROM payment_dispatches WHERE workspace_id = $1 AND billing_id = $2",
    )
    .bind(&workspace)
    .bind(payable)
    .map_optional(&mut *conn, |row| Ok((row.try_get(0)?, row.try_get(1)?)))
    .await?
    .unwrap_or_default();
    if live > 0 {
        return Ok(None);
    }
    let at = Timestamp::parse_input(&payment.created_at).unwrap_or_else(Timestamp::now);
    sql::query(
        "INSERT INTO payment_dispatches (billing_id, workspace_id, attempt, payment_uid, payment_kind, source_account_id,
                status, status_updated_at, dispatched_by, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, NULL, $8, $8)",
    )
    .bind(payable)
    .bind(&workspace)
    .bind(attempts)
    .bind(&payment.uid)
    .bind(payment.kind.as_str())
    .bind(&account)
    .bind(at.to_string())
    .bind(Timestamp::now().to_string())
    .execute(&mut *conn)
    .await
    .map_err(|e| conflict_on_unique(e, "id", "The payment was recorded by its dispatch at the same time"))?;
    tracing::info!(payable, payment = %payment.uid, "a payment whose dispatch answer was lost is recorded from its event");
    Ok(Some((workspace, payable.to_string(), None)))
}

/// The payable whose dispatch made the payment `uid`, and who sent it: (workspace,
/// payable, user).
pub async fn owner(conn: &mut Conn, uid: &str) -> Result<Option<(String, String, Option<String>)>, ApiError> {
    Ok(sql::query("SELECT workspace_id, billing_id, dispatched_by FROM payment_dispatches WHERE payment_uid = $1")
        .bind(uid)
        .map_optional(&mut *conn, |row| Ok((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?)))
        .await?)
}
