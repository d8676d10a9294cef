//! `finance_taxes_*`: the `/v1/taxes` operations as tools.

use super::records::{create_tool, delete_tool, get_tool, list_tool, update_tool};
use crate::mcp::tools::ToolSpec;
use crate::ops::taxes::Taxes;

pub static TOOLS: &[ToolSpec] = &[
    list_tool::<Taxes>(
        "finance_taxes_list",
        "List taxes",
        "Lists the taxes (IRRF, INSS, ISS…) with default rate and withholding: ids for the tax_charges of bills.",
    ),
    get_tool::<Taxes>("finance_taxes_get", "Get a tax", "One tax."),
    create_tool::<Taxes>("finance_taxes_create", "Create a tax", "Creates a tax (name unique in the workspace)."),
    update_tool::<Taxes>("finance_taxes_update", "Update a tax", "Changes the fields sent; null clears default_rate."),
    delete_tool::<Taxes>(
        "finance_taxes_delete",
        "Delete a tax",
        "Deletes a tax no charge uses. Asks the user to confirm.",
    ),
];
