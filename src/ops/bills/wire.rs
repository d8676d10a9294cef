//! The request and response types of `/v1/payables` and `/v1/receivables`: they
//! generate the JSON Schemas (OpenAPI and the MCP tools) and, through the domain types
//! of their fields ([`Amount`], [`Date`], [`PaymentMethod`]), refuse bad input.

use crate::ops::stamps::Stamps;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::domain::bills::{BillStatus, BillType, RecurrencePeriod};
use crate::domain::dates::Date;
use crate::domain::money::{Amount, Cents};
use crate::domain::names::Name;
use crate::domain::payment::PaymentMethod;
use crate::ops::apportionment::{AllocationInput, AllocationView, CentersInput};
use crate::ops::validate::nullable;

/// One withholding-tax charge of a bill in a request.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaxChargeInput {
    pub tax_id: String,
    pub amount: Amount,
    /// Default true: deducted from the bill (false: informational).
    #[serde(default)]
    pub withholding: Option<bool>,
}

/// A tax charge as read back.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TaxCharge {
    pub tax_id: String,
    pub tax_name: String,
    #[schemars(with = "String")]
    pub amount: Cents,
    pub withholding: bool,
}

/// `POST /v1/payables`, `POST /v1/receivables`. Amounts are strings with 2 decimals
/// (`"1500.00"`), dates `YYYY-MM-DD`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BillingCreate {
    pub company_id: String,
    #[schemars(length(min = 1, max = 500))]
    pub description: String,
    /// Amount in BRL (> 0), e.g. "1500.00". For installments: the series total.
    pub amount: Amount,
    pub due_date: Date,
    /// Defaults to the due date.
    #[serde(default)]
    pub competence_date: Option<Date>,
    /// normal (default), recurring (needs recurrence_period; 12 occurrences) or
    /// installment (needs total_installments 2–120).
    #[serde(default, rename = "type")]
    pub billing_type: Option<BillType>,
    #[serde(default)]
    pub recurrence_period: Option<RecurrencePeriod>,
    #[serde(default)]
    pub total_installments: Option<i64>,
    /// The supplier (payable) or customer (receivable): person_id or person_name is required.
    #[serde(default)]
    pub person_id: Option<String>,
    /// Finds or creates the person by name (exclusive with person_id).
    #[serde(default)]
    pub person_name: Option<Name>,
    #[serde(default)]
    pub category_id: Option<String>,
    #[serde(default)]
    pub category_name: Option<Name>,
    #[serde(flatten)]
    pub centers: CentersInput,
    /// Settlement account (same company).
    #[serde(default)]
    pub financial_account_id: Option<String>,
    /// Forecast account (same company).
    #[serde(default)]
    pub expected_account_id: Option<String>,
    #[serde(default)]
    pub payment_method_kind: Option<PaymentMethod>,
    #[serde(default)]
    #[schemars(length(max = 100))]
    pub document: Option<String>,
    #[serde(default)]
    #[schemars(length(max = 100))]
    pub document_number: Option<String>,
    #[serde(default)]
    pub document_date: Option<Date>,
    /// Relevant to income tax (IR).
    #[serde(default)]
    pub ir_relevant: Option<bool>,
    #[serde(default)]
    #[schemars(length(max = 2000))]
    pub notes: Option<String>,
    /// Withholding taxes (replace-all; on a series, attached to the first record).
    #[serde(default)]
    pub tax_charges: Option<Vec<TaxChargeInput>>,
}

/// `PATCH /v1/{payables|receivables}/{id}`: only the fields sent change; `null` clears
/// an optional field. The status, the payment date and the settlement amounts are not
/// fields of this request: they move only through settle, cancel and reopen.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct BillingUpdate {
    #[schemars(with = "String", length(min = 1, max = 500))]
    pub description: Option<String>,
    #[schemars(with = "Amount")]
    pub amount: Option<Amount>,
    #[schemars(with = "Date")]
    pub due_date: Option<Date>,
    #[schemars(with = "Date")]
    pub competence_date: Option<Date>,
    #[schemars(with = "String")]
    pub person_id: Option<String>,
    #[schemars(with = "Name")]
    pub person_name: Option<Name>,
    #[serde(deserialize_with = "nullable")]
    pub category_id: Option<Option<String>>,
    #[schemars(with = "Name")]
    pub category_name: Option<Name>,
    #[schemars(with = "String")]
    pub classification_center_id: Option<String>,
    #[schemars(with = "Name")]
    pub classification_center_name: Option<Name>,
    /// Replace-all: the full set; `[]` clears it.
    #[schemars(with = "Vec<AllocationInput>")]
    pub classification_centers: Option<Vec<AllocationInput>>,
    #[serde(deserialize_with = "nullable")]
    pub financial_account_id: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    pub expected_account_id: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    pub payment_method_kind: Option<Option<PaymentMethod>>,
    #[serde(deserialize_with = "nullable")]
    #[schemars(length(max = 100))]
    pub document: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    #[schemars(length(max = 100))]
    pub document_number: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    pub document_date: Option<Option<Date>>,
    #[serde(deserialize_with = "nullable")]
    pub ir_relevant: Option<Option<bool>>,
    #[serde(deserialize_with = "nullable")]
    #[schemars(length(max = 2000))]
    pub notes: Option<Option<String>>,
    /// Replace-all: the full set; `[]` clears it.
    #[schemars(with = "Vec<TaxChargeInput>")]
    pub tax_charges: Option<Vec<TaxChargeInput>>,
}

