//! `finance_payables_*` and `finance_receivables_*`: the `/v1/payables` and
//! `/v1/receivables` operations as tools — one implementation for both kinds (the
//! [`BillKind`] parameter says which). Settle, cancel and reopen change what is owed or
//! move money: they are destructive, and here are the messages the user confirms.

use crate::storage::Conn;

use super::records::{self, label_of, peek};
use super::Scope;
use crate::domain::money::Cents;
use crate::mcp::tools::{Asking, ToolCall, ToolSpec};
use crate::ops::accounts::Accounts;
use crate::ops::bills::declared::{Bills, Declared};
use crate::ops::bills::{self, check_transition, BillKind, SettleRequest, Transition};
use crate::ops::resource::{Declaration, Records};
use crate::ops::validate::parse;

/// The tools of one kind: its declared rows, with the confirmations of its actions.
pub fn tools<B: Declared>(declaration: &'static Declaration) -> Vec<ToolSpec> {
    records::tools::<Bills<B>>(
        declaration,
        &[("settle", describe_settle::<B>), ("cancel", describe_cancel::<B>), ("reopen", describe_reopen::<B>)],
    )
}

fn describe_settle<'a, B: BillKind>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> Asking<'a> {
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

fn describe_cancel<'a, B: BillKind>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> Asking<'a> {
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

fn describe_reopen<'a, B: BillKind>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> Asking<'a> {
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
