//! Classification centers (`/v1/classification_centers`, scope `finance.cost_centers`):
//! cost and revenue centers, the targets of apportionment.
//!
//! Rules: a center belongs to a company of the workspace; its type says which records
//! may be apportioned to it (`cost`: payables and debit transactions, `revenue`:
//! receivables and credit transactions, `both`). The company never changes. A type
//! change that would leave existing apportionments on a center of the wrong type is
//! refused (422 `in_use` with those records). Deleting a center any apportionment still
//! uses is 422 `in_use` with the usage; deactivating it is the way to retire it.

use crate::domain::text::quoted;
use crate::ops::machinery::stamps::Stamp;
use crate::ops::machinery::stamps::Stamps;
use crate::storage::{sql, Conn};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::machinery::common::{body_id, required, required_if_sent};
use super::machinery::crud::{self, record_table};
use super::machinery::list::ListRequest;
use super::machinery::list::{list_spec, ListSpec};
use super::machinery::refs;
use super::machinery::resource::{Declaration, Deletable, Op, Records, Writable};
use super::machinery::validate::nullable;
use super::OpContext;
use super::Page;
use crate::domain::dates::Timestamp;
use crate::domain::roles::{Access, Resource};
use crate::error::{ApiError, ErrorCode};
use crate::storage::db_error;
use crate::storage::identity::Membership;
use crate::storage::row::decode_text;

/// Which records a center takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CenterType {
    Cost,
    Revenue,
    Both,
}

impl CenterType {
    pub fn as_str(self) -> &'static str {
        match self {
            CenterType::Cost => "cost",
            CenterType::Revenue => "revenue",
            CenterType::Both => "both",
        }
    }

    fn parse(s: &str) -> Option<CenterType> {
        match s {
            "cost" => Some(CenterType::Cost),
            "revenue" => Some(CenterType::Revenue),
            "both" => Some(CenterType::Both),
            _ => None,
        }
    }
}

/// `POST /v1/classification_centers`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CenterCreate {
    /// Immutable.
    #[schemars(extend("format" = "uuid"))]
    pub company_id: String,
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(min = 1, max = 255))]
    pub name: String,
    /// `cost` (payables, debit transactions), `revenue` (receivables, credit
    /// transactions) or `both`.
    #[serde(rename = "type")]
    pub center_type: CenterType,
    #[serde(default)]
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(max = 500))]
    pub description: Option<String>,
    /// Default true.
    #[serde(default)]
    pub active: Option<bool>,
}

/// `PATCH /v1/classification_centers/{id}`: only the fields sent change; `null` clears
/// the description (and is refused for the other fields). The company cannot change.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CenterUpdate {
    #[schemars(with = "String", pattern(crate::domain::text::PLAIN_PATTERN), length(min = 1, max = 255))]
    pub name: Option<String>,
    #[serde(rename = "type")]
    #[schemars(with = "CenterType")]
    pub center_type: Option<CenterType>,
    #[serde(deserialize_with = "nullable")]
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(max = 500))]
    pub description: Option<Option<String>>,
    #[schemars(with = "bool")]
    pub active: Option<bool>,
}

/// A classification center as `/v1` returns it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Center {
    pub id: String,
    pub company_id: String,
    pub name: String,
    #[serde(rename = "type")]
    pub center_type: CenterType,
    pub description: Option<String>,
    pub active: bool,
    #[serde(flatten)]
    pub stamps: Stamps,
}

/// The `"/v1/classification_centers"` resource: its list, its reads, writes and delete.
pub struct CostCenters;

