//! The payables and receivables as declared resources: [`Bills`] names their
//! operations in `ops::bills` (one implementation for both kinds, the [`BillKind`]
//! parameter says which), and [`PAYABLES`] / [`RECEIVABLES`] are their `/v1` tables.
//! Kept apart from the billing rules themselves so each file changes for one reason.

use crate::storage::Conn;

use super::{BillKind, Billing, BillingCreate, BillingCreated, BillingUpdate, Payable, Receivable, SettleRequest};
use crate::domain::roles::Resource;
use crate::error::ApiError;
use crate::ops::list::{ListRequest, ListSpec};
use crate::ops::resource::{Declaration, Deletable, Op, Records, Writable};
use crate::ops::validate::schema_of;
use crate::ops::{IdPage, OpContext, Page};
use crate::storage::identity::Membership;

/// The payables or the receivables, as a resource.
pub struct Bills<B>(std::marker::PhantomData<B>);

pub type Payables = Bills<Payable>;
pub type Receivables = Bills<Receivable>;

impl<B: BillKind> Records for Bills<B> {
    const RESOURCE: Resource = B::RESOURCE;
    const COLLECTION: &'static str = B::COLLECTION;
    const NOUN: &'static str = B::KIND;
    type Row = Billing;
    type Record = Billing;
    const LIST: &'static ListSpec = B::LIST;
    async fn list(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        request: &ListRequest,
    ) -> Result<Page<Billing>, ApiError> {
        super::list::<B>(ctx, conn, ws, request).await
    }
    async fn get(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<Billing, ApiError> {
        super::get::<B>(ctx, conn, ws, id).await
    }
    async fn list_written(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        request: &ListRequest,
    ) -> Result<Option<Vec<u8>>, ApiError> {
        super::written::list::<B>(ctx, conn, ws, request).await
    }
    fn label(bill: &Billing) -> String {
        let counterparty = match &bill.person_name {
            Some(name) => format!(" {} {name}", B::COUNTERPARTY),
            None => String::new(),
        };
        format!("“{}”{counterparty} ({}, due {})", bill.description, bill.amount.brl(), bill.due_date)
    }
}

impl<B: BillKind> Writable for Bills<B> {
    type Create = BillingCreate;
    type Created = BillingCreated;
    type Update = BillingUpdate;
    async fn create(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        input: BillingCreate,
    ) -> Result<BillingCreated, ApiError> {
        super::create::<B>(ctx, conn, ws, input).await
    }
    async fn update(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        id: &str,
        input: BillingUpdate,
    ) -> Result<Billing, ApiError> {
        super::update::<B>(ctx, conn, ws, id, input).await
    }
}

impl<B: BillKind> Deletable for Bills<B> {
    async fn delete(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<(), ApiError> {
        super::delete::<B>(ctx, conn, ws, id).await
    }
}

fn aggregates<B: BillKind>() -> serde_json::Value {
    super::aggregates_schema(B::SETTLED.as_str())
}

/// The operations of one kind (`{collection}`: `payables` or `receivables`).
const fn bill_operations<B: BillKind>() -> Declaration {
    Declaration::of::<Bills<B>>(
        const {
            &[
                Op::list::<Bills<B>>("List {collection}"),
                Op::create::<Bills<B>>("Create {collection} (one, or a series of installments or recurrences)"),
                Op::read("/aggregates", "aggregates", "Totals of {collection}").answers(200, aggregates::<B>),
                Op::read("/ids", "ids", "Sweep the ids of {collection}").answers(200, schema_of::<IdPage>),
                Op::get::<Bills<B>>("Get one of the {collection}"),
                Op::update::<Bills<B>>("Update one of the {collection} (never its status)"),
                Op::delete::<Bills<B>>("Delete one of the {collection}"),
                Op::write(
                    "post",
                    "/{id}/settle",
                    "settle",
                    "Settle one of the {collection} (creates its ledger transaction)",
                )
                .takes(schema_of::<SettleRequest>)
                .answers(200, schema_of::<Billing>),
                Op::write("post", "/{id}/cancel", "cancel", "Cancel a pending one of the {collection}")
                    .answers(200, schema_of::<Billing>),
                Op::write(
                    "post",
                    "/{id}/reopen",
                    "reopen",
                    "Reopen one of the {collection} (removes its settlement transaction)",
                )
                .answers(200, schema_of::<Billing>),
            ]
        },
    )
}

/// The `/v1/payables` operations.
pub static PAYABLES: Declaration = bill_operations::<Payable>();
/// The `/v1/receivables` operations.
pub static RECEIVABLES: Declaration = bill_operations::<Receivable>();
