//! The status operations of a bill — settle, cancel, reopen — and the checks on the
//! status machine ([`BillStatus::allows`]). Settling writes the bill's one auto-created
//! ledger transaction in the same database transaction; reopening removes it.

use crate::ops::machinery::stamps::Stamp;
use crate::storage::{sql, Conn};
use serde_json::json;

use super::kind::BillKind;
use super::rows::{find, stored_allocations};
use super::wire::{Billing, SettleRequest};
use crate::domain::apportionment::spread;
use crate::domain::bills::{BillStatus, Transition};
use crate::domain::dates::Date;
use crate::domain::money::Cents;
use crate::domain::roles::Access;
use crate::error::{ApiError, ErrorCode};
use crate::ops::ledger::{self, NewTransaction};
use crate::ops::machinery::common::{audit_write, unprocessable};
use crate::ops::{apportionment, machinery::refs, reconciliations, OpContext};
use crate::storage::identity::Membership;

fn invalid_transition(message: &str) -> ApiError {
    ApiError::new(ErrorCode::UnprocessableEntity, message)
        .with_details(json!({"field": "status", "reason": "invalid_transition"}))
}

/// Whether a record in `status` can go through `transition` (422 `invalid_transition`
/// otherwise). The operations check it on the row they lock; a confirmation checks it
/// first, so the user is never asked to confirm what cannot happen.
pub fn check_transition(status: BillStatus, transition: Transition) -> Result<(), ApiError> {
    status.allows(transition).map_err(invalid_transition)
}

/// A record that may still change: pending.
pub fn check_open(current: &Billing) -> Result<(), ApiError> {
    if !current.row.status.is_open() {
        return Err(refused_change());
    }
    Ok(())
}

/// A settled or cancelled record is changed only after a reopen.
pub fn refused_change() -> ApiError {
    invalid_transition("A settled or cancelled record cannot be changed; reopen it first")
}

/// The account a settlement moves money in: the one the request names, else the
/// record's own (422 `account_required` when neither names one).
pub fn settlement_account<'a>(requested: Option<&'a str>, on_record: Option<&'a str>) -> Result<&'a str, ApiError> {
    requested.or(on_record).ok_or_else(|| {
        unprocessable(
            "financial_account_id",
            "account_required",
            "Settling needs financial_account_id (the account the money moved in)",
        )
    })
}

/// What a settle of `current` with `input` writes, after every check a settle makes:
/// the status allows it, the bank does not hold the payable, its dates lie in an open
/// period, the account is the company's. Its confirmation shows it and binds it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Settlement {
    #[serde(skip)]
    pub company: refs::CompanyRef,
    /// The account the money moved in.
    pub account_id: String,
    pub payment_date: Date,
    pub interest: Option<Cents>,
    pub discount: Option<Cents>,
    /// What moved: the ticket sent, else the nominal amount.
    pub ticket: Cents,
}

/// The settlement a settle of `current` with `input` records ([`Settlement`]).
pub async fn settlement<B: BillKind>(
    conn: &mut Conn,
    ws: &Membership,
    current: &Billing,
    input: &SettleRequest,
) -> Result<Settlement, ApiError> {
    let interest = input.amounts.interest_amount.map(|a| a.cents());
    let discount = input.amounts.discount_amount.map(|a| a.cents());
    let ticket = input.amounts.ticket_amount.map(|a| ledger::positive("ticket_amount", a)).transpose()?;
    check_transition(current.row.status, Transition::Settle)?;
    if B::KIND == "payable" {
        super::dispatch::refuse_if_dispatched(conn, ws, &current.row.id, "settled by hand").await?;
    }
    let payment_date = input.payment_date;
    let company = refs::company(conn, ws, "company_id", &current.row.company_id).await?;
    check_booked(&company, current)?;
    refs::check_period(&company, "payment_date", payment_date)?;
    let account_id =
        settlement_account(input.financial_account_id.as_deref(), current.row.financial_account_id.as_deref())?;
    let account_id = refs::account(conn, ws, &company, "financial_account_id", account_id).await?;
    let nominal = Cents::nominal(current.row.amount, interest, discount);
    let ticket = match ticket {
        Some(t) => t,
        None if nominal.0 > 0 => nominal,
        None => {
            return Err(unprocessable("discount_amount", "invalid_amount", "The discount leaves nothing to settle"))
        }
    };
    Ok(Settlement { company, account_id, payment_date, interest, discount, ticket })
}

