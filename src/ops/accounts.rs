//! Financial accounts (`/v1/financial-accounts`, scope `finance.accounts`): bank, cash, investment and credit accounts and their computed balance.

use super::openapi::Operation;

/// The operations of this resource in the OpenAPI document.
pub const DOCS: &[Operation] = &[];
