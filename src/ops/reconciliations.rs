//! Reconciliations (`/v1/reconciliations`, scope `finance.reconciliations`): bills
//! matched with the bank transactions that paid them, n:m, and settled by them.
//!
//! Rules:
//! * A group holds one kind of bill (`billings`, each `{kind, id}`) and the posted
//!   transactions that paid them (`transaction_ids`), one of each at least, all of one
//!   company of the workspace. A payable is paid by debits, a receivable by credits.
//! * A member is in one group at most. A bill must be pending (a settled bill already
//!   has its own ledger transaction; a cancelled one is not owed); a transaction must be
//!   posted (not a forecast), entered by the user (not a settlement's own) and not a
//!   transfer leg. Each refusal is 422 naming the member (`billings[1].id`,
//!   `transaction_ids[0]`) and why.
//! * Creating settles every bill, in the same database transaction: status paid or
//!   received, `payment_date` the last transaction's date, `financial_account_id` that
//!   transaction's account, and, for a single bill, `ticket_amount` the transactions'
//!   total. No ledger transaction is created: the bank's are the settlement. Each bill
//!   answers `is_reconciled: true` and its `reconciliation`.
//! * Deleting a `manual` group reverts every bill to pending (its account as before the
//!   group), in one transaction; an imported (`fintera`) group is read-only (422).
//! * While reconciled, a bill cannot be reopened or deleted, and a transaction cannot be
//!   deleted nor its amount, date, type or pending flag changed (422 `reconciled`):
//!   delete the reconciliation first. A closed period (`locked_until`) refuses creating
//!   or deleting a group whose bills or transactions it holds.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::machinery::common::{audit_write, bill_label, body_id, conflict_on_unique, unprocessable};
use super::machinery::refs::{self, Polarity};
use super::machinery::resource::{deleted_schema, parse, reply, Asking, Call, Declaration, Op, Question, Running};
use super::machinery::stamps::{Stamp, Stamps};
use super::machinery::validate::schema_of;
use super::suggestions::{SuggestParams, Suggestions};
use super::OpContext;
use crate::domain::dates::{Date, Timestamp};
use crate::domain::money::Cents;
use crate::domain::roles::{Access, Resource};
use crate::domain::text::quoted;
use crate::error::ApiError;
use crate::storage::identity::Membership;
use crate::storage::{sql, Conn};

/// Which kind of bill a member is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BillingKind {
    Payable,
    Receivable,
}

impl BillingKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BillingKind::Payable => "payable",
            BillingKind::Receivable => "receivable",
        }
    }

    /// Its money direction: a payable's is `Debit`.
    fn polarity(self) -> Polarity {
        match self {
            BillingKind::Payable => Polarity::Debit,
            BillingKind::Receivable => Polarity::Credit,
        }
    }

    /// The type of the transactions that pay it.
    fn transaction_type(self) -> &'static str {
        self.polarity().transaction_type()
    }

    /// Its settled status.
    fn settled(self) -> &'static str {
        match self {
            BillingKind::Payable => "paid",
            BillingKind::Receivable => "received",
        }
    }
}

/// A bill of a group in a request.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemberBilling {
    pub kind: BillingKind,
    pub id: String,
}

/// `POST /v1/reconciliations`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReconciliationCreate {
    /// The bills, all of one kind and one company.
    #[schemars(length(min = 1, max = 100))]
    pub billings: Vec<MemberBilling>,
    /// The posted transactions that paid them (debits for payables, credits for receivables).
    #[schemars(length(min = 1, max = 100))]
    pub transaction_ids: Vec<String>,
}

/// A reconciliation group.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Reconciliation {
    pub id: String,
    /// `manual`, or `fintera` for an imported (read-only) group.
    pub source: String,
    #[schemars(extend("enum" = ["payable", "receivable"]))]
    pub kind: String,
    pub billing_ids: Vec<String>,
    pub transaction_ids: Vec<String>,
    #[serde(flatten)]
    pub stamps: Stamps,
}

fn refused(field: &str, reason: &str, message: &str) -> ApiError {
    unprocessable(field, reason, message)
}

