//! The ledger as declared resources: [`Transactions`] names the transaction operations
//! in `ops::transactions` (its create and update, `Writable`, are written there with the
//! rules); [`TRANSACTIONS`] and [`TRANSFERS`] are the `/v1` tables of
//! `/v1/financial-transactions` and `/v1/transfers` (a transfer is two linked
//! transactions: same resource, same scopes). Kept apart from the ledger rules
//! themselves so each file changes for one reason.

use super as transactions;
use super::{Aggregates, Transaction, Transfer, TransferCreate};
use crate::domain::roles::Resource;
use crate::domain::text::quoted;
use crate::error::ApiError;
use crate::ops::attachments::with_files;
use crate::ops::machinery::list::{ListRequest, ListSpec};
use crate::ops::machinery::period::AggregatesParams;
use crate::ops::machinery::resource::{
    parse, reply, Asking, Call, Declaration, Deletable, Op, Question, Records, Running,
};
use crate::ops::machinery::validate::schema_of;
use crate::ops::IdPage;
use crate::ops::{OpContext, Page};
use crate::storage::identity::Membership;
use crate::storage::Conn;

/// The `"/v1/financial-transactions"` resource: its list, its reads, writes and delete.
pub struct Transactions;

impl Records for Transactions {
    const LIST: &'static ListSpec = &transactions::LIST;
    const RESOURCE: Resource = Resource::Transactions;
    const COLLECTION: &'static str = "/v1/financial-transactions";
    const NOUN: &'static str = "transaction";
    type Row = Transaction;
    type Record = Transaction;
    async fn list(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        request: &ListRequest,
    ) -> Result<Page<Transaction>, ApiError> {
        transactions::list(ctx, conn, ws, request).await
    }
    async fn get(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<Transaction, ApiError> {
        transactions::get(ctx, conn, ws, id).await
    }
    fn read_schema() -> serde_json::Value {
        with_files::<Transaction>()
    }
    fn label(t: &Transaction) -> String {
        format!("{} ({} of {} on {})", quoted(&t.description), t.transaction_type, t.amount.brl(), t.occurred_at)
    }
}

impl Deletable for Transactions {
    async fn delete(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<(), ApiError> {
        transactions::delete(ctx, conn, ws, id).await
    }
    async fn refused(conn: &mut Conn, ws: &Membership, id: &str) -> Result<(), ApiError> {
        transactions::deletable(conn, ws, id).await.map(drop)
    }
}

/// The `/v1/financial-transactions` operations.
pub static TRANSACTIONS: Declaration = Declaration::of::<Transactions>(&[
    Op::list::<Transactions>("List financial transactions").tool(
        "finance_transactions_list",
        "List transactions",
        "Lists the ledger: money in (credit) or out (debit) of the accounts; amounts are positive, the direction is \
type. E.g. {\"occurred_at\":{\"gte\":\"2026-11-01\"}}; unclassified: {\"classified\":false}.",
    ),
    Op::get::<Transactions>("Get a financial transaction").tool(
        "finance_transactions_get",
        "Get a transaction",
        "One transaction, with its category, person, apportionment and files (attachments).",
    ),
    Op::create::<Transactions>("Create a financial transaction").tool(
        "finance_transactions_create",
        "Create a transaction",
        "Records money that moved in an account; is_pending records a forecast. Between two accounts use \
finance_transfers_create; for a bill, its _settle tool.",
    ),
    Op::update::<Transactions>("Update a financial transaction").tool(
        "finance_transactions_update",
        "Update a transaction",
        "Changes the fields sent, e.g. classifies (category_id, classified: true); null clears a field. Rows made by a \
settlement, adjustment or transfer keep amount, type and date.",
    ),
    Op::delete::<Transactions>("Delete a financial transaction (a transfer leg goes with its pair)").tool(
        "finance_transactions_delete",
        "Delete a transaction",
        "Deletes a transaction the user entered (a transfer's leg deletes both; a settlement's: reopen the bill). Asks \
the user to confirm.",
    ),
    Op::read(
        "/aggregates",
        "aggregates",
        "Count and sum realised transactions (company_id, month+year or start_date+end_date)",
        run_aggregates,
    )
    .queries(schema_of::<AggregatesParams>)
    .answers(200, schema_of::<Aggregates>)
    .tool(
        "finance_transactions_aggregates",
        "Transaction totals",
        "Credits, debits and net of realised transactions for a month, a date range or all time: cash flow without \
paging the list.",
    ),
    Op::read("/ids", "ids", "Sweep every transaction id (ascending; limit up to 10000)", run_ids)
        .answers(200, schema_of::<IdPage>),
]);

fn run_aggregates(c: Call<'_>) -> Running<'_> {
    Box::pin(async move { reply(transactions::aggregates(c.ctx, c.conn, c.ws, c.query).await?) })
}

fn run_ids(c: Call<'_>) -> Running<'_> {
    Box::pin(async move { reply(transactions::ids(c.ctx, c.conn, c.ws, &ListRequest::from_query(c.query)?).await?) })
}

fn run_get_transfer(c: Call<'_>) -> Running<'_> {
    Box::pin(async move { reply(transactions::get_transfer(c.ctx, c.conn, c.ws, c.id).await?) })
}

fn run_create_transfer(c: Call<'_>) -> Running<'_> {
    Box::pin(async move { reply(transactions::create_transfer(c.ctx, c.conn, c.ws, parse(c.body)?).await?) })
}

/// "Transfer R$ … from the account … to the account … on …?": both accounts as they are,
/// after the checks the transfer makes.
fn confirm_transfer(c: Call<'_>) -> Asking<'_> {
    Box::pin(async move {
        let Call { ctx, conn, ws, body, .. } = c;
        let input: TransferCreate = parse(body)?;
        transactions::legs(conn, ws, &input).await?;
        let mut question = Question::binding();
        let from = crate::ops::accounts::named(ctx, conn, ws, &input.from_account_id, &mut question).await?;
        let to = crate::ops::accounts::named(ctx, conn, ws, &input.to_account_id, &mut question).await?;
        let planned = if input.is_pending == Some(true) { " as a planned (pending) transfer" } else { "" };
        Ok(question.asks(format!(
            "Transfer {} from the account {from} to the account {to} on {}{planned} ({})?",
            input.amount.cents().brl(),
            input.occurred_at,
            quoted(&input.description),
        )))
    })
}

/// The `/v1/transfers` operations.
pub static TRANSFERS: Declaration = Declaration {
    resource: Resource::Transactions,
    collection: "/v1/transfers",
    operations: &[
        Op::read("/{id}", "get", "Get a transfer by its transfer_id", run_get_transfer)
            .answers(200, schema_of::<Transfer>)
            .tool(
            "finance_transfers_get",
            "Get a transfer",
            "A transfer by the transfer_id of either of its transactions: both accounts and transactions, amount, date.",
        ),
        Op::write("post", "", "create", "Transfer between two accounts (a linked debit and credit)", run_create_transfer)
            .takes::<TransferCreate>()
            .answers(201, schema_of::<Transfer>)
            .located("/v1/transfers", "transfer_id")
            .tool(
                "finance_transfers_create",
                "Transfer between accounts",
                "Moves money between two accounts of the workspace: a linked debit and credit. Moves money: asks the user to \
confirm.",
            )
            .confirmed(confirm_transfer),
    ],
};
