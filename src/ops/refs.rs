//! References between finance records, checked once for every door: the company of a
//! record (and its closed period), the account (same company), and the category,
//! classification center and person of a transaction or a bill — by id, or found or
//! created by name (`*_name`, mutually exclusive with `*_id`), always with the polarity
//! of the record (debit: debit category, cost center, supplier; credit: credit
//! category, revenue center, customer).

use serde_json::json;
use sqlx::{AnyConnection, Row};

use super::common::{audit_write, body_id, invalid, unprocessable};
use super::OpContext;
use crate::error::ApiError;
use crate::storage::db_error;
use crate::storage::identity::Membership;

/// Money direction of a record: payables and debit transactions are `Debit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Polarity {
    Debit,
    Credit,
}

impl Polarity {
    pub fn transaction_type(self) -> &'static str {
        match self {
            Polarity::Debit => "debit",
            Polarity::Credit => "credit",
        }
    }

    /// The classification-center types this polarity accepts.
    fn center_types(self) -> [&'static str; 2] {
        match self {
            Polarity::Debit => ["cost", "both"],
            Polarity::Credit => ["revenue", "both"],
        }
    }
}

/// A company of the caller's workspace, with its closed period.
#[derive(Debug, Clone)]
pub struct CompanyRef {
    pub id: String,
    pub locked_until: Option<String>,
}

fn not_in_workspace(field: &str, what: &str) -> ApiError {
    unprocessable(field, "invalid_reference", &format!("{what} not found in this workspace"))
}

/// The company `company_id` of the workspace (422 `invalid_reference` otherwise).
pub async fn company(conn: &mut AnyConnection, ws: &Membership, field: &str, company_id: &str) -> Result<CompanyRef, ApiError> {
    let id = body_id(field, company_id)?;
    let row = sqlx::query("SELECT id, locked_until FROM companies WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL")
        .bind(&ws.workspace_id)
        .bind(&id)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?
        .ok_or_else(|| not_in_workspace(field, "Company"))?;
    Ok(CompanyRef { id: row.try_get(0).map_err(db_error)?, locked_until: row.try_get(1).map_err(db_error)? })
}

/// Refuses a write touching a record dated on or before the company's `locked_until`
/// (422 `period_closed`).
pub fn check_period(company: &CompanyRef, field: &str, date: &str) -> Result<(), ApiError> {
    match &company.locked_until {
        // Both are YYYY-MM-DD, so text order is date order.
        Some(locked) if date <= locked.as_str() => Err(ApiError::new(
            crate::error::ErrorCode::UnprocessableEntity,
            "The period is closed for this company",
        )
        .with_details(json!({ "field": field, "reason": "period_closed", "locked_until": locked }))),
        _ => Ok(()),
    }
}

/// The financial account `account_id`, which must belong to `company`.
pub async fn account(conn: &mut AnyConnection, ws: &Membership, company: &CompanyRef, field: &str, account_id: &str) -> Result<String, ApiError> {
    let id = body_id(field, account_id)?;
    let row = sqlx::query("SELECT company_id FROM financial_accounts WHERE workspace_id = $1 AND id = $2")
        .bind(&ws.workspace_id)
        .bind(&id)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?
        .ok_or_else(|| not_in_workspace(field, "Financial account"))?;
    let owner: String = row.try_get(0).map_err(db_error)?;
    if owner != company.id {
        return Err(unprocessable(field, "account_company_mismatch", "The financial account does not belong to the given company"));
    }
    Ok(id)
}

/// `*_id` and `*_name` are mutually exclusive (400).
fn exclusive<'a>(id_field: &str, id: Option<&'a str>, name_field: &str, name: Option<&'a str>) -> Result<(), ApiError> {
    if id.is_some() && name.is_some() {
        return Err(invalid(id_field, "mutually_exclusive", &format!("{id_field} and {name_field} are mutually exclusive")));
    }
    if let Some(n) = name {
        if n.trim().is_empty() || n.chars().count() > 255 {
            return Err(invalid(name_field, "invalid_value", &format!("{name_field} must have 1 to 255 characters")));
        }
    }
    Ok(())
}

