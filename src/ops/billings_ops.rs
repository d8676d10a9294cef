//! The payables and receivables as declared resources: [`Bills`] names their
//! operations in `ops::billings` (one implementation for both kinds, the const
//! parameter says which), and [`PAYABLES`] / [`RECEIVABLES`] are their `/v1` tables.
//! Kept apart from the billing rules themselves so each file changes for one reason.

use sqlx::AnyConnection;

use super::billings::{self, Billing, BillingCreate, BillingCreated, BillingKind, BillingUpdate, IdPage, SettleRequest};
use super::common::brl;
use super::list::{ListRequest, ListSpec};
use super::resource::{Declaration, Deletable, Op, Records, Writable};
use super::validate::schema_of;
use super::{OpContext, Page};
use crate::domain::roles::Resource;
use crate::error::ApiError;
use crate::storage::identity::Membership;

/// Payables (`false`) or receivables (`true`).
pub struct Bills<const RECEIVABLE: bool>;

pub type Payables = Bills<false>;
pub type Receivables = Bills<true>;

impl<const R: bool> Bills<R> {
    pub const KIND: BillingKind = if R { BillingKind::Receivable } else { BillingKind::Payable };
}

impl<const R: bool> Records for Bills<R> {
    const RESOURCE: Resource = if R { Resource::Receivables } else { Resource::Payables };
    const COLLECTION: &'static str = if R { "/v1/receivables" } else { "/v1/payables" };
    const NOUN: &'static str = if R { "receivable" } else { "payable" };
    type Row = Billing;
    type Record = Billing;
    const LIST: &'static ListSpec = if R { &billings::RECEIVABLES_LIST } else { &billings::PAYABLES_LIST };
    async fn list(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, request: &ListRequest) -> Result<Page<Billing>, ApiError> {
        billings::list(ctx, conn, ws, Self::KIND, request).await
    }
    async fn get(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, id: &str) -> Result<Billing, ApiError> {
        billings::get(ctx, conn, ws, Self::KIND, id).await
    }
    fn label(bill: &Billing) -> String {
        let counterparty = match (&bill.person_name, R) {
            (Some(name), false) => format!(" to {name}"),
            (Some(name), true) => format!(" from {name}"),
            (None, _) => String::new(),
        };
        format!("“{}”{counterparty} ({}, due {})", bill.description, brl(&bill.amount), bill.due_date)
    }
}

impl<const R: bool> Writable for Bills<R> {
    type Create = BillingCreate;
    type Created = BillingCreated;
    type Update = BillingUpdate;
    async fn create(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, input: BillingCreate) -> Result<BillingCreated, ApiError> {
        billings::create(ctx, conn, ws, Self::KIND, input).await
    }
    async fn update(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, id: &str, input: BillingUpdate) -> Result<Billing, ApiError> {
        billings::update(ctx, conn, ws, Self::KIND, id, input).await
    }
}

impl<const R: bool> Deletable for Bills<R> {
    async fn delete(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, id: &str) -> Result<(), ApiError> {
        billings::delete(ctx, conn, ws, Self::KIND, id).await
    }
}

fn aggregates<const R: bool>() -> serde_json::Value {
    billings::aggregates_schema(Bills::<R>::KIND.settled())
}

/// The operations of one kind; `$k` is its collection's name.
macro_rules! bill_operations {
    ($bills:ty, $receivable:literal, $k:literal) => {
        Declaration::of::<$bills>(&[
            Op::list::<$bills>(concat!($k, "_list"), concat!("List ", $k)),
            Op::create::<$bills>(concat!($k, "_create"), concat!("Create ", $k, " (one, or a series of installments or recurrences)")),
            Op::read("/aggregates", concat!($k, "_aggregates"), concat!("Totals of ", $k)).answers(200, aggregates::<$receivable>),
            Op::read("/ids", concat!($k, "_ids"), concat!("Sweep the ids of ", $k)).answers(200, schema_of::<IdPage>),
            Op::get::<$bills>(concat!($k, "_get"), concat!("Get one of the ", $k)),
            Op::update::<$bills>(concat!($k, "_update"), concat!("Update one of the ", $k, " (never its status)")),
            Op::delete::<$bills>(concat!($k, "_delete"), concat!("Delete one of the ", $k)),
            Op::write("post", "/{id}/settle", concat!($k, "_settle"), concat!("Settle one of the ", $k, " (creates its ledger transaction)"))
                .takes(schema_of::<SettleRequest>)
                .answers(200, schema_of::<Billing>),
            Op::write("post", "/{id}/cancel", concat!($k, "_cancel"), concat!("Cancel a pending one of the ", $k)).answers(200, schema_of::<Billing>),
            Op::write("post", "/{id}/reopen", concat!($k, "_reopen"), concat!("Reopen one of the ", $k, " (removes its settlement transaction)"))
                .answers(200, schema_of::<Billing>),
        ])
    };
}

/// The `/v1/payables` operations.
pub static PAYABLES: Declaration = bill_operations!(Payables, false, "payables");
/// The `/v1/receivables` operations.
pub static RECEIVABLES: Declaration = bill_operations!(Receivables, true, "receivables");