/// The group `id` of the workspace (404 otherwise, also for a malformed id).
pub async fn find(conn: &mut Conn, ws: &Membership, id: &str) -> Result<Reconciliation, ApiError> {
    let id = super::machinery::common::path_id(id, "Reconciliation")?;
    let row = sql::query(
        "SELECT id, source, kind, created_at, updated_at, created_via, updated_via, created_by, updated_by
           FROM reconciliations WHERE workspace_id = $1 AND id = $2",
    )
    .bind(&ws.workspace_id)
    .bind(&id)
    .map_optional(&mut *conn, |row| {
        Ok(Reconciliation {
            id: row.try_get("id")?,
            source: row.try_get("source")?,
            kind: row.try_get("kind")?,
            billing_ids: Vec::new(),
            transaction_ids: Vec::new(),
            stamps: Stamps::from_row(row)?,
        })
    })
    .await?;
    let mut group = row.ok_or_else(|| ApiError::not_found("Reconciliation"))?;
    let members = sql::query(
        "SELECT member_type, member_id FROM reconciliation_members
          WHERE workspace_id = $1 AND reconciliation_id = $2 ORDER BY member_type, position",
    )
    .bind(&ws.workspace_id)
    .bind(&group.id)
    .fetch_all(&mut *conn)
    .await?;
    for member in members {
        let kind: String = member.try_get(0)?;
        let id: String = member.try_get(1)?;
        if kind == "billing" {
            group.billing_ids.push(id);
        } else {
            group.transaction_ids.push(id);
        }
    }
    Ok(group)
}

/// The group a bill or a transaction (`member_type` `billing` or `transaction`) is in.
pub async fn group_of(
    conn: &mut Conn,
    ws: &Membership,
    member_type: &str,
    id: &str,
) -> Result<Option<Reconciliation>, ApiError> {
    let found = sql::query(
        "SELECT reconciliation_id FROM reconciliation_members WHERE workspace_id = $1 AND member_type = $2 AND member_id = $3",
    )
    .bind(&ws.workspace_id)
    .bind(member_type)
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    match found {
        Some(row) => {
            let group: String = row.try_get(0)?;
            Ok(Some(find(conn, ws, &group).await?))
        }
        None => Ok(None),
    }
}

/// 422 `reconciled` for what a reconciliation holds: it changes only once the group is
/// deleted.
pub async fn refuse_if_reconciled(
    conn: &mut Conn,
    ws: &Membership,
    member_type: &str,
    id: &str,
    doing: &str,
) -> Result<(), ApiError> {
    match group_of(conn, ws, member_type, id).await? {
        Some(group) => Err(unprocessable(
            "id",
            "reconciled",
            &format!("A reconciled {member_type} cannot be {doing}; delete its reconciliation {} first", group.id),
        )),
        None => Ok(()),
    }
}

/// A bill of the request, as the checks need it.
#[derive(Serialize)]
struct Bill {
    id: String,
    company_id: String,
    status: String,
    due_date: Date,
    amount: Cents,
    account: Option<String>,
    description: String,
    person: Option<String>,
    competence_date: Date,
}

/// A transaction of the request, as the checks need it.
#[derive(Serialize)]
struct Paid {
    id: String,
    company_id: String,
    account: String,
    transaction_type: String,
    amount: Cents,
    occurred_at: Date,
    pending: bool,
    auto_created: bool,
    transfer: bool,
    description: String,
}

/// The request's members, read and checked: one kind, one company, each member free,
/// open and of the right polarity.
struct Checked {
    kind: BillingKind,
    company: refs::CompanyRef,
    bills: Vec<Bill>,
    paid: Vec<Paid>,
}

