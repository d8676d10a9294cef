//! People (`/v1/people`, scope `finance.people`): vendors and customers of a company.

use super::openapi::Operation;

/// The operations of this resource in the OpenAPI document.
pub const DOCS: &[Operation] = &[];
