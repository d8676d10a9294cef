//! How money moved or will move (`payment_method_kind`): one enum for bills and ledger
//! transactions. `utility` and `tribute` are methods of payables only; a receivable
//! refuses them and a transaction's schema does not offer them ([`LedgerMethod`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PaymentMethod {
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

/// Every method's name, in the enum's order: what a payable takes.
pub const PAYABLE_METHODS: &[&str] = &[
    "bank_billet",
    "ted",
    "pix",
    "credit_card",
    "debit_card",
    "cash",
    "check",
    "direct_debit",
    "other",
    "none",
    "utility",
    "tribute",
];

/// What a receivable (and a ledger transaction) takes: all but `utility` and `tribute`.
pub const RECEIVABLE_METHODS: &[&str] = PAYABLE_METHODS.split_at(10).0;

impl PaymentMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            PaymentMethod::BankBillet => "bank_billet",
            PaymentMethod::Ted => "ted",
            PaymentMethod::Pix => "pix",
            PaymentMethod::CreditCard => "credit_card",
            PaymentMethod::DebitCard => "debit_card",
            PaymentMethod::Cash => "cash",
            PaymentMethod::Check => "check",
            PaymentMethod::DirectDebit => "direct_debit",
            PaymentMethod::Other => "other",
            PaymentMethod::NoMethod => "none",
            PaymentMethod::Utility => "utility",
            PaymentMethod::Tribute => "tribute",
        }
    }

    /// `utility` and `tribute`: bills of public services and taxes, paid only.
    pub fn payables_only(self) -> bool {
        matches!(self, PaymentMethod::Utility | PaymentMethod::Tribute)
    }
}

/// The payment method of a ledger transaction: any but the payables-only ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LedgerMethod(pub PaymentMethod);

/// The methods a transaction accepts, in the order of [`PaymentMethod`].
const LEDGER_METHODS: [&str; 10] =
    ["bank_billet", "ted", "pix", "credit_card", "debit_card", "cash", "check", "direct_debit", "other", "none"];

impl<'de> Deserialize<'de> for LedgerMethod {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<LedgerMethod, D::Error> {
        match PaymentMethod::deserialize(deserializer)? {
            method if method.payables_only() => Err(serde::de::Error::custom("a payment method of payables only")),
            method => Ok(LedgerMethod(method)),
        }
    }
}

string_schema!(LedgerMethod, { "type": "string", "enum": LEDGER_METHODS });

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transaction_offers_every_method_but_the_payables_only_ones() {
        let all: Vec<PaymentMethod> =
            LEDGER_METHODS.iter().map(|m| serde_json::from_value(serde_json::json!(m)).unwrap()).collect();
        assert!(all.iter().all(|m| !m.payables_only() && LEDGER_METHODS.contains(&m.as_str())));
        assert!(serde_json::from_value::<LedgerMethod>(serde_json::json!("utility")).is_err());
        assert_eq!(
            serde_json::from_value::<LedgerMethod>(serde_json::json!("none")).unwrap(),
            LedgerMethod(PaymentMethod::NoMethod)
        );
        assert_eq!(PaymentMethod::Tribute.as_str(), "tribute");
    }
}
