//! The ledger as declared resources: [`Transactions`] names the transaction operations
//! in `ops::transactions`; [`TRANSACTIONS`] and [`TRANSFERS`] are the `/v1` tables of
//! `/v1/financial-transactions` and `/v1/transfers` (a transfer is two linked
//! transactions: same resource, same scopes). Kept apart from the ledger rules
//! themselves so each file changes for one reason.

use super as transactions;
use super::{Aggregates, Transaction, TransactionCreate, TransactionUpdate, Transfer, TransferCreate};
use crate::domain::roles::Resource;
use crate::ops::resource::{records, Declaration, Op};
use crate::ops::validate::schema_of;
use crate::ops::IdPage;

records!(Transactions, transactions, Resource::Transactions, "/v1/financial-transactions", "transaction",
    row: Transaction, record: Transaction, create: TransactionCreate, created: Transaction, update: TransactionUpdate,
    list: transactions::list, get: transactions::get,
    label: |t| format!("“{}” ({} of {} on {})", t.description, t.transaction_type, t.amount.brl(), t.occurred_at));

/// The `/v1/financial-transactions` operations.
pub static TRANSACTIONS: Declaration = Declaration::of::<Transactions>(&[
    Op::list::<Transactions>("List financial transactions"),
    Op::create::<Transactions>("Create a financial transaction"),
    Op::read(
        "/aggregates",
        "aggregates",
        "Count and sum realised transactions (company_id, month+year or start_date+end_date)",
    )
    .answers(200, schema_of::<Aggregates>),
    Op::read("/ids", "ids", "Sweep every transaction id (ascending; limit up to 10000)")
        .answers(200, schema_of::<IdPage>),
    Op::get::<Transactions>("Get a financial transaction"),
    Op::update::<Transactions>("Update a financial transaction"),
    Op::delete::<Transactions>("Delete a financial transaction (a transfer leg goes with its pair)"),
]);

/// The `/v1/transfers` operations.
pub static TRANSFERS: Declaration = Declaration {
    resource: Resource::Transactions,
    collection: "/v1/transfers",
    operations: &[
        Op::write("post", "", "create", "Transfer between two accounts (a linked debit and credit)")
            .takes(schema_of::<TransferCreate>)
            .answers(201, schema_of::<Transfer>),
        Op::read("/{id}", "get", "Get a transfer by its transfer_id").answers(200, schema_of::<Transfer>),
    ],
};
