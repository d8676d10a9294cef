//! Financial transactions and transfers (`/v1/financial-transactions`, `/v1/transfers`,
//! scope `finance.transactions`): the ledger.
//!
//! Rules: amounts are positive 2-decimal strings and `type` (debit/credit) gives the
//! direction; the account must belong to the transaction's company; category, person
//! and classification center are given by id or found/created by name (`*_id` and
//! `*_name` are mutually exclusive) with the polarity of `type`; a single center is an
//! apportionment of 100 %, `classification_centers[]` splits the amount (sums within
//! R$ 0.01, polarity per center) and the two forms are mutually exclusive. The
//! company's closed period (`locked_until`) blocks creating, changing (old and new
//! date) and deleting transactions dated on or before it. Pending transactions
//! (`is_pending`) are forecasts: they count in neither balances nor aggregates.
//! Auto-created transactions (settlements, balance adjustments) cannot be deleted and
//! their amount, type, date and pending flag cannot be changed; neither can those of a
//! transfer leg (a transfer is changed by deleting it and creating it again).
//!
//! Here: the operations and their OpenAPI rows; `wire` holds the request and response
//! types.

pub mod declared;
pub mod wire;

use crate::ops::machinery::resource::Writable;
use crate::ops::machinery::stamps::Stamp;
use crate::storage::{sql, Conn};

pub use self::wire::{
    Aggregates, Transaction, TransactionCreate, TransactionType, TransactionUpdate, Transfer, TransferCreate,
};
use super::apportionment::{self, Allocation, AllocationInput, AllocationView};
use super::automatic_rules::{self, Fresh, RuleScope};
use super::ledger::{self, positive, NewTransaction};
use super::machinery::common::{
    audit_write, body_id, invalid, optional, path_id, required, required_if_sent, unprocessable,
};
use super::machinery::crud::record_table;
use super::machinery::list::{list_spec, ListRequest, ListSpec};
use super::machinery::page;
use super::machinery::period::AggregatesQuery;
use super::machinery::refs::{self, CompanyRef, Polarity};
use super::{IdPage, OpContext, Page};
use crate::domain::dates::Date;
use crate::domain::money::{Amount, Cents};
use crate::domain::roles::{Access, Resource};
use crate::error::ApiError;
use crate::storage::identity::Membership;

fn polarity_of(text: &str) -> Polarity {
    if text == "credit" {
        Polarity::Credit
    } else {
        Polarity::Debit
    }
}

pub static LIST: ListSpec = list_spec!(financial_transactions;
    filters: company_id: Uuid, type = transaction_type: Enum(&["debit", "credit"]), financial_account_id: Uuid, person_id: Uuid,
        category_id: Uuid,
        // The row's classification_center_id: the first center of its apportionment.
        classification_center_id = "(SELECT a.classification_center_id FROM allocations a WHERE a.workspace_id = financial_transactions.workspace_id \
            AND a.owner_type = 'transaction' AND a.owner_id = financial_transactions.id ORDER BY a.position LIMIT 1)": Uuid,
        transfer_id: Uuid @ "ledger", is_pending: Bool @ "ledger", auto_created: Bool @ "ledger",
        classified: Bool @ "ledger", occurred_at: Date, updated_at: Timestamp, created_at: Timestamp @ "creation time",
        amount = amount_cents: Money;
    sorts: occurred_at, created_at, updated_at, amount = amount_cents;
    default: occurred_at desc);

record_table!(financial_transactions => Transaction |row| {
    id, company_id, financial_account_id, description, bank_description, document, document_date, occurred_at, competence_date,
    transaction_type, category_id, person_id, payment_method_kind, classified, is_pending, notes, auto_created, transfer_id,
    billing_id;
    amount = Cents(row.try_get("amount_cents")?),
    // Filled from the apportionment afterwards (`with_allocations`).
    classification_center_id = None,
    classification_center_allocations = Vec::new(),
    // A get's answer reads its files ([`get`]); the others leave them out.
    attachments = None;
    reads amount_cents
});

