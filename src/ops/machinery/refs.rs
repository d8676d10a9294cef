//! References between finance records, checked once for every door and every record:
//! the company of a record (and its closed period), the account (same company, or any
//! for a transfer's legs), the bank of an account or a payee (on the bank list), the tax
//! of a charge, and the category,
//! classification center and person of a transaction or a bill — by id, or found or
//! created by name (`*_name`, mutually exclusive with `*_id`), always with the polarity
//! of the record (debit: debit category, cost center, supplier; credit: credit
//! category, revenue center, customer).

use crate::storage::{sql, Conn};
use serde_json::json;

use super::common::{body_id, invalid, unprocessable};

use crate::domain::dates::Date;
use crate::error::ApiError;
use crate::storage::identity::Membership;

/// A register record of a bill or a transaction, by id or by name: its id (found, or
/// created by name), or `None` when neither was given.
pub type Found = Result<Option<String>, ApiError>;

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
    pub fn center_types(self) -> [&'static str; 2] {
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
    pub locked_until: Option<Date>,
}

/// 422 `invalid_reference`: the record named in `field` is not one of the workspace's.
pub fn not_in_workspace(field: &str, what: &str) -> ApiError {
    unprocessable(field, "invalid_reference", &format!("{what} not found in this workspace"))
}

/// The company `company_id` of the workspace (422 `invalid_reference` otherwise).
pub async fn company(conn: &mut Conn, ws: &Membership, field: &str, company_id: &str) -> Result<CompanyRef, ApiError> {
    let id = body_id(field, company_id)?;
    let row =
        sql::query("SELECT id, locked_until FROM companies WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL")
            .bind(&ws.workspace_id)
            .bind(&id)
            .fetch_optional(&mut *conn)
            .await?
            .ok_or_else(|| not_in_workspace(field, "Company"))?;
    Ok(CompanyRef { id: row.try_get(0)?, locked_until: row.try_get(1)? })
}

/// 422 `invalid_reference`: `field` names no bank of the bank list.
fn not_a_bank(field: &str, value: &str) -> ApiError {
    unprocessable(field, "invalid_reference", &format!("{value:?} is not a bank of the bank list (GET /v1/banks)"))
}

/// The bank of an account, as a write names it: by id (`bank_id`) or by COMPE code
/// (`bank_code`), not both (400). Its id, when it is one the bank list offers — or
/// `keep`, the account's bank, which stays its bank after it left the list; 422
/// `invalid_reference` naming the field otherwise.
pub async fn bank(conn: &mut Conn, id: Option<&str>, code: Option<&str>, keep: Option<&str>) -> Found {
    match (id, code) {
        (Some(_), Some(_)) => Err(ApiError::bad_request("bank_id and bank_code are mutually exclusive")
            .with_details(json!({ "field": "bank_code", "reason": "mutually_exclusive" }))),
        (Some(id), None) => {
            let id = body_id("bank_id", id)?;
            if keep == Some(id.as_str()) || crate::storage::banks::is_offered(conn, &id).await? {
                Ok(Some(id))
            } else {
                Err(not_a_bank("bank_id", &id))
            }
        }
        (None, Some(code)) => {
            if !crate::domain::coordinates::is_compe(code) {
                return Err(unprocessable("bank_code", "invalid_value", "bank_code must be the 3-digit COMPE code"));
            }
            crate::storage::banks::by_code(conn, code).await?.map(Some).ok_or_else(|| not_a_bank("bank_code", code))
        }
        (None, None) => Ok(None),
    }
}

/// A payee's bank, by COMPE code and by ISPB, each checked against the bank list when it
/// is new (a payee's bank that left the list since it was recorded stays): 422
/// `invalid_reference` naming the field.
pub async fn payee_bank(
    conn: &mut Conn,
    (code, ispb): (Option<&str>, Option<&str>),
    (kept_code, kept_ispb): (Option<&str>, Option<&str>),
) -> Result<(), ApiError> {
    if let Some(code) = code.filter(|c| Some(*c) != kept_code) {
        if crate::storage::banks::by_code(conn, code).await?.is_none() {
            return Err(not_a_bank("bank_code", code));
        }
    }
    if let Some(ispb) = ispb.filter(|i| Some(*i) != kept_ispb) {
        if !crate::storage::banks::is_listed_ispb(conn, ispb).await? {
            return Err(not_a_bank("bank_ispb", ispb));
        }
    }
    Ok(())
}

/// Refuses a write touching a record dated on or before the company's `locked_until`
/// (422 `period_closed`).
pub fn check_period(company: &CompanyRef, field: &str, date: Date) -> Result<(), ApiError> {
    match company.locked_until {
        Some(locked) if date <= locked => {
            Err(ApiError::new(crate::error::ErrorCode::UnprocessableEntity, "The period is closed for this company")
                .with_details(json!({ "field": field, "reason": "period_closed", "locked_until": locked })))
        }
        _ => Ok(()),
    }
}

