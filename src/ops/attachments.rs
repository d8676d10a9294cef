//! Attachments (`/v1/attachments`, scope `finance.attachments`): uploaded files and their links to payables, receivables and transactions.

use super::openapi::Operation;

/// The operations of this resource in the OpenAPI document.
pub const DOCS: &[Operation] = &[];