/// Fills the apportionment of `rows` with one query.
async fn with_allocations(
    conn: &mut Conn,
    ws: &Membership,
    mut rows: Vec<Transaction>,
) -> Result<Vec<Transaction>, ApiError> {
    let ids: Vec<String> = rows.iter().map(|t| t.id.clone()).collect();
    let mut allocations = apportionment::read(conn, ws, "transaction", &ids).await?;
    for row in &mut rows {
        if let Some(items) = allocations.remove(&row.id) {
            row.classification_center_id = items.first().map(|a| a.classification_center_id.clone());
            row.classification_center_allocations = items;
        }
    }
    Ok(rows)
}

pub async fn list(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    request: &ListRequest,
) -> Result<Page<Transaction>, ApiError> {
    ctx.authorize(ws, Resource::Transactions, Access::Read)?;
    let keys = ctx.state.keys.current().await?;
    let compiled = page::compile(conn, ws, &LIST, request, &keys.state).await?;
    let sql = format!("SELECT {COLUMNS} FROM financial_transactions {}", compiled.sql);
    let page = page::fetch(conn, sql, &compiled, &keys.state, from_row).await?;
    let data = with_allocations(conn, ws, page.data).await?;
    Ok(Page { data, meta: page.meta })
}

/// The transaction `id` of the workspace with its apportionment (404 otherwise).
async fn find(conn: &mut Conn, ws: &Membership, id: &str) -> Result<Transaction, ApiError> {
    let id = path_id(id, "Financial transaction")?;
    let row = sql::query(format!(
        "SELECT {COLUMNS} FROM financial_transactions WHERE financial_transactions.workspace_id = $1 AND financial_transactions.id = $2"
    ))
    .bind(&ws.workspace_id)
    .bind(&id)
    .map_optional(&mut *conn, from_row)
    .await
    ?;
    let row = row.ok_or_else(|| ApiError::not_found("Financial transaction"))?;
    let mut rows = with_allocations(conn, ws, vec![row]).await?;
    rows.pop().ok_or_else(ApiError::internal)
}

pub async fn get(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<Transaction, ApiError> {
    ctx.authorize(ws, Resource::Transactions, Access::Read)?;
    let mut found = find(conn, ws, id).await?;
    found.attachments = Some(super::attachments::attached(conn, ws, "transaction", &found.id).await?);
    Ok(found)
}

/// Refuses a single center together with `classification_centers` (400).
fn centers_exclusive(single: bool, split: bool) -> Result<(), ApiError> {
    if single && split {
        return Err(invalid(
            "classification_centers",
            "mutually_exclusive",
            "classification_center_id/classification_center_name and classification_centers are mutually exclusive",
        ));
    }
    Ok(())
}

/// The existing apportionment as request items, to check it against a new amount.
fn as_inputs(views: &[AllocationView]) -> Vec<AllocationInput> {
    views
        .iter()
        .map(|v| AllocationInput {
            classification_center_id: v.classification_center_id.clone(),
            percentage: v.percentage.clone(),
            amount: v.amount.map(Amount),
        })
        .collect()
}

/// The legs (id, company, date) of a transfer in the workspace.
async fn transfer_legs(
    conn: &mut Conn,
    ws: &Membership,
    transfer_id: &str,
) -> Result<Vec<(String, String, Date, Option<Date>)>, ApiError> {
    let rows = sql::query("SELECT id, company_id, occurred_at, competence_date FROM financial_transactions WHERE workspace_id = $1 AND transfer_id = $2 ORDER BY financial_account_id, id")
        .bind(&ws.workspace_id)
        .bind(transfer_id)
        .fetch_all(&mut *conn)
        .await
        ?;
    rows.iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?, r.try_get(3)?)))
        .collect::<Result<Vec<_>, crate::storage::Error>>()
        .map_err(ApiError::from)
}

/// The dates a movement is booked by lie in an open period of its company: the day it
/// happened and, when it has one, its competence date (422 `period_closed` naming the
/// first that does not).
fn check_booked(company: &CompanyRef, occurred_at: Date, competence_date: Option<Date>) -> Result<(), ApiError> {
    refs::check_period(company, "occurred_at", occurred_at)?;
    match competence_date {
        Some(competence) => refs::check_period(company, "competence_date", competence),
        None => Ok(()),
    }
}

