//! `finance_categories_*`: the `/v1/categories` operations as tools.

use super::records::{create_tool, delete_tool, get_tool, list_tool, records, update_tool};
use crate::domain::roles::Resource;
use crate::mcp::tools::ToolSpec;
use crate::ops::categories::{self, Category, CategoryCreate, CategoryUpdate};

records!(Categories, categories, Resource::Categories, "/v1/categories", "category",
    row: Category, record: Category, create: CategoryCreate, created: Category, update: CategoryUpdate,
    label: |c| format!("“{}” ({} category, level {})", c.name, c.category_type.as_str(), c.level));

pub static TOOLS: &[ToolSpec] = &[
    list_tool::<Categories>(
        "finance_categories_list",
        "List categories",
        "Lists the chart of accounts (categories) of a company: a tree up to three levels, each category of type debit \
(expenses, for payables and outgoing transactions) or credit (income, for receivables and incoming ones). Filter by \
company_id, parent_id, type, level or name; sort by name, level or created_at. Use a category's id as category_id when \
classifying payables, receivables or transactions.",
    ),
    get_tool::<Categories>("finance_categories_get", "Get a category", "Gets one category by id, with its parent and level."),
    create_tool::<Categories>(
        "finance_categories_create",
        "Create a category",
        "Creates a category in a company's chart: name, type (debit|credit) and optionally parent_id (a category of the \
same company; at most three levels; the parent cannot change later). Pass an idempotency_key to make a retry safe.",
    ),
    update_tool::<Categories>(
        "finance_categories_update",
        "Update a category",
        "Renames a category or changes its type (the change cascades to its descendants; refused while records of the \
other polarity use the tree). The parent and the company cannot change.",
    ),
    delete_tool::<Categories>(
        "finance_categories_delete",
        "Delete a category",
        "Deletes a category that has no children and that no record uses (otherwise the error lists what uses it). \
Destructive: the server asks the user to confirm before anything changes.",
    ),
];
