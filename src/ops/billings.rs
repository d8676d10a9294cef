//! Payables and receivables (`/v1/payables`, `/v1/receivables`, scopes `finance.payables` and `finance.receivables`): bills to pay and to receive, their status machine and settlement.

use super::openapi::Operation;

/// The operations of this resource in the OpenAPI document.
pub const DOCS: &[Operation] = &[];
