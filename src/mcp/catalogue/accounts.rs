//! `finance_accounts_*`: the `/v1/financial-accounts` operations as tools, with the
//! balance adjustment (destructive: it writes a ledger transaction).

use crate::storage::Conn;

use super::records::{create_tool, delete_tool, get_tool, list_tool, peek, to_value, update_tool};
use super::{write_schema, Route, Scope, DESTRUCTIVE};
use crate::domain::money::Cents;
use crate::domain::roles::{Access, Resource};
use crate::error::ApiError;
use crate::mcp::tools::{answer, Answer, BoxFuture, ToolCall, ToolSpec};
use crate::ops::accounts::{self, Accounts, AdjustBalance, BalanceAdjustment};
use crate::ops::validate::{parse, schema_of};

pub static TOOLS: &[ToolSpec] = &[
    list_tool::<Accounts>(
        "finance_accounts_list",
        "List financial accounts",
        "Lists the financial accounts (bank, cash, card, investment), without balances: finance_accounts_get has the \
balance.",
    ),
    get_tool::<Accounts>(
        "finance_accounts_get",
        "Get a financial account",
        "One financial account with its balance: opening plus realised credits minus debits.",
    ),
    create_tool::<Accounts>(
        "finance_accounts_create",
        "Create a financial account",
        "Creates a financial account of a company, with an optional opening balance.",
    ),
    update_tool::<Accounts>(
        "finance_accounts_update",
        "Update a financial account",
        "Changes the fields sent. The balance moves only through transactions or finance_accounts_adjust_balance.",
    ),
    delete_tool::<Accounts>(
        "finance_accounts_delete",
        "Delete a financial account",
        "Deletes an account nothing uses (else the error lists what does; deactivate it instead). Asks the user to \
confirm.",
    ),
    ToolSpec {
        name: "finance_accounts_adjust_balance",
        title: "Adjust an account's balance",
        description: "Brings the balance to target_balance with one transaction for the difference (credit up, debit down), e.g. to \
match a bank statement. Asks the user to confirm.",
        permission: Some((Resource::Accounts, Access::Write)),
        annotations: DESTRUCTIVE,
        route: Route::post("/v1/financial-accounts", "/{id}/adjust-balance"),
        input_schema: || write_schema(schema_of::<AdjustBalance>(), true, false),
        output_schema: Some(schema_of::<BalanceAdjustment>),
        handler: adjust_balance,
        describe: Some(describe_adjust_balance),
    },
];

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
        let when = input.occurred_at.as_deref().unwrap_or("today");
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
