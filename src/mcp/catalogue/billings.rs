//! `finance_payables_*` and `finance_receivables_*`: the `/v1/payables` and
//! `/v1/receivables` operations as tools — one implementation for both kinds (the
//! [`BillKind`] parameter says which). Settle, cancel and reopen change what is owed or move money:
//! they are destructive and confirmed by the user.

use crate::storage::Conn;
use serde_json::Value;

use super::records::{create_tool, delete_tool, get_tool, label_of, list_tool, peek, to_value, update_tool};
use super::{aggregates_schema, id_schema, query_pairs, write_schema, Route, Scope, DESTRUCTIVE, READ};
use crate::domain::money::Cents;
use crate::domain::roles::Access;
use crate::error::ApiError;
use crate::mcp::tools::{answer, Answer, BoxFuture, Describe, Handler, ToolCall, ToolSpec};
use crate::ops::accounts::Accounts;
use crate::ops::bills::declared::{Bills, Payables, Receivables};
use crate::ops::bills::{self, check_transition, BillKind, Billing, Payable, Receivable, SettleRequest, Transition};
use crate::ops::resource::Records;
use crate::ops::validate::{parse, schema_of};

fn aggregates_output<B: BillKind>() -> Value {
    bills::aggregates_schema(B::SETTLED.as_str())
}

fn settle_input() -> Value {
    write_schema(schema_of::<SettleRequest>(), true, false)
}

const fn aggregates_tool<B: BillKind>(name: &'static str, title: &'static str, description: &'static str) -> ToolSpec {
    ToolSpec {
        name,
        title,
        description,
        permission: Some((B::RESOURCE, Access::Read)),
        annotations: READ,
        route: Route::get(B::COLLECTION, "/aggregates"),
        input_schema: aggregates_schema,
        output_schema: Some(aggregates_output::<B>),
        handler: aggregates::<B>,
        describe: None,
    }
}

/// settle, cancel, reopen: destructive, confirmed by the user.
const fn action_tool<B: BillKind>(
    name: &'static str,
    title: &'static str,
    description: &'static str,
    suffix: &'static str,
    input_schema: fn() -> Value,
    handler: Handler,
    describe: Describe,
) -> ToolSpec {
    ToolSpec {
        name,
        title,
        description,
        permission: Some((B::RESOURCE, Access::Write)),
        annotations: DESTRUCTIVE,
        route: Route::post(B::COLLECTION, suffix),
        input_schema,
        output_schema: Some(schema_of::<Billing>),
        handler,
        describe: Some(describe),
    }
}

pub static PAYABLES: &[ToolSpec] = &[
    list_tool::<Payables>(
        "finance_payables_list",
        "List payables",
        "Lists bills to pay. Filters: a value or operators, e.g. overdue: \
{\"status\":\"pending\",\"due_date\":{\"lt\":\"2026-11-30\"}}; person_id is the vendor, group_id a series. \
For totals use finance_payables_aggregates.",
    ),
    get_tool::<Payables>(
        "finance_payables_get",
        "Get a payable",
        "One payable: vendor, amounts, dates, status, category, apportionment, taxes and its settlement transaction.",
    ),
    create_tool::<Payables>(
        "finance_payables_create",
        "Create a payable",
        "Records a bill to pay, pending. person_name/category_name find or create; type installment splits it into \
monthly parcels, recurring repeats it. Pay it with finance_payables_settle.",
    ),
    update_tool::<Payables>(
        "finance_payables_update",
        "Update a payable",
        "Changes the fields sent of a pending payable; null clears a field. Never the status: use _settle, _cancel or \
_reopen.",
    ),
    delete_tool::<Payables>(
        "finance_payables_delete",
        "Delete a payable",
        "Deletes a pending or cancelled payable (reopen a paid one first). Asks the user to confirm.",
    ),
    aggregates_tool::<Payable>(
        "finance_payables_aggregates",
        "Payable totals",
        "Totals of payables (count, total, pending, paid, overdue_count) for a month, a due-date range or all time. \
Use it when the question is how much.",
    ),
    action_tool::<Payable>(
        "finance_payables_settle",
        "Pay a payable",
        "Pays a pending payable: records the debit in the ledger from financial_account_id (unless the payable names \
one). Moves money: asks the user to confirm.",
        "/{id}/settle",
        settle_input,
        settle::<Payable>,
        describe_settle::<Payable>,
    ),
    action_tool::<Payable>(
        "finance_payables_cancel",
        "Cancel a payable",
        "Cancels a pending payable; it stays in the history (finance_payables_reopen undoes it). Asks the user to \
confirm.",
        "/{id}/cancel",
        id_schema,
        cancel::<Payable>,
        describe_cancel::<Payable>,
    ),
    action_tool::<Payable>(
        "finance_payables_reopen",
        "Reopen a payable",
        "Makes a paid or cancelled payable pending again; a payment's ledger transaction is removed. Asks the user to \
confirm.",
        "/{id}/reopen",
        id_schema,
        reopen::<Payable>,
        describe_reopen::<Payable>,
    ),
];

