//! Who wrote a record, when, and through which door: the six columns every record
//! carries (`created_at` … `updated_by`), shown, read and written the same way for all
//! of them. A record flattens its [`Stamps`] into its own members.

use schemars::JsonSchema;
use serde::Serialize;

use crate::domain::dates::Timestamp;
use crate::ops::OpContext;
use crate::storage::{sql, Row};

/// When and by whom a record was created and last changed. Beyond the real API's
/// `created_at` (and `updated_at` on the records it stamps), the audit trail of every
/// record is this product's: OpenAPI marks it `x-kobana-extension`.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Stamps {
    pub created_at: Timestamp,
    #[schemars(extend("x-kobana-extension" = "audit"))]
    pub updated_at: Timestamp,
    /// `mcp`, `api` or `system`.
    #[schemars(extend("x-kobana-extension" = "audit"))]
    pub created_via: String,
    #[schemars(extend("x-kobana-extension" = "audit"))]
    pub updated_via: String,
    #[schemars(extend("x-kobana-extension" = "audit"))]
    pub created_by: Option<String>,
    #[schemars(extend("x-kobana-extension" = "audit"))]
    pub updated_by: Option<String>,
}

impl Stamps {
    /// The stamps of a row that has the six columns.
    pub fn from_row(row: &Row<'_>) -> Result<Stamps, crate::storage::Error> {
        Ok(Stamps {
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
            created_via: row.try_get("created_via")?,
            updated_via: row.try_get("updated_via")?,
            created_by: row.try_get("created_by")?,
            updated_by: row.try_get("updated_by")?,
        })
    }
}

/// The stamp of a write, bound to its statement in the order every statement takes it:
/// the time, the channel, the user (an `INSERT` names each twice, for `created_*` and
/// `updated_*`).
pub trait Stamp<'q> {
    /// Binds `now`, the caller's channel and user.
    fn stamp(self, ctx: &'q OpContext<'_>, now: &'q Timestamp) -> Self;
    /// Binds the time now, the caller's channel and user.
    fn stamp_now(self, ctx: &'q OpContext<'_>) -> Self;
}

impl<'q> Stamp<'q> for sql::Query<'q> {
    fn stamp(self, ctx: &'q OpContext<'_>, now: &'q Timestamp) -> Self {
        self.bind(now).bind(ctx.channel.as_str()).bind(&ctx.identity.user_id)
    }

    fn stamp_now(self, ctx: &'q OpContext<'_>) -> Self {
        self.bind(Timestamp::now()).bind(ctx.channel.as_str()).bind(&ctx.identity.user_id)
    }
}
