//! A receivable charged through the bank: `POST /v1/receivables/{id}/charge`
//! (`{kind: pix | bank_billet}`) issues a Pix charge or a boleto at Kobana's banking
//! gateway, `…/charge/cancel` takes it back, and the gateway's events bring its state
//! home (`events.rs`). The mirror is `receivable_charges` (the receivable's current
//! charge, and the ones before it); the row shows `kobana_charge_kind`,
//! `kobana_charge_uid`, `kobana_status`, `kobana_registration_status`,
//! `kobana_status_updated_at` and the computed `charge_state`, the record also the
//! charge's URL, barcode, digitable line and Pix code.
//!
//! * **What a charge needs** (422 naming it): a payer (`person_id`) with a CPF or CNPJ;
//!   for a boleto, the payer's billing address; an account to receive in
//!   (`financial_account_id`, else `expected_account_id`) connected to the gateway — its
//!   Pix account for a Pix, its boleto agreement for a boleto. A receivable already
//!   charged (a live charge), received or cancelled is 409.
//! * **Charged once.** The gateway's idempotency key is the receivable's id and its
//!   charge count: a charge retried after a timeout finds the one issued. When the
//!   gateway does not answer: 503 with `Retry-After`, nothing written.
//! * **The lock.** While a charge is live, the amount, the due date and the payer do not
//!   change and the receivable is not deleted (409 `charge_locked`).
//! * **Cancel.** A boleto stops at once (`canceled`); a Pix cancellation is asked for and
//!   confirmed later by the gateway's event. Nothing live: 409.
//! * **Paid.** A `paid` charge settles the receivable into the charge's account (its
//!   ledger transaction, once) on the day it was paid, for the amount paid.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::dispatch::{changed_meanwhile, gateway_error};
use super::rows::find;
use super::wire::{Billing, SettleRequest};
use crate::domain::bills::Receivable;
use crate::domain::channel::Channel;
use crate::domain::dates::{Date, Timestamp};
use crate::domain::money::{Amount, Cents};
use crate::domain::roles::{Access, Resource};
use crate::error::{ApiError, ErrorCode};
use crate::gateway::{BankBillet, ChargeStatus, NewBankBillet, NewPixCharge, Payer, PixCharge, RegistrationStatus};
use crate::ops::machinery::common::{audit_write_with, conflict_on_unique, unprocessable};
use crate::ops::OpContext;
use crate::storage::identity::Membership;
use crate::storage::{sql, Conn};

/// How a receivable is charged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChargeKind {
    Pix,
    BankBillet,
}

impl ChargeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChargeKind::Pix => "pix",
            ChargeKind::BankBillet => "bank_billet",
        }
    }

    /// The kind as kept (`bank_billet`; anything else is a Pix).
    fn parse(text: &str) -> ChargeKind {
        match text {
            "bank_billet" => ChargeKind::BankBillet,
            _ => ChargeKind::Pix,
        }
    }
}

/// `POST /v1/receivables/{id}/charge`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChargeRequest {
    /// `pix` (a Pix charge with its QR code) or `bank_billet` (a boleto).
    pub kind: ChargeKind,
}

/// A receivable's charge as kept.
#[derive(Debug, Clone)]
pub struct Charge {
    pub uid: String,
    pub kind: ChargeKind,
    pub charge_id: Option<i64>,
    pub account_id: String,
    pub status: ChargeStatus,
    pub registration_status: Option<RegistrationStatus>,
    pub status_updated_at: Timestamp,
    pub url: Option<String>,
    pub barcode: Option<String>,
    pub digitable_line: Option<String>,
    pub pix_qrcode: Option<String>,
    pub attempt: i64,
}

impl Charge {
    /// Whether it may still be paid: not ended, its registration not refused.
    pub fn is_live(&self) -> bool {
        !self.status.is_ended()
            && !matches!(self.registration_status, Some(RegistrationStatus::Rejected | RegistrationStatus::Failed))
    }
}

