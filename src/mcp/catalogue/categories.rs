//! `finance_categories_*`: the `/v1/categories` operations as tools.

use super::records::{create_tool, delete_tool, get_tool, list_tool, update_tool};
use crate::mcp::tools::ToolSpec;
use crate::ops::categories::Categories;

pub static TOOLS: &[ToolSpec] = &[
    list_tool::<Categories>(
        "finance_categories_list",
        "List categories",
        "Lists a company's chart of accounts: a tree of up to 3 levels, debit (expenses) or credit (income). Its id is \
category_id on bills and transactions.",
    ),
    get_tool::<Categories>("finance_categories_get", "Get a category", "One category, with its parent and level."),
    create_tool::<Categories>(
        "finance_categories_create",
        "Create a category",
        "Creates a category, optionally under parent_id (same company, at most 3 levels).",
    ),
    update_tool::<Categories>(
        "finance_categories_update",
        "Update a category",
        "Renames a category or changes its type (cascades to its descendants). Parent and company cannot change.",
    ),
    delete_tool::<Categories>(
        "finance_categories_delete",
        "Delete a category",
        "Deletes a category without children that nothing uses. Asks the user to confirm.",
    ),
];
