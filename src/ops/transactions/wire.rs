//! The request and response types of `/v1/financial-transactions` and `/v1/transfers`:
//! they generate the JSON Schemas (OpenAPI and the MCP tools) and, through the domain
//! types of their fields ([`Amount`], [`Date`], [`LedgerMethod`]), refuse bad input.

use crate::ops::machinery::stamps::Stamps;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::domain::dates::Date;
use crate::domain::money::{Amount, Cents};
use crate::domain::names::Name;
use crate::domain::payment::LedgerMethod;
use crate::ops::apportionment::{AllocationInput, AllocationView, CentersInput};
use crate::ops::machinery::refs::Polarity;
use crate::ops::machinery::validate::nullable;

/// Direction of a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TransactionType {
    Debit,
    Credit,
}

impl TransactionType {
    pub fn polarity(self) -> Polarity {
        match self {
            TransactionType::Debit => Polarity::Debit,
            TransactionType::Credit => Polarity::Credit,
        }
    }

    /// Its wire and stored name, `debit` or `credit`.
    pub fn as_str(self) -> &'static str {
        self.polarity().transaction_type()
    }

    fn parse(s: &str) -> Option<TransactionType> {
        [TransactionType::Debit, TransactionType::Credit].into_iter().find(|t| t.as_str() == s)
    }
}

// Stored as its name where a column holds one (an automatic rule's criterion).
crate::storage::row::decode_text!(TransactionType, TransactionType::parse);

/// `POST /v1/financial-transactions`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TransactionCreate {
    pub company_id: String,
    /// An account of the same company.
    pub financial_account_id: String,
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(min = 1, max = 500))]
    pub description: String,
    /// Positive; the direction is `transaction_type`.
    pub amount: Amount,
    /// When it hit the account, YYYY-MM-DD.
    pub occurred_at: Date,
    #[serde(rename = "type")]
    pub transaction_type: TransactionType,
    /// Raw bank statement text.
    #[serde(default)]
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(max = 500))]
    pub bank_description: Option<String>,
    #[serde(default)]
    #[schemars(length(max = 100))]
    pub document: Option<String>,
    #[serde(default)]
    pub document_date: Option<Date>,
    #[serde(default)]
    pub competence_date: Option<Date>,
    #[serde(default)]
    #[schemars(length(max = 2000))]
    pub notes: Option<String>,
    #[serde(default)]
    pub payment_method_kind: Option<LedgerMethod>,
    #[serde(default)]
    pub classified: Option<bool>,
    /// true = forecast, excluded from balances and aggregates (default false).
    #[serde(default)]
    pub is_pending: Option<bool>,
    #[serde(default)]
    pub category_id: Option<String>,
    /// Find or create a root category of this name with the transaction's type.
    #[serde(default)]
    pub category_name: Option<Name>,
    #[serde(default)]
    pub person_id: Option<String>,
    /// Find or create a person of this name (supplier for debit, customer for credit).
    #[serde(default)]
    pub person_name: Option<Name>,
    #[serde(flatten)]
    pub centers: CentersInput,
}

/// `PATCH /v1/financial-transactions/{id}`: only the fields sent change; `null` clears
/// an optional field. Company, account, `auto_created` and `transfer_id` cannot change.
/// `classification_centers` replaces the whole apportionment (`[]` clears it).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TransactionUpdate {
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(min = 1, max = 500))]
    pub description: Option<String>,
    pub amount: Option<Amount>,
    pub occurred_at: Option<Date>,
    #[serde(rename = "type")]
    pub transaction_type: Option<TransactionType>,
    #[serde(deserialize_with = "nullable")]
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(max = 500))]
    pub bank_description: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    #[schemars(length(max = 100))]
    pub document: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    pub document_date: Option<Option<Date>>,
    #[serde(deserialize_with = "nullable")]
    pub competence_date: Option<Option<Date>>,
    #[serde(deserialize_with = "nullable")]
    #[schemars(length(max = 2000))]
    pub notes: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    pub payment_method_kind: Option<Option<LedgerMethod>>,
    pub classified: Option<bool>,
    pub is_pending: Option<bool>,
    /// `null` clears the category.
    #[serde(deserialize_with = "nullable")]
    pub category_id: Option<Option<String>>,
    pub category_name: Option<Name>,
    /// `null` clears the person.
    #[serde(deserialize_with = "nullable")]
    pub person_id: Option<Option<String>>,
    pub person_name: Option<Name>,
    /// A single center for 100 %; `null` clears the apportionment.
    #[serde(deserialize_with = "nullable")]
    pub classification_center_id: Option<Option<String>>,
    pub classification_center_name: Option<Name>,
    pub classification_centers: Option<Vec<AllocationInput>>,
}