/// The category of a record: by id (same company, type = polarity) or found/created by
/// name as a root category of that type.
pub async fn category(
    ctx: &OpContext<'_>,
    conn: &mut AnyConnection,
    ws: &Membership,
    company: &CompanyRef,
    polarity: Polarity,
    id: Option<&str>,
    name: Option<&str>,
) -> Result<Option<String>, ApiError> {
    exclusive("category_id", id, "category_name", name)?;
    if let Some(id) = id {
        let id = body_id("category_id", id)?;
        let row = sqlx::query("SELECT company_id, category_type FROM categories WHERE workspace_id = $1 AND id = $2")
            .bind(&ws.workspace_id)
            .bind(&id)
            .fetch_optional(&mut *conn)
            .await
            .map_err(db_error)?
            .ok_or_else(|| not_in_workspace("category_id", "Category"))?;
        let (owner, kind): (String, String) = (row.try_get(0).map_err(db_error)?, row.try_get(1).map_err(db_error)?);
        if owner != company.id {
            return Err(unprocessable("category_id", "company_mismatch", "The category does not belong to the given company"));
        }
        if kind != polarity.transaction_type() {
            return Err(unprocessable("category_id", "type_mismatch", "The category's type does not match the record"));
        }
        return Ok(Some(id));
    }
    let Some(name) = name.map(str::trim) else { return Ok(None) };
    let found = sqlx::query("SELECT id FROM categories WHERE workspace_id = $1 AND company_id = $2 AND name = $3 AND category_type = $4 ORDER BY level, id LIMIT 1")
        .bind(&ws.workspace_id)
        .bind(&company.id)
        .bind(name)
        .bind(polarity.transaction_type())
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?;
    if let Some(row) = found {
        return Ok(Some(row.try_get(0).map_err(db_error)?));
    }
    let id = uuid::Uuid::new_v4().to_string();
    let now = crate::clock::now_rfc3339();
    sqlx::query(
        "INSERT INTO categories (id, workspace_id, company_id, name, parent_id, level, category_type, created_at, updated_at,
                                 created_via, updated_via, created_by, updated_by)
         VALUES ($1, $2, $3, $4, NULL, 1, $5, $6, $6, $7, $7, $8, $8)",
    )
    .bind(&id)
    .bind(&ws.workspace_id)
    .bind(&company.id)
    .bind(name)
    .bind(polarity.transaction_type())
    .bind(&now)
    .bind(ctx.channel.as_str())
    .bind(&ctx.identity.user_id)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    audit_write(ctx, conn, ws, "categories.create", "category", &id).await?;
    Ok(Some(id))
}

/// A classification center usable with `polarity` in `company` (by id).
pub async fn center(conn: &mut AnyConnection, ws: &Membership, company: &CompanyRef, polarity: Polarity, field: &str, id: &str) -> Result<String, ApiError> {
    let id = body_id(field, id)?;
    let row = sqlx::query("SELECT company_id, center_type FROM classification_centers WHERE workspace_id = $1 AND id = $2")
        .bind(&ws.workspace_id)
        .bind(&id)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?
        .ok_or_else(|| not_in_workspace(field, "Classification center"))?;
    let (owner, kind): (String, String) = (row.try_get(0).map_err(db_error)?, row.try_get(1).map_err(db_error)?);
    if owner != company.id {
        return Err(unprocessable(field, "company_mismatch", "The classification center does not belong to the given company"));
    }
    if !polarity.center_types().contains(&kind.as_str()) {
        return Err(unprocessable(field, "type_mismatch", "The classification center's type does not match the record"));
    }
    Ok(id)
}

