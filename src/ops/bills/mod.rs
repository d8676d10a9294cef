//! Payables and receivables (`/v1/payables`, `/v1/receivables`, scopes `finance.payables`
//! and `finance.receivables`): bills to pay and to receive, one `billings` table told
//! apart by `kind`, with their status machine and settlement. Every operation is generic
//! over the kind ([`Payable`], [`Receivable`]). Here: the operations and their OpenAPI
//! rows; `wire` holds the request and response types, `rows` the database mapping,
//! `series` what a create writes, `status` settle, cancel and reopen.
//!
//! Rules:
//! * Status machine: pending → paid (payables) / received (receivables) by `settle`,
//!   pending → cancelled by `cancel`, paid/received/cancelled → pending by `reopen`.
//!   Cancelling a settled record needs a reopen first (422 `invalid_transition`);
//!   `update` never changes the status, and a settled or cancelled record cannot be
//!   changed (422 `invalid_transition`) until it is reopened. On `/v1`, a `PATCH` with
//!   a `status` other than the record's runs the same settle, cancel or reopen
//!   ([`patch`]), as the real API moves its bills.
//! * Settling needs a payment date and an account of the record's company; it creates
//!   exactly one auto-created ledger transaction (debit for payables, credit for
//!   receivables, amount = the ticket amount, which defaults to the nominal amount
//!   `amount + interest − discount`) in the same database transaction. Reopening removes
//!   it; deleting the record removes it too.
//! * Series: `type=installment` with `total_installments` 2–120 creates N rows sharing
//!   one `group_id`; amounts are split to the cent with the remainder on the last, due
//!   (and competence) dates are one month apart (same day, clamped to the month's end).
//!   `type=recurring` with `recurrence_period` creates `RECURRENCE_HORIZON` (12) occurrences
//!   of the same amount, one period apart. The whole series is written in one
//!   transaction; the create answers the first record plus `series` (all ids in order).
//!   Tax charges attach to the first record only. The apportionment is spread to every
//!   record of the series: percentages are kept as they are; an item with a percentage
//!   gets its amount (when it had one) recomputed from the percentage on each parcel;
//!   amount-only items are split across the parcels in proportion to the parcel amounts,
//!   to the cent, the last parcel taking what is left so that each item's amounts add up
//!   to the amount sent.
//! * A person is mandatory (`person_id` or `person_name`, else 422 `person_required`);
//!   `*_name` finds or creates the record with the bill's polarity (payables: supplier,
//!   debit category, cost center; receivables: customer, credit category, revenue
//!   center) and is mutually exclusive with `*_id`.
//! * The company's `locked_until` closes a period: creating, changing, settling,
//!   cancelling, reopening or deleting a record whose due date (or payment date) is on
//!   or before it is 422 `period_closed`.

pub mod approval;
pub mod charges;
mod coordinates;
pub mod declared;
pub mod dispatch;
pub mod duplicates;
pub mod events;
pub mod kind;
mod listed;
mod rows;
mod series;
mod status;
pub mod wire;
mod written;

use crate::ops::machinery::resource::Writable;
use crate::ops::machinery::stamps::Stamp;

use crate::storage::{sql, Conn};
use serde_json::{json, Value};

use self::approval::PayeeChange;
use self::coordinates::PaymentCoordinates;
pub use self::kind::BillKind;
use self::rows::{find, from_row, replace_taxes, requested_taxes, stored_allocations};
use self::series::{as_inputs, requested_allocations, Centers};
pub use self::status::{cancel, reopen, settle};
use self::status::{check_open, refused_change};
pub use self::wire::{
    Billing, BillingCreate, BillingCreated, BillingPatch, BillingRow, BillingUpdate, For, KindRecord, KindRow, Of,
    OperationKind, PayableFields, PayableRowFields, PayableStatus, ReceivableFields, ReceivableRowFields,
    ReceivableStatus, SettleRequest, TaxCharge, TaxChargeInput,
};
use super::apportionment::Allocation;
use super::automatic_rules::{self, Fresh, RuleScope};
use super::ledger;
use super::machinery::common::{audit_write, required, required_if_sent, unprocessable};
use super::machinery::list::ListRequest;
use super::machinery::page;
use super::machinery::period::AggregatesQuery;
use super::machinery::refs;
use super::{apportionment, IdPage, OpContext, Page};
pub use crate::domain::bills::{Bill, Payable, Receivable, Transition};
use crate::domain::bills::{BillStatus, BillType};
use crate::domain::dates::{Date, Timestamp};
use crate::domain::money::Cents;
use crate::domain::payment::PaymentMethod;
use crate::domain::roles::Access;
use crate::error::ApiError;
use crate::storage::identity::Membership;

