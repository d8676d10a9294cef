//! Receipts (comprovantes, `/v1/receipts`, scope `finance.receipts`, read-only): the
//! proofs of what the bank paid. The banking gateway files one when it confirms a
//! payable's payment (`ops/bills/dispatch.rs`), one per payment (`external_uid`, the
//! gateway's payment uid). A receipt never settles a bill; deleting its payable leaves
//! it as an orphan (`payable_id` null).

use schemars::JsonSchema;
use serde::Serialize;

use super::machinery::list::{list_spec, ListRequest, ListSpec};
use super::machinery::page;
use super::machinery::resource::{Declaration, Op, Records};
use super::{OpContext, Page};
use crate::domain::dates::Timestamp;
use crate::domain::money::Cents;
use crate::domain::payment::PAYABLE_METHODS;
use crate::domain::roles::{Access, Resource};
use crate::error::ApiError;
use crate::storage::identity::Membership;
use crate::storage::{sql, Conn, Row};

/// A receipt as `/v1` returns it (`ReceiptV1`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Receipt {
    pub id: String,
    pub company_id: Option<String>,
    pub payable_id: Option<String>,
    /// The payable's status now; `draft` is never shown elsewhere.
    #[schemars(extend("enum" = ["draft", "pending", "paid", "cancelled", null]))]
    pub payable_status: Option<String>,
    pub financial_account_id: Option<String>,
    /// `kobana` (filed by the banking gateway) or `upload`.
    #[schemars(extend("enum" = ["kobana", "upload"]))]
    pub source: String,
    #[schemars(extend("enum" = ["pending", "available", "failed"]))]
    pub status: String,
    pub paid_at: Timestamp,
    #[schemars(with = "String")]
    pub amount: Cents,
    pub payee_name: Option<String>,
    pub payee_document: Option<String>,
    #[schemars(extend("enum" = [
        "bank_billet", "utility", "tribute", "ted", "pix", "credit_card", "debit_card", "cash", "check",
        "direct_debit", "other", "none", null
    ]))]
    pub payment_method_kind: Option<String>,
    /// The gateway's payment uid.
    pub external_uid: Option<String>,
    pub attachment_id: Option<String>,
    /// The proof's file (`/v1/attachments/{id}/download`, needs `finance.attachments`).
    pub download_url: Option<String>,
    pub document_url: Option<String>,
    pub error_message: Option<String>,
    pub received_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// The `/v1/receipts` resource.
pub struct Receipts;

const COLUMNS: &str = "receipts.id, receipts.company_id, receipts.payable_id, \
    (SELECT b.status FROM billings b WHERE b.workspace_id = receipts.workspace_id AND b.id = receipts.payable_id) AS payable_status, \
    receipts.financial_account_id, receipts.source, receipts.status, receipts.paid_at, receipts.amount_cents, \
    receipts.payee_name, receipts.payee_document, receipts.payment_method_kind, receipts.external_uid, \
    receipts.attachment_id, receipts.document_url, receipts.error_message, receipts.received_at, receipts.created_at, \
    receipts.updated_at";

fn from_row(row: &Row<'_>, api_base_url: &str) -> Result<Receipt, crate::storage::Error> {
    let attachment_id: Option<String> = row.try_get(13)?;
    Ok(Receipt {
        id: row.try_get(0)?,
        company_id: row.try_get(1)?,
        payable_id: row.try_get(2)?,
        payable_status: row.try_get(3)?,
        financial_account_id: row.try_get(4)?,
        source: row.try_get(5)?,
        status: row.try_get(6)?,
        paid_at: row.try_get(7)?,
        amount: row.try_get(8)?,
        payee_name: row.try_get(9)?,
        payee_document: row.try_get(10)?,
        payment_method_kind: row.try_get(11)?,
        external_uid: row.try_get(12)?,
        download_url: attachment_id.as_ref().map(|id| format!("{api_base_url}/v1/attachments/{id}/download")),
        attachment_id,
        document_url: row.try_get(14)?,
        error_message: row.try_get(15)?,
        received_at: row.try_get(16)?,
        created_at: row.try_get(17)?,
        updated_at: row.try_get(18)?,
    })
}

impl Records for Receipts {
    const LIST: &'static ListSpec = &LIST;
    const RESOURCE: Resource = Resource::Receipts;
    const COLLECTION: &'static str = "/v1/receipts";
    const NOUN: &'static str = "receipt";
    type Row = Receipt;
    type Record = Receipt;
    async fn list(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        request: &ListRequest,
    ) -> Result<Page<Receipt>, ApiError> {
        let base = ctx.state.config.api_base_url.as_str();
        page::list::<Self, _>(ctx, conn, ws, request, COLUMNS, |row| from_row(row, base)).await
    }
    async fn get(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<Receipt, ApiError> {
        ctx.authorize(ws, Resource::Receipts, Access::Read)?;
        let id = super::machinery::common::path_id(id, "receipt")?;
        let base = ctx.state.config.api_base_url.as_str();
        sql::query(format!("SELECT {COLUMNS} FROM receipts WHERE receipts.workspace_id = $1 AND receipts.id = $2"))
            .bind(&ws.workspace_id)
            .bind(&id)
            .map_optional(&mut *conn, |row| from_row(row, base))
            .await?
            .ok_or_else(|| ApiError::not_found("receipt"))
    }
    fn label(r: &Receipt) -> String {
        format!("receipt of {} paid {}", r.amount.brl(), r.paid_at)
    }
}

pub static LIST: ListSpec = list_spec!(receipts;
    filters: company_id: Uuid, payable_id: Uuid, financial_account_id: Uuid, source: Enum(&["kobana", "upload"]),
        status: Enum(&["pending", "available", "failed"]), payment_method_kind: Enum(PAYABLE_METHODS), external_uid: Text,
        paid_at: Timestamp, created_at: Timestamp, updated_at: Timestamp, amount = amount_cents: Money;
    sorts: paid_at, created_at, updated_at, amount = amount_cents;
    default: paid_at desc);

/// The `/v1/receipts` operations.
pub static OPERATIONS: Declaration = Declaration::of::<Receipts>(&[
    Op::list::<Receipts>("List receipts").tool(
        "finance_receipts_list",
        "List payment receipts",
        "Lists the proofs of payments the bank made (comprovantes): amount, payee, when, the payable paid.",
    ),
    Op::get::<Receipts>("Get a receipt").tool("finance_receipts_get", "Get a payment receipt", "One receipt."),
]);
