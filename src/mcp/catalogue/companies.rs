//! `finance_companies_*`: the `/v1/companies` operations as tools.

use super::records::{create_tool, delete_tool, get_tool, list_tool, update_tool};
use crate::mcp::tools::ToolSpec;
use crate::ops::companies::Companies;

pub static TOOLS: &[ToolSpec] = &[
    list_tool::<Companies>(
        "finance_companies_list",
        "List companies",
        "Lists the companies (CNPJ entities). Every record belongs to one: its id is company_id.",
    ),
    get_tool::<Companies>(
        "finance_companies_get",
        "Get a company",
        "One company, with tax regime, address and closed period (locked_until).",
    ),
    create_tool::<Companies>(
        "finance_companies_create",
        "Create a company",
        "Creates a company (CNPJ check digits validated, one active per CNPJ). Records dated on or before locked_until \
can no longer change.",
    ),
    update_tool::<Companies>(
        "finance_companies_update",
        "Update a company",
        "Changes the fields sent; null clears a field. The CNPJ cannot change.",
    ),
    delete_tool::<Companies>(
        "finance_companies_delete",
        "Delete a company",
        "Deletes a company nothing uses (else the error lists what does). Asks the user to confirm.",
    ),
];