pub fn aggregates_schema(settled: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            "count": {"type": "integer"},
            "total": {"type": "string"},
            "pending": {"type": "string"},
            settled: {"type": "string"},
            "overdue_count": {"type": "integer"},
        },
        "required": ["count", "total", "pending", settled, "overdue_count"],
    })
}

fn check_method<B: BillKind>(method: Option<PaymentMethod>) -> Result<(), ApiError> {
    match method {
        Some(m) if !B::accepts(m) => Err(super::machinery::common::unprocessable(
            "payment_method_kind",
            "invalid_value",
            "utility and tribute are payment methods of payables only",
        )),
        _ => Ok(()),
    }
}

pub async fn list<B: BillKind>(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    request: &ListRequest,
) -> Result<Page<Of<B, BillingRow>>, ApiError> {
    ctx.authorize(ws, B::RESOURCE, Access::Read)?;
    let keys = ctx.state.keys.current().await?;
    let compiled = page::compile(conn, ws, B::LIST, request, &keys.state).await?;
    let sql = format!("{} {}", rows::select_for(request, compiled.sort_column), compiled.sql);
    page::fetch(conn, sql, &compiled, &keys.state, |row| Ok(Of::new(rows::of_kind::<B>(from_row(row)?)))).await
}

pub async fn get<B: BillKind>(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
) -> Result<Billing, ApiError> {
    ctx.authorize(ws, B::RESOURCE, Access::Read)?;
    let mut bill = find::<B>(conn, ws, id).await?;
    // The row counts its files: only then are they read.
    bill.attachments = Some(match bill.row.attachments_count {
        0 => Vec::new(),
        _ => super::attachments::attached(conn, ws, B::KIND, &bill.row.id).await?,
    });
    Ok(bill)
}

/// What refuses deleting `current` whatever the user says: a reconciliation holds it,
/// the bank holds it (a payable's dispatch, a receivable's charge), or a date it is
/// booked by lies in a closed period. Its confirmation asks it first.
pub async fn check_delete<B: BillKind>(conn: &mut Conn, ws: &Membership, current: &Billing) -> Result<(), ApiError> {
    super::reconciliations::refuse_if_reconciled(conn, ws, "billing", &current.row.id, "deleted").await?;
    match B::KIND {
        "payable" => dispatch::refuse_if_dispatched(conn, ws, &current.row.id, "deleted").await?,
        _ => charges::refuse_if_charged(conn, ws, &current.row.id, "deleted").await?,
    }
    let company = refs::company(conn, ws, "company_id", &current.row.company_id).await?;
    status::check_booked(&company, current)
}

