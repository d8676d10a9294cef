//! `finance_people_*`: the `/v1/people` operations (vendors and customers) as tools.

use super::records::{create_tool, delete_tool, get_tool, list_tool, update_tool};
use crate::mcp::tools::ToolSpec;
use crate::ops::people::People;

pub static TOOLS: &[ToolSpec] = &[
    list_tool::<People>(
        "finance_people_list",
        "List people",
        "Lists vendors and customers (CPF or CNPJ). A person's id is person_id on bills and transactions.",
    ),
    get_tool::<People>(
        "finance_people_get",
        "Get a person",
        "One vendor or customer, with documents, contacts and notes.",
    ),
    create_tool::<People>(
        "finance_people_create",
        "Create a person",
        "Registers a vendor or customer of a company (CPF/CNPJ check digits validated).",
    ),
    update_tool::<People>(
        "finance_people_update",
        "Update a person",
        "Changes the fields sent; an empty string clears a text field. The company cannot change.",
    ),
    delete_tool::<People>(
        "finance_people_delete",
        "Delete a person",
        "Deletes a vendor or customer; records that name them keep their history. Asks the user to confirm.",
    ),
];
