//! Classification centers (`/v1/classification_centers`, scope `finance.cost_centers`): cost and revenue centers, the targets of apportionment.

use super::openapi::Operation;

/// The operations of this resource in the OpenAPI document.
pub const DOCS: &[Operation] = &[];