/// The dates a bill is booked by lie in an open period of its company: its due date,
/// its competence date and, once settled, its payment date (422 `period_closed` naming
/// the first that does not).
pub fn check_booked(company: &refs::CompanyRef, bill: &Billing) -> Result<(), ApiError> {
    refs::check_period(company, "due_date", bill.row.due_date)?;
    refs::check_period(company, "competence_date", bill.row.competence_date)?;
    if let Some(paid) = bill.row.payment_date {
        refs::check_period(company, "payment_date", paid)?;
    }
    Ok(())
}

pub async fn settle<B: BillKind>(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
    input: SettleRequest,
) -> Result<Billing, ApiError> {
    ctx.authorize(ws, B::RESOURCE, Access::Write)?;
    let current = find::<B>(conn, ws, id).await?;
    let Settlement { company, account_id: account, payment_date, interest, discount, ticket } =
        settlement::<B>(conn, ws, &current, &input).await?;
    // Conditional on the status: a concurrent settle finds nothing to change.
    let update = sql::query(
        "UPDATE billings SET status = $1, payment_date = $2, financial_account_id = $3, interest_cents = $4, discount_cents = $5,
                ticket_cents = $6, updated_at = $7, updated_via = $8, updated_by = $9
          WHERE workspace_id = $10 AND kind = $11 AND id = $12 AND status = $13",
    )
    .bind(BillStatus::after::<B>(Transition::Settle).as_str())
    .bind(payment_date)
    .bind(&account)
    .bind(interest.map(|c| c.0))
    .bind(discount.map(|c| c.0))
    .bind(ticket.0);
    changed_if::<B>(ctx, conn, ws, update, &current.row.id, BillStatus::Pending, || {
        invalid_transition("Only a pending record can be settled")
    })
    .await?;
    let transaction = NewTransaction {
        company_id: company.id.clone(),
        account_id: account,
        description: current.row.description.clone(),
        amount: ticket,
        occurred_at: payment_date,
        competence_date: Some(current.row.competence_date),
        polarity: Some(B::POLARITY),
        category_id: current.row.category_id.clone(),
        person_id: current.row.person_id.clone(),
        payment_method_kind: current.row.payment_method_kind.clone(),
        document: current.row.document.clone(),
        document_date: current.row.document_date,
        notes: current.row.notes.clone(),
        classified: current.row.category_id.is_some(),
        is_pending: false,
        auto_created: true,
        billing_id: Some(current.row.id.clone()),
        ..NewTransaction::default()
    };
    let transaction_id = ledger::insert(ctx, conn, ws, &transaction).await?;
    let allocations = stored_allocations(conn, ws, &current.row.id).await?;
    if !allocations.is_empty() {
        let copied = spread(&allocations, current.row.amount, &[ticket], false).pop().unwrap_or_default();
        apportionment::replace(conn, ws, "transaction", &transaction_id, &copied).await?;
    }
    sql::query("UPDATE billings SET transaction_id = $1 WHERE workspace_id = $2 AND id = $3")
        .bind(&transaction_id)
        .bind(&ws.workspace_id)
        .bind(&current.row.id)
        .execute(&mut *conn)
        .await?;
    audit_write(ctx, conn, ws, &format!("{}.settle", B::PLURAL), B::KIND, &current.row.id).await?;
    audit_write(ctx, conn, ws, "transactions.create", "transaction", &transaction_id).await?;
    find::<B>(conn, ws, &current.row.id).await
}

pub async fn cancel<B: BillKind>(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
) -> Result<Billing, ApiError> {
    let current = moved::<B>(ctx, conn, ws, id, Transition::Cancel).await?;
    audit_write(ctx, conn, ws, &format!("{}.cancel", B::PLURAL), B::KIND, &current.row.id).await?;
    find::<B>(conn, ws, &current.row.id).await
}