/// A transaction as `/v1` returns it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Transaction {
    pub id: String,
    pub company_id: String,
    pub financial_account_id: String,
    pub description: String,
    pub bank_description: Option<String>,
    pub document: Option<String>,
    pub document_date: Option<Date>,
    /// Positive, e.g. "1500.00"; the direction is `type`.
    #[schemars(with = "String")]
    pub amount: Cents,
    pub occurred_at: Date,
    pub competence_date: Option<Date>,
    #[serde(rename = "type")]
    #[schemars(with = "TransactionType")]
    pub transaction_type: String,
    pub category_id: Option<String>,
    pub person_id: Option<String>,
    /// The first center of the apportionment.
    pub classification_center_id: Option<String>,
    pub classification_center_allocations: Vec<AllocationView>,
    #[schemars(with = "Option<LedgerMethod>")]
    pub payment_method_kind: Option<String>,
    pub classified: bool,
    #[schemars(extend("x-kobana-extension" = "ledger"))]
    pub is_pending: bool,
    pub notes: Option<String>,
    /// Created by the server (settlement, balance adjustment): cannot be deleted.
    #[schemars(extend("x-kobana-extension" = "ledger"))]
    pub auto_created: bool,
    /// Set on both legs of a transfer.
    #[schemars(extend("x-kobana-extension" = "ledger"))]
    pub transfer_id: Option<String>,
    /// The payable or receivable whose settlement created it.
    #[schemars(extend("x-kobana-extension" = "ledger"))]
    pub billing_id: Option<String>,
    /// Its files, on a get's answer only ([`crate::ops::attachments::with_files`] says so in
    /// its schema); other answers and the list leave them out.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub attachments: Option<Vec<crate::ops::attachments::Attached>>,
    #[serde(flatten)]
    pub stamps: Stamps,
}

/// `GET /v1/financial-transactions/aggregates`: realised (non-pending) rows only.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Aggregates {
    pub count: i64,
    #[schemars(with = "String")]
    pub credit: Cents,
    #[schemars(with = "String")]
    pub debit: Cents,
    /// credit − debit, signed.
    #[schemars(with = "String")]
    pub net: Cents,
}

/// `POST /v1/transfers`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TransferCreate {
    /// Debited account.
    pub from_account_id: String,
    /// Credited account (another one; may belong to another company of the workspace).
    pub to_account_id: String,
    pub amount: Amount,
    pub occurred_at: Date,
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(min = 1, max = 500))]
    pub description: String,
    #[serde(default)]
    pub is_pending: Option<bool>,
    /// The period the transfer belongs to (default: occurred_at).
    #[serde(default)]
    pub competence_date: Option<Date>,
    #[serde(default)]
    #[schemars(length(max = 2000))]
    pub notes: Option<String>,
}

/// A transfer: a debit leg and a credit leg sharing `transfer_id`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Transfer {
    pub transfer_id: String,
    pub from_account_id: String,
    pub to_account_id: String,
    pub from_transaction_id: String,
    pub to_transaction_id: String,
    #[schemars(with = "String")]
    pub amount: Cents,
    pub occurred_at: Date,
    /// The period it belongs to: the one sent, else its date.
    pub competence_date: Date,
    pub description: String,
    pub notes: Option<String>,
    pub is_pending: bool,
}
