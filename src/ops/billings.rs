//! Payables and receivables (`/v1/payables`, `/v1/receivables`, scopes `finance.payables`
//! and `finance.receivables`): bills to pay and to receive, one `billings` table told
//! apart by `kind`, with their status machine and settlement.
//!
//! Rules:
//! * Status machine: pending → paid (payables) / received (receivables) by `settle`,
//!   pending → cancelled by `cancel`, paid/received/cancelled → pending by `reopen`.
//!   Cancelling a settled record needs a reopen first (422 `invalid_transition`);
//!   `update` never changes the status, and a settled or cancelled record cannot be
//!   changed (422 `invalid_transition`) until it is reopened.
//! * Settling needs a payment date and an account of the record's company; it creates
//!   exactly one auto-created ledger transaction (debit for payables, credit for
//!   receivables, amount = the ticket amount, which defaults to the nominal amount
//!   `amount + interest − discount`) in the same database transaction. Reopening removes
//!   it; deleting the record removes it too.
//! * Series: `type=installment` with `total_installments` 2–120 creates N rows sharing
//!   one `group_id`; amounts are split to the cent with the remainder on the last, due
//!   (and competence) dates are one month apart (same day, clamped to the month's end).
//!   `type=recurring` with `recurrence_period` creates [`RECURRENCE_HORIZON`] occurrences
//!   of the same amount, one period apart. The whole series is written in one
//!   transaction; the create answers the first record plus `series` (all ids in order).
//!   Tax charges attach to the first record only. The apportionment is spread to every
//!   record of the series: percentages are kept as they are; an item with a percentage
//!   gets its amount (when it had one) recomputed from the percentage on each parcel;
//!   amount-only items are split across the parcels in proportion to the parcel amounts,
//!   to the cent, the last parcel taking what is left so that each item's amounts add up
//!   to the amount sent.
//! * A person is mandatory (`person_id` or `person_name`, else 422 `person_required`);
//!   `*_name` finds or creates the record with the bill's polarity (payables: supplier,
//!   debit category, cost center; receivables: customer, credit category, revenue
//!   center) and is mutually exclusive with `*_id`.
//! * The company's `locked_until` closes a period: creating, changing, settling,
//!   cancelling, reopening or deleting a record whose due date (or payment date) is on
//!   or before it is 422 `period_closed`.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::apportionment::{self, Allocation, AllocationInput, AllocationView};
use super::common::{audit_write, body_id, check_date, invalid, page, path_id, unprocessable};
use super::ledger::{self, NewTransaction};
use super::list::{bind_all, Field, Kind, ListRequest, ListSpec};
use super::refs::{self, CompanyRef, Polarity};
use super::validate::nullable;
use super::{OpContext, Page};
use crate::domain::money::Cents;
use crate::domain::roles::{Access, Resource};
use crate::error::{ApiError, ErrorCode};
use crate::storage::db_error;
use crate::storage::identity::Membership;

/// How many occurrences a recurring create writes (the horizon of the series).
pub const RECURRENCE_HORIZON: usize = 12;
/// The most installments a series may have.
pub const MAX_INSTALLMENTS: i64 = 120;
/// `GET …/ids`: default and maximum page size.
pub const IDS_DEFAULT_LIMIT: i64 = 1000;
pub const IDS_MAX_LIMIT: i64 = 10_000;

/// Payable or receivable: the two faces of the `billings` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BillingKind {
    Payable,
    Receivable,
}

impl BillingKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BillingKind::Payable => "payable",
            BillingKind::Receivable => "receivable",
        }
    }

    pub fn resource(self) -> Resource {
        match self {
            BillingKind::Payable => Resource::Payables,
            BillingKind::Receivable => Resource::Receivables,
        }
    }

    pub fn polarity(self) -> Polarity {
        match self {
            BillingKind::Payable => Polarity::Debit,
            BillingKind::Receivable => Polarity::Credit,
        }
    }

    /// The status of a settled record.
    pub fn settled(self) -> &'static str {
        match self {
            BillingKind::Payable => "paid",
            BillingKind::Receivable => "received",
        }
    }

    /// `/v1/payables` or `/v1/receivables`.
    pub fn collection(self) -> &'static str {
        match self {
            BillingKind::Payable => "/v1/payables",
            BillingKind::Receivable => "/v1/receivables",
        }
    }

    fn plural(self) -> &'static str {
        match self {
            BillingKind::Payable => "payables",
            BillingKind::Receivable => "receivables",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            BillingKind::Payable => "Payable",
            BillingKind::Receivable => "Receivable",
        }
    }

    pub fn list_spec(self) -> &'static ListSpec {
        match self {
            BillingKind::Payable => &PAYABLES_LIST,
            BillingKind::Receivable => &RECEIVABLES_LIST,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BillingType {
    Normal,
    Recurring,
    Installment,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecurrencePeriod {
    Weekly,
    Biweekly,
    Monthly,
    Quarterly,
    Yearly,
}

/// How the bill is paid; `utility` and `tribute`: payables only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PaymentMethodKind {
    BankBillet,
    Ted,
    Pix,
    CreditCard,
    DebitCard,
    Cash,
    Check,
    DirectDebit,
    Other,
    #[serde(rename = "none")]
    NoMethod,
    Utility,
    Tribute,
}

fn enum_text<T: Serialize>(value: T) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(s)) => s,
        _ => String::new(),
    }
}

/// One withholding-tax charge of a bill in a request.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaxChargeInput {
    pub tax_id: String,
    #[schemars(length(min = 3, max = 16))]
    pub amount: String,
    /// Default true: deducted from the bill (false: informational).
    #[serde(default)]
    pub withholding: Option<bool>,
}

/// A tax charge as read back.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TaxCharge {
    pub tax_id: String,
    pub tax_name: String,
    pub amount: String,
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
    #[schemars(length(min = 3, max = 16))]
    pub amount: String,
    #[schemars(length(min = 10, max = 10))]
    pub due_date: String,
    /// Defaults to the due date.
    #[serde(default)]
    #[schemars(length(min = 10, max = 10))]
    pub competence_date: Option<String>,
    /// normal (default), recurring (needs recurrence_period; 12 occurrences) or
    /// installment (needs total_installments 2–120).
    #[serde(default, rename = "type")]
    pub billing_type: Option<BillingType>,
    #[serde(default)]
    pub recurrence_period: Option<RecurrencePeriod>,
    #[serde(default)]
    pub total_installments: Option<i64>,
    /// The supplier (payable) or customer (receivable): person_id or person_name is required.
    #[serde(default)]
    pub person_id: Option<String>,
    /// Finds or creates the person by name (exclusive with person_id).
    #[serde(default)]
    #[schemars(length(min = 1, max = 255))]
    pub person_name: Option<String>,
    #[serde(default)]
    pub category_id: Option<String>,
    #[serde(default)]
    #[schemars(length(min = 1, max = 255))]
    pub category_name: Option<String>,
    /// Shorthand for a single 100 % apportionment (exclusive with classification_centers).
    #[serde(default)]
    pub classification_center_id: Option<String>,
    #[serde(default)]
    #[schemars(length(min = 1, max = 255))]
    pub classification_center_name: Option<String>,
    /// Apportionment: percentage and/or amount per center, adding up to the amount.
    #[serde(default)]
    pub classification_centers: Option<Vec<AllocationInput>>,
    /// Settlement account (same company).
    #[serde(default)]
    pub financial_account_id: Option<String>,
    /// Forecast account (same company).
    #[serde(default)]
    pub expected_account_id: Option<String>,
    #[serde(default)]
    pub payment_method_kind: Option<PaymentMethodKind>,
    #[serde(default)]
    #[schemars(length(max = 100))]
    pub document: Option<String>,
    #[serde(default)]
    #[schemars(length(max = 100))]
    pub document_number: Option<String>,
    #[serde(default)]
    #[schemars(length(min = 10, max = 10))]
    pub document_date: Option<String>,
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
#[serde(deny_unknown_fields)]
pub struct BillingUpdate {
    #[serde(default)]
    #[schemars(with = "String", length(min = 1, max = 500))]
    pub description: Option<String>,
    #[serde(default)]
    #[schemars(with = "String", length(min = 3, max = 16))]
    pub amount: Option<String>,
    #[serde(default)]
    #[schemars(with = "String", length(min = 10, max = 10))]
    pub due_date: Option<String>,
    #[serde(default)]
    #[schemars(with = "String", length(min = 10, max = 10))]
    pub competence_date: Option<String>,
    #[serde(default)]
    #[schemars(with = "String")]
    pub person_id: Option<String>,
    #[serde(default)]
    #[schemars(with = "String", length(min = 1, max = 255))]
    pub person_name: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    #[schemars(with = "Option<String>")]
    pub category_id: Option<Option<String>>,
    #[serde(default)]
    #[schemars(with = "String", length(min = 1, max = 255))]
    pub category_name: Option<String>,
    #[serde(default)]
    #[schemars(with = "String")]
    pub classification_center_id: Option<String>,
    #[serde(default)]
    #[schemars(with = "String", length(min = 1, max = 255))]
    pub classification_center_name: Option<String>,
    /// Replace-all: the full set; `[]` clears it.
    #[serde(default)]
    #[schemars(with = "Vec<AllocationInput>")]
    pub classification_centers: Option<Vec<AllocationInput>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schemars(with = "Option<String>")]
    pub financial_account_id: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schemars(with = "Option<String>")]
    pub expected_account_id: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schemars(with = "Option<PaymentMethodKind>")]
    pub payment_method_kind: Option<Option<PaymentMethodKind>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schemars(with = "Option<String>", length(max = 100))]
    pub document: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schemars(with = "Option<String>", length(max = 100))]
    pub document_number: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schemars(with = "Option<String>", length(min = 10, max = 10))]
    pub document_date: Option<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    #[schemars(with = "Option<String>", length(max = 2000))]
    pub notes: Option<Option<String>>,
    /// Replace-all: the full set; `[]` clears it.
    #[serde(default)]
    #[schemars(with = "Vec<TaxChargeInput>")]
    pub tax_charges: Option<Vec<TaxChargeInput>>,
}

