//! `finance_transactions_*` and `finance_transfers_*`: the `/v1/financial-transactions`
//! and `/v1/transfers` operations as tools.

use crate::storage::Conn;

use super::records::{create_tool, delete_tool, get_tool, label_of, list_tool, to_value, update_tool};
use super::{
    aggregates_schema, get_schema, project, projected, query_pairs, write_schema, Route, Scope, DESTRUCTIVE, READ,
};
use crate::domain::roles::{Access, Resource};
use crate::error::ApiError;
use crate::mcp::tools::{answer, Answer, BoxFuture, ToolCall, ToolSpec};
use crate::ops::accounts::Accounts;
use crate::ops::transactions::declared::Transactions;
use crate::ops::transactions::{self, Aggregates, Transfer, TransferCreate};
use crate::ops::validate::{parse, schema_of};

pub static TOOLS: &[ToolSpec] = &[
    list_tool::<Transactions>(
        "finance_transactions_list",
        "List transactions",
        "Lists the ledger: money in (credit) or out (debit) of the accounts; amounts are positive, the direction is \
type. E.g. {\"occurred_at\":{\"gte\":\"2026-11-01\"}}; unclassified: {\"classified\":false}.",
    ),
    get_tool::<Transactions>("finance_transactions_get", "Get a transaction", "One transaction, with its category, person and apportionment."),
    create_tool::<Transactions>(
        "finance_transactions_create",
        "Create a transaction",
        "Records money that moved in an account; is_pending records a forecast. Between two accounts use \
finance_transfers_create; for a bill, its _settle tool.",
    ),
    update_tool::<Transactions>(
        "finance_transactions_update",
        "Update a transaction",
        "Changes the fields sent, e.g. classifies (category_id, classified: true); null clears a field. Rows made by a \
settlement, adjustment or transfer keep amount, type and date.",
    ),
    delete_tool::<Transactions>(
        "finance_transactions_delete",
        "Delete a transaction",
        "Deletes a transaction the user entered (a transfer's leg deletes both; a settlement's: reopen the bill). Asks \
the user to confirm.",
    ),
    ToolSpec {
        name: "finance_transactions_aggregates",
        title: "Transaction totals",
        description: "Credits, debits and net of realised transactions for a month, a date range or all time: cash flow without \
paging the list.",
        permission: Some((Resource::Transactions, Access::Read)),
        annotations: READ,
        route: Route::get("/v1/financial-transactions", "/aggregates"),
        input_schema: aggregates_schema,
        output_schema: Some(schema_of::<Aggregates>),
        handler: aggregates,
        describe: None,
    },
    ToolSpec {
        name: "finance_transfers_get",
        title: "Get a transfer",
        description: "A transfer by the transfer_id of either of its transactions: both accounts and transactions, amount, date.",
        permission: Some((Resource::Transactions, Access::Read)),
        annotations: READ,
        route: Route::get("/v1/transfers", "/{id}"),
        input_schema: get_schema,
        // `fields` may leave any field out, as on every get tool.
        output_schema: Some(|| projected(schema_of::<Transfer>())),
        handler: transfer_get,
        describe: None,
    },
    ToolSpec {
        name: "finance_transfers_create",
        title: "Transfer between accounts",
        description: "Moves money between two accounts of the workspace: a linked debit and credit. Moves money: asks the user to \
confirm.",
        permission: Some((Resource::Transactions, Access::Write)),
        annotations: DESTRUCTIVE,
        route: Route::post("/v1/transfers", ""),
        input_schema: || write_schema(schema_of::<TransferCreate>(), false, true),
        output_schema: Some(schema_of::<Transfer>),
        handler: transfer_create,
        describe: Some(describe_transfer),
    },
];

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