pub async fn reopen<B: BillKind>(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
) -> Result<Billing, ApiError> {
    let current = moved::<B>(ctx, conn, ws, id, Transition::Reopen).await?;
    if current.row.status.is_settled() {
        if ledger::remove_settlement(conn, ws, &current.row.id).await? > 0 {
            if let Some(tx) = &current.row.transaction_id {
                audit_write(ctx, conn, ws, "transactions.delete", "transaction", tx).await?;
            }
        }
        sql::query(
            "UPDATE billings SET payment_date = NULL, interest_cents = NULL, discount_cents = NULL, ticket_cents = NULL,
                    transaction_id = NULL WHERE workspace_id = $1 AND id = $2",
        )
        .bind(&ws.workspace_id)
        .bind(&current.row.id)
        .execute(&mut *conn)
        .await
        ?;
    }
    audit_write(ctx, conn, ws, &format!("{}.reopen", B::PLURAL), B::KIND, &current.row.id).await?;
    find::<B>(conn, ws, &current.row.id).await
}

/// Cancels or reopens the bill `id`: the caller may write and [`check_move`] lets it.
/// Answers the bill as it was before the move.
async fn moved<B: BillKind>(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
    to: Transition,
) -> Result<Billing, ApiError> {
    ctx.authorize(ws, B::RESOURCE, Access::Write)?;
    let current = find::<B>(conn, ws, id).await?;
    check_move::<B>(conn, ws, &current, to).await?;
    transition::<B>(ctx, conn, ws, &current, to).await?;
    Ok(current)
}

/// Whether `current` may be cancelled or reopened: the transition is allowed from its
/// status, the bank does not hold it, a reopen undoes no reconciliation and no payment
/// the bank made, and its dates lie in an open period. Its confirmation asks it first.
pub async fn check_move<B: BillKind>(
    conn: &mut Conn,
    ws: &Membership,
    current: &Billing,
    to: Transition,
) -> Result<(), ApiError> {
    check_transition(current.row.status, to)?;
    if to == Transition::Cancel && B::KIND == "payable" {
        super::dispatch::refuse_if_dispatched(conn, ws, &current.row.id, "cancelled").await?;
    }
    if to == Transition::Reopen {
        reconciliations::refuse_if_reconciled(conn, ws, "billing", &current.row.id, "reopened").await?;
        match B::KIND {
            "payable" => {
                super::dispatch::refuse_if_paid_by_the_bank(conn, ws, &current.row.id).await?;
                super::coordinates::refuse_reopened_duplicate(conn, ws, &current.row.id).await?;
            }
            _ => super::charges::refuse_if_paid_by_the_bank(conn, ws, &current.row.id).await?,
        }
    }
    let company = refs::company(conn, ws, "company_id", &current.row.company_id).await?;
    check_booked(&company, current)
}

/// Moves a record from its status through `transition`, conditionally: a concurrent
/// change makes it an invalid transition instead of a double one.
async fn transition<B: BillKind>(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    current: &Billing,
    transition: Transition,
) -> Result<(), ApiError> {
    let update = sql::query(
        "UPDATE billings SET status = $1, updated_at = $2, updated_via = $3, updated_by = $4
          WHERE workspace_id = $5 AND kind = $6 AND id = $7 AND status = $8",
    )
    .bind(BillStatus::after::<B>(transition).as_str());
    changed_if::<B>(ctx, conn, ws, update, &current.row.id, current.row.status, || {
        invalid_transition("The record changed status meanwhile")
    })
    .await
}

/// Runs the `UPDATE` of a bill that still has `status`: binds the stamp, then the key
/// (`workspace_id`, kind, `id`) and the status after the changed fields. A bill whose
/// status moved meanwhile changes nothing, and the answer is `refused`'s.
pub(super) async fn changed_if<'q, B: BillKind>(
    ctx: &'q OpContext<'_>,
    conn: &mut Conn,
    ws: &'q Membership,
    update: sql::Query<'q>,
    id: &'q str,
    status: BillStatus,
    refused: impl FnOnce() -> ApiError,
) -> Result<(), ApiError> {
    let changed = update
        .stamp_now(ctx)
        .bind(&ws.workspace_id)
        .bind(B::KIND)
        .bind(id)
        .bind(status.as_str())
        .execute(&mut *conn)
        .await?;
    if changed == 1 {
        Ok(())
    } else {
        Err(refused())
    }
}