/// `POST /v1/{payables|receivables}/{id}/settle`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SettleRequest {
    /// The day the money moved.
    #[schemars(length(min = 10, max = 10))]
    pub payment_date: String,
    /// The account the money moved in (same company); required unless the record has one.
    #[serde(default)]
    pub financial_account_id: Option<String>,
    #[serde(default)]
    #[schemars(length(min = 3, max = 16))]
    pub interest_amount: Option<String>,
    #[serde(default)]
    #[schemars(length(min = 3, max = 16))]
    pub discount_amount: Option<String>,
    /// What actually moved; defaults to the nominal amount (amount + interest − discount).
    #[serde(default)]
    #[schemars(length(min = 3, max = 16))]
    pub ticket_amount: Option<String>,
}

/// The body of cancel and reopen: empty, or `{}`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EmptyRequest {}

/// A payable or receivable as `/v1` returns it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Billing {
    pub id: String,
    pub company_id: String,
    pub description: String,
    pub amount: String,
    pub interest_amount: Option<String>,
    pub discount_amount: Option<String>,
    pub ticket_amount: Option<String>,
    /// amount + interest − discount (computed).
    pub nominal_amount: String,
    pub due_date: String,
    pub payment_date: Option<String>,
    pub competence_date: String,
    #[serde(rename = "type")]
    pub billing_type: String,
    /// pending | paid | cancelled (payables); pending | received | cancelled (receivables).
    pub status: String,
    pub recurrence_period: Option<String>,
    pub person_id: Option<String>,
    pub person_name: Option<String>,
    pub category_id: Option<String>,
    pub category_name: Option<String>,
    /// The first center of the apportionment.
    pub classification_center_id: Option<String>,
    pub classification_center_name: Option<String>,
    pub classification_center_allocations: Vec<AllocationView>,
    pub financial_account_id: Option<String>,
    pub expected_account_id: Option<String>,
    pub payment_method_kind: Option<String>,
    pub document: Option<String>,
    pub document_number: Option<String>,
    pub document_date: Option<String>,
    pub installment_number: Option<i64>,
    pub total_installments: Option<i64>,
    /// The total of the series (sum of the amounts sharing this group_id).
    pub parcels_amount: Option<String>,
    pub group_id: Option<String>,
    /// The settlement transaction.
    pub transaction_id: Option<String>,
    pub notes: Option<String>,
    pub tax_charges: Vec<TaxCharge>,
    pub created_at: String,
    pub updated_at: String,
    pub created_via: String,
    pub updated_via: String,
    pub created_by: Option<String>,
    pub updated_by: Option<String>,
    #[serde(skip)]
    amount_cents: i64,
}

/// The answer of a create: the first record, plus the ids of the whole series in order
/// (one id for a normal record).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BillingCreated {
    #[serde(flatten)]
    pub billing: Billing,
    pub series: Vec<String>,
}

/// `{data: [uuid…], meta: {next_cursor}}` of the id sweep.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct IdPage {
    pub data: Vec<String>,
    pub meta: IdPageMeta,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct IdPageMeta {
    pub next_cursor: Option<String>,
}

pub fn aggregates_schema(settled: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            "count": {"type": "integer"},
            "total": {"type": "string"},
            "pending": {"type": "string"},
            settled: {"type": "string"},
            "overdue_count": {"type": "integer"},
        },
        "required": ["count", "total", "pending", settled, "overdue_count"],
    })
}

macro_rules! billing_list {
    ($name:ident, $scope:literal, $statuses:expr) => {
        pub static $name: ListSpec = ListSpec {
            table: "billings",
            filters: &[
                Field { name: "id", column: "billings.id", kind: Kind::Uuid },
                Field { name: "company_id", column: "billings.company_id", kind: Kind::Uuid },
                Field { name: "status", column: "billings.status", kind: Kind::Enum($statuses) },
                Field { name: "type", column: "billings.billing_type", kind: Kind::Enum(&["normal", "recurring", "installment"]) },
                Field { name: "person_id", column: "billings.person_id", kind: Kind::Uuid },
                Field { name: "category_id", column: "billings.category_id", kind: Kind::Uuid },
                Field {
                    name: "classification_center_id",
                    column: "(SELECT a.classification_center_id FROM allocations a WHERE a.owner_type = 'billing' \
                             AND a.workspace_id = billings.workspace_id AND a.owner_id = billings.id AND a.position = 0)",
                    kind: Kind::Uuid,
                },
                Field { name: "financial_account_id", column: "billings.financial_account_id", kind: Kind::Uuid },
                Field { name: "expected_account_id", column: "billings.expected_account_id", kind: Kind::Uuid },
                Field { name: "payment_method_kind", column: "billings.payment_method_kind", kind: Kind::Text },
                Field { name: "document_number", column: "billings.document_number", kind: Kind::Text },
                Field { name: "group_id", column: "billings.group_id", kind: Kind::Uuid },
                Field { name: "due_date", column: "billings.due_date", kind: Kind::Date },
                Field { name: "payment_date", column: "billings.payment_date", kind: Kind::Date },
                Field { name: "competence_date", column: "billings.competence_date", kind: Kind::Date },
                Field { name: "updated_at", column: "billings.updated_at", kind: Kind::Timestamp },
                Field { name: "amount", column: "billings.amount_cents", kind: Kind::Money },
            ],
            // payment_date is nullable: the keyset cursor needs NOT NULL sort columns.
            sorts: &[
                ("due_date", "billings.due_date"),
                ("competence_date", "billings.competence_date"),
                ("created_at", "billings.created_at"),
                ("updated_at", "billings.updated_at"),
                ("amount", "billings.amount_cents"),
            ],
            default_sort: ("due_date", false),
            scope: Some($scope),
        };
    };
}

billing_list!(PAYABLES_LIST, "billings.kind = 'payable'", &["pending", "paid", "cancelled"]);
billing_list!(RECEIVABLES_LIST, "billings.kind = 'receivable'", &["pending", "received", "cancelled"]);

/// The id sweep: ordered by id only, no filters.
static IDS_SWEEP: [ListSpec; 2] = [
    ListSpec { table: "billings", filters: &[], sorts: &[("id", "billings.id")], default_sort: ("id", false), scope: Some("billings.kind = 'payable'") },
    ListSpec { table: "billings", filters: &[], sorts: &[("id", "billings.id")], default_sort: ("id", false), scope: Some("billings.kind = 'receivable'") },
];