/// Deletes one record (never the rest of its series) with its settlement transaction,
/// apportionment, tax charges and attachment links.
pub async fn delete<B: BillKind>(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
) -> Result<(), ApiError> {
    ctx.authorize(ws, B::RESOURCE, Access::Delete)?;
    let current = find::<B>(conn, ws, id).await?;
    check_delete::<B>(conn, ws, &current).await?;
    if ledger::remove_settlement(conn, ws, &current.row.id).await? > 0 {
        if let Some(tx) = &current.row.transaction_id {
            audit_write(ctx, conn, ws, "transactions.delete", "transaction", tx).await?;
        }
    }
    sql::query("UPDATE financial_transactions SET billing_id = NULL WHERE workspace_id = $1 AND billing_id = $2")
        .bind(&ws.workspace_id)
        .bind(&current.row.id)
        .execute(&mut *conn)
        .await?;
    apportionment::replace(conn, ws, "billing", &current.row.id, &[]).await?;
    replace_taxes(conn, ws, &current.row.id, &[]).await?;
    coordinates::write(conn, ws, &current.row.id, &PaymentCoordinates::default()).await?;
    // A receipt outlives its payable (as an orphan); a finished dispatch goes with it.
    for statement in [
        "UPDATE receipts SET payable_id = NULL WHERE workspace_id = $1 AND payable_id = $2",
        "DELETE FROM payment_dispatches WHERE workspace_id = $1 AND billing_id = $2",
        "DELETE FROM receivable_charges WHERE workspace_id = $1 AND billing_id = $2",
    ] {
        sql::query(statement).bind(&ws.workspace_id).bind(&current.row.id).execute(&mut *conn).await?;
    }
    // Its links, then the bill itself: each statement binds workspace, kind and id.
    for statement in [
        "DELETE FROM attachment_links WHERE workspace_id = $1 AND target_type = $2 AND target_id = $3",
        "DELETE FROM billings WHERE workspace_id = $1 AND kind = $2 AND id = $3",
    ] {
        sql::query(statement).bind(&ws.workspace_id).bind(B::KIND).bind(&current.row.id).execute(&mut *conn).await?;
    }
    audit_write(ctx, conn, ws, &format!("{}.delete", B::PLURAL), B::KIND, &current.row.id).await
}

/// `GET …/aggregates`: `company_id`, and either `month` + `year` or `start_date` +
/// `end_date` (on the due date; none: all time). `count` includes cancelled records;
/// `total` is the amount of the non-cancelled ones, `pending` and `paid`/`received` the
/// amounts per status; `overdue_count` the pending ones due before today (UTC).
pub async fn aggregates<B: BillKind>(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    query: &[(String, String)],
) -> Result<Value, ApiError> {
    ctx.authorize(ws, B::RESOURCE, Access::Read)?;
    let query = AggregatesQuery::parse(query)?;
    refs::named(conn, ws, query.company_id.as_deref(), None).await?;
    let mut clauses = vec!["workspace_id = $1".to_string(), "kind = $2".to_string(), approval::OWED.to_string()];
    let mut binds: Vec<String> = vec![ws.workspace_id.clone(), B::KIND.to_string()];
    if let Some(company) = query.company_id {
        binds.push(company);
        clauses.push(format!("company_id = ${}", binds.len()));
    }
    if let Some((start, end)) = query.period {
        binds.push(start.to_string());
        clauses.push(format!("due_date >= ${}", binds.len()));
        binds.push(end.to_string());
        clauses.push(format!("due_date <= ${}", binds.len()));
    }
    binds.push(B::SETTLED.as_str().to_string());
    let settled = binds.len();
    binds.push(Date::today().to_string());
    let today = binds.len();
    let sql = format!(
        "SELECT CAST(COUNT(*) AS BIGINT),
                CAST(COALESCE(SUM(CASE WHEN status <> 'cancelled' THEN amount_cents ELSE 0 END), 0) AS BIGINT),
                CAST(COALESCE(SUM(CASE WHEN status = 'pending' THEN amount_cents ELSE 0 END), 0) AS BIGINT),
                CAST(COALESCE(SUM(CASE WHEN status = ${settled} THEN amount_cents ELSE 0 END), 0) AS BIGINT),
                CAST(COALESCE(SUM(CASE WHEN status = 'pending' AND due_date < ${today} THEN 1 ELSE 0 END), 0) AS BIGINT)
           FROM billings WHERE {}",
        clauses.join(" AND ")
    );
    let mut statement = sql::query(sql);
    for bind in &binds {
        statement = statement.bind(bind.as_str());
    }
    let row = statement.fetch_one(&mut *conn).await?;
    let number = |i: usize| row.try_get::<i64, _>(i);
    let mut out = serde_json::Map::new();
    out.insert("count".into(), json!(number(0)?));
    out.insert("total".into(), json!(Cents(number(1)?)));
    out.insert("pending".into(), json!(Cents(number(2)?)));
    out.insert(B::SETTLED.as_str().into(), json!(Cents(number(3)?)));
    out.insert("overdue_count".into(), json!(number(4)?));
    Ok(Value::Object(out))
}

