//! Categories (`/v1/categories`, scope `finance.categories`): the chart of accounts, a tree of at most three levels.

use super::openapi::Operation;

/// The operations of this resource in the OpenAPI document.
pub const DOCS: &[Operation] = &[];
