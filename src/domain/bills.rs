//! Payables and receivables: the two kinds of bill ([`Payable`], [`Receivable`], told
//! apart by the [`Bill`] trait: stored kind, scope resource, settled status, direction of
//! the money), their status
//! machine ([`BillStatus`], [`Transition`]) and the shape of a series ([`BillType`],
//! [`RecurrencePeriod`]).
//!
//! pending → paid (payables) / received (receivables) by settle, pending → cancelled by
//! cancel, paid/received/cancelled → pending by reopen. Cancelling a settled bill needs
//! a reopen first.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::dates::Step;
use super::payment::PaymentMethod;
use super::roles::Resource;

/// How many occurrences a recurring create writes (the horizon of the series).
pub const RECURRENCE_HORIZON: usize = 12;
/// The installments a series may have.
pub const INSTALLMENTS: std::ops::RangeInclusive<i64> = 2..=120;

/// One kind of bill, as a type: everything that differs between payables and
/// receivables is a constant here.
pub trait Bill: Send + Sync + 'static {
    /// `payable`: the `kind` column, the audit target type and the attachment target.
    const KIND: &'static str;
    /// `payables`: the audit action prefix.
    const PLURAL: &'static str;
    const RESOURCE: Resource;
    /// The status of a settled bill: paid or received.
    const SETTLED: BillStatus;
    /// Money leaves (payables: a debit) or comes in (receivables: a credit).
    const MONEY_IN: bool;

    /// Whether a bill of this kind may be paid by `method`.
    fn accepts(method: PaymentMethod) -> bool {
        !Self::MONEY_IN || !method.payables_only()
    }
}

/// A bill to pay.
#[derive(Debug, Clone, Copy, Default)]
pub struct Payable;

/// A bill to receive.
#[derive(Debug, Clone, Copy, Default)]
pub struct Receivable;

impl Bill for Payable {
    const KIND: &'static str = "payable";
    const PLURAL: &'static str = "payables";
    const RESOURCE: Resource = Resource::Payables;
    const SETTLED: BillStatus = BillStatus::Paid;
    const MONEY_IN: bool = false;
}

impl Bill for Receivable {
    const KIND: &'static str = "receivable";
    const PLURAL: &'static str = "receivables";
    const RESOURCE: Resource = Resource::Receivables;
    const SETTLED: BillStatus = BillStatus::Received;
    const MONEY_IN: bool = true;
}

/// Where a bill stands (a new one is pending).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BillStatus {
    #[default]
    Pending,
    Paid,
    Received,
    Cancelled,
}

/// A status change a bill can go through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    Settle,
    Cancel,
    Reopen,
}

impl BillStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            BillStatus::Pending => "pending",
            BillStatus::Paid => "paid",
            BillStatus::Received => "received",
            BillStatus::Cancelled => "cancelled",
        }
    }

    /// The status stored as text.
    pub fn parse(text: &str) -> Option<BillStatus> {
        [BillStatus::Pending, BillStatus::Paid, BillStatus::Received, BillStatus::Cancelled]
            .into_iter()
            .find(|s| s.as_str() == text)
    }

    /// Paid or received.
    pub fn is_settled(self) -> bool {
        matches!(self, BillStatus::Paid | BillStatus::Received)
    }

    /// Only a pending bill may be changed (settled and cancelled ones are reopened first).
    pub fn is_open(self) -> bool {
        self == BillStatus::Pending
    }

    /// Whether a bill in this status can go through `transition`; the refusal says why.
    pub fn allows(self, transition: Transition) -> Result<(), &'static str> {
        match (transition, self) {
            (Transition::Settle | Transition::Cancel, BillStatus::Pending) => Ok(()),
            (Transition::Settle, _) => Err("Only a pending record can be settled"),
            (Transition::Cancel, BillStatus::Cancelled) => Err("The record is already cancelled"),
            (Transition::Cancel, _) => Err("A settled record must be reopened before it can be cancelled"),
            (Transition::Reopen, BillStatus::Pending) => Err("The record is already pending"),
            (Transition::Reopen, _) => Ok(()),
        }
    }

    /// The status after `transition` for a bill of kind `B`.
    pub fn after<B: Bill>(transition: Transition) -> BillStatus {
        match transition {
            Transition::Settle => B::SETTLED,
            Transition::Cancel => BillStatus::Cancelled,
            Transition::Reopen => BillStatus::Pending,
        }
    }
}

/// A single bill, or a series of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BillType {
    Normal,
    Recurring,
    Installment,
}

impl BillType {
    pub fn as_str(self) -> &'static str {
        match self {
            BillType::Normal => "normal",
            BillType::Recurring => "recurring",
            BillType::Installment => "installment",
        }
    }
}

/// How far apart the occurrences of a recurring series are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecurrencePeriod {
    Weekly,
    Biweekly,
    Monthly,
    Quarterly,
    Yearly,
}

impl RecurrencePeriod {
    pub fn as_str(self) -> &'static str {
        match self {
            RecurrencePeriod::Weekly => "weekly",
            RecurrencePeriod::Biweekly => "biweekly",
            RecurrencePeriod::Monthly => "monthly",
            RecurrencePeriod::Quarterly => "quarterly",
            RecurrencePeriod::Yearly => "yearly",
        }
    }

    pub fn step(self) -> Step {
        match self {
            RecurrencePeriod::Weekly => Step::Days(7),
            RecurrencePeriod::Biweekly => Step::Days(14),
            RecurrencePeriod::Monthly => Step::Months(1),
            RecurrencePeriod::Quarterly => Step::Months(3),
            RecurrencePeriod::Yearly => Step::Months(12),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_pending_bill_is_settled_or_cancelled_and_only_a_closed_one_reopened() {
        use BillStatus::*;
        assert!(Pending.allows(Transition::Settle).is_ok());
        assert!(Pending.allows(Transition::Cancel).is_ok());
        assert!(Pending.allows(Transition::Reopen).is_err());
        for closed in [Paid, Received, Cancelled] {
            assert!(closed.allows(Transition::Settle).is_err());
            assert!(closed.allows(Transition::Cancel).is_err());
            assert!(closed.allows(Transition::Reopen).is_ok());
        }
        assert_eq!(BillStatus::after::<Payable>(Transition::Settle), Paid);
        assert_eq!(BillStatus::after::<Receivable>(Transition::Settle), Received);
        assert_eq!(BillStatus::after::<Receivable>(Transition::Reopen), Pending);
    }

    #[test]
    fn statuses_are_stored_as_their_names() {
        for s in [BillStatus::Pending, BillStatus::Paid, BillStatus::Received, BillStatus::Cancelled] {
            assert_eq!(BillStatus::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        assert_eq!(BillStatus::parse("settled"), None);
    }

    #[test]
    fn utility_and_tribute_are_payables_only() {
        assert!(Payable::accepts(PaymentMethod::Utility));
        assert!(!Receivable::accepts(PaymentMethod::Tribute));
        assert!(Receivable::accepts(PaymentMethod::Pix));
    }
}
