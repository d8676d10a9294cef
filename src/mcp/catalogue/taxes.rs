//! `finance_taxes_*`: the `/v1/taxes` operations as tools.

use super::records::{create_tool, delete_tool, get_tool, list_tool, records, update_tool};
use crate::domain::roles::Resource;
use crate::mcp::tools::ToolSpec;
use crate::ops::taxes::{self, Tax, TaxCreate, TaxUpdate};

records!(Taxes, taxes, Resource::Taxes, "/v1/taxes", "tax",
    row: Tax, record: Tax, create: TaxCreate, created: Tax, update: TaxUpdate,
    label: |t| match &t.default_rate {
        Some(rate) => format!("{} ({rate} %)", t.name),
        None => t.name.clone(),
    });

pub static TOOLS: &[ToolSpec] = &[
    list_tool::<Taxes>(
        "finance_taxes_list",
        "List taxes",
        "Lists the taxes of a workspace (IRRF, INSS, ISS, PIS, COFINS, CSLL…) with their default rate and whether they \
are withheld. Filter by name, active or default_withholding. Use a tax's id in tax_charges of payables and receivables.",
    ),
    get_tool::<Taxes>("finance_taxes_get", "Get a tax", "Gets one tax by id."),
    create_tool::<Taxes>(
        "finance_taxes_create",
        "Create a tax",
        "Creates a tax: name (unique in the workspace), default_rate as a percentage with decimals (\"1.50\" = 1.5 %), \
default_withholding (default true), active. Pass an idempotency_key to make a retry safe.",
    ),
    update_tool::<Taxes>("finance_taxes_update", "Update a tax", "Changes the fields sent; null clears default_rate."),
    delete_tool::<Taxes>(
        "finance_taxes_delete",
        "Delete a tax",
        "Deletes a tax that no charge uses (otherwise the error lists what uses it). Destructive: the server asks the \
user to confirm before anything changes.",
    ),
];