/// The state of a charge as the receivable shows it: an ended or overdue commercial
/// status wins; else the registration decides (registering until it is confirmed).
pub fn charge_state(status: &ChargeStatus, registration: Option<&RegistrationStatus>) -> &'static str {
    use RegistrationStatus as R;
    match (status, registration) {
        (ChargeStatus::Paid, _) => "paid",
        (ChargeStatus::Cancelled, _) => "canceled",
        (ChargeStatus::GenerationFailed, _) => "generation_failed",
        (ChargeStatus::Overdue, _) => "overdue",
        (_, Some(R::Rejected)) => "registration_rejected",
        (_, Some(R::Failed)) => "registration_failed",
        (_, Some(R::Confirmed | R::Skipped)) => "registered",
        _ => "registering",
    }
}

/// The order of a charge's changes: an event never moves it back.
fn rank(status: &ChargeStatus, registration: Option<&RegistrationStatus>) -> u8 {
    let commercial = match status {
        ChargeStatus::Generating => 0,
        ChargeStatus::Opened => 1,
        ChargeStatus::Overdue => 2,
        _ => 3,
    };
    let registered = match registration {
        None | Some(RegistrationStatus::Pending | RegistrationStatus::Requested) => 0,
        _ => 1,
    };
    commercial * 2 + registered
}

const CHARGE: &str =
    "SELECT charge_uid, kind, charge_id, account_id, status, registration_status, status_updated_at, url,
        barcode, digitable_line, pix_qrcode, attempt
   FROM receivable_charges";

async fn read(conn: &mut Conn, query: sql::Query<'_>) -> Result<Option<Charge>, ApiError> {
    Ok(query
        .map_optional(&mut *conn, |row| {
            let (kind, status): (String, String) = (row.try_get(1)?, row.try_get(4)?);
            let registration: Option<String> = row.try_get(5)?;
            Ok(Charge {
                uid: row.try_get(0)?,
                kind: ChargeKind::parse(&kind),
                charge_id: row.try_get(2)?,
                account_id: row.try_get(3)?,
                status: ChargeStatus::from(status.as_str()),
                registration_status: registration.as_deref().map(RegistrationStatus::from),
                status_updated_at: row.try_get(6)?,
                url: row.try_get(7)?,
                barcode: row.try_get(8)?,
                digitable_line: row.try_get(9)?,
                pix_qrcode: row.try_get(10)?,
                attempt: row.try_get(11)?,
            })
        })
        .await?)
}

/// The receivable's current charge, if it was ever charged.
pub async fn current(conn: &mut Conn, ws: &Membership, id: &str) -> Result<Option<Charge>, ApiError> {
    let query = sql::query(format!("{CHARGE} WHERE workspace_id = $1 AND billing_id = $2 AND current = 1"));
    read(conn, query.bind(&ws.workspace_id).bind(id)).await
}

/// The receivable's live charge: what a cancellation stops (409 when there is none).
pub async fn live(conn: &mut Conn, ws: &Membership, id: &str) -> Result<Charge, ApiError> {
    current(conn, ws, id).await?.filter(Charge::is_live).ok_or_else(|| {
        ApiError::new(ErrorCode::Conflict, "The receivable has no live charge to cancel")
            .with_details(json!({ "reason": "no_live_charge" }))
    })
}

/// 409 `paid_by_bank` when the customer paid the receivable's charge at the bank: the
/// money arrived, so reopening it (which removes its receipt from the books) would make
/// the books disagree with the bank.
pub async fn refuse_if_paid_by_the_bank(conn: &mut Conn, ws: &Membership, id: &str) -> Result<(), ApiError> {
    match current(conn, ws, id).await? {
        Some(charge) if charge.status == ChargeStatus::Paid => Err(ApiError::new(
            ErrorCode::Conflict,
            format!(
                "The customer paid this receivable at the bank (charge {}): reopening it would remove money the bank \
                 received from the books; record its reversal instead",
                charge.uid
            ),
        )
        .with_details(json!({ "reason": "paid_by_bank", "kobana_charge_uid": charge.uid }))),
        _ => Ok(()),
    }
}

/// The receivable whose charge is `uid`, and who charged it: (workspace, receivable, user).
pub async fn owner(conn: &mut Conn, uid: &str) -> Result<Option<(String, String, Option<String>)>, ApiError> {
    Ok(sql::query("SELECT workspace_id, billing_id, charged_by FROM receivable_charges WHERE charge_uid = $1")
        .bind(uid)
        .map_optional(&mut *conn, |row| Ok((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?)))
        .await?)
}

