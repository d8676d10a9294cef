//! `finance_transactions_*` and `finance_transfers_*`: the `/v1/financial-transactions`
//! and `/v1/transfers` operations as tools, and the confirmation of a transfer.

use crate::storage::Conn;

use super::records::{self, label_of};
use super::Scope;
use crate::mcp::tools::{Asking, ToolCall, ToolSpec};
use crate::ops::accounts::Accounts;
use crate::ops::transactions::declared::{self, Transactions};
use crate::ops::transactions::TransferCreate;
use crate::ops::validate::parse;

/// The tools of `/v1/financial-transactions` and `/v1/transfers`, in that order, with
/// the confirmation of a transfer.
pub fn tools() -> Vec<ToolSpec> {
    let mut tools = records::tools::<Transactions>(&declared::TRANSACTIONS, &[]);
    tools.extend(records::own_tools(&declared::TRANSFERS, &[("create", describe_transfer)]));
    tools
}

fn describe_transfer<'a>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> Asking<'a> {
    Box::pin(async move {
        let s = Scope::of(call).await?;
        let input: TransferCreate = parse(s.body())?;
        let from = label_of::<Accounts>(&s, conn, &input.from_account_id).await?;
        let to = label_of::<Accounts>(&s, conn, &input.to_account_id).await?;
        let planned = if input.is_pending == Some(true) { " as a planned (pending) transfer" } else { "" };
        Ok(format!(
            "Transfer {} from the account {from} to the account {to} on {}{planned} (“{}”)?",
            input.amount.cents().brl(),
            input.occurred_at,
            input.description,
        ))
    })
}
