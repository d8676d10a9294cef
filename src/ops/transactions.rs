//! Financial transactions and transfers (`/v1/financial-transactions`, `/v1/transfers`, scope `finance.transactions`): the ledger.

use super::openapi::Operation;

/// The operations of this resource in the OpenAPI document.
pub const DOCS: &[Operation] = &[];