/// Records a Pix charge the gateway issued for one of this server's receivables although
/// no charge here holds it (the charge's answer was lost and the request not sent
/// again): the signed event names the receivable (`external_id`) and the Pix account.
/// Nothing is adopted while the receivable has another live charge. Answers as
/// [`owner`].
pub async fn adopt(conn: &mut Conn, charge: &PixCharge) -> Result<Option<(String, String, Option<String>)>, ApiError> {
    let (Some(receivable), Some(pix_account)) = (charge.external_id.as_deref(), charge.pix_account_uid.as_deref())
    else {
        return Ok(None);
    };
    let workspace: Option<String> =
        sql::query("SELECT workspace_id FROM billings WHERE id = $1 AND kind = 'receivable'")
            .bind(receivable)
            .map_optional(&mut *conn, |row| row.try_get(0))
            .await?;
    let Some(workspace) = workspace else { return Ok(None) };
    let ws = Membership {
        workspace_id: workspace.clone(),
        workspace_name: String::new(),
        role: crate::domain::roles::Role::Finance,
    };
    let earlier = current(conn, &ws, receivable).await?;
    if earlier.as_ref().is_some_and(Charge::is_live) {
        return Ok(None);
    }
    let account: Option<String> = sql::query(
        "SELECT id FROM financial_accounts WHERE workspace_id = $1 AND kobana_account_uid = $2 ORDER BY id LIMIT 1",
    )
    .bind(&workspace)
    .bind(pix_account)
    .map_optional(&mut *conn, |row| row.try_get(0))
    .await?;
    let Some(account) = account else { return Ok(None) };
    // The attempt its request made it with: the one after the current charge's, which no
    // request has recorded since (it would have recorded this charge, by the same key).
    let attempt = earlier.as_ref().map_or(0, |c| c.attempt + 1);
    let at = Timestamp::parse_input(&charge.created_at).unwrap_or_else(Timestamp::now);
    sql::query("UPDATE receivable_charges SET current = 0 WHERE workspace_id = $1 AND billing_id = $2")
        .bind(&workspace)
        .bind(receivable)
        .execute(&mut *conn)
        .await?;
    sql::query(
        "INSERT INTO receivable_charges (charge_uid, billing_id, workspace_id, attempt, current, kind, account_id, status,
                registration_status, status_updated_at, created_at, updated_at)
         VALUES ($1, $2, $3, $4, 1, 'pix', $5, 'opened', 'pending', $6, $7, $7)",
    )
    .bind(&charge.uid)
    .bind(receivable)
    .bind(&workspace)
    .bind(attempt)
    .bind(&account)
    .bind(at.to_string())
    .bind(Timestamp::now().to_string())
    .execute(&mut *conn)
    .await
    .map_err(|e| conflict_on_unique(e, "id", "The charge was recorded by its request at the same time"))?;
    tracing::info!(receivable, charge = %charge.uid, "a charge whose answer was lost is recorded from its event");
    Ok(Some((workspace, receivable.to_string(), None)))
}

/// 409 `charge_locked` while the receivable's charge is live: what the customer was
/// billed does not change under them.
pub async fn refuse_if_charged(conn: &mut Conn, ws: &Membership, id: &str, what: &str) -> Result<(), ApiError> {
    match current(conn, ws, id).await? {
        Some(charge) if charge.is_live() => Err(ApiError::new(
            ErrorCode::Conflict,
            format!(
                "The receivable has a live charge ({}): cancel the charge before it is {what}",
                charge.kind.as_str()
            ),
        )
        .with_details(json!({ "reason": "charge_locked", "kobana_charge_uid": charge.uid }))),
        _ => Ok(()),
    }
}

/// The payer of a charge: the receivable's person, with a document and, for a boleto,
/// a billing address.
struct PayerOf {
    name: String,
    document: String,
    address: Option<serde_json::Value>,
}

