//! `finance_companies_*`: the `/v1/companies` operations as tools.

use super::records::{create_tool, delete_tool, get_tool, list_tool, records, update_tool};
use crate::domain::roles::Resource;
use crate::mcp::tools::ToolSpec;
use crate::ops::companies::{self, Company, CompanyCreate, CompanyUpdate};

records!(Companies, companies, Resource::Companies, "/v1/companies", "company",
    row: Company, record: Company, create: CompanyCreate, created: Company, update: CompanyUpdate,
    label: |c| format!("{} (CNPJ {})", c.name, c.cnpj));

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
