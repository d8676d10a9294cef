//! Taxes (`/v1/taxes`, scope `finance.taxes`): the workspace's withholding-tax catalogue.
//!
//! Rules: a tax belongs to the workspace (not to a company); its name is unique in the
//! workspace (409 `conflict`); `default_rate` is a percentage string with at most two
//! decimals (`"1.50"` = 1.5 %) between 0 and 100, stored as basis points and never
//! handled as a float; `default_withholding` defaults to true. A tax that billings
//! charge cannot be deleted (422 `in_use`, with the usage and the billing ids).

use crate::domain::text::quoted;
use crate::ops::machinery::stamps::Stamp;
use crate::ops::machinery::stamps::Stamps;
use crate::storage::{sql, Conn};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::machinery::common::{conflict_on_unique, invalid, required, required_if_sent, unprocessable};
use super::machinery::crud::{self, record_table};
use super::machinery::list::ListRequest;
use super::machinery::list::{list_spec, ListSpec};
use super::machinery::resource::{Declaration, Deletable, Op, Records, Writable};
use super::machinery::validate::nullable;
use super::OpContext;
use super::Page;
use crate::domain::dates::Timestamp;
use crate::domain::percent::{fits_rate_pattern, Percent, PercentError, RATE_FORMAT, RATE_PATTERN};
use crate::domain::roles::{Access, Resource};
use crate::error::{ApiError, ErrorCode};
use crate::storage::db_error;
use crate::storage::identity::Membership;

/// At most this many referencing billing ids are named when a delete is refused.
const MAX_BILLING_IDS: i64 = 100;

/// `POST /v1/taxes`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaxCreate {
    /// Unique in the workspace, e.g. `IRRF`, `INSS`, `ISS`.
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(min = 1, max = 255))]
    pub name: String,
    /// Percentage with 1–2 decimals, 0–100 (`"1.50"` = 1.5 %), or null.
    #[serde(default)]
    #[schemars(regex(pattern = RATE_PATTERN))]
    pub default_rate: Option<String>,
    /// Whether charges of this tax are withheld (deducted) by default. Default true.
    #[serde(default)]
    pub default_withholding: Option<bool>,
    /// Default true.
    #[serde(default)]
    pub active: Option<bool>,
}

/// `PATCH /v1/taxes/{id}`: only the fields sent change; `null` clears `default_rate`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TaxUpdate {
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(min = 1, max = 255))]
    pub name: Option<String>,
    #[serde(deserialize_with = "nullable")]
    #[schemars(with = "Option<String>", regex(pattern = RATE_PATTERN))]
    pub default_rate: Option<Option<String>>,
    pub default_withholding: Option<bool>,
    pub active: Option<bool>,
}

/// A tax as `/v1` returns it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Tax {
    pub id: String,
    pub name: String,
    /// Percentage with two decimals (`"1.50"` = 1.5 %), or null.
    pub default_rate: Option<String>,
    pub default_withholding: bool,
    pub active: bool,
    #[serde(flatten)]
    pub stamps: Stamps,
}

/// The `"/v1/taxes"` resource: its list, its reads, writes and delete.
pub struct Taxes;

impl Records for Taxes {
    const LIST: &'static ListSpec = &LIST;
    const RESOURCE: Resource = Resource::Taxes;
    const COLLECTION: &'static str = "/v1/taxes";
    const NOUN: &'static str = "tax";
    type Row = Tax;
    type Record = Tax;
    async fn list(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        request: &ListRequest,
    ) -> Result<Page<Tax>, ApiError> {
        crud::list::<Self>(ctx, conn, ws, request).await
    }
    async fn get(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<Tax, ApiError> {
        crud::get::<Self>(ctx, conn, ws, id).await
    }
    fn label(t: &Tax) -> String {
        match &t.default_rate {
            Some(rate) => format!("{} ({rate} %)", quoted(&t.name)),
            None => quoted(&t.name),
        }
    }
}

impl Writable for Taxes {
    type Create = TaxCreate;
    type Created = Tax;
    type Update = TaxUpdate;
    async fn create(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, input: TaxCreate) -> Result<Tax, ApiError> {
        ctx.authorize(ws, Resource::Taxes, Access::Write)?;
        let name = required("name", &input.name)?;
        let rate = match input.default_rate.as_deref() {
            Some(text) => Some(parse_rate("default_rate", text)?),
            None => None,
        };
        let id = uuid::Uuid::new_v4().to_string();
        let now = Timestamp::now();
        sql::query(
            "INSERT INTO taxes (id, workspace_id, name, default_rate_bp, default_withholding, active, created_at, updated_at,
                                created_via, updated_via, created_by, updated_by)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8, $8, $9, $9)",
        )
        .bind(&id)
        .bind(&ws.workspace_id)
        .bind(name)
        .bind(rate)
        .bind(flag(input.default_withholding.unwrap_or(true)))
        .bind(flag(input.active.unwrap_or(true)))
        .stamp(ctx, &now)
        .execute(&mut *conn)
        .await
        .map_err(conflict_on_duplicate)?;
        crud::created::<Taxes>(ctx, conn, ws, &id).await
    }
    async fn update(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        id: &str,
        input: TaxUpdate,
    ) -> Result<Tax, ApiError> {
        ctx.authorize(ws, Resource::Taxes, Access::Write)?;
        let current = crud::find::<Taxes>(conn, ws, id).await?;
        let name = required_if_sent("name", input.name.as_deref())?.unwrap_or(&current.name).to_string();
        let rate = match input.default_rate {
            // The kept rate, back in basis points from its two-decimal text.
            None => current.default_rate.as_deref().map(|text| parse_rate("default_rate", text)).transpose()?,
            Some(None) => None,
            Some(Some(text)) => Some(parse_rate("default_rate", &text)?),
        };
        let update = sql::query(
            "UPDATE taxes SET name = $1, default_rate_bp = $2, default_withholding = $3, active = $4, updated_at = $5,
                    updated_via = $6, updated_by = $7
              WHERE workspace_id = $8 AND id = $9",
        )
        .bind(&name)
        .bind(rate)
        .bind(flag(input.default_withholding.unwrap_or(current.default_withholding)))
        .bind(flag(input.active.unwrap_or(current.active)));
        crud::stamped_update::<Taxes>(ctx, conn, ws, update, &current.id, conflict_on_duplicate).await?;
        crud::find::<Taxes>(conn, ws, &current.id).await
    }
}