async fn payer(conn: &mut Conn, ws: &Membership, bill: &Billing) -> Result<PayerOf, ApiError> {
    let Some(person) = bill.row.person_id.clone() else {
        return Err(unprocessable("person_id", "missing", "Charging a receivable needs its payer (person_id)"));
    };
    let row: Option<(String, Option<String>, Option<String>)> =
        sql::query("SELECT name, document_number, billing_address FROM people WHERE workspace_id = $1 AND id = $2")
            .bind(&ws.workspace_id)
            .bind(&person)
            .map_optional(&mut *conn, |row| Ok((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?)))
            .await?;
    let Some((name, document, address)) = row else {
        return Err(unprocessable("person_id", "invalid_reference", "The receivable's payer no longer exists"));
    };
    let Some(document) = document else {
        return Err(unprocessable(
            "person.document_number",
            "missing",
            "Charging needs the payer's CPF or CNPJ: add it to the person",
        ));
    };
    let address = address.and_then(|a| serde_json::from_str(&a).ok());
    Ok(PayerOf { name, document, address })
}

/// The account a charge is received in and its handles at the gateway: (account, Pix
/// account uid, boleto agreement).
async fn receiving_account(
    conn: &mut Conn,
    ws: &Membership,
    bill: &Billing,
) -> Result<(String, Option<String>, Option<i64>), ApiError> {
    let Some(account) = bill.row.financial_account_id.clone().or_else(|| bill.row.expected_account_id.clone()) else {
        return Err(unprocessable(
            "financial_account_id",
            "missing",
            "Charging a receivable needs the account it is received in (financial_account_id or expected_account_id)",
        ));
    };
    let row: Option<(Option<String>, Option<i64>)> = sql::query(
        "SELECT kobana_account_uid, kobana_billet_account_id FROM financial_accounts WHERE workspace_id = $1 AND id = $2",
    )
    .bind(&ws.workspace_id)
    .bind(&account)
    .map_optional(&mut *conn, |row| Ok((row.try_get(0)?, row.try_get(1)?)))
    .await?;
    let (pix, billet) = row.unwrap_or_default();
    Ok((account, pix, billet))
}

fn text(address: &serde_json::Value, field: &str) -> String {
    address[field].as_str().unwrap_or_default().to_string()
}

/// A charge's state as the gateway answered or an event carried it.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub key: String,
    pub charge_id: Option<i64>,
    pub status: ChargeStatus,
    pub registration_status: Option<RegistrationStatus>,
    /// When it last changed, as the gateway says (none when it says nothing readable).
    pub updated_at: Option<Timestamp>,
    /// The day it was paid, in São Paulo: its `paid_at`, else the day of its last change.
    pub paid_on: Option<Date>,
    pub paid_amount: Option<Cents>,
    pub url: Option<String>,
    pub barcode: Option<String>,
    pub digitable_line: Option<String>,
    pub pix_qrcode: Option<String>,
}

impl Snapshot {
    pub fn of_pix(charge: &PixCharge) -> Snapshot {
        Snapshot {
            key: charge.uid.clone(),
            charge_id: None,
            status: charge.state.status.clone(),
            registration_status: charge.state.registration_status.clone(),
            updated_at: Timestamp::parse_input(&charge.updated_at),
            paid_on: paid_on(charge.state.paid_at.as_deref(), &charge.updated_at),
            paid_amount: charge.state.paid_amount,
            url: charge.state.url.clone(),
            barcode: None,
            digitable_line: None,
            pix_qrcode: charge.qrcode.as_ref().and_then(|q| q.emv.clone()),
        }
    }

    pub fn of_billet(billet: &BankBillet) -> Snapshot {
        let updated_at = billet.updated_at.as_deref().or(billet.created_at.as_deref()).unwrap_or_default();
        Snapshot {
            key: billet.id.to_string(),
            charge_id: Some(billet.id),
            status: billet.state.status.clone(),
            registration_status: billet.state.registration_status.clone(),
            updated_at: Timestamp::parse_input(updated_at),
            paid_on: paid_on(billet.state.paid_at.as_deref(), updated_at),
            paid_amount: billet.state.paid_amount,
            url: billet.state.url.clone(),
            barcode: billet.barcode.clone(),
            digitable_line: billet.line.clone(),
            pix_qrcode: None,
        }
    }
}

/// The day a charge was paid, from the gateway's `paid_at`, else its last change.
fn paid_on(paid_at: Option<&str>, updated_at: &str) -> Option<Date> {
    Date::parse(paid_at.unwrap_or(updated_at))
}

