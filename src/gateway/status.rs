//! Where a payment or a charge stands at the gateway: its statuses as enums, spelled
//! on the wire as the banking API spells them (`canceled`), named here as the product
//! does (`Cancelled`). A status the gateway adds later is kept as it spells it.

use serde::{Deserialize, Serialize};

/// Where a payment stands at the gateway (`v2_payment_*.status`, `v2_transfer.status`):
/// `pending`, `scheduled`, `confirmed` (paid), `rejected`, `canceled`. A status the
/// gateway may add later is kept as it spells it ([`PaymentStatus::Other`]) and ranks
/// as an end.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PaymentStatus {
    Pending,
    Scheduled,
    Confirmed,
    Rejected,
    #[serde(rename = "canceled")]
    Cancelled,
    #[serde(untagged)]
    Other(String),
}

impl PaymentStatus {
    const KNOWN: [PaymentStatus; 5] = [
        PaymentStatus::Pending,
        PaymentStatus::Scheduled,
        PaymentStatus::Confirmed,
        PaymentStatus::Rejected,
        PaymentStatus::Cancelled,
    ];

    /// As the gateway spells it (what is kept and shown as `kobana_status`).
    pub fn as_str(&self) -> &str {
        match self {
            PaymentStatus::Pending => "pending",
            PaymentStatus::Scheduled => "scheduled",
            PaymentStatus::Confirmed => "confirmed",
            PaymentStatus::Rejected => "rejected",
            PaymentStatus::Cancelled => "canceled",
            PaymentStatus::Other(other) => other,
        }
    }

    /// Whether the payment never changes again: confirmed, rejected or cancelled.
    pub fn is_terminal(&self) -> bool {
        matches!(self, PaymentStatus::Confirmed | PaymentStatus::Rejected | PaymentStatus::Cancelled)
    }
}

impl From<&str> for PaymentStatus {
    fn from(text: &str) -> PaymentStatus {
        PaymentStatus::KNOWN
            .into_iter()
            .find(|s| s.as_str() == text)
            .unwrap_or_else(|| PaymentStatus::Other(text.to_string()))
    }
}

impl std::fmt::Display for PaymentStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a charge stands commercially (`v2_pix.status`, `v1_bank_billet_object.status`):
/// `generating`, `opened`, `overdue`, `paid`, `canceled`, `generation_failed`, and the
/// boleto's others (`draft`, `blocked`, …), kept as the gateway spells them
/// ([`ChargeStatus::Other`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChargeStatus {
    Generating,
    Opened,
    Overdue,
    Paid,
    #[serde(rename = "canceled")]
    Cancelled,
    GenerationFailed,
    #[serde(untagged)]
    Other(String),
}

impl ChargeStatus {
    const KNOWN: [ChargeStatus; 6] = [
        ChargeStatus::Generating,
        ChargeStatus::Opened,
        ChargeStatus::Overdue,
        ChargeStatus::Paid,
        ChargeStatus::Cancelled,
        ChargeStatus::GenerationFailed,
    ];

    /// As the gateway spells it (what is kept and shown as `kobana_status`).
    pub fn as_str(&self) -> &str {
        match self {
            ChargeStatus::Generating => "generating",
            ChargeStatus::Opened => "opened",
            ChargeStatus::Overdue => "overdue",
            ChargeStatus::Paid => "paid",
            ChargeStatus::Cancelled => "canceled",
            ChargeStatus::GenerationFailed => "generation_failed",
            ChargeStatus::Other(other) => other,
        }
    }

    /// Whether the charge never changes again: paid, cancelled or never made.
    pub fn is_ended(&self) -> bool {
        matches!(self, ChargeStatus::Paid | ChargeStatus::Cancelled | ChargeStatus::GenerationFailed)
    }
}

impl std::fmt::Display for ChargeStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&str> for ChargeStatus {
    fn from(text: &str) -> ChargeStatus {
        ChargeStatus::KNOWN
            .into_iter()
            .find(|s| s.as_str() == text)
            .unwrap_or_else(|| ChargeStatus::Other(text.to_string()))
    }
}

/// Where a charge's registration at the bank stands (`registration_status`): `pending`,
/// `requested`, `skipped`, `confirmed`, `rejected`, `failed`; another is kept as the
/// gateway spells it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RegistrationStatus {
    Pending,
    Requested,
    Skipped,
    Confirmed,
    Rejected,
    Failed,
    #[serde(untagged)]
    Other(String),
}

impl RegistrationStatus {
    const KNOWN: [RegistrationStatus; 6] = [
        RegistrationStatus::Pending,
        RegistrationStatus::Requested,
        RegistrationStatus::Skipped,
        RegistrationStatus::Confirmed,
        RegistrationStatus::Rejected,
        RegistrationStatus::Failed,
    ];

    /// As the gateway spells it (what is kept and shown as `kobana_registration_status`).
    pub fn as_str(&self) -> &str {
        match self {
            RegistrationStatus::Pending => "pending",
            RegistrationStatus::Requested => "requested",
            RegistrationStatus::Skipped => "skipped",
            RegistrationStatus::Confirmed => "confirmed",
            RegistrationStatus::Rejected => "rejected",
            RegistrationStatus::Failed => "failed",
            RegistrationStatus::Other(other) => other,
        }
    }
}

impl From<&str> for RegistrationStatus {
    fn from(text: &str) -> RegistrationStatus {
        RegistrationStatus::KNOWN
            .into_iter()
            .find(|s| s.as_str() == text)
            .unwrap_or_else(|| RegistrationStatus::Other(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_spelled_as_the_gateway_does_and_unknown_ones_are_kept() {
        for status in PaymentStatus::KNOWN {
            assert_eq!(serde_json::to_value(&status).unwrap(), status.as_str());
            assert_eq!(PaymentStatus::from(status.as_str()), status);
        }
        for status in ChargeStatus::KNOWN {
            assert_eq!(serde_json::to_value(&status).unwrap(), status.as_str());
            assert_eq!(ChargeStatus::from(status.as_str()), status);
        }
        for status in RegistrationStatus::KNOWN {
            assert_eq!(serde_json::to_value(&status).unwrap(), status.as_str());
            assert_eq!(RegistrationStatus::from(status.as_str()), status);
        }
        assert_eq!(PaymentStatus::Cancelled.as_str(), "canceled");
        let read: PaymentStatus = serde_json::from_str(r#""in_review""#).unwrap();
        assert_eq!(read, PaymentStatus::Other("in_review".into()));
        assert_eq!(serde_json::to_value(&read).unwrap(), "in_review");
        let read: ChargeStatus = serde_json::from_str(r#""chargeback""#).unwrap();
        assert_eq!((read.as_str(), read.is_ended()), ("chargeback", false));
        assert_eq!(serde_json::from_str::<ChargeStatus>(r#""canceled""#).unwrap(), ChargeStatus::Cancelled);
    }
}