const SELECT: &str = "SELECT billings.id, billings.company_id, billings.description, billings.amount_cents, billings.interest_cents, \
    billings.discount_cents, billings.ticket_cents, billings.due_date, billings.payment_date, billings.competence_date, \
    billings.billing_type, billings.status, billings.recurrence_period, billings.person_id, people.name AS person_name, \
    billings.category_id, categories.name AS category_name, billings.financial_account_id, billings.expected_account_id, \
    billings.payment_method_kind, billings.document, billings.document_number, billings.document_date, \
    billings.installment_number, billings.total_installments, \
    CAST((SELECT SUM(s.amount_cents) FROM billings s WHERE s.workspace_id = billings.workspace_id AND s.group_id = billings.group_id) AS BIGINT) AS parcels_cents, \
    billings.group_id, billings.transaction_id, billings.notes, billings.created_at, billings.updated_at, \
    billings.created_via, billings.updated_via, billings.created_by, billings.updated_by \
    FROM billings LEFT JOIN people ON people.id = billings.person_id LEFT JOIN categories ON categories.id = billings.category_id";

fn from_row(row: &AnyRow) -> Result<Billing, sqlx::Error> {
    let amount: i64 = row.try_get("amount_cents")?;
    let interest: Option<i64> = row.try_get("interest_cents")?;
    let discount: Option<i64> = row.try_get("discount_cents")?;
    let ticket: Option<i64> = row.try_get("ticket_cents")?;
    let parcels: Option<i64> = row.try_get("parcels_cents")?;
    let money = |c: Option<i64>| c.map(|c| Cents(c).to_string());
    Ok(Billing {
        id: row.try_get("id")?,
        company_id: row.try_get("company_id")?,
        description: row.try_get("description")?,
        amount: Cents(amount).to_string(),
        interest_amount: money(interest),
        discount_amount: money(discount),
        ticket_amount: money(ticket),
        nominal_amount: Cents(amount + interest.unwrap_or(0) - discount.unwrap_or(0)).to_string(),
        due_date: row.try_get("due_date")?,
        payment_date: row.try_get("payment_date")?,
        competence_date: row.try_get("competence_date")?,
        billing_type: row.try_get("billing_type")?,
        status: row.try_get("status")?,
        recurrence_period: row.try_get("recurrence_period")?,
        person_id: row.try_get("person_id")?,
        person_name: row.try_get("person_name")?,
        category_id: row.try_get("category_id")?,
        category_name: row.try_get("category_name")?,
        classification_center_id: None,
        classification_center_name: None,
        classification_center_allocations: Vec::new(),
        financial_account_id: row.try_get("financial_account_id")?,
        expected_account_id: row.try_get("expected_account_id")?,
        payment_method_kind: row.try_get("payment_method_kind")?,
        document: row.try_get("document")?,
        document_number: row.try_get("document_number")?,
        document_date: row.try_get("document_date")?,
        installment_number: row.try_get("installment_number")?,
        total_installments: row.try_get("total_installments")?,
        parcels_amount: money(parcels),
        group_id: row.try_get("group_id")?,
        transaction_id: row.try_get("transaction_id")?,
        notes: row.try_get("notes")?,
        tax_charges: Vec::new(),
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        created_via: row.try_get("created_via")?,
        updated_via: row.try_get("updated_via")?,
        created_by: row.try_get("created_by")?,
        updated_by: row.try_get("updated_by")?,
        amount_cents: amount,
    })
}

/// Fills the apportionment and the tax charges of a page of records: one query each.
async fn attach(conn: &mut AnyConnection, ws: &Membership, rows: &mut [Billing]) -> Result<(), ApiError> {
    if rows.is_empty() {
        return Ok(());
    }
    let ids: Vec<String> = rows.iter().map(|b| b.id.clone()).collect();
    let mut allocations = apportionment::read(conn, ws, "billing", &ids).await?;
    let mut taxes = tax_charges_of(conn, ws, &ids).await?;
    for row in rows.iter_mut() {
        row.classification_center_allocations = allocations.remove(&row.id).unwrap_or_default();
        if let Some(first) = row.classification_center_allocations.first() {
            row.classification_center_id = Some(first.classification_center_id.clone());
            row.classification_center_name = Some(first.classification_center_name.clone());
        }
        row.tax_charges = taxes.remove(&row.id).unwrap_or_default();
    }
    Ok(())
}

async fn tax_charges_of(conn: &mut AnyConnection, ws: &Membership, ids: &[String]) -> Result<HashMap<String, Vec<TaxCharge>>, ApiError> {
    let placeholders: Vec<String> = (0..ids.len()).map(|i| format!("${}", i + 2)).collect();
    let sql = format!(
        "SELECT c.billing_id, c.tax_id, t.name, c.amount_cents, c.withholding
           FROM billing_tax_charges c JOIN taxes t ON t.id = c.tax_id
          WHERE c.workspace_id = $1 AND c.billing_id IN ({})
          ORDER BY c.billing_id, t.name, c.tax_id",
        placeholders.join(", ")
    );
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(&ws.workspace_id);
    for id in ids {
        query = query.bind(id);
    }
    let mut out: HashMap<String, Vec<TaxCharge>> = HashMap::new();
    for row in query.fetch_all(&mut *conn).await.map_err(db_error)? {
        let billing: String = row.try_get(0).map_err(db_error)?;
        let cents: i64 = row.try_get(3).map_err(db_error)?;
        let withholding: i64 = row.try_get(4).map_err(db_error)?;
        out.entry(billing).or_default().push(TaxCharge {
            tax_id: row.try_get(1).map_err(db_error)?,
            tax_name: row.try_get(2).map_err(db_error)?,
            amount: Cents(cents).to_string(),
            withholding: withholding != 0,
        });
    }
    Ok(out)
}

async fn find(conn: &mut AnyConnection, ws: &Membership, kind: BillingKind, id: &str) -> Result<Billing, ApiError> {
    let id = path_id(id, kind.noun())?;
    let row = sqlx::query(sqlx::AssertSqlSafe(format!("{SELECT} WHERE billings.workspace_id = $1 AND billings.kind = $2 AND billings.id = $3")))
        .bind(&ws.workspace_id)
        .bind(kind.as_str())
        .bind(&id)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?;
    let mut billing = match row {
        Some(row) => from_row(&row).map_err(db_error)?,
        None => return Err(ApiError::not_found(kind.noun())),
    };
    attach(conn, ws, std::slice::from_mut(&mut billing)).await?;
    Ok(billing)
}

// ---------------------------------------------------------------------------------
// Dates

fn ymd(date: &str) -> Option<(i64, i64, i64)> {
    if !crate::domain::dates::is_valid_date(date) {
        return None;
    }
    Some((date[0..4].parse().ok()?, date[5..7].parse().ok()?, date[8..10].parse().ok()?))
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 (proleptic Gregorian).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { yoe + era * 400 + 1 } else { yoe + era * 400 }, m, d)
}

fn format_date(y: i64, m: i64, d: i64) -> String {
    format!("{y:04}-{m:02}-{d:02}")
}

/// `date` plus `months` months, on the same day, clamped to the month's end.
pub fn add_months(date: &str, months: i64) -> Option<String> {
    let (y, m, d) = ymd(date)?;
    let index = y * 12 + (m - 1) + months;
    let (y, m) = (index.div_euclid(12), index.rem_euclid(12) + 1);
    let out = format_date(y, m, d.min(days_in_month(y, m)));
    crate::domain::dates::is_valid_date(&out).then_some(out)
}

/// `date` plus `days` days.
pub fn add_days(date: &str, days: i64) -> Option<String> {
    let (y, m, d) = ymd(date)?;
    let (y, m, d) = civil_from_days(days_from_civil(y, m, d) + days);
    let out = format_date(y, m, d);
    crate::domain::dates::is_valid_date(&out).then_some(out)
}

/// The `index`-th date (0 = `date` itself) of a series.
fn series_date(date: &str, index: i64, step: Step) -> Option<String> {
    match step {
        Step::Days(n) => add_days(date, n * index),
        Step::Months(n) => add_months(date, n * index),
    }
}

#[derive(Debug, Clone, Copy)]
enum Step {
    Days(i64),
    Months(i64),
}

fn today() -> String {
    crate::clock::now_rfc3339()[..10].to_string()
}

// ---------------------------------------------------------------------------------
// Money and apportionment of series