/// What a charge of a receivable asks the bank to issue, decided from its record as
/// read: a Pix charge or a boleto (amount, payer, due day), the account it is received
/// in and the attempt. Its confirmation shows it and binds it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Invoice {
    pub issue: Issue,
    /// The receivable's account the charge is received in.
    pub account_id: String,
    pub attempt: i64,
}

/// What the bank is asked to issue.
#[derive(Debug, Clone, serde::Serialize)]
pub enum Issue {
    Pix(NewPixCharge),
    BankBillet(NewBankBillet),
}

impl Issue {
    pub fn kind(&self) -> ChargeKind {
        match self {
            Issue::Pix(_) => ChargeKind::Pix,
            Issue::BankBillet(_) => ChargeKind::BankBillet,
        }
    }
}

/// The charge of `kind` a charge of `bill` asks for, after every check a charge makes
/// before it calls the bank (a pending receivable not already charged, its payer's
/// document and, for a boleto, address, an account with the gateway handle the kind
/// needs): what the confirmation asks about, so nothing it can check is refused after
/// the user's yes.
pub async fn invoice(conn: &mut Conn, ws: &Membership, bill: &Billing, kind: ChargeKind) -> Result<Invoice, ApiError> {
    let status = bill.row.status.as_str();
    if !bill.row.status.is_open() {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!("The receivable is {status}: only a pending one is charged"),
        )
        .with_details(json!({ "reason": "invalid_transition", "status": status })));
    }
    // A paid charge stands too: when its receipt could not be settled (a closed period),
    // charging again would bill the customer twice.
    let earlier = current(conn, ws, &bill.row.id).await?;
    if let Some(live) = earlier.as_ref().filter(|c| c.is_live() || c.status == ChargeStatus::Paid) {
        let message = if live.is_live() {
            "The receivable is already charged"
        } else {
            "The receivable's charge was paid at the bank: settle the receivable instead"
        };
        return Err(ApiError::new(ErrorCode::Conflict, message)
            .with_details(json!({ "reason": "already_charged", "kobana_charge_uid": live.uid })));
    }
    let payer = payer(conn, ws, bill).await?;
    let (account_id, pix_account, billet_account) = receiving_account(conn, ws, bill).await?;
    let amount = bill.row.nominal_amount;
    // The attempt (and the gateway's idempotency key) follows the current charge, read
    // in the same statement as the check above: of two requests at once, either the
    // second sees the first's charge (live: 409), or both ask with the same key, the
    // gateway makes one charge, and the second to record it is refused (409). (Counted
    // in a statement of its own, the second could see the first's charge recorded after
    // its check and ask for another.)
    let attempt = earlier.as_ref().map_or(0, |c| c.attempt + 1);
    let issue = match kind {
        ChargeKind::Pix => {
            let Some(pix_account) = pix_account else {
                return Err(unprocessable(
                    "financial_account_id",
                    "pix_account_missing",
                    "The receiving account has no Pix account at the banking gateway",
                ));
            };
            Issue::Pix(NewPixCharge {
                amount,
                pix_account_uid: pix_account,
                expire_at: format!("{}T23:59:59-03:00", bill.row.due_date),
                payer: Payer { document_number: payer.document, name: payer.name },
                external_id: Some(bill.row.id.clone()),
            })
        }
        ChargeKind::BankBillet => {
            let Some(billet_account) = billet_account else {
                return Err(unprocessable(
                    "financial_account_id",
                    "billet_account_missing",
                    "The receiving account has no boleto agreement at the banking gateway",
                ));
            };
            let Some(address) = payer.address else {
                return Err(unprocessable(
                    "person.billing_address",
                    "missing",
                    "A boleto needs the payer's full address: add it to the person in the dashboard",
                ));
            };
            Issue::BankBillet(NewBankBillet {
                amount,
                expire_at: bill.row.due_date.to_string(),
                bank_billet_account_id: billet_account,
                customer_person_name: payer.name,
                customer_cnpj_cpf: payer.document,
                customer_zipcode: text(&address, "zip_code"),
                customer_address: text(&address, "street"),
                customer_address_number: text(&address, "number"),
                customer_neighborhood: text(&address, "neighborhood"),
                customer_city_name: text(&address, "city"),
                customer_state: text(&address, "state"),
                description: Some(bill.row.description.clone()),
            })
        }
    };
    Ok(Invoice { issue, account_id, attempt })
}