/// `PATCH /v1/{payables|receivables}/{id}` on `/v1`, as the real API takes it: the
/// update's fields and, to move the record, a `status` other than its own — the
/// kind's settled status settles it (with `payment_date`, `financial_account_id` and
/// the amounts, as `POST …/settle`), `pending` reopens it, `cancelled` cancels it.
/// The update tools take [`BillingUpdate`] alone: money moves through the confirmed
/// tools.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BillingPatch<S> {
    #[serde(flatten)]
    pub fields: BillingUpdate,
    pub status: Option<S>,
    /// The day the money moved (with the settled status).
    #[serde(default)]
    pub payment_date: Option<Date>,
    #[serde(flatten)]
    pub amounts: SettlementAmounts,
}

/// The amounts of a settlement, as `POST …/settle` and a settling `PATCH` take them.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct SettlementAmounts {
    #[serde(default)]
    pub interest_amount: Option<Amount>,
    #[serde(default)]
    pub discount_amount: Option<Amount>,
    /// What actually moved; defaults to the nominal amount (amount + interest − discount).
    #[serde(default)]
    pub ticket_amount: Option<Amount>,
}

/// The statuses a payable is moved to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PayableStatus {
    Pending,
    Paid,
    Cancelled,
}

/// The statuses a receivable is moved to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReceivableStatus {
    Pending,
    Received,
    Cancelled,
}

impl From<PayableStatus> for BillStatus {
    fn from(status: PayableStatus) -> BillStatus {
        match status {
            PayableStatus::Pending => BillStatus::Pending,
            PayableStatus::Paid => BillStatus::Paid,
            PayableStatus::Cancelled => BillStatus::Cancelled,
        }
    }
}

impl From<ReceivableStatus> for BillStatus {
    fn from(status: ReceivableStatus) -> BillStatus {
        match status {
            ReceivableStatus::Pending => BillStatus::Pending,
            ReceivableStatus::Received => BillStatus::Received,
            ReceivableStatus::Cancelled => BillStatus::Cancelled,
        }
    }
}

/// `POST /v1/{payables|receivables}/{id}/settle`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SettleRequest {
    /// The day the money moved.
    pub payment_date: Date,
    /// The account the money moved in (same company); required unless the record has one.
    #[serde(default)]
    pub financial_account_id: Option<String>,
    #[serde(flatten)]
    pub amounts: SettlementAmounts,
}

/// A payable or receivable as a `/v1` list shows it: its own fields, and how many of
/// each of its parts (apportionment, tax charges, attachments) it has; the parts
/// themselves are the record's ([`Billing`]).
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct BillingRow {
    pub id: String,
    pub company_id: String,
    pub description: String,
    #[schemars(with = "String")]
    pub amount: Cents,
    #[schemars(with = "Option<String>")]
    pub interest_amount: Option<Cents>,
    #[schemars(with = "Option<String>")]
    pub discount_amount: Option<Cents>,
    #[schemars(with = "Option<String>")]
    pub ticket_amount: Option<Cents>,
    /// amount + interest − discount (computed).
    #[schemars(with = "String")]
    pub nominal_amount: Cents,
    pub due_date: Date,
    pub payment_date: Option<Date>,
    pub competence_date: Date,
    #[serde(rename = "type")]
    #[schemars(with = "BillType")]
    pub billing_type: String,
    /// pending | paid | cancelled (payables); pending | received | cancelled (receivables).
    #[schemars(with = "String")]
    pub status: BillStatus,
    #[schemars(extend("x-kobana-extension" = "series"))]
    pub recurrence_period: Option<String>,
    pub person_id: Option<String>,
    pub person_name: Option<String>,
    pub category_id: Option<String>,
    pub category_name: Option<String>,
    /// The first center of the apportionment.
    pub classification_center_id: Option<String>,
    pub classification_center_name: Option<String>,
    pub financial_account_id: Option<String>,
    pub expected_account_id: Option<String>,
    pub payment_method_kind: Option<String>,
    pub document: Option<String>,
    pub document_number: Option<String>,
    pub document_date: Option<Date>,
    pub installment_number: Option<i64>,
    pub total_installments: Option<i64>,
    /// The total of the series (sum of the amounts sharing this group_id).
    #[schemars(with = "Option<String>")]
    pub parcels_amount: Option<Cents>,
    pub group_id: Option<String>,
    /// The settlement transaction.
    pub transaction_id: Option<String>,
    /// Relevant to income tax (IR); unset by default.
    pub ir_relevant: Option<bool>,
    pub notes: Option<String>,
    /// Whether a reconciliation settled it (none yet: reconciliations are not served).
    pub is_reconciled: bool,
    pub tax_charges_count: i64,
    pub classification_center_allocations_count: i64,
    pub attachments_count: i64,
    #[serde(flatten)]
    pub stamps: Stamps,
}

/// A payable or receivable as `/v1` returns it: its row, with the apportionment and
/// the tax charges themselves.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Billing {
    #[serde(flatten)]
    pub row: BillingRow,
    pub classification_center_allocations: Vec<AllocationView>,
    pub tax_charges: Vec<TaxCharge>,
    /// The reconciliation group that settled it: null (reconciliations are not served
    /// yet).
    pub reconciliation: Option<serde_json::Value>,
}

/// The answer of a create: the first record, plus the ids of the whole series in order
/// (one id for a normal record).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BillingCreated {
    #[serde(flatten)]
    pub billing: Billing,
    #[schemars(extend("x-kobana-extension" = "series"))]
    pub series: Vec<String>,
}