pub static RECEIVABLES: &[ToolSpec] = &[
    list_tool::<Receivables>(
        "finance_receivables_list",
        "List receivables",
        "Lists what customers owe. Filters: a value or operators, e.g. late: \
{\"status\":\"pending\",\"due_date\":{\"lt\":\"2026-11-30\"}}; person_id is the customer. For totals use \
finance_receivables_aggregates.",
    ),
    get_tool::<Receivables>(
        "finance_receivables_get",
        "Get a receivable",
        "One receivable: customer, amounts, dates, status, category, apportionment, taxes and its settlement \
transaction.",
    ),
    create_tool::<Receivables>(
        "finance_receivables_create",
        "Create a receivable",
        "Records an amount to receive, pending. person_name/category_name find or create; type installment splits it \
into monthly parcels, recurring repeats it. Record the receipt with finance_receivables_settle.",
    ),
    update_tool::<Receivables>(
        "finance_receivables_update",
        "Update a receivable",
        "Changes the fields sent of a pending receivable; null clears a field. Never the status: use _settle, _cancel \
or _reopen.",
    ),
    delete_tool::<Receivables>(
        "finance_receivables_delete",
        "Delete a receivable",
        "Deletes a pending or cancelled receivable (reopen a received one first). Asks the user to confirm.",
    ),
    aggregates_tool::<Receivable>(
        "finance_receivables_aggregates",
        "Receivable totals",
        "Totals of receivables (count, total, pending, received, overdue_count) for a month, a due-date range or all \
time.",
    ),
    action_tool::<Receivable>(
        "finance_receivables_settle",
        "Receive a receivable",
        "Records a receipt: the credit in the ledger into financial_account_id (unless the receivable names one). \
Moves money: asks the user to confirm.",
        "/{id}/settle",
        settle_input,
        settle::<Receivable>,
        describe_settle::<Receivable>,
    ),
    action_tool::<Receivable>(
        "finance_receivables_cancel",
        "Cancel a receivable",
        "Cancels a pending receivable (finance_receivables_reopen undoes it). Asks the user to confirm.",
        "/{id}/cancel",
        id_schema,
        cancel::<Receivable>,
        describe_cancel::<Receivable>,
    ),
    action_tool::<Receivable>(
        "finance_receivables_reopen",
        "Reopen a receivable",
        "Makes a received or cancelled receivable pending again; a receipt's ledger transaction is removed. Asks the \
user to confirm.",
        "/{id}/reopen",
        id_schema,
        reopen::<Receivable>,
        describe_reopen::<Receivable>,
    ),
];

fn aggregates<'a, B: BillKind>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> BoxFuture<'a, Result<Answer, ApiError>> {
    answer(async move {
        let s = Scope::of(call).await?;
        bills::aggregates::<B>(&s.ctx, conn, s.ws, &query_pairs(&s.args.body)).await
    })
}

fn settle<'a, B: BillKind>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> BoxFuture<'a, Result<Answer, ApiError>> {
    answer(async move {
        let s = Scope::of(call).await?;
        let input: SettleRequest = parse(s.body())?;
        to_value(&bills::settle::<B>(&s.ctx, conn, s.ws, s.id(), input).await?)
    })
}