impl Records for CostCenters {
    const LIST: &'static ListSpec = &LIST;
    const RESOURCE: Resource = Resource::CostCenters;
    const COLLECTION: &'static str = "/v1/classification_centers";
    const NOUN: &'static str = "cost center";
    type Row = Center;
    type Record = Center;
    async fn list(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        request: &ListRequest,
    ) -> Result<Page<Center>, ApiError> {
        crud::list::<Self>(ctx, conn, ws, request).await
    }
    async fn get(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<Center, ApiError> {
        crud::get::<Self>(ctx, conn, ws, id).await
    }
    fn label(c: &Center) -> String {
        format!("{} ({})", quoted(&c.name), c.center_type.as_str())
    }
}

impl Writable for CostCenters {
    type Create = CenterCreate;
    type Created = Center;
    type Update = CenterUpdate;
    async fn create(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        input: CenterCreate,
    ) -> Result<Center, ApiError> {
        ctx.authorize(ws, Resource::CostCenters, Access::Write)?;
        let company_id = body_id("company_id", &input.company_id)?;
        let name = required("name", &input.name)?;
        refs::company(conn, ws, "company_id", &company_id).await?;
        let id = uuid::Uuid::new_v4().to_string();
        let now = Timestamp::now();
        sql::query(
            "INSERT INTO classification_centers (id, workspace_id, company_id, name, center_type, description, active, created_at,
                                                 updated_at, created_via, updated_via, created_by, updated_by)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $9, $10, $10)",
        )
        .bind(&id)
        .bind(&ws.workspace_id)
        .bind(&company_id)
        .bind(name)
        .bind(input.center_type.as_str())
        .bind(input.description.as_deref())
        .bind(i64::from(input.active.unwrap_or(true)))
        .stamp(ctx, &now)
        .execute(&mut *conn)
        .await
        .map_err(|e| match &e {
            db if db.is_foreign_key_violation() => refs::not_in_workspace("company_id", "Company"),
            _ => db_error(e),
        })?;
        crud::created::<CostCenters>(ctx, conn, ws, &id).await
    }
    async fn update(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        id: &str,
        input: CenterUpdate,
    ) -> Result<Center, ApiError> {
        ctx.authorize(ws, Resource::CostCenters, Access::Write)?;
        let current = crud::find::<CostCenters>(conn, ws, id).await?;
        let name = required_if_sent("name", input.name.as_deref())?;
        let center_type = input.center_type.unwrap_or(current.center_type);
        if center_type != current.center_type {
            let (t, p, r, all) = usage(conn, ws, &current.id, Some(center_type)).await?;
            if all > 0 {
                return Err(in_use("Records apportioned to this center do not fit the new type", (t, p, r)));
            }
        }
        let name = name.unwrap_or(&current.name).to_string();
        let description = input.description.unwrap_or(current.description);
        let active = input.active.unwrap_or(current.active);
        let update = sql::query(
            "UPDATE classification_centers SET name = $1, center_type = $2, description = $3, active = $4, updated_at = $5,
                    updated_via = $6, updated_by = $7
              WHERE workspace_id = $8 AND id = $9",
        )
        .bind(&name)
        .bind(center_type.as_str())
        .bind(description.as_deref())
        .bind(if active { 1i64 } else { 0 });
        crud::stamped_update::<CostCenters>(ctx, conn, ws, update, &current.id, db_error).await?;
        crud::find::<CostCenters>(conn, ws, &current.id).await
    }
}