fn money(field: &str, text: &str, positive: bool) -> Result<Cents, ApiError> {
    let parsed = if positive { Cents::parse_positive(text) } else { Cents::parse(text, false) };
    parsed.map_err(|e| invalid(field, "invalid_amount", &format!("{field} {e}")))
}

/// Splits `total` into `n` parcels: floor to the cent, the remainder on the last.
pub fn split_amount(total: Cents, n: i64) -> Vec<Cents> {
    let base = total.0 / n;
    let mut parcels = vec![Cents(base); n as usize];
    if let Some(last) = parcels.last_mut() {
        *last = Cents(total.0 - base * (n - 1));
    }
    parcels
}

fn percentage_of(amount: Cents, bp: i64) -> Cents {
    Cents(((amount.0 as i128 * bp as i128 + 5_000) / 10_000) as i64)
}

/// The apportionment of each parcel of a series of `total` split into `parcels` (see the
/// module documentation for the rule). With one parcel different from the total this
/// also rescales an apportionment to a new amount (the settlement's ticket amount).
fn spread(items: &[Allocation], total: Cents, parcels: &[Cents], last_takes_rest: bool) -> Vec<Vec<Allocation>> {
    let amount_only: Vec<usize> = items.iter().enumerate().filter(|(_, a)| a.percentage_bp.is_none() && a.amount.is_some()).map(|(i, _)| i).collect();
    let sum_amount_only: i128 = amount_only.iter().filter_map(|i| items[*i].amount).map(|a| a.0 as i128).sum();
    let mut given = vec![0i64; items.len()];
    let mut out = Vec::with_capacity(parcels.len());
    for (k, parcel) in parcels.iter().enumerate() {
        let last_parcel = last_takes_rest && k + 1 == parcels.len();
        let mut shares: HashMap<usize, i64> = HashMap::new();
        if last_parcel {
            for i in &amount_only {
                let a = items[*i].amount.map(|a| a.0).unwrap_or(0);
                shares.insert(*i, (a - given[*i]).max(0));
            }
        } else if total.0 > 0 {
            let target = ((sum_amount_only * parcel.0 as i128 + total.0 as i128 / 2) / total.0 as i128) as i64;
            let mut assigned = 0i64;
            for (pos, i) in amount_only.iter().enumerate() {
                let a = items[*i].amount.map(|a| a.0).unwrap_or(0) as i128;
                let share = if pos + 1 == amount_only.len() {
                    (target - assigned).max(0)
                } else {
                    (a * parcel.0 as i128 / total.0 as i128) as i64
                };
                assigned += share;
                shares.insert(*i, share);
            }
        }
        let mut row = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let (amount, effective) = match (item.percentage_bp, shares.get(&i)) {
                (Some(bp), _) => {
                    let p = percentage_of(*parcel, bp);
                    (item.amount.map(|_| p), p)
                }
                (None, Some(share)) => {
                    given[i] += *share;
                    (Some(Cents(*share)), Cents(*share))
                }
                (None, None) => (item.amount, item.amount.unwrap_or_default()),
            };
            row.push(Allocation { center_id: item.center_id.clone(), percentage_bp: item.percentage_bp, amount, effective });
        }
        out.push(row);
    }
    out
}

/// The stored apportionment of a record, as items.
async fn stored_allocations(conn: &mut AnyConnection, ws: &Membership, owner_id: &str) -> Result<Vec<Allocation>, ApiError> {
    let rows = sqlx::query(
        "SELECT classification_center_id, percentage_bp, amount_cents FROM allocations
          WHERE workspace_id = $1 AND owner_type = 'billing' AND owner_id = $2 ORDER BY position",
    )
    .bind(&ws.workspace_id)
    .bind(owner_id)
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)?;
    rows.iter()
        .map(|r| {
            let bp: Option<i64> = r.try_get(1)?;
            let cents: Option<i64> = r.try_get(2)?;
            Ok(Allocation { center_id: r.try_get(0)?, percentage_bp: bp, amount: cents.map(Cents), effective: Cents(cents.unwrap_or(0)) })
        })
        .collect::<Result<Vec<_>, sqlx::Error>>()
        .map_err(db_error)
}

fn as_inputs(items: &[Allocation]) -> Vec<AllocationInput> {
    items
        .iter()
        .map(|a| AllocationInput {
            classification_center_id: a.center_id.clone(),
            percentage: a.percentage_bp.map(apportionment::format_percentage),
            amount: a.amount.map(|c| c.to_string()),
        })
        .collect()
}

/// The apportionment of a request: `classification_centers[]`, or the single-center
/// shorthand (100 %), checked against `amount` and the polarity. `None`: not sent.
#[allow(clippy::too_many_arguments)]
async fn requested_allocations(
    ctx: &OpContext<'_>,
    conn: &mut AnyConnection,
    ws: &Membership,
    company: &CompanyRef,
    polarity: Polarity,
    amount: Cents,
    items: Option<&[AllocationInput]>,
    center_id: Option<&str>,
    center_name: Option<&str>,
) -> Result<Option<Vec<Allocation>>, ApiError> {
    if items.is_some() && (center_id.is_some() || center_name.is_some()) {
        return Err(invalid(
            "classification_center_id",
            "mutually_exclusive",
            "classification_center_id/classification_center_name and classification_centers are mutually exclusive",
        ));
    }
    if let Some(items) = items {
        let resolved = apportionment::resolve(amount, items)?;
        apportionment::check(conn, ws, company, polarity, &resolved).await?;
        return Ok(Some(resolved));
    }
    match refs::center_by_id_or_name(ctx, conn, ws, company, polarity, center_id, center_name).await? {
        Some(center) => Ok(Some(vec![Allocation { center_id: center, percentage_bp: Some(10_000), amount: None, effective: amount }])),
        None => Ok(None),
    }
}

/// Checked tax charges: `(tax_id, cents, withholding)`.
async fn requested_taxes(conn: &mut AnyConnection, ws: &Membership, items: &[TaxChargeInput]) -> Result<Vec<(String, Cents, bool)>, ApiError> {
    let mut out: Vec<(String, Cents, bool)> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let field = format!("tax_charges[{i}]");
        let tax_id = body_id(&format!("{field}.tax_id"), &item.tax_id)?;
        if out.iter().any(|(t, _, _)| *t == tax_id) {
            return Err(invalid(&field, "duplicate_tax", "A tax appears twice in tax_charges"));
        }
        let amount = money(&format!("{field}.amount"), &item.amount, false)?;
        let found = sqlx::query("SELECT id FROM taxes WHERE workspace_id = $1 AND id = $2")
            .bind(&ws.workspace_id)
            .bind(&tax_id)
            .fetch_optional(&mut *conn)
            .await
            .map_err(db_error)?;
        if found.is_none() {
            return Err(unprocessable(&format!("{field}.tax_id"), "invalid_reference", "Tax not found in this workspace"));
        }
        out.push((tax_id, amount, item.withholding.unwrap_or(true)));
    }
    Ok(out)
}

async fn replace_taxes(conn: &mut AnyConnection, ws: &Membership, billing_id: &str, taxes: &[(String, Cents, bool)]) -> Result<(), ApiError> {
    sqlx::query("DELETE FROM billing_tax_charges WHERE workspace_id = $1 AND billing_id = $2")
        .bind(&ws.workspace_id)
        .bind(billing_id)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    for (tax_id, amount, withholding) in taxes {
        sqlx::query("INSERT INTO billing_tax_charges (billing_id, workspace_id, tax_id, amount_cents, withholding) VALUES ($1, $2, $3, $4, $5)")
            .bind(billing_id)
            .bind(&ws.workspace_id)
            .bind(tax_id)
            .bind(amount.0)
            .bind(*withholding as i64)
            .execute(&mut *conn)
            .await
            .map_err(db_error)?;
    }
    Ok(())
}

fn check_method(kind: BillingKind, method: Option<PaymentMethodKind>) -> Result<(), ApiError> {
    if kind == BillingKind::Receivable && matches!(method, Some(PaymentMethodKind::Utility | PaymentMethodKind::Tribute)) {
        return Err(invalid("payment_method_kind", "invalid_value", "utility and tribute are payment methods of payables only"));
    }
    Ok(())
}

fn blank(field: &str) -> ApiError {
    invalid(field, "too_short", &format!("{field} must not be blank"))
}

fn invalid_transition(message: &str) -> ApiError {
    ApiError::new(ErrorCode::UnprocessableEntity, message).with_details(json!({"field": "status", "reason": "invalid_transition"}))
}

