//! Companies (`/v1/companies`, scope `finance.companies`): the legal entities (CNPJ) of
//! a workspace that every other finance record belongs to.
//!
//! Rules: the CNPJ is validated (check digits; the alphanumeric format is accepted) and
//! immutable, and one active company per CNPJ exists in a workspace (409 `conflict`);
//! headquarters/branch (`type`) follows from the CNPJ; `locked_until` closes a period
//! for the records of the company. Deleting needs the delete permission (not the
//! `finance` role).

use crate::domain::text::quoted;
use crate::ops::machinery::stamps::Stamp;
use crate::ops::machinery::stamps::Stamps;
use crate::storage::{sql, Conn};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::machinery::common::{conflict_on_unique, required, required_if_sent, unprocessable};
use super::machinery::crud::{self, record_table};
use super::machinery::list::ListRequest;
use super::machinery::list::{list_spec, ListSpec};
use super::machinery::resource::{Declaration, Deletable, Op, Records, Writable};
use super::machinery::validate::nullable;
use super::OpContext;
use super::Page;
use crate::domain::dates::{Date, Timestamp};
use crate::domain::documents::{cnpj_is_headquarters, is_valid_cnpj, normalize};
use crate::domain::roles::{Access, Resource};
use crate::error::ApiError;
use crate::storage::db_error;
use crate::storage::identity::Membership;

/// Brazilian tax regimes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum TaxRegime {
    SimplesNacional,
    SimplesNacionalExcessoSublimite,
    MicroempreendedorIndividual,
    LucroPresumido,
    LucroReal,
    Isento,
}

/// A postal address; replaced whole on update.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Address {
    #[schemars(length(min = 1, max = 255))]
    pub street: String,
    #[schemars(length(min = 1, max = 20))]
    pub number: String,
    #[serde(default)]
    #[schemars(length(max = 255))]
    pub complement: Option<String>,
    #[schemars(length(min = 1, max = 255))]
    pub neighborhood: String,
    #[schemars(length(min = 1, max = 255))]
    pub city: String,
    /// IBGE municipality code (7 digits).
    #[serde(default)]
    #[schemars(length(min = 7, max = 7))]
    pub city_ibge_code: Option<String>,
    /// UF, two letters.
    #[schemars(length(min = 2, max = 2))]
    pub state: String,
    /// CEP, 8 digits (a hyphen is accepted).
    #[schemars(length(min = 8, max = 9))]
    pub zip_code: String,
}

/// `POST /v1/companies`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompanyCreate {
    /// Legal name (razão social).
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(min = 1, max = 255))]
    pub name: String,
    /// CNPJ: 14 characters, digits or the alphanumeric format; punctuation is ignored.
    /// Check digits are validated. Immutable.
    #[schemars(length(min = 14, max = 18))]
    pub cnpj: String,
    #[serde(default)]
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(max = 255))]
    pub trade_name: Option<String>,
    #[serde(default)]
    #[schemars(length(max = 50))]
    pub municipal_registration: Option<String>,
    #[serde(default)]
    pub tax_regime: Option<TaxRegime>,
    #[serde(default)]
    pub address: Option<Address>,
    /// Closed period: records of this company dated on or before this day (YYYY-MM-DD)
    /// can no longer be created, changed, settled, reopened or deleted.
    #[serde(default)]
    #[schemars(extend("x-kobana-extension" = "period lock"))]
    pub locked_until: Option<Date>,
}

/// `PATCH /v1/companies/{id}`: only the fields sent change; `null` clears an optional
/// field. The CNPJ and the type cannot change.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CompanyUpdate {
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(min = 1, max = 255))]
    pub name: Option<String>,
    pub active: Option<bool>,
    #[serde(deserialize_with = "nullable")]
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(max = 255))]
    pub trade_name: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    #[schemars(length(max = 50))]
    pub municipal_registration: Option<Option<String>>,
    #[serde(deserialize_with = "nullable")]
    pub tax_regime: Option<Option<TaxRegime>>,
    #[serde(deserialize_with = "nullable")]
    pub address: Option<Option<Address>>,
    #[serde(deserialize_with = "nullable")]
    #[schemars(extend("x-kobana-extension" = "period lock"))]
    pub locked_until: Option<Option<Date>>,
}

/// A company as `/v1` returns it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Company {
    pub id: String,
    pub name: String,
    pub cnpj: String,
    /// `matriz` (headquarters) or `filial` (branch), from the CNPJ.
    #[serde(rename = "type")]
    #[schemars(extend("enum" = ["matriz", "filial"]))]
    pub company_type: String,
    pub active: bool,
    pub trade_name: Option<String>,
    pub municipal_registration: Option<String>,
    pub tax_regime: Option<TaxRegime>,
    pub address: Option<Address>,
    #[schemars(extend("x-kobana-extension" = "period lock"))]
    pub locked_until: Option<Date>,
    #[serde(flatten)]
    pub stamps: Stamps,
}

/// The `"/v1/companies"` resource: its list, its reads, writes and delete.
pub struct Companies;

