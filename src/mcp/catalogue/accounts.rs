//! `finance_accounts_*`: the `/v1/financial-accounts` operations as tools, with the
//! balance adjustment (destructive: it writes a ledger transaction).

use crate::storage::Conn;

use super::records::{self, peek, to_value, Own};
use super::{write_schema, Scope};
use crate::domain::money::Cents;
use crate::error::ApiError;
use crate::mcp::tools::{answer, Answer, BoxFuture, ToolCall, ToolSpec};
use crate::ops::accounts::{self, Accounts, AdjustBalance};
use crate::ops::validate::{parse, schema_of};

/// The tools of `/v1/financial-accounts`: the record tools and the balance adjustment.
pub fn tools() -> Vec<ToolSpec> {
    let adjust = Own::new(
        "adjust_balance",
        || write_schema(schema_of::<AdjustBalance>(), true, false),
        adjust_balance,
        Some(describe_adjust_balance),
    );
    records::tools::<Accounts>(&accounts::OPERATIONS, &[adjust])
}

fn adjust_balance<'a>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> BoxFuture<'a, Result<Answer, ApiError>> {
    answer(async move {
        let s = Scope::of(call).await?;
        let input: AdjustBalance = parse(s.body())?;
        to_value(&accounts::adjust_balance(&s.ctx, conn, s.ws, s.id(), input).await?)
    })
}

fn describe_adjust_balance<'a>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> BoxFuture<'a, Result<String, ApiError>> {
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