/// `POST /v1/receivables/{id}/charge`
pub async fn charge(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
    request: ChargeRequest,
) -> Result<Billing, ApiError> {
    ctx.authorize(ws, Resource::Receivables, Access::Bank)?;
    let bill = find::<Receivable>(conn, ws, id).await?;
    let Invoice { issue, account_id: account, attempt } = invoice(conn, ws, &bill, request.kind).await?;
    let key = format!("kfin-charge-{}-{attempt}", bill.row.id);
    let snapshot = match &issue {
        Issue::Pix(new) => {
            Snapshot::of_pix(&ctx.state.gateway.create_pix_charge(new, &key).await.map_err(gateway_error)?)
        }
        Issue::BankBillet(new) => {
            Snapshot::of_billet(&ctx.state.gateway.create_bank_billet(new, &key).await.map_err(gateway_error)?)
        }
    };
    let now = Timestamp::now();
    let stamp = snapshot.updated_at.unwrap_or(now);
    sql::query("UPDATE receivable_charges SET current = 0 WHERE workspace_id = $1 AND billing_id = $2")
        .bind(&ws.workspace_id)
        .bind(&bill.row.id)
        .execute(&mut *conn)
        .await?;
    sql::query(
        "INSERT INTO receivable_charges (charge_uid, billing_id, workspace_id, attempt, current, kind, charge_id, account_id,
                status, registration_status, status_updated_at, url, barcode, digitable_line, pix_qrcode, charged_by,
                created_at, updated_at)
         VALUES ($1, $2, $3, $4, 1, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $16)",
    )
    .bind(&snapshot.key)
    .bind(&bill.row.id)
    .bind(&ws.workspace_id)
    .bind(attempt)
    .bind(request.kind.as_str())
    .bind(snapshot.charge_id)
    .bind(&account)
    .bind(snapshot.status.as_str())
    .bind(snapshot.registration_status.as_ref().map(RegistrationStatus::as_str))
    .bind(stamp.to_string())
    .bind(snapshot.url.as_deref())
    .bind(snapshot.barcode.as_deref())
    .bind(snapshot.digitable_line.as_deref())
    .bind(snapshot.pix_qrcode.as_deref())
    .bind(&ctx.identity.user_id)
    .bind(now.to_string())
    .execute(&mut *conn)
    .await
    .map_err(|e| conflict_on_unique(e, "id", "The receivable was charged by another request at the same time"))?;
    // Retried after a lost answer, the charge may already be paid: received now, by the
    // server as for the gateway's event (which then finds nothing newer).
    if snapshot.status == ChargeStatus::Paid {
        let identity = super::events::system_identity(Some(ctx.identity.user_id.clone()));
        let system = OpContext { identity: &identity, channel: Channel::System, ..*ctx };
        received(&system, conn, ws, &bill.row.id, &account, &snapshot).await?;
    }
    audit_write_with(
        ctx,
        conn,
        ws,
        ("receivables.charge", "receivable", &bill.row.id),
        Some(json!({ "kobana_charge_uid": snapshot.key, "kind": request.kind.as_str(), "amount": bill.row.nominal_amount.brl() })),
    )
    .await?;
    find::<Receivable>(conn, ws, &bill.row.id).await
}

/// `POST /v1/receivables/{id}/charge/cancel`
pub async fn cancel_charge(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
) -> Result<Billing, ApiError> {
    ctx.authorize(ws, Resource::Receivables, Access::Bank)?;
    let bill = find::<Receivable>(conn, ws, id).await?;
    let charge = live(conn, ws, &bill.row.id).await?;
    let key = format!("kfin-charge-cancel-{}-{}", bill.row.id, charge.attempt);
    match charge.kind {
        ChargeKind::BankBillet => {
            let billet_id = charge.charge_id.unwrap_or_default();
            let billet = ctx.state.gateway.cancel_bank_billet(billet_id, &key).await.map_err(gateway_error)?;
            mirror(ctx, conn, ws, &bill.row.id, &Snapshot::of_billet(&billet)).await?;
        }
        ChargeKind::Pix => ctx.state.gateway.cancel_pix_charge(&charge.uid, &key).await.map_err(gateway_error)?,
    }
    audit_write_with(
        ctx,
        conn,
        ws,
        ("receivables.cancel_charge", "receivable", &bill.row.id),
        Some(json!({ "kobana_charge_uid": charge.uid })),
    )
    .await?;
    find::<Receivable>(conn, ws, &bill.row.id).await
}

