//! `finance_cost_centers_*`: the `/v1/classification_centers` operations as tools.

use super::records::{create_tool, delete_tool, get_tool, list_tool, records, update_tool};
use crate::domain::roles::Resource;
use crate::mcp::tools::ToolSpec;
use crate::ops::cost_centers::{self, Center, CenterCreate, CenterUpdate};

records!(CostCenters, cost_centers, Resource::CostCenters, "/v1/classification_centers", "cost center",
    row: Center, record: Center, create: CenterCreate, created: Center, update: CenterUpdate,
    label: |c| format!("“{}” ({})", c.name, c.center_type.as_str()));

pub static TOOLS: &[ToolSpec] = &[
    list_tool::<CostCenters>(
        "finance_cost_centers_list",
        "List cost centers",
        "Lists the classification centers (cost and revenue centers) of a company. Filter by company_id, active, type \
or name; sort by name or created_at. Use a center's id as classification_center_id, or in \
classification_center_allocations to split an amount between centers.",
    ),
    get_tool::<CostCenters>("finance_cost_centers_get", "Get a cost center", "Gets one classification center by id."),
    create_tool::<CostCenters>(
        "finance_cost_centers_create",
        "Create a cost center",
        "Creates a classification center of a company: name, type (cost|revenue|both) and optional description. Pass an \
idempotency_key to make a retry safe.",
    ),
    update_tool::<CostCenters>(
        "finance_cost_centers_update",
        "Update a cost center",
        "Changes the fields sent (name, description, active). Deactivate a center instead of deleting it when records use it.",
    ),
    delete_tool::<CostCenters>(
        "finance_cost_centers_delete",
        "Delete a cost center",
        "Deletes a classification center that no record uses (otherwise the error lists what uses it). Destructive: \
the server asks the user to confirm before anything changes.",
    ),
];