/// The rows a delete of transaction `id` removes (it, or both legs of its transfer),
/// once nothing refuses it: a reconciliation holds it, it is auto-created, or a date a
/// row is booked by lies in a closed period. Its confirmation asks it first.
pub async fn deletable(
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
) -> Result<Vec<(String, String, Date, Option<Date>)>, ApiError> {
    let current = find(conn, ws, id).await?;
    crate::ops::reconciliations::refuse_if_reconciled(conn, ws, "transaction", &current.id, "deleted").await?;
    if current.auto_created {
        return Err(unprocessable(
            "id",
            "auto_created",
            "An auto-created transaction cannot be deleted; reopen or delete its bill instead",
        ));
    }
    let legs = match &current.transfer_id {
        Some(transfer_id) => transfer_legs(conn, ws, transfer_id).await?,
        None => vec![(current.id.clone(), current.company_id.clone(), current.occurred_at, current.competence_date)],
    };
    for (_, company_id, occurred_at, competence_date) in &legs {
        let company = refs::company(conn, ws, "company_id", company_id).await?;
        check_booked(&company, *occurred_at, *competence_date)?;
    }
    Ok(legs)
}

/// Deletes a transaction (hard), with its apportionment and attachment links.
/// Auto-created transactions (settlements, balance adjustments) are refused (422
/// `auto_created`: reopen or delete the bill instead). A transfer leg is deleted
/// together with its pair, so a transfer never stays half-recorded. Every deleted row
/// must be outside its company's closed period.
pub async fn delete(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<(), ApiError> {
    ctx.authorize(ws, Resource::Transactions, Access::Delete)?;
    let legs = deletable(conn, ws, id).await?;
    for (leg_id, _, _, _) in &legs {
        apportionment::replace(conn, ws, "transaction", leg_id, &[]).await?;
        sql::query(
            "DELETE FROM attachment_links WHERE workspace_id = $1 AND target_type = 'transaction' AND target_id = $2",
        )
        .bind(&ws.workspace_id)
        .bind(leg_id)
        .execute(&mut *conn)
        .await?;
        sql::query("DELETE FROM financial_transactions WHERE workspace_id = $1 AND id = $2")
            .bind(&ws.workspace_id)
            .bind(leg_id)
            .execute(&mut *conn)
            .await?;
        audit_write(ctx, conn, ws, "financial_transactions.delete", "financial_transaction", leg_id).await?;
    }
    Ok(())
}

/// `GET /v1/financial-transactions/ids`: every id, ascending, with a cursor.
pub async fn ids(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    request: &ListRequest,
) -> Result<IdPage, ApiError> {
    page::ids::<declared::Transactions>(ctx, conn, ws, request).await
}

/// `GET /v1/financial-transactions/aggregates`: `company_id` (optional), and either
/// `month` + `year` or `start_date` + `end_date` (inclusive, on `occurred_at`); neither
/// pair means all time. Counts and sums realised (non-pending) transactions only.
pub async fn aggregates(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    query: &[(String, String)],
) -> Result<Aggregates, ApiError> {
    ctx.authorize(ws, Resource::Transactions, Access::Read)?;
    let query = AggregatesQuery::parse(query)?;
    super::machinery::refs::named(conn, ws, query.company_id.as_deref(), None).await?;
    let mut sql = String::from(
        "SELECT COUNT(*),
                CAST(COALESCE(SUM(CASE WHEN transaction_type = 'credit' THEN amount_cents ELSE 0 END), 0) AS BIGINT),
                CAST(COALESCE(SUM(CASE WHEN transaction_type = 'debit' THEN amount_cents ELSE 0 END), 0) AS BIGINT)
           FROM financial_transactions WHERE workspace_id = $1 AND is_pending = 0",
    );
    let mut binds = vec![ws.workspace_id.clone()];
    if let Some(c) = query.company_id {
        binds.push(c);
        sql.push_str(&format!(" AND company_id = ${}", binds.len()));
    }
    if let Some((s, e)) = query.period {
        binds.push(s.to_string());
        sql.push_str(&format!(" AND occurred_at >= ${}", binds.len()));
        binds.push(e.to_string());
        sql.push_str(&format!(" AND occurred_at <= ${}", binds.len()));
    }
    let mut statement = sql::query(sql);
    for b in &binds {
        statement = statement.bind(b.as_str());
    }
    let row = statement.fetch_one(&mut *conn).await?;
    let count: i64 = row.try_get(0)?;
    let credit: i64 = row.try_get(1)?;
    let debit: i64 = row.try_get(2)?;
    Ok(Aggregates { count, credit: Cents(credit), debit: Cents(debit), net: Cents(credit - debit) })
}

/// The two accounts of a transfer and their companies.
pub struct Legs {
    pub from: String,
    pub from_company: CompanyRef,
    pub to: String,
    pub to_company: CompanyRef,
}

/// The accounts a transfer moves money between, after every check a transfer makes on
/// them and its days: two different accounts of the workspace, each company's period
/// open on its day and its competence date. Its confirmation asks it first.
pub async fn legs(conn: &mut Conn, ws: &Membership, input: &TransferCreate) -> Result<Legs, ApiError> {
    required("description", &input.description)?;
    positive("amount", input.amount)?;
    let from = body_id("from_account_id", &input.from_account_id)?;
    let to = body_id("to_account_id", &input.to_account_id)?;
    if from == to {
        return Err(unprocessable("to_account_id", "same_account", "A transfer needs two different accounts"));
    }
    let (from, from_company) = refs::account_anywhere(conn, ws, "from_account_id", &from).await?;
    let (to, to_company) = refs::account_anywhere(conn, ws, "to_account_id", &to).await?;
    for company in [&from_company, &to_company] {
        refs::check_period(company, "occurred_at", input.occurred_at)?;
        if let Some(competence) = input.competence_date {
            refs::check_period(company, "competence_date", competence)?;
        }
    }
    Ok(Legs { from, from_company, to, to_company })
}

/// Records a transfer: a debit in `from_account_id` and a credit in `to_account_id`
/// sharing a new `transfer_id`, both or neither. Each leg belongs to its account's
/// company and is subject to that company's closed period. Its competence date is the
/// transfer's date unless one is sent.
pub async fn create_transfer(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    input: TransferCreate,
) -> Result<Transfer, ApiError> {
    ctx.authorize(ws, Resource::Transactions, Access::Write)?;
    let Legs { from, from_company, to, to_company } = legs(conn, ws, &input).await?;
    let description = required("description", &input.description)?.to_string();
    let amount = positive("amount", input.amount)?;
    let occurred_at = input.occurred_at;
    let competence_date = input.competence_date.unwrap_or(occurred_at);
    let transfer_id = uuid::Uuid::new_v4().to_string();
    let notes = optional(input.notes.as_deref());
    let is_pending = input.is_pending.unwrap_or(false);
    let leg = |company: &CompanyRef, account: &str, polarity: Polarity| NewTransaction {
        company_id: company.id.clone(),
        account_id: account.to_string(),
        description: description.clone(),
        amount,
        occurred_at,
        competence_date: Some(competence_date),
        polarity: Some(polarity),
        notes: notes.clone(),
        is_pending,
        transfer_id: Some(transfer_id.clone()),
        ..NewTransaction::default()
    };
    // The legs in the order of their accounts' ids, whatever the direction: each insert
    // takes its account's share of the workspace's volume (migration 0018), and two
    // transfers between the same accounts in opposite directions take them in one order.
    let (debit, credit) = (leg(&from_company, &from, Polarity::Debit), leg(&to_company, &to, Polarity::Credit));
    let (from_transaction_id, to_transaction_id) = if from < to {
        let debit = ledger::insert(ctx, conn, ws, &debit).await?;
        (debit, ledger::insert(ctx, conn, ws, &credit).await?)
    } else {
        let credit = ledger::insert(ctx, conn, ws, &credit).await?;
        (ledger::insert(ctx, conn, ws, &debit).await?, credit)
    };
    audit_write(ctx, conn, ws, "financial_transactions.create", "financial_transaction", &from_transaction_id).await?;
    audit_write(ctx, conn, ws, "financial_transactions.create", "financial_transaction", &to_transaction_id).await?;
    audit_write(ctx, conn, ws, "transfers.create", "transfer", &transfer_id).await?;
    Ok(Transfer {
        transfer_id,
        from_account_id: from,
        to_account_id: to,
        from_transaction_id,
        to_transaction_id,
        amount,
        occurred_at,
        competence_date,
        description,
        notes,
        is_pending,
    })
}

/// `GET /v1/transfers/{transfer_id}`: both legs of a transfer of the workspace.
pub async fn get_transfer(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    transfer_id: &str,
) -> Result<Transfer, ApiError> {
    ctx.authorize(ws, Resource::Transactions, Access::Read)?;
    let transfer_id = path_id(transfer_id, "Transfer")?;
    let rows = sql::query(format!(
        "SELECT {COLUMNS} FROM financial_transactions WHERE financial_transactions.workspace_id = $1 AND financial_transactions.transfer_id = $2"
    ))
    .bind(&ws.workspace_id)
    .bind(&transfer_id)
    .map_all(&mut *conn, from_row)
    .await
    ?;
    let legs = rows;
    let from = legs.iter().find(|t| t.transaction_type == "debit");
    let to = legs.iter().find(|t| t.transaction_type == "credit");
    let (Some(from), Some(to)) = (from, to) else { return Err(ApiError::not_found("Transfer")) };
    Ok(Transfer {
        transfer_id,
        from_account_id: from.financial_account_id.clone(),
        to_account_id: to.financial_account_id.clone(),
        from_transaction_id: from.id.clone(),
        to_transaction_id: to.id.clone(),
        amount: from.amount,
        occurred_at: from.occurred_at,
        // A transfer recorded without one (before it defaulted) is of its date's period.
        competence_date: from.competence_date.unwrap_or(from.occurred_at),
        description: from.description.clone(),
        notes: from.notes.clone(),
        is_pending: from.is_pending,
    })
}

/// A transaction's create and update.
impl Writable for declared::Transactions {
    type Create = TransactionCreate;
    type Created = Transaction;
    type Update = TransactionUpdate;
    async fn create(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        input: TransactionCreate,
    ) -> Result<Transaction, ApiError> {
        ctx.authorize(ws, Resource::Transactions, Access::Write)?;
        let description = required("description", &input.description)?.to_string();
        let amount = positive("amount", input.amount)?;
        let occurred_at = input.occurred_at;
        let account_id = body_id("financial_account_id", &input.financial_account_id)?;
        let single =
            input.centers.classification_center_id.is_some() || input.centers.classification_center_name.is_some();
        centers_exclusive(single, input.centers.classification_centers.is_some())?;
        // Shape and sums of the split before touching the database.
        let split = match &input.centers.classification_centers {
            Some(items) => Some(apportionment::resolve(amount, items)?),
            None => None,
        };
        let polarity = input.transaction_type.polarity();
        let company = refs::company(conn, ws, "company_id", &input.company_id).await?;
        check_booked(&company, occurred_at, input.competence_date)?;
        let owner = crate::ops::registers::Owner { ctx, ws, company: &company, polarity };
        let account_id = refs::account(conn, ws, &company, "financial_account_id", &account_id).await?;
        let category_id = owner.category(conn, input.category_id.as_deref(), input.category_name.as_deref()).await?;
        let person_id = owner.person(conn, input.person_id.as_deref(), input.person_name.as_deref()).await?;
        // The company's transaction rules fill what the request left empty.
        let fresh = Fresh {
            scope: RuleScope::Transactions,
            account_id: Some(&account_id),
            polarity,
            person_id: person_id.as_deref(),
            description: &description,
            notes: input.notes.as_deref(),
        };
        let fill = automatic_rules::fire(&owner, conn, fresh).await?;
        let category_id = category_id.or(fill.category_id);
        let person_id = person_id.or(fill.person_id);
        let allocations = match split {
            Some(items) => {
                apportionment::check(conn, ws, &company, polarity, &items).await?;
                items
            }
            None => owner
                .center(
                    conn,
                    input.centers.classification_center_id.as_deref(),
                    input.centers.classification_center_name.as_deref(),
                )
                .await?
                .or(fill.classification_center_id)
                .map(|center| vec![Allocation::whole(center, amount)])
                .unwrap_or_default(),
        };
        let id = ledger::insert(
            ctx,
            conn,
            ws,
            &NewTransaction {
                company_id: company.id.clone(),
                account_id,
                description,
                amount,
                occurred_at,
                competence_date: input.competence_date,
                polarity: Some(polarity),
                category_id,
                person_id,
                payment_method_kind: input.payment_method_kind.map(|k| k.0.as_str().to_string()),
                bank_description: optional(input.bank_description.as_deref()),
                document: optional(input.document.as_deref()),
                document_date: input.document_date,
                notes: optional(input.notes.as_deref()),
                classified: input.classified.unwrap_or(false),
                is_pending: input.is_pending.unwrap_or(false),
                auto_created: false,
                transfer_id: None,
                billing_id: None,
                statement_fitid: None,
            },
        )
        .await?;
        if !allocations.is_empty() {
            apportionment::replace(conn, ws, "transaction", &id, &allocations).await?;
        }
        audit_write(ctx, conn, ws, "financial_transactions.create", "financial_transaction", &id).await?;
        find(conn, ws, &id).await
    }
    /// Changes a transaction. Changing the amount re-checks the apportionment it keeps;
    /// changing the type re-checks the polarity of the category and centers it keeps.
    async fn update(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        id: &str,
        mut input: TransactionUpdate,
    ) -> Result<Transaction, ApiError> {
        ctx.authorize(ws, Resource::Transactions, Access::Write)?;
        let current = find(conn, ws, id).await?;
        let description = required_if_sent("description", input.description.as_deref())?;
        let amount = match input.amount {
            Some(a) => positive("amount", a)?,
            None => current.amount,
        };
        if input.category_id.is_some() && input.category_name.is_some() {
            return Err(invalid(
                "category_id",
                "mutually_exclusive",
                "category_id and category_name are mutually exclusive",
            ));
        }
        if input.person_id.is_some() && input.person_name.is_some() {
            return Err(invalid("person_id", "mutually_exclusive", "person_id and person_name are mutually exclusive"));
        }
        if input.classification_center_id.is_some() && input.classification_center_name.is_some() {
            return Err(invalid(
                "classification_center_id",
                "mutually_exclusive",
                "classification_center_id and classification_center_name are mutually exclusive",
            ));
        }
        let single = input.classification_center_id.is_some() || input.classification_center_name.is_some();
        centers_exclusive(single, input.classification_centers.is_some())?;
        let occurred_at = input.occurred_at.unwrap_or(current.occurred_at);
        let transaction_type = input
            .transaction_type
            .map(|t| if t == TransactionType::Credit { "credit" } else { "debit" })
            .unwrap_or(&current.transaction_type)
            .to_string();
        let is_pending = input.is_pending.unwrap_or(current.is_pending);
        let moves_money = amount != current.amount
            || occurred_at != current.occurred_at
            || transaction_type != current.transaction_type
            || is_pending != current.is_pending;
        if moves_money && current.auto_created {
            return Err(unprocessable(
                "id",
                "auto_created",
                "An auto-created transaction's amount, type, date and pending flag are managed by the server",
            ));
        }
        if moves_money {
            let doing = "changed in amount, type, date or pending flag";
            crate::ops::reconciliations::refuse_if_reconciled(conn, ws, "transaction", &current.id, doing).await?;
        }
        if moves_money && current.transfer_id.is_some() {
            return Err(unprocessable("id", "transfer_leg", "A transfer leg's amount, type, date and pending flag cannot change; delete the transfer and create it again"));
        }
        let company = refs::company(conn, ws, "company_id", &current.company_id).await?;
        check_booked(&company, current.occurred_at, current.competence_date)?;
        check_booked(&company, occurred_at, input.competence_date.unwrap_or(current.competence_date))?;
        let polarity = polarity_of(&transaction_type);
        let type_changed = transaction_type != current.transaction_type;
        let owner = crate::ops::registers::Owner { ctx, ws, company: &company, polarity };
        let category_id = match (&input.category_id, &input.category_name) {
            (Some(Some(id)), _) => owner.category(conn, Some(id), None).await?,
            (Some(None), _) => None,
            (None, Some(name)) => owner.category(conn, None, Some(name)).await?,
            (None, None) => match &current.category_id {
                Some(id) if type_changed => owner.category(conn, Some(id), None).await?,
                kept => kept.clone(),
            },
        };
        let person_id = match (&input.person_id, &input.person_name) {
            (Some(Some(id)), _) => owner.person(conn, Some(id), None).await?,
            (Some(None), _) => None,
            (None, Some(name)) => owner.person(conn, None, Some(name)).await?,
            (None, None) => current.person_id.clone(),
        };
        // The apportionment: replaced when sent, otherwise re-checked when the amount or
        // the type changes.
        // The first center of the apportionment, sent back as it was read, changes nothing.
        if input
            .classification_center_id
            .as_ref()
            .is_some_and(|id| id.is_some() && *id == current.classification_center_id)
        {
            input.classification_center_id = None;
        }
        let allocations: Option<Vec<Allocation>> = if let Some(items) = &input.classification_centers {
            let items = apportionment::resolve(amount, items)?;
            apportionment::check(conn, ws, &company, polarity, &items).await?;
            Some(items)
        } else if input.classification_center_id.is_some() || input.classification_center_name.is_some() {
            let id = input.classification_center_id.clone().flatten();
            if input.classification_center_id == Some(None) {
                Some(Vec::new())
            } else {
                let center = owner.center(conn, id.as_deref(), input.classification_center_name.as_deref()).await?;
                Some(center.map(|c| vec![Allocation::whole(c, amount)]).unwrap_or_default())
            }
        } else if !current.classification_center_allocations.is_empty() && (amount != current.amount || type_changed) {
            let items = apportionment::resolve(amount, &as_inputs(&current.classification_center_allocations))?;
            apportionment::check(conn, ws, &company, polarity, &items).await?;
            None
        } else {
            None
        };
        let pick = |sent: &Option<Option<String>>, kept: &Option<String>| match sent {
            Some(value) => optional(value.as_deref()),
            None => kept.clone(),
        };
        let description = description.unwrap_or(&current.description).to_string();
        let competence_date = input.competence_date.unwrap_or(current.competence_date);
        let document_date = input.document_date.unwrap_or(current.document_date);
        let payment_method_kind = match input.payment_method_kind {
            Some(v) => v.map(|k| k.0.as_str().to_string()),
            None => current.payment_method_kind.clone(),
        };
        sql::query(
            "UPDATE financial_transactions SET description = $1, bank_description = $2, document = $3, document_date = $4,
                    amount_cents = $5, occurred_at = $6, competence_date = $7, transaction_type = $8, category_id = $9,
                    person_id = $10, payment_method_kind = $11, classified = $12, is_pending = $13, notes = $14,
                    updated_at = $15, updated_via = $16, updated_by = $17
              WHERE workspace_id = $18 AND id = $19",
        )
        .bind(&description)
        .bind(pick(&input.bank_description, &current.bank_description))
        .bind(pick(&input.document, &current.document))
        .bind(document_date)
        .bind(amount.0)
        .bind(occurred_at)
        .bind(competence_date)
        .bind(&transaction_type)
        .bind(category_id)
        .bind(person_id)
        .bind(payment_method_kind)
        .bind(input.classified.unwrap_or(current.classified) as i64)
        .bind(is_pending as i64)
        .bind(pick(&input.notes, &current.notes))
        .stamp_now(ctx)
        .bind(&ws.workspace_id)
        .bind(&current.id)
        .execute(&mut *conn)
        .await?;
        if let Some(items) = allocations {
            apportionment::replace(conn, ws, "transaction", &current.id, &items).await?;
        }
        audit_write(ctx, conn, ws, "financial_transactions.update", "financial_transaction", &current.id).await?;
        find(conn, ws, &current.id).await
    }
}