/// The account a settlement moves money in: the one the request names, else the
/// record's own (422 `account_required` when neither names one).
pub fn settlement_account<'a>(requested: Option<&'a str>, on_record: Option<&'a str>) -> Result<&'a str, ApiError> {
    requested
        .or(on_record)
        .ok_or_else(|| unprocessable("financial_account_id", "account_required", "Settling needs financial_account_id (the account the money moved in)"))
}

/// A status change a payable or receivable can go through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    Settle,
    Cancel,
    Reopen,
}

/// Whether a record in `status` can go through `transition` (422 `invalid_transition`
/// otherwise). The operations check it on the row they lock; a confirmation checks it
/// first, so the user is never asked to confirm what cannot happen.
pub fn check_transition(status: &str, transition: Transition) -> Result<(), ApiError> {
    match (transition, status) {
        (Transition::Settle | Transition::Cancel, "pending") => Ok(()),
        (Transition::Settle, _) => Err(invalid_transition("Only a pending record can be settled")),
        (Transition::Cancel, "cancelled") => Err(invalid_transition("The record is already cancelled")),
        (Transition::Cancel, _) => Err(invalid_transition("A settled record must be reopened before it can be cancelled")),
        (Transition::Reopen, "pending") => Err(invalid_transition("The record is already pending")),
        (Transition::Reopen, _) => Ok(()),
    }
}

// ---------------------------------------------------------------------------------
// Operations

pub async fn list(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, kind: BillingKind, request: &ListRequest) -> Result<Page<Billing>, ApiError> {
    ctx.authorize(ws, kind.resource(), Access::Read)?;
    let keys = ctx.state.keys.current().await?;
    let compiled = kind.list_spec().compile(request, &ws.workspace_id, &keys.state)?;
    let sql = format!("{SELECT} {}", compiled.sql);
    let rows = bind_all(sqlx::query(sqlx::AssertSqlSafe(sql)), &compiled.binds).fetch_all(&mut *conn).await.map_err(db_error)?;
    let data = rows.iter().map(from_row).collect::<Result<Vec<_>, _>>().map_err(db_error)?;
    let mut page = page(
        data,
        &compiled,
        &keys.state,
        |b, field| match field {
            "competence_date" => json!(b.competence_date),
            "created_at" => json!(b.created_at),
            "updated_at" => json!(b.updated_at),
            "amount" => json!(b.amount_cents),
            _ => json!(b.due_date),
        },
        |b| b.id.clone(),
    );
    attach(conn, ws, &mut page.data).await?;
    Ok(page)
}

pub async fn get(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, kind: BillingKind, id: &str) -> Result<Billing, ApiError> {
    ctx.authorize(ws, kind.resource(), Access::Read)?;
    find(conn, ws, kind, id).await
}

/// One row of a series to insert.
struct NewRow {
    id: String,
    amount: Cents,
    due_date: String,
    competence_date: String,
    installment_number: Option<i64>,
    total_installments: Option<i64>,
    allocations: Vec<Allocation>,
}

pub async fn create(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, kind: BillingKind, input: BillingCreate) -> Result<BillingCreated, ApiError> {
    ctx.authorize(ws, kind.resource(), Access::Write)?;
    let polarity = kind.polarity();
    let description = input.description.trim().to_string();
    if description.is_empty() {
        return Err(blank("description"));
    }
    let amount = money("amount", &input.amount, true)?;
    check_date("due_date", Some(&input.due_date))?;
    check_date("competence_date", input.competence_date.as_deref())?;
    check_date("document_date", input.document_date.as_deref())?;
    check_method(kind, input.payment_method_kind)?;
    let billing_type = input.billing_type.unwrap_or(BillingType::Normal);
    // The shape of the series.
    let (count, step): (i64, Step) = match billing_type {
        BillingType::Normal => {
            if input.total_installments.is_some() {
                return Err(invalid("total_installments", "not_allowed", "total_installments needs type installment"));
            }
            if input.recurrence_period.is_some() {
                return Err(invalid("recurrence_period", "not_allowed", "recurrence_period needs type recurring"));
            }
            (1, Step::Months(1))
        }
        BillingType::Installment => {
            if input.recurrence_period.is_some() {
                return Err(invalid("recurrence_period", "not_allowed", "recurrence_period needs type recurring"));
            }
            match input.total_installments {
                None => return Err(invalid("total_installments", "required", "type installment needs total_installments (2 to 120)")),
                Some(n) if !(2..=MAX_INSTALLMENTS).contains(&n) => {
                    return Err(invalid("total_installments", "out_of_range", "total_installments must be between 2 and 120"))
                }
                Some(n) => {
                    if amount.0 < n {
                        return Err(unprocessable("amount", "amount_too_small", "The amount cannot be split into that many installments"));
                    }
                    (n, Step::Months(1))
                }
            }
        }
        BillingType::Recurring => {
            if input.total_installments.is_some() {
                return Err(invalid("total_installments", "not_allowed", "total_installments needs type installment"));
            }
            let step = match input.recurrence_period {
                None => return Err(invalid("recurrence_period", "required", "type recurring needs recurrence_period")),
                Some(RecurrencePeriod::Weekly) => Step::Days(7),
                Some(RecurrencePeriod::Biweekly) => Step::Days(14),
                Some(RecurrencePeriod::Monthly) => Step::Months(1),
                Some(RecurrencePeriod::Quarterly) => Step::Months(3),
                Some(RecurrencePeriod::Yearly) => Step::Months(12),
            };
            (RECURRENCE_HORIZON as i64, step)
        }
    };
    let company = refs::company(conn, ws, "company_id", &input.company_id).await?;
    refs::check_period(&company, "due_date", &input.due_date)?;
    let person = refs::person(ctx, conn, ws, &company, polarity, input.person_id.as_deref(), input.person_name.as_deref()).await?;
    let Some(person) = person else {
        return Err(unprocessable("person_id", "person_required", "A person is required: person_id or person_name"));
    };
    let category = refs::category(ctx, conn, ws, &company, polarity, input.category_id.as_deref(), input.category_name.as_deref()).await?;
    let financial_account = match &input.financial_account_id {
        Some(id) => Some(refs::account(conn, ws, &company, "financial_account_id", id).await?),
        None => None,
    };
    let expected_account = match &input.expected_account_id {
        Some(id) => Some(refs::account(conn, ws, &company, "expected_account_id", id).await?),
        None => None,
    };
    let allocations = requested_allocations(
        ctx,
        conn,
        ws,
        &company,
        polarity,
        amount,
        input.classification_centers.as_deref(),
        input.classification_center_id.as_deref(),
        input.classification_center_name.as_deref(),
    )
    .await?
    .unwrap_or_default();
    let taxes = match &input.tax_charges {
        Some(items) => requested_taxes(conn, ws, items).await?,
        None => Vec::new(),
    };

    // The rows of the series.
    let competence = input.competence_date.clone().unwrap_or_else(|| input.due_date.clone());
    let amounts = match billing_type {
        BillingType::Installment => split_amount(amount, count),
        _ => vec![amount; count as usize],
    };
    let spread_allocations = match billing_type {
        BillingType::Installment => spread(&allocations, amount, &amounts, true),
        _ => vec![allocations.clone(); count as usize],
    };
    let out_of_range = || unprocessable("due_date", "out_of_range", "The series runs past the supported dates");
    let mut rows = Vec::with_capacity(count as usize);
    for (index, (parcel, allocations)) in amounts.iter().zip(spread_allocations).enumerate() {
        let number = index as i64;
        let (installment_number, total_installments) = match billing_type {
            BillingType::Normal => (None, None),
            _ => (Some(number + 1), Some(count)),
        };
        rows.push(NewRow {
            id: uuid::Uuid::new_v4().to_string(),
            amount: *parcel,
            due_date: series_date(&input.due_date, number, step).ok_or_else(out_of_range)?,
            competence_date: series_date(&competence, number, step).ok_or_else(out_of_range)?,
            installment_number,
            total_installments,
            allocations,
        });
    }
    let group_id = (count > 1).then(|| uuid::Uuid::new_v4().to_string());
    let now = crate::clock::now_rfc3339();
    for (index, row) in rows.iter().enumerate() {
        sqlx::query(
            "INSERT INTO billings (id, workspace_id, company_id, kind, description, amount_cents, due_date, competence_date,
                                   billing_type, status, person_id, category_id, expected_account_id, financial_account_id,
                                   payment_method_kind, document, document_number, document_date, notes, group_id,
                                   installment_number, total_installments, recurrence_period,
                                   created_at, updated_at, created_via, updated_via, created_by, updated_by)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10, $11, $12, $13, $14, $15, $16, $17, $18, $19,
                     $20, $21, $22, $23, $23, $24, $24, $25, $25)",
        )
        .bind(&row.id)
        .bind(&ws.workspace_id)
        .bind(&company.id)
        .bind(kind.as_str())
        .bind(&description)
        .bind(row.amount.0)
        .bind(&row.due_date)
        .bind(&row.competence_date)
        .bind(enum_text(billing_type))
        .bind(&person)
        .bind(category.as_deref())
        .bind(expected_account.as_deref())
        .bind(financial_account.as_deref())
        .bind(input.payment_method_kind.map(enum_text))
        .bind(input.document.as_deref())
        .bind(input.document_number.as_deref())
        .bind(input.document_date.as_deref())
        .bind(input.notes.as_deref())
        .bind(group_id.as_deref())
        .bind(row.installment_number)
        .bind(row.total_installments)
        .bind(input.recurrence_period.map(enum_text))
        .bind(&now)
        .bind(ctx.channel.as_str())
        .bind(&ctx.identity.user_id)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
        apportionment::replace(conn, ws, "billing", &row.id, &row.allocations).await?;
        if index == 0 {
            replace_taxes(conn, ws, &row.id, &taxes).await?;
        }
        audit_write(ctx, conn, ws, &format!("{}.create", kind.plural()), kind.as_str(), &row.id).await?;
    }
    let series: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
    let billing = find(conn, ws, kind, &series[0]).await?;
    Ok(BillingCreated { billing, series })
}