/// A kind of record a body field can name by id: the statement that reads its company
/// (then its type) by workspace and id, what it is called in errors, and the reason of
/// the 422 when it belongs to another company.
struct Referenced {
    sql: &'static str,
    what: &'static str,
    mismatch: &'static str,
}

impl Referenced {
    /// A register record of the company (`company_mismatch` when it is another's).
    const fn of_company(sql: &'static str, what: &'static str) -> Referenced {
        Referenced { sql, what, mismatch: "company_mismatch" }
    }
}

const ACCOUNT: Referenced = Referenced {
    sql: "SELECT company_id FROM financial_accounts WHERE workspace_id = $1 AND id = $2",
    what: "Financial account",
    mismatch: "account_company_mismatch",
};
const PERSON: Referenced = Referenced::of_company(
    "SELECT company_id FROM people WHERE workspace_id = $1 AND id = $2 AND deleted_at IS NULL",
    "Person",
);
const CATEGORY: Referenced = Referenced::of_company(
    "SELECT company_id, category_type FROM categories WHERE workspace_id = $1 AND id = $2",
    "Category",
);
const CENTER: Referenced = Referenced::of_company(
    "SELECT company_id, center_type FROM classification_centers WHERE workspace_id = $1 AND id = $2",
    "Classification center",
);

/// The financial account `account_id`, which must belong to `company`.
pub async fn account(
    conn: &mut Conn,
    ws: &Membership,
    company: &CompanyRef,
    field: &str,
    account_id: &str,
) -> Result<String, ApiError> {
    Ok(owned(conn, ws, company, &ACCOUNT, field, account_id).await?.0)
}

/// The row `sql` reads (by workspace `$1` and id `$2`) for the id in `field`: 400 for a
/// malformed id, 422 `invalid_reference` naming `what` when the workspace has none.
async fn found(
    conn: &mut Conn,
    ws: &Membership,
    (sql, what): (&'static str, &str),
    field: &str,
    id: &str,
) -> Result<(String, crate::storage::OwnedRow), ApiError> {
    let id = body_id(field, id)?;
    let row = sql::query(sql)
        .bind(&ws.workspace_id)
        .bind(&id)
        .fetch_optional(&mut *conn)
        .await?
        .ok_or_else(|| not_in_workspace(field, what))?;
    Ok((id, row))
}

/// The record of kind `kind` named by the id in `field`, which must belong to
/// `company`. None in the workspace is 422 `invalid_reference`, another company's is
/// 422 with the kind's `mismatch` reason.
async fn owned(
    conn: &mut Conn,
    ws: &Membership,
    company: &CompanyRef,
    kind: &Referenced,
    field: &str,
    id: &str,
) -> Result<(String, crate::storage::OwnedRow), ApiError> {
    let Referenced { sql, what, mismatch } = *kind;
    let (id, row) = found(conn, ws, (sql, what), field, id).await?;
    let owner: String = row.try_get(0)?;
    if owner != company.id {
        return Err(unprocessable(
            field,
            mismatch,
            &format!("The {} does not belong to the given company", what.to_lowercase()),
        ));
    }
    Ok((id, row))
}

/// The financial account `account_id` of the workspace, of any company, with its
/// company (a transfer's legs may belong to two).
pub async fn account_anywhere(
    conn: &mut Conn,
    ws: &Membership,
    field: &str,
    account_id: &str,
) -> Result<(String, CompanyRef), ApiError> {
    let (id, row) = found(conn, ws, (ACCOUNT.sql, ACCOUNT.what), field, account_id).await?;
    let company_id: String = row.try_get(0)?;
    Ok((id, company(conn, ws, field, &company_id).await?))
}

/// What a query string names: the company `company_id` and the account of `account`
/// (its parameter and id), each the workspace's own and live — 422
/// `invalid_reference` naming the parameter otherwise, as for a body's reference (an
/// unknown, a deleted and another workspace's are one answer) — and the account of the
/// company when both are named (422 `account_company_mismatch`). Answers the company:
/// the one named, else the account's.
pub async fn named(
    conn: &mut Conn,
    ws: &Membership,
    company_id: Option<&str>,
    account_id: Option<(&str, &str)>,
) -> Result<Option<CompanyRef>, ApiError> {
    let named = match company_id {
        Some(id) => Some(company(conn, ws, "company_id", id).await?),
        None => None,
    };
    match (account_id, named) {
        (Some((field, id)), Some(named)) => {
            account(conn, ws, &named, field, id).await?;
            Ok(Some(named))
        }
        (Some((field, id)), None) => Ok(Some(account_anywhere(conn, ws, field, id).await?.1)),
        (None, named) => Ok(named),
    }
}

/// What a list filter of this name refers to: `Some(None)` the company, `Some(kind)`
/// a record of a company, `None` nothing [`filtered`] checks.
fn filter_refers_to(name: &str) -> Option<Option<&'static Referenced>> {
    match name {
        "company_id" => Some(None),
        "financial_account_id" | "expected_account_id" => Some(Some(&ACCOUNT)),
        "person_id" => Some(Some(&PERSON)),
        "category_id" | "parent_id" => Some(Some(&CATEGORY)),
        "classification_center_id" => Some(Some(&CENTER)),
        _ => None,
    }
}

