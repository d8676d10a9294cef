//! `finance_cost_centers_*`: the `/v1/classification_centers` operations as tools.

use super::records::{create_tool, delete_tool, get_tool, list_tool, update_tool};
use crate::mcp::tools::ToolSpec;
use crate::ops::cost_centers::CostCenters;

pub static TOOLS: &[ToolSpec] = &[
    list_tool::<CostCenters>(
        "finance_cost_centers_list",
        "List cost centers",
        "Lists the cost and revenue (classification) centers of a company: ids for classification_center_id and \
apportionments.",
    ),
    get_tool::<CostCenters>("finance_cost_centers_get", "Get a cost center", "One classification center."),
    create_tool::<CostCenters>(
        "finance_cost_centers_create",
        "Create a cost center",
        "Creates a classification center of a company.",
    ),
    update_tool::<CostCenters>(
        "finance_cost_centers_update",
        "Update a cost center",
        "Changes the fields sent; deactivate a center that records use instead of deleting it.",
    ),
    delete_tool::<CostCenters>(
        "finance_cost_centers_delete",
        "Delete a cost center",
        "Deletes a classification center nothing uses. Asks the user to confirm.",
    ),
];
