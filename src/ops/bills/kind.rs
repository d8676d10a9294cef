//! What tells a payable from a receivable to the operations and the doors: the domain's
//! [`Bill`] plus its `/v1` collection, its words, its polarity, its list and its fields.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::coordinates;
use super::listed::{PAYABLES_LIST, RECEIVABLES_LIST};
use super::wire::{
    KindRecord, KindRow, PayableFields, PayableRowFields, PayableStatus, ReceivableFields, ReceivableRowFields,
    ReceivableStatus,
};
use crate::domain::bills::{Bill, BillStatus, Payable, Receivable};
use crate::domain::payment::{PAYABLE_METHODS, RECEIVABLE_METHODS};
use crate::ops::machinery::list::ListSpec;
use crate::ops::machinery::refs::Polarity;

/// A kind of bill as the operations and the doors need it: the domain's [`Bill`] plus
/// its `/v1` collection, the words its errors and confirmations use, its ledger polarity
/// and its list specs.
pub trait BillKind: Bill {
    /// `/v1/payables`.
    const COLLECTION: &'static str;
    /// `Payable`: errors (`Payable not found`).
    const NOUN: &'static str;
    /// What a settlement is called: `payment`, `receipt`.
    const SETTLEMENT: &'static str;
    /// The settlement's account: money `out of` it or `into` it.
    const ACCOUNT: &'static str;
    /// The polarity of its person, category, centers and settlement transaction.
    const POLARITY: Polarity;
    /// Its list (filters, sorts, scope) and its id sweep.
    const LIST: &'static ListSpec;
    /// The statuses a `PATCH` moves it to.
    type Status: DeserializeOwned + JsonSchema + Into<BillStatus> + Send + 'static;
    /// Its statuses and payment methods, as its answers' schemas list them.
    const STATUSES: &'static [&'static str];
    const METHODS: &'static [&'static str];
    /// Its own fields of a row and of a record, and their schemas.
    type RowFields: JsonSchema;
    type Fields: JsonSchema;
    fn row_fields() -> KindRow;
    fn fields() -> KindRecord;
    /// The request fields of the other kind, which this one's schemas leave out.
    const NOT_TAKEN: &'static [&'static str];
}

impl BillKind for Payable {
    const COLLECTION: &'static str = "/v1/payables";
    const NOUN: &'static str = "Payable";
    const SETTLEMENT: &'static str = "payment";
    const ACCOUNT: &'static str = "out of";
    const POLARITY: Polarity = Polarity::Debit;
    const LIST: &'static ListSpec = &PAYABLES_LIST;
    type Status = PayableStatus;
    const STATUSES: &'static [&'static str] = &["pending", "paid", "cancelled"];
    const METHODS: &'static [&'static str] = PAYABLE_METHODS;
    type RowFields = PayableRowFields;
    type Fields = PayableFields;
    fn row_fields() -> KindRow {
        KindRow::Payable(PayableRowFields::default())
    }
    fn fields() -> KindRecord {
        KindRecord::Payable(PayableFields::default())
    }
    const NOT_TAKEN: &'static [&'static str] = &[];
}

impl BillKind for Receivable {
    const COLLECTION: &'static str = "/v1/receivables";
    const NOUN: &'static str = "Receivable";
    const SETTLEMENT: &'static str = "receipt";
    const ACCOUNT: &'static str = "into";
    const POLARITY: Polarity = Polarity::Credit;
    const LIST: &'static ListSpec = &RECEIVABLES_LIST;
    type Status = ReceivableStatus;
    const STATUSES: &'static [&'static str] = &["pending", "received", "cancelled"];
    const METHODS: &'static [&'static str] = RECEIVABLE_METHODS;
    type RowFields = ReceivableRowFields;
    type Fields = ReceivableFields;
    fn row_fields() -> KindRow {
        KindRow::Receivable(ReceivableRowFields::default())
    }
    fn fields() -> KindRecord {
        KindRecord::Receivable(ReceivableFields::default())
    }
    const NOT_TAKEN: &'static [&'static str] = coordinates::PAYABLE_ONLY;
}