/// The classification center of a record by id, or found/created by name (type cost for
/// debit, revenue for credit; an existing `both` center matches either).
pub async fn center_by_id_or_name(
    ctx: &OpContext<'_>,
    conn: &mut AnyConnection,
    ws: &Membership,
    company: &CompanyRef,
    polarity: Polarity,
    id: Option<&str>,
    name: Option<&str>,
) -> Result<Option<String>, ApiError> {
    exclusive("classification_center_id", id, "classification_center_name", name)?;
    if let Some(id) = id {
        return center(conn, ws, company, polarity, "classification_center_id", id).await.map(Some);
    }
    let Some(name) = name.map(str::trim) else { return Ok(None) };
    let [own, both] = polarity.center_types();
    let found = sqlx::query(
        "SELECT id FROM classification_centers WHERE workspace_id = $1 AND company_id = $2 AND name = $3
            AND center_type IN ($4, $5) ORDER BY id LIMIT 1",
    )
    .bind(&ws.workspace_id)
    .bind(&company.id)
    .bind(name)
    .bind(own)
    .bind(both)
    .fetch_optional(&mut *conn)
    .await
    .map_err(db_error)?;
    if let Some(row) = found {
        return Ok(Some(row.try_get(0).map_err(db_error)?));
    }
    let id = uuid::Uuid::new_v4().to_string();
    let now = crate::clock::now_rfc3339();
    sqlx::query(
        "INSERT INTO classification_centers (id, workspace_id, company_id, name, center_type, active, created_at, updated_at,
                                             created_via, updated_via, created_by, updated_by)
         VALUES ($1, $2, $3, $4, $5, 1, $6, $6, $7, $7, $8, $8)",
    )
    .bind(&id)
    .bind(&ws.workspace_id)
    .bind(&company.id)
    .bind(name)
    .bind(own)
    .bind(&now)
    .bind(ctx.channel.as_str())
    .bind(&ctx.identity.user_id)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    audit_write(ctx, conn, ws, "classification_centers.create", "classification_center", &id).await?;
    Ok(Some(id))
}

/// The person of a record by id (same company, not deleted), or found/created by name
/// (a supplier for debit, a customer for credit; an existing person found by name is
/// marked as such).
pub async fn person(
    ctx: &OpContext<'_>,
    conn: &mut AnyConnection,
    ws: &Membership,
    company: &CompanyRef,
    polarity: Polarity,
    id: Option<&str>,
    name: Option<&str>,
) -> Result<Option<String>, ApiError> {
    exclusive("person_id", id, "person_name", name)?;
    if let Some(id) = id {
        let id = body_id("person_id", id)?;
        let row = sqlx::query("SELECT company_id FROM people WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL")
            .bind(&ws.workspace_id)
            .bind(&id)
            .fetch_optional(&mut *conn)
            .await
            .map_err(db_error)?
            .ok_or_else(|| not_in_workspace("person_id", "Person"))?;
        let owner: String = row.try_get(0).map_err(db_error)?;
        if owner != company.id {
            return Err(unprocessable("person_id", "company_mismatch", "The person does not belong to the given company"));
        }
        return Ok(Some(id));
    }
    let Some(name) = name.map(str::trim) else { return Ok(None) };
    let flag = match polarity {
        Polarity::Debit => "is_supplier",
        Polarity::Credit => "is_customer",
    };
    let found = sqlx::query("SELECT id FROM people WHERE workspace_id = $1 AND company_id = $2 AND name = $3 AND deleted_at IS NULL ORDER BY id LIMIT 1")
        .bind(&ws.workspace_id)
        .bind(&company.id)
        .bind(name)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)?;
    let now = crate::clock::now_rfc3339();
    if let Some(row) = found {
        let id: String = row.try_get(0).map_err(db_error)?;
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE people SET {flag} = 1, updated_at = $1, updated_via = $2, updated_by = $3 WHERE id = $4 AND {flag} = 0"
        )))
        .bind(&now)
        .bind(ctx.channel.as_str())
        .bind(&ctx.identity.user_id)
        .bind(&id)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
        return Ok(Some(id));
    }
    let id = uuid::Uuid::new_v4().to_string();
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO people (id, workspace_id, company_id, name, {flag}, active, created_at, updated_at,
                             created_via, updated_via, created_by, updated_by)
         VALUES ($1, $2, $3, $4, 1, 1, $5, $5, $6, $6, $7, $7)"
    )))
    .bind(&id)
    .bind(&ws.workspace_id)
    .bind(&company.id)
    .bind(name)
    .bind(&now)
    .bind(ctx.channel.as_str())
    .bind(&ctx.identity.user_id)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    audit_write(ctx, conn, ws, "people.create", "person", &id).await?;
    Ok(Some(id))
}
