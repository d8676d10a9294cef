//! `finance_people_*`: the `/v1/people` operations (vendors and customers) as tools.

use super::records::{create_tool, delete_tool, get_tool, list_tool, records, update_tool};
use crate::domain::roles::Resource;
use crate::mcp::tools::ToolSpec;
use crate::ops::people::{self, Person, PersonCreate, PersonUpdate};

records!(People, people, Resource::People, "/v1/people", "person",
    row: Person, record: Person, create: PersonCreate, created: Person, update: PersonUpdate,
    label: |p| match &p.document_number {
        Some(document) => format!("{} ({document})", p.name),
        None => p.name.clone(),
    });

pub static TOOLS: &[ToolSpec] = &[
    list_tool::<People>(
        "finance_people_list",
        "List people",
        "Lists the vendors and customers (people: natural persons with a CPF or companies with a CNPJ) of a workspace. \
Filter by company_id, kind, is_customer, is_supplier, active, document_number or name; sort by name, created_at or \
updated_at. Use a person's id as person_id on payables, receivables and transactions.",
    ),
    get_tool::<People>("finance_people_get", "Get a person", "Gets one vendor or customer by id, with documents, contacts and notes."),
    create_tool::<People>(
        "finance_people_create",
        "Create a person",
        "Registers a vendor or customer of a company: name, and optionally legal_name, nickname, kind \
(natural|juridical), document_type and document_number (CPF/CNPJ check digits are validated), is_customer, \
is_supplier, contacts and notes. Pass an idempotency_key to make a retry safe.",
    ),
    update_tool::<People>(
        "finance_people_update",
        "Update a person",
        "Changes the fields sent; an empty string clears a text field. The company cannot change.",
    ),
    delete_tool::<People>(
        "finance_people_delete",
        "Delete a person",
        "Deletes a vendor or customer (records that name the person keep their history). Destructive: the server asks \
the user to confirm before anything changes.",
    ),
];