/// `GET …/ids`: every id of the kind, ascending (see [`page::ids`]).
pub async fn ids<B: BillKind>(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    query: &[(String, String)],
) -> Result<IdPage, ApiError> {
    // The caller's access before what it asked.
    ctx.authorize(ws, B::RESOURCE, Access::Read)?;
    page::ids::<declared::Bills<B>>(ctx, conn, ws, &ListRequest::from_query(query)?).await
}

/// A kind's create and update: the rules of both kinds, one implementation.
impl<B: BillKind> Writable for declared::Bills<B> {
    type Create = For<B, BillingCreate>;
    type Created = Of<B, BillingCreated>;
    type Update = For<B, BillingUpdate>;
    async fn create(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        input: For<B, BillingCreate>,
    ) -> Result<Of<B, BillingCreated>, ApiError> {
        let mut input = input.0;
        ctx.authorize(ws, B::RESOURCE, Access::Write)?;
        let polarity = B::POLARITY;
        let description = required("description", &input.description)?;
        let amount = ledger::positive("amount", input.amount)?;
        check_method::<B>(input.payment_method_kind)?;
        let billing_type = input.billing_type.unwrap_or(BillType::Normal);
        let shape = series::shape(&input, billing_type, amount)?;
        let company = refs::company(conn, ws, "company_id", &input.company_id).await?;
        refs::check_period(&company, "due_date", input.due_date)?;
        refs::check_period(&company, "competence_date", input.competence_date.unwrap_or(input.due_date))?;
        let owner = crate::ops::registers::Owner { ctx, ws, company: &company, polarity };
        let person = owner.person(conn, input.person_id.as_deref(), input.person_name.as_deref()).await?;
        // The company's billing rules fill what the request left empty (every record of a
        // series is made from this one request, so each gets the same fields).
        let fresh = Fresh {
            scope: RuleScope::Billings,
            account_id: None,
            polarity,
            person_id: person.as_deref(),
            description,
            notes: input.notes.as_deref(),
        };
        let fill = automatic_rules::fire(&owner, conn, fresh).await?;
        let Some(person) = person.or(fill.person_id) else {
            return Err(super::machinery::common::unprocessable(
                "person_id",
                "person_required",
                "A person is required: person_id or person_name",
            ));
        };
        let category = owner.category(conn, input.category_id.as_deref(), input.category_name.as_deref()).await?;
        let category = category.or(fill.category_id);
        let financial_account = match &input.financial_account_id {
            Some(id) => Some(refs::account(conn, ws, &company, "financial_account_id", id).await?),
            None => None,
        };
        let expected_account = match &input.expected_account_id {
            Some(id) => Some(refs::account(conn, ws, &company, "expected_account_id", id).await?),
            None => fill.expected_account_id,
        };
        let centers = &input.centers;
        let centers = Centers::of(
            &centers.classification_centers,
            &centers.classification_center_id,
            &centers.classification_center_name,
        );
        let allocations = match requested_allocations(&owner, conn, amount, centers).await? {
            Some(sent) => sent,
            None => fill.classification_center_id.map(|c| vec![Allocation::whole(c, amount)]).unwrap_or_default(),
        };
        let taxes = match &input.tax_charges {
            Some(items) => requested_taxes(conn, ws, items).await?,
            None => Vec::new(),
        };
        let coordinates = PaymentCoordinates::default().with(std::mem::take(&mut input.coordinates))?;
        let rest_of_series = coordinates.for_the_rest_of_a_series();
        let rows = series::rows(&input, billing_type, amount, shape, &allocations)?;
        let group_id = (rows.len() > 1).then(|| uuid::Uuid::new_v4().to_string());
        // A payable made through a door waits at its workspace's approval gate.
        let gate = match B::KIND {
            "payable" => approval::at_creation(conn, ws, ctx.channel).await?,
            _ => None,
        };
        let now = Timestamp::now();
        for (index, row) in rows.iter().enumerate() {
            sql::query(
                "INSERT INTO billings (id, workspace_id, company_id, kind, description, amount_cents, due_date, competence_date,
                                       billing_type, status, person_id, category_id, expected_account_id, financial_account_id,
                                       payment_method_kind, document, document_number, document_date, notes, group_id,
                                       installment_number, total_installments, recurrence_period, ir_relevant, operation_kind,
                                       payment_approval, created_at, updated_at, created_via, updated_via, created_by, updated_by)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
                         $21, $22, $23, $24, $25, $26, $27, $27, $28, $28, $29, $29)",
            )
            .bind(&row.id)
            .bind(&ws.workspace_id)
            .bind(&company.id)
            .bind(B::KIND)
            .bind(description)
            .bind(row.amount.0)
            .bind(row.due_date)
            .bind(row.competence_date)
            .bind(billing_type.as_str())
            .bind(BillStatus::Pending.as_str())
            .bind(&person)
            .bind(category.as_deref())
            .bind(expected_account.as_deref())
            .bind(financial_account.as_deref())
            .bind(input.payment_method_kind.map(PaymentMethod::as_str))
            .bind(input.document.as_deref())
            .bind(input.document_number.as_deref())
            .bind(input.document_date)
            .bind(input.notes.as_deref())
            .bind(group_id.as_deref())
            .bind(row.installment_number)
            .bind(row.total_installments)
            .bind(input.recurrence_period.map(|p| p.as_str()))
            .bind(input.ir_relevant.map(i64::from))
            .bind(input.operation_kind.map(OperationKind::as_str))
            .bind(gate)
            .stamp(ctx, &now)
            .execute(&mut *conn)
            .await
            ?;
            apportionment::replace(conn, ws, "billing", &row.id, &row.allocations).await?;
            if index == 0 {
                replace_taxes(conn, ws, &row.id, &taxes).await?;
            }
            let coordinates = if index == 0 { &coordinates } else { &rest_of_series };
            coordinates::write(conn, ws, &row.id, coordinates).await?;
            audit_write(ctx, conn, ws, &format!("{}.create", B::PLURAL), B::KIND, &row.id).await?;
        }
        let series: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
        let billing = find::<B>(conn, ws, &series[0]).await?;
        Ok(Of::new(BillingCreated { billing, series }))
    }
    async fn update(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        id: &str,
        input: For<B, BillingUpdate>,
    ) -> Result<Of<B, Billing>, ApiError> {
        let input = input.0;
        ctx.authorize(ws, B::RESOURCE, Access::Write)?;
        let polarity = B::POLARITY;
        let current = find::<B>(conn, ws, id).await?;
        let company = refs::company(conn, ws, "company_id", &current.row.company_id).await?;
        status::check_booked(&company, &current)?;
        let owner = crate::ops::registers::Owner { ctx, ws, company: &company, polarity };
        check_open(&current)?;
        let changes_what_is_billed = input.amount.is_some_and(|a| a.cents() != current.row.amount)
            || input.due_date.is_some_and(|d| d != current.row.due_date)
            || input.person_id.as_ref().is_some_and(|p| Some(p) != current.row.person_id.as_ref())
            || input.person_name.as_ref().is_some_and(|n| Some(&**n) != current.row.person_name.as_deref());
        if B::KIND == "receivable" && changes_what_is_billed {
            charges::refuse_if_charged(conn, ws, &current.row.id, "changed in amount, due date or payer").await?;
        }
        let description = required_if_sent("description", input.description.as_deref())?
            .unwrap_or(&current.row.description)
            .to_string();
        let amount = match input.amount {
            Some(a) => ledger::positive("amount", a)?,
            None => current.row.amount,
        };
        if let Some(method) = input.payment_method_kind {
            check_method::<B>(method)?;
        }
        let due_date = input.due_date.unwrap_or(current.row.due_date);
        refs::check_period(&company, "due_date", due_date)?;
        let competence_date = input.competence_date.unwrap_or(current.row.competence_date);
        refs::check_period(&company, "competence_date", competence_date)?;
        let person = if input.person_id.is_some() || input.person_name.is_some() {
            owner.person(conn, input.person_id.as_deref(), input.person_name.as_deref()).await?
        } else {
            current.row.person_id.clone()
        };
        let category = match (&input.category_id, &input.category_name) {
            (None, None) => current.row.category_id.clone(),
            (Some(None), None) => None,
            (id, name) => owner.category(conn, id.as_ref().and_then(|i| i.as_deref()), name.as_deref()).await?,
        };
        let financial_account = match &input.financial_account_id {
            None => current.row.financial_account_id.clone(),
            Some(None) => None,
            Some(Some(id)) => Some(refs::account(conn, ws, &company, "financial_account_id", id).await?),
        };
        let expected_account = match &input.expected_account_id {
            None => current.row.expected_account_id.clone(),
            Some(None) => None,
            Some(Some(id)) => Some(refs::account(conn, ws, &company, "expected_account_id", id).await?),
        };
        // The first center of the apportionment, sent back as it was read, changes nothing.
        let center_id = input
            .classification_center_id
            .clone()
            .filter(|id| Some(id) != current.row.classification_center_id.as_ref());
        let centers = Centers::of(&input.classification_centers, &center_id, &input.classification_center_name);
        let allocations = requested_allocations(&owner, conn, amount, centers).await?;
        if allocations.is_none() && amount != current.row.amount {
            // The kept apportionment must still add up to the new amount.
            let kept = stored_allocations(conn, ws, &current.row.id).await?;
            apportionment::resolve(amount, &as_inputs(&kept))?;
        }
        let taxes = match &input.tax_charges {
            Some(items) => Some(requested_taxes(conn, ws, items).await?),
            None => None,
        };
        let method = match input.payment_method_kind {
            None => current.row.payment_method_kind.clone(),
            Some(m) => m.map(|m| m.as_str().to_string()),
        };
        let stored = match &current.kind {
            Some(KindRecord::Payable(fields)) => fields.coordinates.as_ref(),
            _ => &PaymentCoordinates::default(),
        };
        let coordinates = stored.with(input.coordinates)?;
        let coordinates = (coordinates != *stored).then_some(coordinates);
        // Where and how much the bank pays: held while the bank holds the payable, and
        // a person approves it again once changed (the approval gate covers the payee).
        let payee = PayeeChange {
            amount: amount != current.row.amount,
            due_date: due_date != current.row.due_date,
            competence_date: competence_date != current.row.competence_date,
            person: person != current.row.person_id,
            coordinates: coordinates.is_some() || method != current.row.payment_method_kind,
            accounts: financial_account != current.row.financial_account_id
                || expected_account != current.row.expected_account_id,
        };
        let reapproval = match B::KIND {
            "payable" if payee.any() => {
                dispatch::refuse_if_dispatched(conn, ws, &current.row.id, "changed in amount, dates, payee or payment")
                    .await?;
                approval::again(conn, ws, ctx.channel, current.row.payment_approval(), &payee).await?
            }
            _ => None,
        };
        let document_date = input.document_date.unwrap_or(current.row.document_date);
        let pick = |new: &Option<Option<String>>, old: &Option<String>| match new {
            None => old.clone(),
            Some(v) => v.clone(),
        };
        let update = sql::query(
            "UPDATE billings SET description = $1, amount_cents = $2, due_date = $3, competence_date = $4, person_id = $5,
                    category_id = $6, financial_account_id = $7, expected_account_id = $8, payment_method_kind = $9,
                    document = $10, document_number = $11, document_date = $12, notes = $13, ir_relevant = $14,
                    operation_kind = $15, updated_at = $16, updated_via = $17, updated_by = $18
              WHERE workspace_id = $19 AND kind = $20 AND id = $21 AND status = $22",
        )
        .bind(&description)
        .bind(amount.0)
        .bind(due_date)
        .bind(competence_date)
        .bind(person.as_deref())
        .bind(category.as_deref())
        .bind(financial_account.as_deref())
        .bind(expected_account.as_deref())
        .bind(method.as_deref())
        .bind(pick(&input.document, &current.row.document))
        .bind(pick(&input.document_number, &current.row.document_number))
        .bind(document_date)
        .bind(pick(&input.notes, &current.row.notes))
        .bind(input.ir_relevant.unwrap_or(current.row.ir_relevant).map(i64::from))
        .bind(match input.operation_kind {
            Some(sent) => sent.map(|k| k.as_str().to_string()),
            None => current.row.operation_kind(),
        });
        status::changed_if::<B>(ctx, conn, ws, update, &current.row.id, BillStatus::Pending, refused_change).await?;
        if let Some(changed) = &reapproval {
            approval::send_back(ctx, conn, ws, &current.row.id, changed).await?;
        }
        if let Some(allocations) = &allocations {
            apportionment::replace(conn, ws, "billing", &current.row.id, allocations).await?;
        }
        if let Some(taxes) = &taxes {
            replace_taxes(conn, ws, &current.row.id, taxes).await?;
        }
        if let Some(coordinates) = &coordinates {
            coordinates::write(conn, ws, &current.row.id, coordinates).await?;
        }
        audit_write(ctx, conn, ws, &format!("{}.update", B::PLURAL), B::KIND, &current.row.id).await?;
        find::<B>(conn, ws, &current.row.id).await.map(Of::new)
    }
}

