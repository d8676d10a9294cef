//! `finance_transactions_*` and `finance_transfers_*`: the `/v1/financial-transactions`
//! and `/v1/transfers` operations as tools.

use serde_json::Value;
use sqlx::AnyConnection;

use super::accounts::Accounts;
use super::records::{create_tool, delete_tool, get_tool, label_of, list_tool, records, to_value, update_tool};
use super::{aggregates_schema, get_schema, project, projected, query_pairs, write_schema, Route, Scope, DESTRUCTIVE, READ};
use crate::domain::roles::{Access, Resource};
use crate::error::ApiError;
use crate::mcp::tools::{BoxFuture, ToolCall, ToolSpec};
use crate::ops::transactions::{self, Aggregates, Transaction, TransactionCreate, TransactionUpdate, Transfer, TransferCreate};
use crate::ops::validate::{parse, schema_of};

records!(Transactions, transactions, Resource::Transactions, "/v1/financial-transactions", "transaction",
    row: Transaction, record: Transaction, create: TransactionCreate, created: Transaction, update: TransactionUpdate,
    label: |t| format!("“{}” ({} of {} on {})", t.description, t.transaction_type, t.amount.brl(), t.occurred_at));

pub static TOOLS: &[ToolSpec] = &[
    list_tool::<Transactions>(
        "finance_transactions_list",
        "List transactions",
        "Lists the ledger: money that moved in (credit) or out (debit) of the financial accounts. Filter by company_id, \
type, financial_account_id, person_id, category_id, classification_center_id, transfer_id, is_pending, auto_created, \
classified, occurred_at or amount ({\"occurred_at\":{\"gte\":\"2026-11-01\",\"lte\":\"2026-11-30\"}}); sort by \
occurred_at (default, newest first), amount, created_at or updated_at. Amounts are positive decimal strings such as \
\"1500.00\" (BRL); the direction is type. Unclassified rows: {\"classified\": false}.",
    ),
    get_tool::<Transactions>("finance_transactions_get", "Get a transaction", "Gets one transaction by id, with its category, person and apportionment."),
    create_tool::<Transactions>(
        "finance_transactions_create",
        "Create a transaction",
        "Records money that moved in an account: company_id, financial_account_id, description, amount (positive decimal \
string, \"1500.00\"), occurred_at (YYYY-MM-DD), transaction_type (debit|credit); optionally category_id or \
category_name, person_id or person_name (found or created), cost centers, notes. is_pending true records a forecast \
that does not count in balances. Pass an idempotency_key to make a retry safe. To move money between two accounts use \
finance_transfers_create; to settle a bill use finance_payables_settle / finance_receivables_settle.",
    ),
    update_tool::<Transactions>(
        "finance_transactions_update",
        "Update a transaction",
        "Changes the fields sent, e.g. to classify a transaction (category_id, person_id, classification_center_id, \
classified: true). null clears an optional field. Rows created by a settlement, a balance adjustment or a transfer \
keep their amount, type and date.",
    ),
    delete_tool::<Transactions>(
        "finance_transactions_delete",
        "Delete a transaction",
        "Deletes a transaction the user entered (deleting one leg of a transfer deletes both; rows created by a \
settlement or adjustment cannot be deleted: reopen the bill instead). Destructive: the server asks the user to confirm \
before anything changes.",
    ),
    ToolSpec {
        name: "finance_transactions_aggregates",
        title: "Transaction totals",
        description: "Counts and sums the realised (non-pending) transactions of a workspace, optionally of one company, \
for a month (month + year) or a date range (start_date + end_date, on occurred_at), or all time: credits, debits and \
the net result as decimal strings (BRL). Use it for cash flow and month-close questions instead of paging through \
finance_transactions_list.",
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
        description: "Gets a transfer between two accounts by its transfer_id (the transfer_id of either of its two \
transactions): both accounts, both transaction ids, amount and date.",
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
        description: "Moves money from one financial account to another of the workspace: a linked debit and credit with \
one transfer_id. from_account_id, to_account_id, amount (positive decimal string, \"1500.00\"), occurred_at \
(YYYY-MM-DD), description; is_pending true records a planned transfer. Destructive (it moves money): the server asks \
the user to confirm before anything changes. Pass an idempotency_key to make a retry safe.",
        permission: Some((Resource::Transactions, Access::Write)),
        annotations: DESTRUCTIVE,
        route: Route::post("/v1/transfers", ""),
        input_schema: || write_schema(schema_of::<TransferCreate>(), false, true),
        output_schema: Some(schema_of::<Transfer>),
        handler: transfer_create,
        describe: Some(describe_transfer),
    },
];

fn aggregates<'a>(call: &'a ToolCall<'a>, conn: &'a mut AnyConnection) -> BoxFuture<'a, Result<Value, ApiError>> {
    Box::pin(async move {
        let s = Scope::of(call).await?;
        to_value(&transactions::aggregates(&s.ctx, conn, s.ws, &query_pairs(&s.args.body)).await?)
    })
}

fn transfer_get<'a>(call: &'a ToolCall<'a>, conn: &'a mut AnyConnection) -> BoxFuture<'a, Result<Value, ApiError>> {
    Box::pin(async move {
        let s = Scope::of(call).await?;
        let transfer = transactions::get_transfer(&s.ctx, conn, s.ws, s.id()).await?;
        Ok(project(to_value(&transfer)?, s.args.fields.as_deref()))
    })
}

fn transfer_create<'a>(call: &'a ToolCall<'a>, conn: &'a mut AnyConnection) -> BoxFuture<'a, Result<Value, ApiError>> {
    Box::pin(async move {
        let s = Scope::of(call).await?;
        let input: TransferCreate = parse(s.body())?;
        if let Some(first) = s.replay(conn, "/v1/transfers").await? {
            return Ok(first);
        }
        let transfer = to_value(&transactions::create_transfer(&s.ctx, conn, s.ws, input).await?)?;
        s.remember(conn, 201, &transfer).await?;
        Ok(transfer)
    })
}

fn describe_transfer<'a>(call: &'a ToolCall<'a>, conn: &'a mut AnyConnection) -> BoxFuture<'a, Result<String, ApiError>> {
    Box::pin(async move {
        let s = Scope::of(call).await?;
        let input: TransferCreate = parse(s.body())?;
        let from = label_of::<Accounts>(&s, conn, &input.from_account_id).await?;
        let to = label_of::<Accounts>(&s, conn, &input.to_account_id).await?;
        let planned = if input.is_pending == Some(true) { " as a planned (pending) transfer" } else { "" };
        Ok(format!(
            "Transfer {} from the account {from} to the account {to} on {}{planned} (“{}”)?",
            super::brl(&input.amount),
            input.occurred_at,
            input.description,
        ))
    })
}