async fn check(conn: &mut Conn, ws: &Membership, input: &ReconciliationCreate) -> Result<Checked, ApiError> {
    // The schema takes one bill at least; a body without any is refused the same way.
    let kind = input
        .billings
        .first()
        .map(|b| b.kind)
        .ok_or_else(|| refused("billings", "too_few_items", "Field billings has too few items"))?;
    let mut bills: Vec<Bill> = Vec::with_capacity(input.billings.len());
    for (i, member) in input.billings.iter().enumerate() {
        let field = format!("billings[{i}].id");
        if member.kind != kind {
            return Err(refused(
                &format!("billings[{i}].kind"),
                "mixed_kinds",
                "A reconciliation holds one kind of bill",
            ));
        }
        let id = body_id(&field, &member.id)?;
        if bills.iter().any(|b| b.id == id) {
            return Err(refused(&field, "duplicate", "A bill appears twice"));
        }
        let row = sql::query(
            "SELECT b.id, b.company_id, b.status, b.due_date, b.amount_cents, b.financial_account_id, b.description, p.name,
                    b.payment_approval, b.competence_date
               FROM billings b LEFT JOIN people p ON p.id = b.person_id
              WHERE b.workspace_id = $1 AND b.kind = $2 AND b.id = $3",
        )
        .bind(&ws.workspace_id)
        .bind(kind.as_str())
        .bind(&id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or_else(|| refused(&field, "not_found", &format!("No {} {id} in this workspace", kind.as_str())))?;
        let bill = Bill {
            id: row.try_get(0)?,
            company_id: row.try_get(1)?,
            status: row.try_get(2)?,
            due_date: row.try_get(3)?,
            amount: row.try_get(4)?,
            account: row.try_get(5)?,
            description: row.try_get(6)?,
            person: row.try_get(7)?,
            competence_date: row.try_get(9)?,
        };
        let approval: Option<String> = row.try_get(8)?;
        if !crate::ops::bills::approval::is_official(approval.as_deref()) {
            return Err(refused(
                &field,
                "not_approved",
                "This payable waits at the approval gate: a person approves it first",
            ));
        }
        if group_of(conn, ws, "billing", &bill.id).await?.is_some() {
            return Err(refused(&field, "reconciled", "This bill is already reconciled"));
        }
        match bill.status.as_str() {
            "pending" => {}
            "cancelled" => return Err(refused(&field, "cancelled", "A cancelled bill is not reconciled")),
            _ => {
                return Err(refused(
                    &field,
                    "already_settled",
                    "This bill is already settled (its own ledger transaction); reopen it first",
                ))
            }
        }
        bills.push(bill);
    }
    let company_id = bills[0].company_id.clone();
    if let Some(i) = bills.iter().position(|b| b.company_id != company_id) {
        return Err(refused(&format!("billings[{i}].id"), "other_company", "Every member belongs to one company"));
    }
    let mut paid: Vec<Paid> = Vec::with_capacity(input.transaction_ids.len());
    for (i, id) in input.transaction_ids.iter().enumerate() {
        let field = format!("transaction_ids[{i}]");
        let id = body_id(&field, id)?;
        if paid.iter().any(|t| t.id == id) {
            return Err(refused(&field, "duplicate", "A transaction appears twice"));
        }
        let row = sql::query(
            "SELECT id, company_id, financial_account_id, transaction_type, amount_cents, occurred_at, is_pending, auto_created,
                    transfer_id, billing_id, description
               FROM financial_transactions WHERE workspace_id = $1 AND id = $2",
        )
        .bind(&ws.workspace_id)
        .bind(&id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or_else(|| refused(&field, "not_found", &format!("No transaction {id} in this workspace")))?;
        let transfer: Option<String> = row.try_get(8)?;
        let linked: Option<String> = row.try_get(9)?;
        let t = Paid {
            id: row.try_get(0)?,
            company_id: row.try_get(1)?,
            account: row.try_get(2)?,
            transaction_type: row.try_get(3)?,
            amount: row.try_get(4)?,
            occurred_at: row.try_get(5)?,
            pending: row.try_get(6)?,
            auto_created: row.try_get(7)?,
            transfer: transfer.is_some(),
            description: row.try_get(10)?,
        };
        if t.company_id != company_id {
            return Err(refused(&field, "other_company", "Every member belongs to one company"));
        }
        if t.transaction_type != kind.transaction_type() {
            return Err(refused(
                &field,
                "wrong_polarity",
                &format!("A {} is paid by {} transactions", kind.as_str(), kind.transaction_type()),
            ));
        }
        if t.pending {
            return Err(refused(&field, "pending", "A forecast (pending) transaction has not happened yet"));
        }
        if t.auto_created || linked.is_some() {
            return Err(refused(&field, "linked", "This transaction is already a bill's settlement"));
        }
        if t.transfer {
            return Err(refused(&field, "transfer_leg", "A transfer between accounts pays no bill"));
        }
        if group_of(conn, ws, "transaction", &t.id).await?.is_some() {
            return Err(refused(&field, "reconciled", "This transaction is already reconciled"));
        }
        paid.push(t);
    }
    // The books of every date a member is booked by are open.
    let company = refs::company(conn, ws, "company_id", &company_id).await?;
    for (i, bill) in bills.iter().enumerate() {
        refs::check_period(&company, &format!("billings[{i}].due_date"), bill.due_date)?;
        refs::check_period(&company, &format!("billings[{i}].competence_date"), bill.competence_date)?;
    }
    for (i, t) in paid.iter().enumerate() {
        refs::check_period(&company, &format!("transaction_ids[{i}]"), t.occurred_at)?;
    }
    Ok(Checked { kind, company, bills, paid })
}

/// The last of the transactions, by date then id: its date and account settle the bills.
fn last(paid: &[Paid]) -> Result<&Paid, ApiError> {
    paid.iter()
        .max_by(|a, b| (a.occurred_at, &a.id).cmp(&(b.occurred_at, &b.id)))
        .ok_or_else(|| refused("transaction_ids", "too_few_items", "Field transaction_ids has too few items"))
}

pub async fn create(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    input: ReconciliationCreate,
) -> Result<Reconciliation, ApiError> {
    ctx.authorize(ws, Resource::Reconciliations, Access::Write)?;
    let checked = check(conn, ws, &input).await?;
    let closing = last(&checked.paid)?;
    let total: i64 = checked.paid.iter().map(|t| t.amount.0).sum();
    let ticket = (checked.bills.len() == 1).then_some(total);
    let id = uuid::Uuid::new_v4().to_string();
    let now = Timestamp::now();
    sql::query(
        "INSERT INTO reconciliations (id, workspace_id, company_id, kind, source, created_at, updated_at, created_via, updated_via,
                                      created_by, updated_by)
         VALUES ($1, $2, $3, $4, 'manual', $5, $5, $6, $6, $7, $7)",
    )
    .bind(&id)
    .bind(&ws.workspace_id)
    .bind(&checked.company.id)
    .bind(checked.kind.as_str())
    .stamp(ctx, &now)
    .execute(&mut *conn)
    .await?;
    let members = checked
        .bills
        .iter()
        .map(|b| ("billing", b.id.as_str(), b.account.as_deref()))
        .chain(checked.paid.iter().map(|t| ("transaction", t.id.as_str(), None)));
    for (position, (member_type, member_id, previous_account)) in members.enumerate() {
        sql::query(
            "INSERT INTO reconciliation_members (reconciliation_id, workspace_id, member_type, member_id, position, previous_account_id)
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(&id)
        .bind(&ws.workspace_id)
        .bind(member_type)
        .bind(member_id)
        .bind(position as i64)
        .bind(previous_account)
        .execute(&mut *conn)
        .await
        // A concurrent group took the member first (the unique index): nothing is kept.
        .map_err(|e| conflict_on_unique(e, member_type, "A member was reconciled meanwhile; nothing was reconciled"))?;
    }
    for bill in &checked.bills {
        // Conditional on the status: a bill settled meanwhile is not settled twice.
        let done = sql::query(
            "UPDATE billings SET status = $1, payment_date = $2, financial_account_id = $3, ticket_cents = $4,
                    updated_at = $5, updated_via = $6, updated_by = $7
              WHERE workspace_id = $8 AND id = $9 AND status = 'pending'",
        )
        .bind(checked.kind.settled())
        .bind(closing.occurred_at)
        .bind(&closing.account)
        .bind(ticket)
        .stamp(ctx, &now)
        .bind(&ws.workspace_id)
        .bind(&bill.id)
        .execute(&mut *conn)
        .await?;
        if done == 0 {
            return Err(refused("billings", "already_settled", "A bill was settled meanwhile; nothing was reconciled"));
        }
        let plural = if checked.kind == BillingKind::Payable { "payables" } else { "receivables" };
        audit_write(ctx, conn, ws, &format!("{plural}.settle"), checked.kind.as_str(), &bill.id).await?;
    }
    audit_write(ctx, conn, ws, "reconciliations.create", "reconciliation", &id).await?;
    find(conn, ws, &id).await
}

pub async fn get(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<Reconciliation, ApiError> {
    ctx.authorize(ws, Resource::Reconciliations, Access::Read)?;
    find(conn, ws, id).await
}

/// A bill of a group, as its dissolution reads it.
#[derive(Serialize)]
struct Member {
    id: String,
    description: String,
    person: Option<String>,
    amount: Cents,
    due_date: Date,
    competence_date: Date,
    payment_date: Option<Date>,
    previous_account_id: Option<String>,
}

/// A manual group and its bills, once a delete may dissolve it: imported groups are
/// read-only, and every bill's dates lie in an open period.
struct Dissolvable {
    group: Reconciliation,
    bills: Vec<Member>,
}

async fn dissolvable(conn: &mut Conn, ws: &Membership, id: &str) -> Result<Dissolvable, ApiError> {
    let group = find(conn, ws, id).await?;
    if group.source != "manual" {
        return Err(refused("id", "read_only", "An imported reconciliation is read-only"));
    }
    let company_id = company_of(conn, ws, &group.id).await?;
    let company = refs::company(conn, ws, "company_id", &company_id).await?;
    let bills = sql::query(
        "SELECT b.id, b.description, p.name, b.amount_cents, b.due_date, b.competence_date, b.payment_date,
                m.previous_account_id
           FROM reconciliation_members m JOIN billings b ON b.id = m.member_id
           LEFT JOIN people p ON p.workspace_id = b.workspace_id AND p.id = b.person_id
          WHERE m.workspace_id = $1 AND m.reconciliation_id = $2 AND m.member_type = 'billing' ORDER BY m.position",
    )
    .bind(&ws.workspace_id)
    .bind(&group.id)
    .map_all(&mut *conn, |row| {
        Ok(Member {
            id: row.try_get(0)?,
            description: row.try_get(1)?,
            person: row.try_get(2)?,
            amount: row.try_get(3)?,
            due_date: row.try_get(4)?,
            competence_date: row.try_get(5)?,
            payment_date: row.try_get(6)?,
            previous_account_id: row.try_get(7)?,
        })
    })
    .await?;
    for bill in &bills {
        refs::check_period(&company, "due_date", bill.due_date)?;
        refs::check_period(&company, "competence_date", bill.competence_date)?;
        if let Some(paid) = bill.payment_date {
            refs::check_period(&company, "payment_date", paid)?;
        }
    }
    Ok(Dissolvable { group, bills })
}

/// Dissolves a manual group: every bill back to pending, its account as before.
pub async fn delete(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<(), ApiError> {
    ctx.authorize(ws, Resource::Reconciliations, Access::Delete)?;
    let Dissolvable { group, bills } = dissolvable(conn, ws, id).await?;
    let now = Timestamp::now();
    let plural = if group.kind == "payable" { "payables" } else { "receivables" };
    for bill in bills {
        sql::query(
            "UPDATE billings SET status = 'pending', payment_date = NULL, ticket_cents = NULL, financial_account_id = $1,
                    updated_at = $2, updated_via = $3, updated_by = $4
              WHERE workspace_id = $5 AND id = $6",
        )
        .bind(bill.previous_account_id)
        .stamp(ctx, &now)
        .bind(&ws.workspace_id)
        .bind(&bill.id)
        .execute(&mut *conn)
        .await?;
        audit_write(ctx, conn, ws, &format!("{plural}.reopen"), &group.kind, &bill.id).await?;
    }
    for statement in [
        "DELETE FROM reconciliation_members WHERE workspace_id = $1 AND reconciliation_id = $2",
        "DELETE FROM reconciliations WHERE workspace_id = $1 AND id = $2",
    ] {
        sql::query(statement).bind(&ws.workspace_id).bind(&group.id).execute(&mut *conn).await?;
    }
    audit_write(ctx, conn, ws, "reconciliations.delete", "reconciliation", &group.id).await
}

async fn company_of(conn: &mut Conn, ws: &Membership, id: &str) -> Result<String, ApiError> {
    let row = sql::query("SELECT company_id FROM reconciliations WHERE workspace_id = $1 AND id = $2")
        .bind(&ws.workspace_id)
        .bind(id)
        .fetch_one(&mut *conn)
        .await?;
    Ok(row.try_get(0)?)
}

fn run_create(c: Call<'_>) -> Running<'_> {
    Box::pin(async move { reply(create(c.ctx, c.conn, c.ws, parse(c.body)?).await?) })
}

fn run_get(c: Call<'_>) -> Running<'_> {
    Box::pin(async move { reply(get(c.ctx, c.conn, c.ws, c.id).await?) })
}

fn run_delete(c: Call<'_>) -> Running<'_> {
    Box::pin(async move {
        delete(c.ctx, c.conn, c.ws, c.id).await?;
        Ok(serde_json::json!({ "deleted": true, "id": c.id }))
    })
}

/// "Reconcile and mark as paid …, paid by the transaction …?": every bill and
/// transaction as checked, the totals.
fn confirm_create(c: Call<'_>) -> Asking<'_> {
    Box::pin(async move {
        let Call { ctx, conn, ws, body, .. } = c;
        ctx.authorize(ws, Resource::Reconciliations, Access::Write)?;
        let input: ReconciliationCreate = parse(body)?;
        let checked = check(conn, ws, &input).await?;
        let question = Question::binding().binds(&checked.bills).binds(&checked.paid);
        let bills: Vec<String> = checked
            .bills
            .iter()
            .map(|b| bill_label(checked.kind.polarity(), &b.description, b.person.as_deref(), b.amount, b.due_date))
            .collect();
        let paid: Vec<String> = checked
            .paid
            .iter()
            .map(|t| format!("{} of {} on {}", quoted(&t.description), t.amount.brl(), t.occurred_at))
            .collect();
        let owed = Cents(checked.bills.iter().map(|b| b.amount.0).sum());
        let moved = Cents(checked.paid.iter().map(|t| t.amount.0).sum());
        let difference = if owed == moved {
            String::new()
        } else {
            format!(" The bills total {} and the transactions {}.", owed.brl(), moved.brl())
        };
        Ok(question.asks(format!(
            "Reconcile and mark as {} the {} {}, paid by the transaction{} {}? Total {}.{difference}",
            checked.kind.settled(),
            checked.kind.as_str(),
            bills.join(", "),
            if paid.len() == 1 { "" } else { "s" },
            paid.join(", "),
            moved.brl(),
        )))
    })
}

/// "Delete the reconciliation …? The payables … become pending again": its bills as
/// they are, after the checks the delete makes.
fn confirm_delete(c: Call<'_>) -> Asking<'_> {
    Box::pin(async move {
        let Call { ctx, conn, ws, id, .. } = c;
        ctx.authorize(ws, Resource::Reconciliations, Access::Delete)?;
        let group = dissolvable(conn, ws, id).await?;
        let polarity =
            if group.group.kind == BillingKind::Payable.as_str() { Polarity::Debit } else { Polarity::Credit };
        let labels: Vec<String> = group
            .bills
            .iter()
            .map(|b| bill_label(polarity, &b.description, b.person.as_deref(), b.amount, b.due_date))
            .collect();
        let transactions = group.group.transaction_ids.len();
        let question = Question::binding().binds(&group.bills).binds(&group.group.transaction_ids);
        Ok(question.asks(format!(
            "Delete the reconciliation {}? The {} {} become pending again; its {transactions} transaction{} stay in the \
             ledger.",
            group.group.id,
            group.group.kind,
            labels.join(", "),
            if transactions == 1 { "" } else { "s" },
        )))
    })
}

/// The `/v1/reconciliations` operations.
pub static OPERATIONS: Declaration = Declaration {
    resource: Resource::Reconciliations,
    collection: "/v1/reconciliations",
    operations: &[
        Op::write(
            "post",
            "",
            "create",
            "Reconcile bills with the transactions that paid them (settles the bills)",
            run_create,
        )
        .takes::<ReconciliationCreate>()
        .answers(201, schema_of::<Reconciliation>)
        .located("/v1/reconciliations", "id")
        .tool(
            "finance_reconciliations_create",
            "Reconcile bills",
            "Matches pending bills of one kind with the posted bank transactions that paid them (payables: debits; \
receivables: credits) and settles the bills from them; no ledger transaction is added. Asks the user to confirm.",
        )
        .confirmed(confirm_create),
        Op::read("/{id}", "get", "Get a reconciliation", run_get).answers(200, schema_of::<Reconciliation>).tool(
            "finance_reconciliations_get",
            "Get a reconciliation",
            "A reconciliation: its kind, bills and transactions.",
        ),
        Op {
            access: Access::Delete,
            ..Op::write("delete", "/{id}", "delete", "Delete a reconciliation (its bills become pending)", run_delete)
        }
        .answers(204, deleted_schema)
        .tool(
            "finance_reconciliations_delete",
            "Delete a reconciliation",
            "Undoes a reconciliation: its bills become pending again, its transactions stay. Asks the user to confirm.",
        )
        .confirmed(confirm_delete),
        Op::read("/suggestions", "suggest", "Suggest the pending bills each unreconciled transaction may have paid", run_suggest)
            .queries(schema_of::<SuggestParams>)
            .answers(200, schema_of::<Suggestions>)
            .extension("suggestions: the step before a reconciliation")
            .tool(
                "finance_reconciliations_suggest",
                "Suggest reconciliations",
                "For each of an account's unreconciled transactions from `from` to `to`: the pending bills of the same amount due \
within 10 days, ranked, each with why (same person, document), or matches []. Changes nothing; then \
finance_reconciliations_create.",
            ),
    ],
};

fn run_suggest(c: Call<'_>) -> Running<'_> {
    Box::pin(async move { reply(super::suggestions::suggest(c.ctx, c.conn, c.ws, c.query).await?) })
}