/// The fields of a [`BillingPatch`] that a move reads rather than writes.
const MOVE_FIELDS: [&str; 6] =
    ["status", "payment_date", "interest_amount", "discount_amount", "ticket_amount", "financial_account_id"];

/// `PATCH /v1/{payables|receivables}/{id}` with the real API's status moves. A
/// `status` other than the record's moves it with the same rules, ledger transaction
/// and audit as the action routes: the settled status settles it (`payment_date`
/// required; `financial_account_id` and the amounts as `POST …/settle` takes them),
/// `cancelled` cancels it, `pending` reopens it. Any other field sent is written as
/// `update` writes it, while the record is pending: before a settle or a cancel, after a
/// reopen. Without a move it is `update`; the settlement's fields are then what the
/// record already says (a client sending back what it read) or refused.
pub async fn patch<B: BillKind>(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
    body: &serde_json::Value,
    input: BillingPatch<B::Status>,
) -> Result<Billing, ApiError> {
    ctx.authorize(ws, B::RESOURCE, Access::Write)?;
    let BillingPatch { fields, status, payment_date, amounts } = input;
    let current = find::<B>(conn, ws, id).await?;
    let others = body.as_object().is_some_and(|o| o.keys().any(|k| !MOVE_FIELDS.contains(&k.as_str())));
    let update = async |conn: &mut Conn, fields| {
        Ok(<declared::Bills<B> as Writable>::update(ctx, conn, ws, id, For::new(fields)).await?.0)
    };
    let target: Option<BillStatus> = status.map(Into::into).filter(|s| *s != current.row.status);
    if target != Some(B::SETTLED) {
        let sent = [
            ("interest_amount", amounts.interest_amount, current.row.interest_amount),
            ("discount_amount", amounts.discount_amount, current.row.discount_amount),
            ("ticket_amount", amounts.ticket_amount, current.row.ticket_amount),
        ];
        for (field, sent, stored) in sent {
            if sent.is_some_and(|a| Some(a.cents()) != stored) {
                return Err(settling_only::<B>(field));
            }
        }
        if payment_date.is_some_and(|d| Some(d) != current.row.payment_date) {
            return Err(settling_only::<B>("payment_date"));
        }
        let changes = others || fields.financial_account_id.is_some();
        return match target {
            None => update(conn, fields).await,
            Some(BillStatus::Pending) => {
                let reopened = reopen::<B>(ctx, conn, ws, id).await?;
                if changes {
                    return update(conn, fields).await;
                }
                Ok(reopened)
            }
            Some(_) => {
                if changes {
                    update(conn, fields).await?;
                }
                cancel::<B>(ctx, conn, ws, id).await
            }
        };
    }
    let Some(payment_date) = payment_date else {
        return Err(unprocessable("payment_date", "required", "Settling needs payment_date (the day the money moved)"));
    };
    let financial_account_id = fields.financial_account_id.clone().flatten();
    if others {
        update(conn, BillingUpdate { financial_account_id: None, ..fields }).await?;
    }
    let settlement = SettleRequest { payment_date, financial_account_id, amounts };
    settle::<B>(ctx, conn, ws, id, settlement).await
}

/// A settlement's field sent without the settled status.
fn settling_only<B: BillKind>(field: &str) -> ApiError {
    unprocessable(field, "not_allowed", &format!("{field} is set by settling: send status {}", B::SETTLED.as_str()))
}
