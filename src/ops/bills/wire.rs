//! The request and response types of `/v1/payables` and `/v1/receivables`: they
//! generate the JSON Schemas (OpenAPI and the MCP tools) and, through the domain types
//! of their fields ([`Amount`], [`Date`], [`PaymentMethod`]), refuse bad input.

use crate::ops::machinery::stamps::Stamps;
use std::borrow::Cow;
use std::marker::PhantomData;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::domain::bills::{BillStatus, BillType, RecurrencePeriod};
use crate::domain::dates::{Date, Timestamp};
use crate::domain::money::{Amount, Cents};
use crate::domain::names::Name;
use crate::domain::payment::PaymentMethod;
use crate::ops::apportionment::{AllocationInput, AllocationView, CentersInput};
use crate::ops::machinery::validate::{nullable, schema_of};

use super::coordinates::{CoordinatesInput, PaymentCoordinates};
use super::kind::BillKind;

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
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(min = 1, max = 500))]
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
    // A payable's (the receivables' schemas leave it out: [`For`]).
    #[serde(default)]
    pub operation_kind: Option<OperationKind>,
    #[serde(default)]
    #[schemars(length(max = 2000))]
    pub notes: Option<String>,
    // A payable's (the receivables' schemas leave them out: [`For`]).
    #[serde(flatten)]
    pub coordinates: CoordinatesInput,
    /// Withholding taxes (replace-all; on a series, attached to the first record).
    #[serde(default)]
    pub tax_charges: Option<Vec<TaxChargeInput>>,
}

/// `PATCH /v1/{payables|receivables}/{id}`: only the fields sent change; `null` clears
/// an optional field. The status, the payment date and the settlement amounts are not
/// fields of this request: they move only through settle, cancel and reopen.
// Unknown fields are refused by the schema check: serde's own refusal would also
// refuse the fields of a request this one is flattened into ([`BillingPatch`]).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default)]
#[schemars(deny_unknown_fields)]
pub struct BillingUpdate {
    #[schemars(with = "String", pattern(crate::domain::text::PLAIN_PATTERN), length(min = 1, max = 500))]
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
    pub operation_kind: Option<Option<OperationKind>>,
    #[serde(deserialize_with = "nullable")]
    #[schemars(length(max = 2000))]
    pub notes: Option<Option<String>>,
    #[serde(flatten)]
    pub coordinates: CoordinatesInput,
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
#[schemars(deny_unknown_fields)]
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
    /// Whether a reconciliation settled it (`reconciliation` on the record says which).
    pub is_reconciled: bool,
    pub tax_charges_count: i64,
    pub classification_center_allocations_count: i64,
    pub attachments_count: i64,
    /// The kind's own fields; the schema of a kind's answers says which ([`Of`]).
    #[serde(flatten)]
    #[schemars(skip)]
    pub kind: Option<KindRow>,
    #[serde(flatten)]
    pub stamps: Stamps,
}

/// A payable's operation: a payment (a bill, a tax) or a transfer to the payee.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OperationKind {
    Payment,
    Transfer,
}

impl OperationKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OperationKind::Payment => "payment",
            OperationKind::Transfer => "transfer",
        }
    }
}

/// What only a payable's row carries: whether it is a payment or a transfer, and where
/// it stands at the approval gate (none yet: the gate comes with the banking gateway).
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct PayableRowFields {
    #[schemars(extend("enum" = ["payment", "transfer", null]))]
    pub operation_kind: Option<String>,
    /// Where a payable stands at the approval gate (null: official). One waiting
    /// (`pending_approval`) is owed: the totals and reports count it; a list shows it when
    /// filtered by `payment_approval=pending_approval` or by `id`.
    #[schemars(extend("enum" = ["pending_approval", "approving", "creation_approved", "creation_rejected", null]))]
    pub payment_approval: Option<String>,
}

/// What only a payable's record carries: its payment coordinates, the banking
/// gateway's mirror of its payment and the approval's trail (null until the gateway
/// and the gate exist).
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct PayableFields {
    #[serde(flatten)]
    pub coordinates: Box<PaymentCoordinates>,
    pub kobana_payment_uid: Option<String>,
    pub kobana_status: Option<String>,
    pub kobana_status_updated_at: Option<Timestamp>,
    pub approved_at: Option<Timestamp>,
    pub rejected_at: Option<Timestamp>,
    pub rejection_reason: Option<String>,
    #[schemars(extend("enum" = ["manual", "csv_import", "dda", "ai_agent", "fiscal_document", null]))]
    pub payment_source: Option<String>,
}

/// What only a receivable's row carries: the state of its charge through the banking
/// gateway (null until charges exist).
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct ReceivableRowFields {
    #[schemars(extend("enum" = [
        "registering", "registered", "overdue", "paid", "registration_rejected", "registration_failed",
        "generation_failed", "canceled", null
    ]))]
    pub charge_state: Option<String>,
    #[schemars(extend("enum" = ["bank_billet", "pix", null]))]
    pub kobana_charge_kind: Option<String>,
    pub kobana_charge_uid: Option<String>,
    pub kobana_registration_status: Option<String>,
    pub kobana_status: Option<String>,
    pub kobana_status_updated_at: Option<Timestamp>,
}

/// What only a receivable's record carries: how its charge is paid (null until
/// charges exist).
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct ReceivableFields {
    pub kobana_barcode: Option<String>,
    pub kobana_charge_id: Option<i64>,
    pub kobana_charge_url: Option<String>,
    pub kobana_digitable_line: Option<String>,
    pub kobana_pix_qrcode: Option<String>,
}