impl Records for Companies {
    const LIST: &'static ListSpec = &LIST;
    const RESOURCE: Resource = Resource::Companies;
    const COLLECTION: &'static str = "/v1/companies";
    const NOUN: &'static str = "company";
    type Row = Company;
    type Record = Company;
    async fn list(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        request: &ListRequest,
    ) -> Result<Page<Company>, ApiError> {
        crud::list::<Self>(ctx, conn, ws, request).await
    }
    async fn get(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<Company, ApiError> {
        crud::get::<Self>(ctx, conn, ws, id).await
    }
    fn label(c: &Company) -> String {
        format!("{} ({})", quoted(&c.name), crate::domain::shown::document(&c.cnpj))
    }
}

impl Writable for Companies {
    type Create = CompanyCreate;
    type Created = Company;
    type Update = CompanyUpdate;
    async fn create(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        input: CompanyCreate,
    ) -> Result<Company, ApiError> {
        ctx.authorize(ws, Resource::Companies, Access::Write)?;
        let cnpj = normalize(&input.cnpj);
        if !is_valid_cnpj(&cnpj) {
            return Err(unprocessable("cnpj", "invalid_document", "The CNPJ is not valid (check digits)"));
        }
        let name = required("name", &input.name)?;
        let locked_until = input.locked_until;
        check_address(&input.address)?;
        let id = uuid::Uuid::new_v4().to_string();
        let now = Timestamp::now();
        let company_type = if cnpj_is_headquarters(&cnpj) { "matriz" } else { "filial" };
        sql::query(
            "INSERT INTO companies (id, workspace_id, name, cnpj, company_type, active, trade_name, municipal_registration,
                                    tax_regime, address, locked_until, created_at, updated_at, created_via, updated_via,
                                    created_by, updated_by)
             VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $8, $9, $10, $11, $11, $12, $12, $13, $13)",
        )
        .bind(&id)
        .bind(&ws.workspace_id)
        .bind(name)
        .bind(&cnpj)
        .bind(company_type)
        .bind(input.trade_name.as_deref())
        .bind(input.municipal_registration.as_deref())
        .bind(input.tax_regime.map(tax_regime_text))
        .bind(input.address.as_ref().map(|a| json!(a).to_string()))
        .bind(locked_until)
        .stamp(ctx, &now)
        .execute(&mut *conn)
        .await
        .map_err(conflict_on_duplicate)?;
        crud::created::<Companies>(ctx, conn, ws, &id).await
    }
    async fn update(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        id: &str,
        input: CompanyUpdate,
    ) -> Result<Company, ApiError> {
        ctx.authorize(ws, Resource::Companies, Access::Write)?;
        let current = crud::find::<Companies>(conn, ws, id).await?;
        let name = required_if_sent("name", input.name.as_deref())?;
        let locked_until = input.locked_until;
        if let Some(address) = &input.address {
            check_address(address)?;
        }
        let name = name.unwrap_or(&current.name).to_string();
        let active = input.active.unwrap_or(current.active);
        let trade_name = input.trade_name.unwrap_or(current.trade_name);
        let registration = input.municipal_registration.unwrap_or(current.municipal_registration);
        let tax_regime = input.tax_regime.unwrap_or(current.tax_regime);
        let address = input.address.unwrap_or(current.address);
        let locked_until = locked_until.unwrap_or(current.locked_until);
        let update = sql::query(
            "UPDATE companies SET name = $1, active = $2, trade_name = $3, municipal_registration = $4, tax_regime = $5,
                    address = $6, locked_until = $7, updated_at = $8, updated_via = $9, updated_by = $10
              WHERE workspace_id = $11 AND id = $12",
        )
        .bind(&name)
        .bind(if active { 1i64 } else { 0 })
        .bind(trade_name.as_deref())
        .bind(registration.as_deref())
        .bind(tax_regime.map(tax_regime_text))
        .bind(address.as_ref().map(|a| json!(a).to_string()))
        .bind(locked_until);
        crud::stamped_update::<Companies>(ctx, conn, ws, update, &current.id, conflict_on_duplicate).await?;
        crud::find::<Companies>(conn, ws, &current.id).await
    }
}