/// Applies a charge's state to the receivable it charges, when it is newer than the one
/// kept: `paid` settles the receivable.
pub async fn mirror(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
    snapshot: &Snapshot,
) -> Result<bool, ApiError> {
    let query = sql::query(format!("{CHARGE} WHERE workspace_id = $1 AND billing_id = $2 AND charge_uid = $3"));
    let Some(kept) = read(conn, query.bind(&ws.workspace_id).bind(id).bind(&snapshot.key)).await? else {
        return Ok(false);
    };
    let at = snapshot.updated_at.unwrap_or_else(Timestamp::now);
    let registration = snapshot.registration_status.as_ref();
    let newer = !kept.status.is_ended()
        && (at, rank(&snapshot.status, registration))
            > (kept.status_updated_at, rank(&kept.status, kept.registration_status.as_ref()))
        && (snapshot.status != kept.status || snapshot.registration_status != kept.registration_status);
    if !newer {
        return Ok(false);
    }
    // Conditional on the state read: of two events applied at once, the second finds it
    // changed and is delivered again, to be weighed against the first.
    let updated = sql::query(
        "UPDATE receivable_charges SET status = $1, registration_status = $2, status_updated_at = $3,
                url = COALESCE($4, url), barcode = COALESCE($5, barcode), digitable_line = COALESCE($6, digitable_line),
                pix_qrcode = COALESCE($7, pix_qrcode), updated_at = $8
          WHERE workspace_id = $9 AND charge_uid = $10 AND status = $11 AND COALESCE(registration_status, '') = $12",
    )
    .bind(snapshot.status.as_str())
    .bind(registration.map(RegistrationStatus::as_str))
    .bind(at.to_string())
    .bind(snapshot.url.as_deref())
    .bind(snapshot.barcode.as_deref())
    .bind(snapshot.digitable_line.as_deref())
    .bind(snapshot.pix_qrcode.as_deref())
    .bind(Timestamp::now().to_string())
    .bind(&ws.workspace_id)
    .bind(&snapshot.key)
    .bind(kept.status.as_str())
    .bind(kept.registration_status.as_ref().map_or("", RegistrationStatus::as_str))
    .execute(&mut *conn)
    .await?;
    if updated == 0 {
        return Err(changed_meanwhile());
    }
    if snapshot.status == ChargeStatus::Paid {
        received(ctx, conn, ws, id, &kept.account_id, snapshot).await?;
    }
    Ok(true)
}

/// The customer paid: the receivable is received into the charge's account (unless it
/// already was).
async fn received(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
    account: &str,
    snapshot: &Snapshot,
) -> Result<(), ApiError> {
    let bill = find::<Receivable>(conn, ws, id).await?;
    if !bill.row.status.is_open() {
        return Ok(());
    }
    let day = snapshot.paid_on.unwrap_or_else(Date::today);
    let paid = snapshot.paid_amount.filter(|c| c.0 > 0);
    let request = SettleRequest {
        payment_date: day,
        financial_account_id: Some(account.to_string()),
        amounts: super::wire::SettlementAmounts { ticket_amount: paid.map(Amount), ..Default::default() },
    };
    if let Err(e) = super::status::settle::<Receivable>(ctx, conn, ws, id, request).await {
        if matches!(e.code, ErrorCode::InternalError | ErrorCode::ServiceUnavailable) {
            return Err(e);
        }
        tracing::warn!(receivable = id, error = %e, "a charge the customer paid could not be settled");
        audit_write_with(
            ctx,
            conn,
            ws,
            ("receivables.settle", "receivable", id),
            Some(json!({ "refused": e.message })),
        )
        .await?;
    }
    Ok(())
}