fn cancel<'a, B: BillKind>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> BoxFuture<'a, Result<Answer, ApiError>> {
    answer(async move {
        let s = Scope::of(call).await?;
        to_value(&bills::cancel::<B>(&s.ctx, conn, s.ws, s.id()).await?)
    })
}

fn reopen<'a, B: BillKind>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> BoxFuture<'a, Result<Answer, ApiError>> {
    answer(async move {
        let s = Scope::of(call).await?;
        to_value(&bills::reopen::<B>(&s.ctx, conn, s.ws, s.id()).await?)
    })
}

fn describe_settle<'a, B: BillKind>(
    call: &'a ToolCall<'a>,
    conn: &'a mut Conn,
) -> BoxFuture<'a, Result<String, ApiError>> {
    Box::pin(async move {
        let s = Scope::of(call).await?;
        let input: SettleRequest = parse(s.body())?;
        let (label, amount, account) = match peek::<Bills<B>>(&s, conn, s.id()).await? {
            Some(bill) => {
                check_transition(bill.status, Transition::Settle)?;
                let moved = match input.ticket_amount {
                    Some(ticket) => ticket.cents(),
                    None => Cents::nominal(
                        bill.amount,
                        input.interest_amount.map(|a| a.cents()),
                        input.discount_amount.map(|a| a.cents()),
                    ),
                };
                let account = bills::settlement_account(
                    input.financial_account_id.as_deref(),
                    bill.financial_account_id.as_deref(),
                )?;
                (Bills::<B>::label(&bill), Some(moved.brl()), Some(account.to_string()))
            }
            None => {
                (s.id().to_string(), input.ticket_amount.map(|a| a.cents().brl()), input.financial_account_id.clone())
            }
        };
        let account = match account {
            Some(id) => format!(" {} the account {}", B::ACCOUNT, label_of::<Accounts>(&s, conn, &id).await?),
            None => String::new(),
        };
        let amount = amount.map(|a| format!(" of {a}")).unwrap_or_default();
        Ok(format!(
            "Settle the {} {label}? This records a {}{amount} on {}{account}.",
            B::KIND,
            B::SETTLEMENT,
            input.payment_date
        ))
    })
}

fn describe_cancel<'a, B: BillKind>(
    call: &'a ToolCall<'a>,
    conn: &'a mut Conn,
) -> BoxFuture<'a, Result<String, ApiError>> {
    Box::pin(async move {
        let s = Scope::of(call).await?;
        let label = match peek::<Bills<B>>(&s, conn, s.id()).await? {
            Some(bill) => {
                check_transition(bill.status, Transition::Cancel)?;
                Bills::<B>::label(&bill)
            }
            None => s.id().to_string(),
        };
        Ok(format!("Cancel the {} {label}? It will no longer be expected to be {}.", B::KIND, B::SETTLED.as_str()))
    })
}

fn describe_reopen<'a, B: BillKind>(
    call: &'a ToolCall<'a>,
    conn: &'a mut Conn,
) -> BoxFuture<'a, Result<String, ApiError>> {
    Box::pin(async move {
        let s = Scope::of(call).await?;
        let Some(bill) = peek::<Bills<B>>(&s, conn, s.id()).await? else {
            return Ok(format!("Reopen the {} {}? It becomes pending again.", B::KIND, s.id()));
        };
        check_transition(bill.status, Transition::Reopen)?;
        let label = Bills::<B>::label(&bill);
        let settlement = match (&bill.payment_date, &bill.financial_account_id) {
            (Some(date), Some(account)) if bill.status == B::SETTLED => {
                let moved = bill.ticket_amount.unwrap_or(bill.nominal_amount);
                format!(
                    " Its {} of {} on {date} is removed from the account {}.",
                    B::SETTLEMENT,
                    moved.brl(),
                    label_of::<Accounts>(&s, conn, account).await?
                )
            }
            _ => String::new(),
        };
        Ok(format!("Reopen the {} {} {label}? It becomes pending again.{settlement}", bill.status.as_str(), B::KIND))
    })
}