/// A record that may still change: pending, and not in a closed period.
fn check_pending(current: &Billing) -> Result<(), ApiError> {
    if current.status != "pending" {
        return Err(invalid_transition("A settled or cancelled record cannot be changed; reopen it first"));
    }
    Ok(())
}

pub async fn update(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, kind: BillingKind, id: &str, input: BillingUpdate) -> Result<Billing, ApiError> {
    ctx.authorize(ws, kind.resource(), Access::Write)?;
    let polarity = kind.polarity();
    let current = find(conn, ws, kind, id).await?;
    let company = refs::company(conn, ws, "company_id", &current.company_id).await?;
    refs::check_period(&company, "due_date", &current.due_date)?;
    check_pending(&current)?;
    let description = match input.description.as_deref().map(str::trim) {
        Some("") => return Err(blank("description")),
        Some(d) => d.to_string(),
        None => current.description.clone(),
    };
    let amount = match &input.amount {
        Some(a) => money("amount", a, true)?,
        None => Cents(current.amount_cents),
    };
    check_date("due_date", input.due_date.as_deref())?;
    check_date("competence_date", input.competence_date.as_deref())?;
    if let Some(d) = &input.document_date {
        check_date("document_date", d.as_deref())?;
    }
    if let Some(method) = input.payment_method_kind {
        check_method(kind, method)?;
    }
    let due_date = input.due_date.clone().unwrap_or_else(|| current.due_date.clone());
    refs::check_period(&company, "due_date", &due_date)?;
    let competence_date = input.competence_date.clone().unwrap_or_else(|| current.competence_date.clone());
    let person = if input.person_id.is_some() || input.person_name.is_some() {
        refs::person(ctx, conn, ws, &company, polarity, input.person_id.as_deref(), input.person_name.as_deref()).await?
    } else {
        current.person_id.clone()
    };
    let category = match (&input.category_id, &input.category_name) {
        (None, None) => current.category_id.clone(),
        (Some(None), None) => None,
        (id, name) => {
            refs::category(ctx, conn, ws, &company, polarity, id.as_ref().and_then(|i| i.as_deref()), name.as_deref()).await?
        }
    };
    let financial_account = match &input.financial_account_id {
        None => current.financial_account_id.clone(),
        Some(None) => None,
        Some(Some(id)) => Some(refs::account(conn, ws, &company, "financial_account_id", id).await?),
    };
    let expected_account = match &input.expected_account_id {
        None => current.expected_account_id.clone(),
        Some(None) => None,
        Some(Some(id)) => Some(refs::account(conn, ws, &company, "expected_account_id", id).await?),
    };
    let allocations = requested_allocations(
        ctx,
        conn,
        ws,
        &company,
        polarity,
        amount,
        input.classification_centers.as_deref(),
        input.classification_center_id.as_deref(),
        input.classification_center_name.as_deref(),
    )
    .await?;
    if allocations.is_none() && amount.0 != current.amount_cents {
        // The kept apportionment must still add up to the new amount.
        let kept = stored_allocations(conn, ws, &current.id).await?;
        apportionment::resolve(amount, &as_inputs(&kept))?;
    }
    let taxes = match &input.tax_charges {
        Some(items) => Some(requested_taxes(conn, ws, items).await?),
        None => None,
    };
    let method = match input.payment_method_kind {
        None => current.payment_method_kind.clone(),
        Some(m) => m.map(enum_text),
    };
    let pick = |new: &Option<Option<String>>, old: &Option<String>| match new {
        None => old.clone(),
        Some(v) => v.clone(),
    };
    let done = sqlx::query(
        "UPDATE billings SET description = $1, amount_cents = $2, due_date = $3, competence_date = $4, person_id = $5,
                category_id = $6, financial_account_id = $7, expected_account_id = $8, payment_method_kind = $9,
                document = $10, document_number = $11, document_date = $12, notes = $13,
                updated_at = $14, updated_via = $15, updated_by = $16
          WHERE workspace_id = $17 AND kind = $18 AND id = $19 AND status = 'pending'",
    )
    .bind(&description)
    .bind(amount.0)
    .bind(&due_date)
    .bind(&competence_date)
    .bind(person.as_deref())
    .bind(category.as_deref())
    .bind(financial_account.as_deref())
    .bind(expected_account.as_deref())
    .bind(method.as_deref())
    .bind(pick(&input.document, &current.document).as_deref())
    .bind(pick(&input.document_number, &current.document_number).as_deref())
    .bind(pick(&input.document_date, &current.document_date).as_deref())
    .bind(pick(&input.notes, &current.notes).as_deref())
    .bind(crate::clock::now_rfc3339())
    .bind(ctx.channel.as_str())
    .bind(&ctx.identity.user_id)
    .bind(&ws.workspace_id)
    .bind(kind.as_str())
    .bind(&current.id)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    if done.rows_affected() != 1 {
        return Err(invalid_transition("A settled or cancelled record cannot be changed; reopen it first"));
    }
    if let Some(allocations) = &allocations {
        apportionment::replace(conn, ws, "billing", &current.id, allocations).await?;
    }
    if let Some(taxes) = &taxes {
        replace_taxes(conn, ws, &current.id, taxes).await?;
    }
    audit_write(ctx, conn, ws, &format!("{}.update", kind.plural()), kind.as_str(), &current.id).await?;
    find(conn, ws, kind, &current.id).await
}

/// Deletes one record (never the rest of its series) with its settlement transaction,
/// apportionment, tax charges and attachment links.
pub async fn delete(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, kind: BillingKind, id: &str) -> Result<(), ApiError> {
    ctx.authorize(ws, kind.resource(), Access::Delete)?;
    let current = find(conn, ws, kind, id).await?;
    let company = refs::company(conn, ws, "company_id", &current.company_id).await?;
    refs::check_period(&company, "due_date", &current.due_date)?;
    if let Some(paid) = &current.payment_date {
        refs::check_period(&company, "payment_date", paid)?;
    }
    if ledger::remove_settlement(conn, ws, &current.id).await? > 0 {
        if let Some(tx) = &current.transaction_id {
            audit_write(ctx, conn, ws, "transactions.delete", "transaction", tx).await?;
        }
    }
    sqlx::query("UPDATE financial_transactions SET billing_id = NULL WHERE workspace_id = $1 AND billing_id = $2")
        .bind(&ws.workspace_id)
        .bind(&current.id)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    apportionment::replace(conn, ws, "billing", &current.id, &[]).await?;
    replace_taxes(conn, ws, &current.id, &[]).await?;
    sqlx::query("DELETE FROM attachment_links WHERE workspace_id = $1 AND target_type = $2 AND target_id = $3")
        .bind(&ws.workspace_id)
        .bind(kind.as_str())
        .bind(&current.id)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    sqlx::query("DELETE FROM billings WHERE workspace_id = $1 AND kind = $2 AND id = $3")
        .bind(&ws.workspace_id)
        .bind(kind.as_str())
        .bind(&current.id)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    audit_write(ctx, conn, ws, &format!("{}.delete", kind.plural()), kind.as_str(), &current.id).await
}

