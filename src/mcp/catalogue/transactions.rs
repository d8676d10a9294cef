//! `finance_transactions_*` and `finance_transfers_*`: the `/v1/financial-transactions`
//! and `/v1/transfers` operations as tools.

use crate::storage::Conn;

use super::records::{self, label_of, to_value, Own};
use super::{aggregates_schema, get_schema, project, projected, query_pairs, write_schema, Scope};
use crate::error::ApiError;
use crate::mcp::tools::{answer, Answer, BoxFuture, ToolCall, ToolSpec};
use crate::ops::accounts::Accounts;
use crate::ops::transactions::declared::{self, Transactions};
use crate::ops::transactions::{self, Transfer, TransferCreate};
use crate::ops::validate::{parse, schema_of};

/// The tools of `/v1/financial-transactions` and `/v1/transfers`, in that order.
pub fn tools() -> Vec<ToolSpec> {
    let mut tools = records::tools::<Transactions>(
        &declared::TRANSACTIONS,
        &[Own::new("aggregates", aggregates_schema, aggregates, None)],
    );
    // `fields` may leave any field out of a transfer, as on every get tool.
    let get = Own {
        output_schema: Some(|| projected(schema_of::<Transfer>())),
        ..Own::new("get", get_schema, transfer_get, None)
    };
    let create = Own::new(
        "create",
        || write_schema(schema_of::<TransferCreate>(), false, true),
        transfer_create,
        Some(describe_transfer),
    );
    tools.extend(records::own_tools(&declared::TRANSFERS, &[get, create]));
    tools
}

fn aggregates<'a>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> BoxFuture<'a, Result<Answer, ApiError>> {
    answer(async move {
        let s = Scope::of(call).await?;
        to_value(&transactions::aggregates(&s.ctx, conn, s.ws, &query_pairs(&s.args.body)).await?)
    })
}

fn transfer_get<'a>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> BoxFuture<'a, Result<Answer, ApiError>> {
    Box::pin(async move {
        let s = Scope::of(call).await?;
        let transfer = transactions::get_transfer(&s.ctx, conn, s.ws, s.id()).await?;
        project(&transfer, s.args.fields.as_deref())
    })
}

fn transfer_create<'a>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> BoxFuture<'a, Result<Answer, ApiError>> {
    answer(async move {
        let s = Scope::of(call).await?;
        let input: TransferCreate = parse(s.body())?;
        s.once(conn, "/v1/transfers", async |conn| transactions::create_transfer(&s.ctx, conn, s.ws, input).await).await
    })
}

fn describe_transfer<'a>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> BoxFuture<'a, Result<String, ApiError>> {
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