/// What a list's filters name (`filters`, as [`super::list::ListRequest`] holds them,
/// values already checked to be UUIDs): each company, account, person, category and
/// center, every value of an `[in]`, the workspace's own and live — 422
/// `invalid_reference` naming the filter otherwise, as [`named`] answers a query's and a
/// body's reference — and, when the filters name one company, each record of that
/// company (422 `account_company_mismatch`, `company_mismatch`).
pub async fn filtered(
    conn: &mut Conn,
    ws: &Membership,
    filters: &[(String, super::list::Op, Vec<String>)],
) -> Result<(), ApiError> {
    let mut companies = Vec::new();
    for (name, _, values) in filters.iter().filter(|(name, _, _)| matches!(filter_refers_to(name), Some(None))) {
        for value in values {
            companies.push(company(conn, ws, name, value).await?);
        }
    }
    let one_company = match companies.as_slice() {
        [one] => Some(one),
        _ => None,
    };
    for (name, _, values) in filters {
        let Some(Some(kind)) = filter_refers_to(name) else { continue };
        for value in values {
            match one_company {
                Some(company) => owned(conn, ws, company, kind, name, value).await.map(drop)?,
                None => found(conn, ws, (kind.sql, kind.what), name, value).await.map(drop)?,
            }
        }
    }
    Ok(())
}

/// The tax `tax_id` of the workspace (taxes belong to no company).
pub async fn tax(conn: &mut Conn, ws: &Membership, field: &str, tax_id: &str) -> Result<String, ApiError> {
    const TAX: &str = "SELECT id FROM taxes WHERE workspace_id = $1 AND id = $2";
    Ok(found(conn, ws, (TAX, "Tax"), field, tax_id).await?.0)
}

/// As [`owned`], and its type must be one of `accepted` (422 `type_mismatch`).
async fn typed(
    conn: &mut Conn,
    ws: &Membership,
    company: &CompanyRef,
    (kind, accepted): (&Referenced, &[&str]),
    field: &str,
    id: &str,
) -> Result<String, ApiError> {
    let (id, row) = owned(conn, ws, company, kind, field, id).await?;
    let stored_type: String = row.try_get(1)?;
    if !accepted.contains(&stored_type.as_str()) {
        return Err(unprocessable(
            field,
            "type_mismatch",
            &format!("The {}'s type does not match the record", kind.what.to_lowercase()),
        ));
    }
    Ok(id)
}

/// The id of the first row `query` finds, if any.
pub async fn first_id(conn: &mut Conn, query: sql::Query<'_>) -> Result<Option<String>, ApiError> {
    Ok(query.map_optional(&mut *conn, |row| row.try_get(0)).await?)
}

/// `*_id` and `*_name` are mutually exclusive (400).
pub fn exclusive<'a>(
    id_field: &str,
    id: Option<&'a str>,
    name_field: &str,
    name: Option<&'a str>,
) -> Result<(), ApiError> {
    if id.is_some() && name.is_some() {
        return Err(invalid(
            id_field,
            "mutually_exclusive",
            &format!("{id_field} and {name_field} are mutually exclusive"),
        ));
    }
    if let Some(n) = name {
        if n.trim().is_empty() || n.chars().count() > 255 {
            return Err(invalid(name_field, "invalid_value", &format!("{name_field} must have 1 to 255 characters")));
        }
    }
    Ok(())
}

/// A classification center usable with `polarity` in `company` (by id).
pub async fn center(
    conn: &mut Conn,
    ws: &Membership,
    company: &CompanyRef,
    polarity: Polarity,
    field: &str,
    id: &str,
) -> Result<String, ApiError> {
    typed(conn, ws, company, (&CENTER, &polarity.center_types()), field, id).await
}

/// A person of `company` by id (not deleted): an automatic rule's criterion or action.
pub async fn person(
    conn: &mut Conn,
    ws: &Membership,
    company: &CompanyRef,
    field: &str,
    id: &str,
) -> Result<String, ApiError> {
    Ok(owned(conn, ws, company, &PERSON, field, id).await?.0)
}

/// A category of `company` by id whose type is one of `types` (`debit`, `credit`).
pub async fn category(
    conn: &mut Conn,
    ws: &Membership,
    company: &CompanyRef,
    field: &str,
    id: &str,
    types: &[&str],
) -> Result<String, ApiError> {
    typed(conn, ws, company, (&CATEGORY, types), field, id).await
}

/// A classification center of `company` by id, of any type.
pub async fn any_center(
    conn: &mut Conn,
    ws: &Membership,
    company: &CompanyRef,
    field: &str,
    id: &str,
) -> Result<String, ApiError> {
    typed(conn, ws, company, (&CENTER, &["cost", "revenue", "both"]), field, id).await
}