pub async fn settle(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, kind: BillingKind, id: &str, input: SettleRequest) -> Result<Billing, ApiError> {
    ctx.authorize(ws, kind.resource(), Access::Write)?;
    let current = find(conn, ws, kind, id).await?;
    check_date("payment_date", Some(&input.payment_date))?;
    let interest = input.interest_amount.as_deref().map(|a| money("interest_amount", a, false)).transpose()?;
    let discount = input.discount_amount.as_deref().map(|a| money("discount_amount", a, false)).transpose()?;
    let ticket = input.ticket_amount.as_deref().map(|a| money("ticket_amount", a, true)).transpose()?;
    check_transition(&current.status, Transition::Settle)?;
    let company = refs::company(conn, ws, "company_id", &current.company_id).await?;
    refs::check_period(&company, "due_date", &current.due_date)?;
    refs::check_period(&company, "payment_date", &input.payment_date)?;
    let account_id = settlement_account(input.financial_account_id.as_deref(), current.financial_account_id.as_deref())?;
    let account = refs::account(conn, ws, &company, "financial_account_id", account_id).await?;
    let nominal = Cents(current.amount_cents + interest.map(|c| c.0).unwrap_or(0) - discount.map(|c| c.0).unwrap_or(0));
    let ticket = match ticket {
        Some(t) => t,
        None if nominal.0 > 0 => nominal,
        None => return Err(unprocessable("discount_amount", "invalid_amount", "The discount leaves nothing to settle")),
    };
    // Conditional on the status: a concurrent settle finds nothing to change.
    let done = sqlx::query(
        "UPDATE billings SET status = $1, payment_date = $2, financial_account_id = $3, interest_cents = $4, discount_cents = $5,
                ticket_cents = $6, updated_at = $7, updated_via = $8, updated_by = $9
          WHERE workspace_id = $10 AND kind = $11 AND id = $12 AND status = 'pending'",
    )
    .bind(kind.settled())
    .bind(&input.payment_date)
    .bind(&account)
    .bind(interest.map(|c| c.0))
    .bind(discount.map(|c| c.0))
    .bind(ticket.0)
    .bind(crate::clock::now_rfc3339())
    .bind(ctx.channel.as_str())
    .bind(&ctx.identity.user_id)
    .bind(&ws.workspace_id)
    .bind(kind.as_str())
    .bind(&current.id)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    if done.rows_affected() != 1 {
        return Err(invalid_transition("Only a pending record can be settled"));
    }
    let transaction = NewTransaction {
        company_id: company.id.clone(),
        account_id: account,
        description: current.description.clone(),
        amount: ticket,
        occurred_at: input.payment_date.clone(),
        competence_date: Some(current.competence_date.clone()),
        polarity: Some(kind.polarity()),
        category_id: current.category_id.clone(),
        person_id: current.person_id.clone(),
        payment_method_kind: current.payment_method_kind.clone(),
        document: current.document.clone(),
        document_date: current.document_date.clone(),
        notes: current.notes.clone(),
        classified: current.category_id.is_some(),
        is_pending: false,
        auto_created: true,
        billing_id: Some(current.id.clone()),
        ..NewTransaction::default()
    };
    let transaction_id = ledger::insert(ctx, conn, ws, &transaction).await?;
    let allocations = stored_allocations(conn, ws, &current.id).await?;
    if !allocations.is_empty() {
        let copied = spread(&allocations, Cents(current.amount_cents), &[ticket], false).pop().unwrap_or_default();
        apportionment::replace(conn, ws, "transaction", &transaction_id, &copied).await?;
    }
    sqlx::query("UPDATE billings SET transaction_id = $1 WHERE workspace_id = $2 AND id = $3")
        .bind(&transaction_id)
        .bind(&ws.workspace_id)
        .bind(&current.id)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    audit_write(ctx, conn, ws, &format!("{}.settle", kind.plural()), kind.as_str(), &current.id).await?;
    audit_write(ctx, conn, ws, "transactions.create", "transaction", &transaction_id).await?;
    find(conn, ws, kind, &current.id).await
}

pub async fn cancel(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, kind: BillingKind, id: &str) -> Result<Billing, ApiError> {
    ctx.authorize(ws, kind.resource(), Access::Write)?;
    let current = find(conn, ws, kind, id).await?;
    check_transition(&current.status, Transition::Cancel)?;
    let company = refs::company(conn, ws, "company_id", &current.company_id).await?;
    refs::check_period(&company, "due_date", &current.due_date)?;
    transition(ctx, conn, ws, kind, &current.id, "pending", "cancelled").await?;
    audit_write(ctx, conn, ws, &format!("{}.cancel", kind.plural()), kind.as_str(), &current.id).await?;
    find(conn, ws, kind, &current.id).await
}

pub async fn reopen(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, kind: BillingKind, id: &str) -> Result<Billing, ApiError> {
    ctx.authorize(ws, kind.resource(), Access::Write)?;
    let current = find(conn, ws, kind, id).await?;
    check_transition(&current.status, Transition::Reopen)?;
    let company = refs::company(conn, ws, "company_id", &current.company_id).await?;
    refs::check_period(&company, "due_date", &current.due_date)?;
    if let Some(paid) = &current.payment_date {
        refs::check_period(&company, "payment_date", paid)?;
    }
    transition(ctx, conn, ws, kind, &current.id, &current.status, "pending").await?;
    if current.status == kind.settled() {
        if ledger::remove_settlement(conn, ws, &current.id).await? > 0 {
            if let Some(tx) = &current.transaction_id {
                audit_write(ctx, conn, ws, "transactions.delete", "transaction", tx).await?;
            }
        }
        sqlx::query(
            "UPDATE billings SET payment_date = NULL, interest_cents = NULL, discount_cents = NULL, ticket_cents = NULL,
                    transaction_id = NULL WHERE workspace_id = $1 AND id = $2",
        )
        .bind(&ws.workspace_id)
        .bind(&current.id)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    }
    audit_write(ctx, conn, ws, &format!("{}.reopen", kind.plural()), kind.as_str(), &current.id).await?;
    find(conn, ws, kind, &current.id).await
}

/// Moves a record from `from` to `to`, conditionally: a concurrent change makes it an
/// invalid transition instead of a double one.
async fn transition(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, kind: BillingKind, id: &str, from: &str, to: &str) -> Result<(), ApiError> {
    let done = sqlx::query(
        "UPDATE billings SET status = $1, updated_at = $2, updated_via = $3, updated_by = $4
          WHERE workspace_id = $5 AND kind = $6 AND id = $7 AND status = $8",
    )
    .bind(to)
    .bind(crate::clock::now_rfc3339())
    .bind(ctx.channel.as_str())
    .bind(&ctx.identity.user_id)
    .bind(&ws.workspace_id)
    .bind(kind.as_str())
    .bind(id)
    .bind(from)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    if done.rows_affected() != 1 {
        return Err(invalid_transition("The record changed status meanwhile"));
    }
    Ok(())
}