impl Deletable for Taxes {
    /// Deletes a tax no billing charges; otherwise 422 `in_use` with
    /// `details.usage {payables, receivables}` and up to 100 `details.billing_ids`.
    async fn delete(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<(), ApiError> {
        ctx.authorize(ws, Resource::Taxes, Access::Delete)?;
        let current = crud::find::<Taxes>(conn, ws, id).await?;
        let usage = sql::query(
            "SELECT billings.kind, COUNT(*) FROM billing_tax_charges
               JOIN billings ON billings.id = billing_tax_charges.billing_id
              WHERE billing_tax_charges.workspace_id = $1 AND billing_tax_charges.tax_id = $2
              GROUP BY billings.kind",
        )
        .bind(&ws.workspace_id)
        .bind(&current.id)
        .fetch_all(&mut *conn)
        .await?;
        let (mut payables, mut receivables) = (0i64, 0i64);
        for row in &usage {
            let kind: String = row.try_get(0)?;
            let count: i64 = row.try_get(1)?;
            match kind.as_str() {
                "payable" => payables += count,
                _ => receivables += count,
            }
        }
        if payables + receivables > 0 {
            let billing_ids: Vec<String> = sql::query(
                "SELECT billing_id FROM billing_tax_charges WHERE workspace_id = $1 AND tax_id = $2 ORDER BY billing_id LIMIT $3",
            )
            .bind(&ws.workspace_id)
            .bind(&current.id)
            .bind(MAX_BILLING_IDS)
            .fetch_all(&mut *conn)
            .await
            ?
            .iter()
            .map(|r| r.try_get::<String, _>(0))
            .collect::<Result<_, _>>()
            ?;
            return Err(ApiError::new(
                ErrorCode::UnprocessableEntity,
                "The tax is charged by billings and cannot be deleted",
            )
            .with_details(json!({
                "reason": "in_use",
                "usage": { "payables": payables, "receivables": receivables },
                "billing_ids": billing_ids,
            })));
        }
        crud::deleted::<Taxes>(ctx, conn, ws, &current.id, db_error).await
    }
}

/// The `/v1/taxes` operations.
pub static OPERATIONS: Declaration = Declaration::of::<Taxes>(&[
    Op::list::<Taxes>("List taxes").tool(
        "finance_taxes_list",
        "List taxes",
        "Lists the taxes (IRRF, INSS, ISS…) with default rate and withholding: ids for the tax_charges of bills.",
    ),
    Op::get::<Taxes>("Get a tax").tool("finance_taxes_get", "Get a tax", "One tax."),
    Op::create::<Taxes>("Create a tax").tool(
        "finance_taxes_create",
        "Create a tax",
        "Creates a tax (name unique in the workspace).",
    ),
    Op::update::<Taxes>("Update a tax").tool(
        "finance_taxes_update",
        "Update a tax",
        "Changes the fields sent; null clears default_rate.",
    ),
    Op::delete::<Taxes>("Delete a tax (refused while billings charge it)").tool(
        "finance_taxes_delete",
        "Delete a tax",
        "Deletes a tax no charge uses. Asks the user to confirm.",
    ),
]);

pub static LIST: ListSpec = list_spec!(taxes;
    filters: name: Text, active: Bool, default_withholding: Bool, created_at: Timestamp @ "creation time",
        updated_at: Timestamp @ "incremental sync";
    sorts: name, created_at, updated_at;
    default: name);

record_table!(impl Table for Taxes as "Tax", audited as "tax"; taxes => Tax |row| {
    id, name, default_withholding, active;
    default_rate = row.try_get::<Option<i64>, _>("default_rate_bp")?.and_then(Percent::shown);
    reads default_rate_bp
});

/// Parses a rate (`"1.50"`) to basis points (150), digit by digit: a text off
/// [`RATE_PATTERN`] is a 400 `invalid_format` (the request check refuses it first), a
/// rate over 100 a 422 `out_of_range`.
pub fn parse_rate(field: &str, text: &str) -> Result<i64, ApiError> {
    match Percent::parse(text) {
        Ok(rate) if fits_rate_pattern(text) => Ok(rate.basis_points()),
        Err(PercentError::OutOfRange) if fits_rate_pattern(text) => {
            Err(unprocessable(field, "out_of_range", "The rate must be between 0 and 100"))
        }
        _ => Err(invalid(field, "invalid_format", RATE_FORMAT)),
    }
}

fn flag(value: bool) -> i64 {
    if value {
        1
    } else {
        0
    }
}

fn conflict_on_duplicate(err: crate::storage::Error) -> ApiError {
    conflict_on_unique(err, "name", "A tax with this name already exists in the workspace")
}