impl Deletable for CostCenters {
    /// Deletes a center no apportionment uses.
    async fn delete(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<(), ApiError> {
        ctx.authorize(ws, Resource::CostCenters, Access::Delete)?;
        let current = crud::find::<CostCenters>(conn, ws, id).await?;
        let (t, p, r, all) = usage(conn, ws, &current.id, None).await?;
        if all > 0 {
            return Err(in_use("The classification center is still in use", (t, p, r)));
        }
        // An apportionment added meanwhile makes the delete fail on its foreign key.
        crud::deleted::<CostCenters>(ctx, conn, ws, &current.id, |e| match &e {
            db if db.is_foreign_key_violation() => {
                ApiError::new(ErrorCode::UnprocessableEntity, "The classification center is still in use")
                    .with_details(json!({"reason": "in_use"}))
            }
            _ => db_error(e),
        })
        .await
    }
}

/// The `/v1/classification_centers` operations.
pub static OPERATIONS: Declaration = Declaration::of::<CostCenters>(&[
    Op::list::<CostCenters>("List classification centers").tool(
        "finance_cost_centers_list",
        "List cost centers",
        "Lists the cost and revenue (classification) centers of a company: ids for classification_center_id and \
apportionments.",
    ),
    Op::get::<CostCenters>("Get a classification center").tool(
        "finance_cost_centers_get",
        "Get a cost center",
        "One classification center.",
    ),
    Op::create::<CostCenters>("Create a classification center").tool(
        "finance_cost_centers_create",
        "Create a cost center",
        "Creates a classification center of a company.",
    ),
    Op::update::<CostCenters>("Update a classification center").tool(
        "finance_cost_centers_update",
        "Update a cost center",
        "Changes the fields sent; deactivate a center that records use instead of deleting it.",
    ),
    Op::delete::<CostCenters>("Delete a classification center").tool(
        "finance_cost_centers_delete",
        "Delete a cost center",
        "Deletes a classification center nothing uses. Asks the user to confirm.",
    ),
]);

pub static LIST: ListSpec = list_spec!(classification_centers;
    filters: company_id: Uuid, active: Bool, type = center_type: Enum(&["cost", "revenue", "both"]), name: Text;
    sorts: name, created_at;
    default: name);

decode_text!(CenterType, CenterType::parse);

record_table!(impl Table for CostCenters as "Classification center", audited as "classification_center"; classification_centers => Center |row| {
    id, company_id, name, center_type, description, active
});

fn in_use(message: &str, (transactions, payables, receivables): (i64, i64, i64)) -> ApiError {
    ApiError::new(ErrorCode::UnprocessableEntity, message).with_details(json!({
        "reason": "in_use",
        "usage": { "transactions": transactions, "payables": payables, "receivables": receivables },
    }))
}

/// The apportionments of a center: (transactions, payables, receivables, all rows).
/// With `against`, only those whose record has the direction `against` cannot take.
async fn usage(
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
    against: Option<CenterType>,
) -> Result<(i64, i64, i64, i64), ApiError> {
    // The transaction type and the bill kind a center of this type refuses.
    let (transaction_type, kind) = match against {
        None => (None, None),
        Some(CenterType::Cost) => (Some("credit"), Some("receivable")),
        Some(CenterType::Revenue) => (Some("debit"), Some("payable")),
        Some(CenterType::Both) => return Ok((0, 0, 0, 0)),
    };
    let transactions = match transaction_type {
        None => "SELECT COUNT(*) FROM allocations a WHERE a.workspace_id = $1 AND a.classification_center_id = $2 AND a.owner_type = 'transaction'",
        Some(_) => {
            "SELECT COUNT(*) FROM allocations a JOIN financial_transactions t ON t.id = a.owner_id AND t.workspace_id = a.workspace_id
              WHERE a.workspace_id = $1 AND a.classification_center_id = $2 AND a.owner_type = 'transaction' AND t.transaction_type = $3"
        }
    };
    let billings = "SELECT COUNT(*) FROM allocations a JOIN billings b ON b.id = a.owner_id AND b.workspace_id = a.workspace_id
                     WHERE a.workspace_id = $1 AND a.classification_center_id = $2 AND a.owner_type = 'billing' AND b.kind = $3";
    let count = |row: Result<crate::storage::OwnedRow, crate::storage::Error>| {
        row.and_then(|r| r.try_get::<i64, _>(0)).map_err(ApiError::from)
    };
    let mut query = sql::query(transactions).bind(&ws.workspace_id).bind(id);
    if let Some(t) = transaction_type {
        query = query.bind(t);
    }
    let t = count(query.fetch_one(&mut *conn).await)?;
    let mut by_kind = [0i64; 2];
    for (slot, k) in by_kind.iter_mut().zip(["payable", "receivable"]) {
        if kind.is_none_or(|refused| refused == k) {
            *slot = count(sql::query(billings).bind(&ws.workspace_id).bind(id).bind(k).fetch_one(&mut *conn).await)?;
        }
    }
    let all = match against {
        None => count(
            sql::query("SELECT COUNT(*) FROM allocations WHERE workspace_id = $1 AND classification_center_id = $2")
                .bind(&ws.workspace_id)
                .bind(id)
                .fetch_one(&mut *conn)
                .await,
        )?,
        Some(_) => t + by_kind[0] + by_kind[1],
    };
    Ok((t, by_kind[0], by_kind[1], all))
}
