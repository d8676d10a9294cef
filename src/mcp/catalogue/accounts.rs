//! `finance_accounts_*`: the `/v1/financial-accounts` operations as tools, and the
//! confirmation of the balance adjustment (destructive: it writes a ledger transaction).

use crate::storage::Conn;

use super::records::{self, peek};
use super::Scope;
use crate::domain::money::Cents;
use crate::mcp::tools::{Asking, ToolCall, ToolSpec};
use crate::ops::accounts::{self, Accounts, AdjustBalance};
use crate::ops::validate::parse;

/// The tools of `/v1/financial-accounts`: the record tools and the balance adjustment,
/// with its confirmation.
pub fn tools() -> Vec<ToolSpec> {
    records::tools::<Accounts>(&accounts::OPERATIONS, &[("adjust_balance", describe_adjust_balance)])
}

fn describe_adjust_balance<'a>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> Asking<'a> {
    Box::pin(async move {
        let s = Scope::of(call).await?;
        let input: AdjustBalance = parse(s.body())?;
        let target = input.target_balance.cents();
        let when = input.occurred_at.map_or_else(|| "today".to_string(), |d| d.to_string());
        match peek::<Accounts>(&s, conn, s.id()).await? {
            Some(account) => {
                let difference = Cents(target.0 - account.balance.0);
                let movement = if difference.0 >= 0 { "credit" } else { "debit" };
                Ok(format!(
                    "Set the balance of the account “{}” from {} to {}? This records a {movement} of {} dated {when}.",
                    account.account.name,
                    account.balance.brl(),
                    target.brl(),
                    Cents(difference.0.abs()).brl(),
                ))
            }
            None => Ok(format!(
                "Set the balance of the account {} to {} with a transaction dated {when}?",
                s.id(),
                target.brl()
            )),
        }
    })
}