impl Deletable for Companies {
    /// Deletes a company that no account, transaction, bill or live person refers to
    /// (422 `in_use` with the counts otherwise). Its configuration — categories,
    /// classification centers and soft-deleted people — goes with it.
    async fn delete(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<(), ApiError> {
        ctx.authorize(ws, Resource::Companies, Access::Delete)?;
        let current = crud::find::<Companies>(conn, ws, id).await?;
        let mut usage = serde_json::Map::new();
        for (kind, sql) in USAGE {
            let row = sql::query(*sql).bind(&ws.workspace_id).bind(&current.id).fetch_one(&mut *conn).await?;
            let n: i64 = row.try_get(0)?;
            if n > 0 {
                usage.insert(kind.to_string(), json!(n));
            }
        }
        if !usage.is_empty() {
            return Err(ApiError::new(crate::error::ErrorCode::UnprocessableEntity, "The company is still in use")
                .with_details(json!({ "reason": "in_use", "usage": usage })));
        }
        // Categories form a tree: children first.
        for level in [3, 2, 1] {
            sql::query("DELETE FROM categories WHERE workspace_id = $1 AND company_id = $2 AND level = $3")
                .bind(&ws.workspace_id)
                .bind(&current.id)
                .bind(level as i64)
                .execute(&mut *conn)
                .await?;
        }
        for sql in [
            "DELETE FROM classification_centers WHERE workspace_id = $1 AND company_id = $2",
            "DELETE FROM people WHERE workspace_id = $1 AND company_id = $2 AND deleted_at IS NOT NULL",
        ] {
            sql::query(sql).bind(&ws.workspace_id).bind(&current.id).execute(&mut *conn).await?;
        }
        crud::deleted::<Companies>(ctx, conn, ws, &current.id, db_error).await
    }
}

/// The `/v1/companies` operations.
pub static OPERATIONS: Declaration = Declaration::of::<Companies>(&[
    Op::list::<Companies>("List companies").tool(
        "finance_companies_list",
        "List companies",
        "Lists the companies (CNPJ entities). Every record belongs to one: its id is company_id.",
    ),
    Op::get::<Companies>("Get a company").tool(
        "finance_companies_get",
        "Get a company",
        "One company, with tax regime, address and closed period (locked_until).",
    ),
    Op::create::<Companies>("Create a company").tool(
        "finance_companies_create",
        "Create a company",
        "Creates a company (CNPJ check digits validated, one active per CNPJ). Records dated on or before locked_until \
can no longer change.",
    ),
    Op::update::<Companies>("Update a company").tool(
        "finance_companies_update",
        "Update a company",
        "Changes the fields sent; null clears a field. The CNPJ cannot change.",
    ),
    Op::delete::<Companies>("Delete a company").tool(
        "finance_companies_delete",
        "Delete a company",
        "Deletes a company nothing uses (else the error lists what does). Asks the user to confirm.",
    ),
]);

pub static LIST: ListSpec = list_spec!(companies where "companies.deleted_at IS NULL";
    filters: active: Bool, name: Text, cnpj: Text, type = company_type: Enum(&["matriz", "filial"]),
        created_at: Timestamp @ "creation time";
    sorts: name, created_at;
    default: name);

record_table!(impl Table for Companies as "Company", audited as "company"; companies => Company |row| {
    id, name, company_type, active, trade_name, municipal_registration, locked_until;
    cnpj = row.try_get::<Option<String>, _>("cnpj")?.unwrap_or_default(),
    tax_regime = row.try_get::<Option<String>, _>("tax_regime")?.and_then(|t| serde_json::from_value(Value::String(t)).ok()),
    address = row.try_get::<Option<String>, _>("address")?.and_then(|a| serde_json::from_str(&a).ok());
    reads cnpj, tax_regime, address
});

fn check_address(address: &Option<Address>) -> Result<(), ApiError> {
    if let Some(a) = address {
        let zip: String = a.zip_code.chars().filter(|c| *c != '-').collect();
        if zip.len() != 8 || !zip.bytes().all(|b| b.is_ascii_digit()) {
            return Err(unprocessable("address.zip_code", "invalid_zip_code", "The CEP must have 8 digits"));
        }
        if !a.state.bytes().all(|b| b.is_ascii_uppercase()) {
            return Err(unprocessable("address.state", "invalid_state", "The state must be two upper-case letters"));
        }
        if a.city_ibge_code.as_deref().is_some_and(|c| !c.bytes().all(|b| b.is_ascii_digit())) {
            return Err(unprocessable("address.city_ibge_code", "invalid_value", "The IBGE code must have 7 digits"));
        }
    }
    Ok(())
}

fn conflict_on_duplicate(err: crate::storage::Error) -> ApiError {
    conflict_on_unique(err, "cnpj", "An active company with this CNPJ already exists in the workspace")
}

fn tax_regime_text(t: TaxRegime) -> String {
    match serde_json::to_value(t) {
        Ok(Value::String(s)) => s,
        _ => String::new(),
    }
}

/// What still refers to a company, by kind; any of these makes it `in_use`.
const USAGE: &[(&str, &str)] = &[
    ("accounts", "SELECT COUNT(*) FROM financial_accounts WHERE workspace_id = $1 AND company_id = $2"),
    ("transactions", "SELECT COUNT(*) FROM financial_transactions WHERE workspace_id = $1 AND company_id = $2"),
    ("payables", "SELECT COUNT(*) FROM billings WHERE workspace_id = $1 AND company_id = $2 AND kind = 'payable'"),
    (
        "receivables",
        "SELECT COUNT(*) FROM billings WHERE workspace_id = $1 AND company_id = $2 AND kind = 'receivable'",
    ),
    ("people", "SELECT COUNT(*) FROM people WHERE workspace_id = $1 AND company_id = $2 AND deleted_at IS NULL"),
];
