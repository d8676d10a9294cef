//! `finance_companies_*`: the `/v1/companies` operations as tools.

use sqlx::AnyConnection;

use super::records::{create_tool, delete_tool, get_tool, list_tool, update_tool, Deletable, Records, Writable};
use crate::domain::roles::Resource;
use crate::error::ApiError;
use crate::mcp::tools::ToolSpec;
use crate::ops::companies::{self, Company, CompanyCreate, CompanyUpdate};
use crate::ops::list::{ListRequest, ListSpec};
use crate::ops::{OpContext, Page};
use crate::storage::identity::Membership;

pub struct Companies;

impl Records for Companies {
    const RESOURCE: Resource = Resource::Companies;
    const COLLECTION: &'static str = "/v1/companies";
    const NOUN: &'static str = "company";
    type Row = Company;
    type Record = Company;
    fn spec() -> &'static ListSpec {
        &companies::LIST
    }
    async fn list(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, request: &ListRequest) -> Result<Page<Company>, ApiError> {
        companies::list(ctx, conn, ws, request).await
    }
    async fn get(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, id: &str) -> Result<Company, ApiError> {
        companies::get(ctx, conn, ws, id).await
    }
    fn label(company: &Company) -> String {
        format!("{} (CNPJ {})", company.name, company.cnpj)
    }
}

impl Writable for Companies {
    type Create = CompanyCreate;
    type Created = Company;
    type Update = CompanyUpdate;
    async fn create(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, input: CompanyCreate) -> Result<Company, ApiError> {
        companies::create(ctx, conn, ws, input).await
    }
    async fn update(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, id: &str, input: CompanyUpdate) -> Result<Company, ApiError> {
        companies::update(ctx, conn, ws, id, input).await
    }
}

impl Deletable for Companies {
    async fn delete(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, id: &str) -> Result<(), ApiError> {
        companies::delete(ctx, conn, ws, id).await
    }
}

pub static TOOLS: &[ToolSpec] = &[
    list_tool::<Companies>(
        "finance_companies_list",
        "List companies",
        "Lists the companies (CNPJ legal entities) of a workspace. Filters: active, name, cnpj, type (matriz|filial), \
created_at; sort name or created_at. Every other finance record belongs to a company: use its id as company_id.",
    ),
    get_tool::<Companies>(
        "finance_companies_get",
        "Get a company",
        "Gets one company by id, with its tax regime, address and closed period (locked_until).",
    ),
    create_tool::<Companies>(
        "finance_companies_create",
        "Create a company",
        "Creates a company from its legal name and CNPJ (check digits are validated; one active company per CNPJ). \
Optional: trade_name, municipal_registration, tax_regime, address, locked_until (YYYY-MM-DD: records dated on or before \
it can no longer change). Pass an idempotency_key to make a retry safe.",
    ),
    update_tool::<Companies>(
        "finance_companies_update",
        "Update a company",
        "Changes the fields sent (name, active, trade_name, municipal_registration, tax_regime, address, locked_until); \
null clears an optional field. The CNPJ cannot change.",
    ),
    delete_tool::<Companies>(
        "finance_companies_delete",
        "Delete a company",
        "Deletes a company that no account, transaction, bill or person uses (otherwise the error lists what uses it). \
Destructive: the server asks the user to confirm before anything changes.",
    ),
];