/// The reconciliation group a bill belongs to, as the real API shows it on the bill.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ReconciliationRef {
    pub id: String,
    /// `manual`, or `fintera` for an imported (read-only) group.
    pub source: String,
    pub transaction_ids: Vec<String>,
    pub billing_ids: Vec<String>,
}

/// A kind's own fields of a row, written in the row (flattened).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum KindRow {
    Payable(PayableRowFields),
    Receivable(ReceivableRowFields),
}

/// A kind's own fields of a record, written in the record (flattened).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum KindRecord {
    Payable(PayableFields),
    Receivable(ReceivableFields),
}

impl BillingRow {
    /// A payable's place at the approval gate (none: an official bill, or a receivable).
    pub fn payment_approval(&self) -> Option<&str> {
        match &self.kind {
            Some(KindRow::Payable(fields)) => fields.payment_approval.as_deref(),
            _ => None,
        }
    }

    /// A payable's stored operation (none for a receivable).
    pub fn operation_kind(&self) -> Option<String> {
        match &self.kind {
            Some(KindRow::Payable(fields)) => fields.operation_kind.clone(),
            _ => None,
        }
    }
}

/// A payable or receivable as `/v1` returns it: its row, with the apportionment and
/// the tax charges themselves.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Billing {
    #[serde(flatten)]
    pub row: BillingRow,
    pub classification_center_allocations: Vec<AllocationView>,
    pub tax_charges: Vec<TaxCharge>,
    /// The reconciliation group that settled it (`id`, `source`, `transaction_ids`,
    /// `billing_ids`), or null. Its schema is an object without its members, so the
    /// tools' output schemas stay small (`finance_reconciliations_get` has them).
    #[schemars(with = "Option<serde_json::Map<String, Value>>")]
    pub reconciliation: Option<ReconciliationRef>,
    /// Its files, on a get's answer only ([`crate::ops::attachments::with_files`] says so in
    /// its schema); other answers and the lists keep their count.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub attachments: Option<Vec<crate::ops::attachments::Attached>>,
    #[serde(flatten)]
    #[schemars(skip)]
    pub kind: Option<KindRecord>,
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

/// A bill's answer — `T`: its row, its record, its creation — as the kind `B` shows it:
/// the same JSON, and a schema with the kind's own fields, statuses and payment methods.
pub struct Of<B, T>(pub T, PhantomData<fn() -> B>);

impl<B, T> Of<B, T> {
    pub fn new(answer: T) -> Of<B, T> {
        Of(answer, PhantomData)
    }
}

impl<B, T: Serialize> Serialize for Of<B, T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// An answer of a bill: which of its kind's own fields it carries.
pub trait Answer: JsonSchema {
    fn parts<B: BillKind>() -> Vec<Value>;
}

impl Answer for BillingRow {
    fn parts<B: BillKind>() -> Vec<Value> {
        vec![schema_of::<B::RowFields>()]
    }
}

impl Answer for Billing {
    fn parts<B: BillKind>() -> Vec<Value> {
        vec![schema_of::<B::RowFields>(), schema_of::<B::Fields>()]
    }
}

impl Answer for BillingCreated {
    fn parts<B: BillKind>() -> Vec<Value> {
        Billing::parts::<B>()
    }
}

impl<B: BillKind, T: Answer> JsonSchema for Of<B, T> {
    fn schema_name() -> Cow<'static, str> {
        format!("{}{}", B::NOUN, T::schema_name()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut schema = T::json_schema(generator).to_value();
        let properties = &mut schema["properties"];
        properties["status"]["enum"] = json!(B::STATUSES);
        let methods: Vec<Value> = B::METHODS.iter().map(|m| json!(m)).chain([Value::Null]).collect();
        properties["payment_method_kind"]["enum"] = Value::Array(methods);
        for part in T::parts::<B>() {
            if let (Some(mine), Some(theirs)) = (schema["properties"].as_object_mut(), part["properties"].as_object()) {
                mine.extend(theirs.clone());
            }
        }
        Schema::try_from(schema).unwrap_or_default()
    }
}

/// A bill's request — `T`: its create, its update, its `PATCH` — as the kind `B` takes
/// it: the same body, and a schema offering the kind's payment methods only (a
/// receivable's never `utility` or `tribute`) and none of the other kind's fields (a
/// receivable's never `operation_kind`).
pub struct For<B, T>(pub T, PhantomData<fn() -> B>);

impl<B, T> For<B, T> {
    pub fn new(request: T) -> For<B, T> {
        For(request, PhantomData)
    }
}

impl<'de, B, T: Deserialize<'de>> Deserialize<'de> for For<B, T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(For::new)
    }
}

impl<B: BillKind, T: JsonSchema> JsonSchema for For<B, T> {
    fn schema_name() -> Cow<'static, str> {
        format!("{}{}", B::NOUN, T::schema_name()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut schema = T::json_schema(generator).to_value();
        if let Some(method) = schema["properties"].get_mut("payment_method_kind") {
            only_methods::<B>(method);
        }
        if let Some(properties) = schema["properties"].as_object_mut() {
            properties.retain(|field, _| !B::NOT_TAKEN.contains(&field.as_str()));
        }
        Schema::try_from(schema).unwrap_or_default()
    }
}

/// Keeps, in every `enum` of a payment method's schema, the kind's methods (and null).
fn only_methods<B: BillKind>(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            if let Some(Value::Array(values)) = object.get_mut("enum") {
                values.retain(|v| v.as_str().is_none_or(|m| B::METHODS.contains(&m)));
            }
            object.values_mut().for_each(only_methods::<B>);
        }
        Value::Array(items) => items.iter_mut().for_each(only_methods::<B>),
        _ => {}
    }
}
