//! Taxes (`/v1/taxes`, scope `finance.taxes`): the workspace's withholding-tax catalogue.

use super::openapi::Operation;

/// The operations of this resource in the OpenAPI document.
pub const DOCS: &[Operation] = &[];