/// `GET …/aggregates`: `company_id`, and either `month` + `year` or `start_date` +
/// `end_date` (on the due date; none: all time). `count` includes cancelled records;
/// `total` is the amount of the non-cancelled ones, `pending` and `paid`/`received` the
/// amounts per status; `overdue_count` the pending ones due before today (UTC).
pub async fn aggregates(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, kind: BillingKind, query: &[(String, String)]) -> Result<Value, ApiError> {
    ctx.authorize(ws, kind.resource(), Access::Read)?;
    let mut params: HashMap<&str, &str> = HashMap::new();
    for (key, value) in query {
        match key.as_str() {
            "workspace_id" => {}
            "company_id" | "month" | "year" | "start_date" | "end_date" => {
                if params.insert(key.as_str(), value.as_str()).is_some() {
                    return Err(invalid(key, "invalid_value", "A parameter appears twice"));
                }
            }
            _ => return Err(invalid(key, "unknown_filter", "Unknown parameter")),
        }
    }
    let mut clauses = vec!["workspace_id = $1".to_string(), "kind = $2".to_string()];
    let mut binds: Vec<String> = vec![ws.workspace_id.clone(), kind.as_str().to_string()];
    if let Some(company) = params.get("company_id") {
        binds.push(body_id("company_id", company)?);
        clauses.push(format!("company_id = ${}", binds.len()));
    }
    let by_month = params.contains_key("month") || params.contains_key("year");
    let by_range = params.contains_key("start_date") || params.contains_key("end_date");
    let range = match (by_month, by_range) {
        (true, true) => return Err(invalid("month", "mutually_exclusive", "month/year and start_date/end_date are mutually exclusive")),
        (true, false) => {
            let month = params.get("month").and_then(|m| m.parse::<i64>().ok()).filter(|m| (1..=12).contains(m));
            let year = params.get("year").and_then(|y| y.parse::<i64>().ok()).filter(|y| (1900..=2999).contains(y));
            match (month, year) {
                (Some(m), Some(y)) => Some((format_date(y, m, 1), format_date(y, m, days_in_month(y, m)))),
                (None, _) => return Err(invalid("month", "invalid_value", "month (1-12) and year go together")),
                (_, None) => return Err(invalid("year", "invalid_value", "month (1-12) and year go together")),
            }
        }
        (false, true) => {
            let start = params.get("start_date").copied().filter(|d| crate::domain::dates::is_valid_date(d));
            let end = params.get("end_date").copied().filter(|d| crate::domain::dates::is_valid_date(d));
            match (start, end) {
                (Some(s), Some(e)) => Some((s.to_string(), e.to_string())),
                (None, _) => return Err(invalid("start_date", "invalid_value", "start_date and end_date (YYYY-MM-DD) go together")),
                (_, None) => return Err(invalid("end_date", "invalid_value", "start_date and end_date (YYYY-MM-DD) go together")),
            }
        }
        (false, false) => None,
    };
    if let Some((start, end)) = range {
        binds.push(start);
        clauses.push(format!("due_date >= ${}", binds.len()));
        binds.push(end);
        clauses.push(format!("due_date <= ${}", binds.len()));
    }
    binds.push(kind.settled().to_string());
    let settled = binds.len();
    binds.push(today());
    let today = binds.len();
    let sql = format!(
        "SELECT CAST(COUNT(*) AS BIGINT),
                CAST(COALESCE(SUM(CASE WHEN status <> 'cancelled' THEN amount_cents ELSE 0 END), 0) AS BIGINT),
                CAST(COALESCE(SUM(CASE WHEN status = 'pending' THEN amount_cents ELSE 0 END), 0) AS BIGINT),
                CAST(COALESCE(SUM(CASE WHEN status = ${settled} THEN amount_cents ELSE 0 END), 0) AS BIGINT),
                CAST(COALESCE(SUM(CASE WHEN status = 'pending' AND due_date < ${today} THEN 1 ELSE 0 END), 0) AS BIGINT)
           FROM billings WHERE {}",
        clauses.join(" AND ")
    );
    let mut statement = sqlx::query(sqlx::AssertSqlSafe(sql));
    for bind in &binds {
        statement = statement.bind(bind.as_str());
    }
    let row = statement.fetch_one(&mut *conn).await.map_err(db_error)?;
    let number = |i: usize| row.try_get::<i64, _>(i).map_err(db_error);
    let mut out = serde_json::Map::new();
    out.insert("count".into(), json!(number(0)?));
    out.insert("total".into(), json!(Cents(number(1)?)));
    out.insert("pending".into(), json!(Cents(number(2)?)));
    out.insert(kind.settled().into(), json!(Cents(number(3)?)));
    out.insert("overdue_count".into(), json!(number(4)?));
    Ok(Value::Object(out))
}

/// `GET …/ids`: every id of the kind, ascending; `limit` (default 1000, max 10000) and
/// `cursor` only.
pub async fn ids(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, kind: BillingKind, query: &[(String, String)]) -> Result<IdPage, ApiError> {
    ctx.authorize(ws, kind.resource(), Access::Read)?;
    let mut request = ListRequest::default();
    let mut limit = IDS_DEFAULT_LIMIT;
    for (key, value) in query {
        match key.as_str() {
            "workspace_id" => {}
            "cursor" => request.cursor = Some(value.clone()),
            "limit" => {
                limit = value
                    .parse::<i64>()
                    .ok()
                    .filter(|l| (1..=IDS_MAX_LIMIT).contains(l))
                    .ok_or_else(|| invalid("limit", "out_of_range", "limit must be between 1 and 10000"))?;
            }
            "sort" => return Err(invalid("sort", "unknown_sort", "The id sweep takes no sort")),
            _ => return Err(invalid(key, "unknown_filter", "The id sweep takes no filters")),
        }
    }
    let spec = match kind {
        BillingKind::Payable => &IDS_SWEEP[0],
        BillingKind::Receivable => &IDS_SWEEP[1],
    };
    let keys = ctx.state.keys.current().await?;
    let mut compiled = spec.compile(&request, &ws.workspace_id, &keys.state)?;
    // The shared compiler caps pages at the list maximum; the sweep has its own.
    let head = compiled.sql.rsplit_once(" LIMIT ").map(|(h, _)| h.to_string()).ok_or_else(ApiError::internal)?;
    compiled.sql = format!("{head} LIMIT {}", limit + 1);
    compiled.limit = limit;
    let sql = format!("SELECT billings.id FROM billings {}", compiled.sql);
    let rows = bind_all(sqlx::query(sqlx::AssertSqlSafe(sql)), &compiled.binds).fetch_all(&mut *conn).await.map_err(db_error)?;
    let ids = rows.iter().map(|r| r.try_get::<String, _>(0)).collect::<Result<Vec<_>, _>>().map_err(db_error)?;
    let page = page(ids, &compiled, &keys.state, |id, _| json!(id), |id| id.clone());
    Ok(IdPage { data: page.data, meta: IdPageMeta { next_cursor: page.meta.next_cursor } })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installments_split_to_the_cent_with_the_remainder_on_the_last() {
        assert_eq!(split_amount(Cents(10_000), 3), vec![Cents(3333), Cents(3333), Cents(3334)]);
        assert_eq!(split_amount(Cents(5), 2), vec![Cents(2), Cents(3)]);
    }

    #[test]
    fn months_are_added_on_the_same_day_clamped_to_the_end() {
        assert_eq!(add_months("2026-01-31", 1).as_deref(), Some("2026-02-28"));
        assert_eq!(add_months("2024-01-31", 1).as_deref(), Some("2024-02-29"));
        assert_eq!(add_months("2026-01-31", 2).as_deref(), Some("2026-03-31"));
        assert_eq!(add_months("2026-11-15", 3).as_deref(), Some("2027-02-15"));
        assert_eq!(add_days("2026-12-25", 14).as_deref(), Some("2027-01-08"));
        assert_eq!(add_days("2024-02-28", 1).as_deref(), Some("2024-02-29"));
        assert_eq!(add_months("2999-12-01", 1), None);
    }

    #[test]
    fn amount_only_items_are_split_across_parcels_and_add_up() {
        let items = vec![
            Allocation { center_id: "a".into(), percentage_bp: None, amount: Some(Cents(7001)), effective: Cents(7001) },
            Allocation { center_id: "b".into(), percentage_bp: None, amount: Some(Cents(2999)), effective: Cents(2999) },
        ];
        let parcels = split_amount(Cents(10_000), 3);
        let rows = spread(&items, Cents(10_000), &parcels, true);
        for (row, parcel) in rows.iter().zip(&parcels) {
            assert_eq!(row.iter().map(|a| a.effective.0).sum::<i64>(), parcel.0);
        }
        for (i, item) in items.iter().enumerate() {
            assert_eq!(rows.iter().map(|row| row[i].amount.unwrap().0).sum::<i64>(), item.amount.unwrap().0);
        }
        let pct = vec![Allocation { center_id: "a".into(), percentage_bp: Some(10_000), amount: None, effective: Cents(10_000) }];
        assert_eq!(spread(&pct, Cents(10_000), &[Cents(12_000)], false)[0][0].effective, Cents(12_000));
    }
}
