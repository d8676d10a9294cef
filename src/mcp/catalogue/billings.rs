//! `finance_payables_*` and `finance_receivables_*`: the `/v1/payables` and
//! `/v1/receivables` operations as tools — one implementation for both kinds (the
//! [`BillKind`] parameter says which). Settle, cancel and reopen change what is owed or move money:
//! they are destructive and confirmed by the user.

use crate::storage::Conn;
use serde_json::Value;

use super::records::{self, label_of, peek, to_value, Own};
use super::{aggregates_schema, id_schema, query_pairs, write_schema, Scope};
use crate::domain::money::Cents;
use crate::error::ApiError;
use crate::mcp::tools::{answer, Answer, BoxFuture, ToolCall, ToolSpec};
use crate::ops::accounts::Accounts;
use crate::ops::bills::declared::{Bills, Declared};
use crate::ops::bills::{self, check_transition, BillKind, SettleRequest, Transition};
use crate::ops::resource::{Declaration, Records};
use crate::ops::validate::{parse, schema_of};

fn settle_input() -> Value {
    write_schema(schema_of::<SettleRequest>(), true, false)
}

/// The tools of one kind: its declared rows, with the handlers of its own operations.
pub fn tools<B: Declared>(declaration: &'static Declaration) -> Vec<ToolSpec> {
    records::tools::<Bills<B>>(
        declaration,
        &[
            Own::new("aggregates", aggregates_schema, aggregates::<B>, None),
            Own::new("settle", settle_input, settle::<B>, Some(describe_settle::<B>)),
            Own::new("cancel", id_schema, cancel::<B>, Some(describe_cancel::<B>)),
            Own::new("reopen", id_schema, reopen::<B>, Some(describe_reopen::<B>)),
        ],
    )
}

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
