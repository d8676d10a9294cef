//! People (`/v1/people`, scope `finance.people`): vendors and customers of a company.
//!
//! Rules: a person belongs to a company of the workspace; the document (CPF or CNPJ) is
//! stored as digits only, its check digits are validated and its type follows from its
//! length (11 = CPF, 14 = CNPJ); the kind (natural/juridical) is inferred from the
//! document when not given; one live person per document exists in a company (409
//! `conflict`). Deleting is a soft delete: the person disappears from reads, lists and
//! the id sweep, and its document may be used again. E-mails and phones are read-only.

use crate::domain::text::quoted;
use crate::ops::machinery::stamps::Stamp;
use crate::ops::machinery::stamps::Stamps;
use crate::storage::{sql, Conn};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::machinery::common::{body_id, conflict_on_unique, optional, required, required_if_sent, unprocessable};
use super::machinery::crud::{self, record_table};
use super::machinery::list::ListRequest;
use super::machinery::list::{list_spec, ListSpec};
use super::machinery::openapi::page_of;
use super::machinery::refs;
use super::machinery::resource::{Declaration, Deletable, Op, Records, Writable};
use super::machinery::validate::nullable;
use super::OpContext;
use super::Page;
use crate::domain::dates::Timestamp;
use crate::domain::documents::{is_valid_cnpj, is_valid_cpf, normalize};
use crate::domain::roles::{Access, Resource};
use crate::error::ApiError;
use crate::storage::identity::Membership;

/// Natural person (pessoa física) or legal entity (pessoa jurídica).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PersonKind {
    Natural,
    Juridical,
}

/// The type of a person's document: CPF (11 digits) or CNPJ (14 digits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DocumentType {
    Cpf,
    Cnpj,
}

impl PersonKind {
    fn as_str(self) -> &'static str {
        match self {
            PersonKind::Natural => "natural",
            PersonKind::Juridical => "juridical",
        }
    }

    fn parse(s: &str) -> Option<PersonKind> {
        match s {
            "natural" => Some(PersonKind::Natural),
            "juridical" => Some(PersonKind::Juridical),
            _ => None,
        }
    }
}

impl DocumentType {
    fn as_str(self) -> &'static str {
        match self {
            DocumentType::Cpf => "cpf",
            DocumentType::Cnpj => "cnpj",
        }
    }

    fn parse(s: &str) -> Option<DocumentType> {
        match s {
            "cpf" => Some(DocumentType::Cpf),
            "cnpj" => Some(DocumentType::Cnpj),
            _ => None,
        }
    }

    /// The type a document's digit count implies.
    fn of(document: &str) -> Option<DocumentType> {
        match document.len() {
            11 => Some(DocumentType::Cpf),
            14 => Some(DocumentType::Cnpj),
            _ => None,
        }
    }

    /// The kind a document of this type implies.
    fn kind(self) -> PersonKind {
        match self {
            DocumentType::Cpf => PersonKind::Natural,
            DocumentType::Cnpj => PersonKind::Juridical,
        }
    }
}

/// `POST /v1/people`
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PersonCreate {
    #[schemars(extend("format" = "uuid"))]
    pub company_id: String,
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(min = 1, max = 255))]
    pub name: String,
    #[serde(default)]
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(max = 255))]
    pub legal_name: Option<String>,
    #[serde(default)]
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(max = 255))]
    pub nickname: Option<String>,
    /// Inferred from the document when absent (CPF → natural, CNPJ → juridical).
    #[serde(default)]
    pub kind: Option<PersonKind>,
    /// Inferred from the document's digit count; when given it must agree with it.
    #[serde(default)]
    pub document_type: Option<DocumentType>,
    /// CPF or CNPJ; punctuation is ignored, digits are stored. Check digits are validated.
    #[serde(default)]
    #[schemars(length(max = 32))]
    pub document_number: Option<String>,
    /// Default false.
    #[serde(default)]
    pub is_customer: Option<bool>,
    /// Default false.
    #[serde(default)]
    pub is_supplier: Option<bool>,
    /// Default true.
    #[serde(default)]
    pub active: Option<bool>,
    #[serde(default)]
    #[schemars(length(max = 2000))]
    pub notes: Option<String>,
}

/// `PATCH /v1/people/{id}`: only the fields sent change. `null` on a text field leaves
/// it unchanged (an empty string clears it; an empty `document_number` removes the
/// document); `null` on `kind` clears it. The company cannot change. The document is
/// validated again only when it changes.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PersonUpdate {
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(min = 1, max = 255))]
    pub name: Option<String>,
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(max = 255))]
    pub legal_name: Option<String>,
    #[schemars(pattern(crate::domain::text::PLAIN_PATTERN), length(max = 255))]
    pub nickname: Option<String>,
    #[serde(deserialize_with = "nullable")]
    pub kind: Option<Option<PersonKind>>,
    /// Must agree with the (resulting) document's digit count.
    pub document_type: Option<DocumentType>,
    #[schemars(length(max = 32))]
    pub document_number: Option<String>,
    pub is_customer: Option<bool>,
    pub is_supplier: Option<bool>,
    pub active: Option<bool>,
    #[schemars(length(max = 2000))]
    pub notes: Option<String>,
}

/// A person as `/v1` returns it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Person {
    pub id: String,
    pub company_id: String,
    pub name: String,
    pub legal_name: Option<String>,
    pub nickname: Option<String>,
    pub kind: Option<PersonKind>,
    pub document_type: Option<DocumentType>,
    /// Digits only.
    pub document_number: Option<String>,
    pub is_customer: bool,
    pub is_supplier: bool,
    pub active: bool,
    /// Read-only.
    pub emails: Vec<String>,
    /// Read-only.
    pub phones: Vec<String>,
    pub notes: Option<String>,
    #[serde(flatten)]
    pub stamps: Stamps,
}

fn id_page() -> Value {
    page_of(json!({ "type": "string", "format": "uuid" }))
}

/// The `"/v1/people"` resource: its list, its reads, writes and delete.
pub struct People;

impl Records for People {
    const LIST: &'static ListSpec = &LIST;
    const RESOURCE: Resource = Resource::People;
    const COLLECTION: &'static str = "/v1/people";
    const NOUN: &'static str = "person";
    type Row = Person;
    type Record = Person;
    async fn list(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        request: &ListRequest,
    ) -> Result<Page<Person>, ApiError> {
        crud::list::<Self>(ctx, conn, ws, request).await
    }
    async fn get(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<Person, ApiError> {
        crud::get::<Self>(ctx, conn, ws, id).await
    }
    fn label(p: &Person) -> String {
        match &p.document_number {
            Some(document) => format!("{} ({})", quoted(&p.name), crate::domain::shown::document(document)),
            None => quoted(&p.name),
        }
    }
}

impl Writable for People {
    type Create = PersonCreate;
    type Created = Person;
    type Update = PersonUpdate;
    async fn create(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        input: PersonCreate,
    ) -> Result<Person, ApiError> {
        ctx.authorize(ws, Resource::People, Access::Write)?;
        let name = required("name", &input.name)?;
        let company_id = body_id("company_id", &input.company_id)?;
        let document = match optional(input.document_number.as_deref()) {
            Some(raw) => Some(check_document(&raw)?),
            None => None,
        };
        let document_type = document.as_ref().map(|(_, t)| *t);
        check_document_type(input.document_type, document_type)?;
        let kind = input.kind.or(document_type.map(DocumentType::kind));
        let company_id = refs::company(conn, ws, "company_id", &company_id).await?.id;
        let id = uuid::Uuid::new_v4().to_string();
        let now = Timestamp::now();
        sql::query(
            "INSERT INTO people (id, workspace_id, company_id, name, legal_name, nickname, kind, document_type, document_number,
                                 is_customer, is_supplier, active, emails, phones, notes, created_at, updated_at,
                                 created_via, updated_via, created_by, updated_by)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, '[]', '[]', $13, $14, $14, $15, $15, $16, $16)",
        )
        .bind(&id)
        .bind(&ws.workspace_id)
        .bind(&company_id)
        .bind(name)
        .bind(optional(input.legal_name.as_deref()))
        .bind(optional(input.nickname.as_deref()))
        .bind(kind.map(PersonKind::as_str))
        .bind(document_type.map(DocumentType::as_str))
        .bind(document.map(|(digits, _)| digits))
        .bind(flag(input.is_customer.unwrap_or(false)))
        .bind(flag(input.is_supplier.unwrap_or(false)))
        .bind(flag(input.active.unwrap_or(true)))
        .bind(optional(input.notes.as_deref()))
        .stamp(ctx, &now)
        .execute(&mut *conn)
        .await
        .map_err(conflict_on_duplicate)?;
        crud::created::<People>(ctx, conn, ws, &id).await
    }
    async fn update(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        id: &str,
        input: PersonUpdate,
    ) -> Result<Person, ApiError> {
        ctx.authorize(ws, Resource::People, Access::Write)?;
        let current = crud::find::<People>(conn, ws, id).await?;
        let name = required_if_sent("name", input.name.as_deref())?.unwrap_or(&current.name).to_string();
        // The document: absent or null keeps it, empty removes it, anything else replaces it
        // (validated only when it differs from the stored one).
        let (document_number, document_type) = match input.document_number {
            None => (current.document_number.clone(), current.document_type),
            Some(raw) if raw.trim().is_empty() => (None, None),
            Some(raw) => {
                let digits = normalize(&raw);
                if current.document_number.as_deref() == Some(digits.as_str()) {
                    (current.document_number.clone(), current.document_type.or(DocumentType::of(&digits)))
                } else {
                    let (digits, document_type) = check_document(&raw)?;
                    (Some(digits), Some(document_type))
                }
            }
        };
        check_document_type(input.document_type, document_type)?;
        let kind = input.kind.unwrap_or(current.kind);
        let keep_or_clear = |given: Option<String>, current: Option<String>| match given {
            None => current,
            Some(v) => optional(Some(&v)),
        };
        let legal_name = keep_or_clear(input.legal_name, current.legal_name.clone());
        let nickname = keep_or_clear(input.nickname, current.nickname.clone());
        let notes = keep_or_clear(input.notes, current.notes.clone());
        let update = sql::query(
            "UPDATE people SET name = $1, legal_name = $2, nickname = $3, kind = $4, document_type = $5, document_number = $6,
                    is_customer = $7, is_supplier = $8, active = $9, notes = $10, updated_at = $11, updated_via = $12,
                    updated_by = $13
              WHERE workspace_id = $14 AND id = $15 AND deleted_at IS NULL",
        )
        .bind(&name)
        .bind(legal_name.as_deref())
        .bind(nickname.as_deref())
        .bind(kind.map(PersonKind::as_str))
        .bind(document_type.map(DocumentType::as_str))
        .bind(document_number.as_deref())
        .bind(flag(input.is_customer.unwrap_or(current.is_customer)))
        .bind(flag(input.is_supplier.unwrap_or(current.is_supplier)))
        .bind(flag(input.active.unwrap_or(current.active)))
        .bind(notes.as_deref());
        crud::stamped_update::<People>(ctx, conn, ws, update, &current.id, conflict_on_duplicate).await?;
        crud::find::<People>(conn, ws, &current.id).await
    }
}

impl Deletable for People {
    /// Soft-deletes a person: records that name it keep their reference, but the person no
    /// longer reads, lists or sweeps, and its document may be used again.
    async fn delete(ctx: &OpContext<'_>, conn: &mut Conn, ws: &Membership, id: &str) -> Result<(), ApiError> {
        ctx.authorize(ws, Resource::People, Access::Delete)?;
        let current = crud::find::<People>(conn, ws, id).await?;
        let now = Timestamp::now();
        sql::query(
            "UPDATE people SET deleted_at = $1, updated_at = $1, updated_via = $2, updated_by = $3
              WHERE workspace_id = $4 AND id = $5 AND deleted_at IS NULL",
        )
        .stamp(ctx, &now)
        .bind(&ws.workspace_id)
        .bind(&current.id)
        .execute(&mut *conn)
        .await?;
        crud::audit::<People>(ctx, conn, ws, "delete", &current.id).await
    }
}

/// The `/v1/people` operations.
pub static OPERATIONS: Declaration = Declaration::of::<People>(&[
    Op::list::<People>("List people").tool(
        "finance_people_list",
        "List people",
        "Lists vendors and customers (CPF or CNPJ). A person's id is person_id on bills and transactions.",
    ),
    Op::get::<People>("Get a person").tool(
        "finance_people_get",
        "Get a person",
        "One vendor or customer, with documents, contacts and notes.",
    ),
    Op::create::<People>("Create a person").tool(
        "finance_people_create",
        "Create a person",
        "Registers a vendor or customer of a company (CPF/CNPJ check digits validated).",
    ),
    Op::update::<People>("Update a person").tool(
        "finance_people_update",
        "Update a person",
        "Changes the fields sent; an empty string clears a text field. The company cannot change.",
    ),
    Op::delete::<People>("Delete a person (soft delete)").tool(
        "finance_people_delete",
        "Delete a person",
        "Deletes a vendor or customer; records that name them keep their history. Asks the user to confirm.",
    ),
    Op::read(
        "/ids",
        "ids",
        "Sweep the ids of the live people (ascending; limit up to 10000, no filters)",
        crud::run_ids::<People>,
    )
    .answers(200, id_page),
]);

pub static LIST: ListSpec = list_spec!(people where "people.deleted_at IS NULL";
    filters: company_id: Uuid, kind: Enum(&["natural", "juridical"]), is_customer: Bool, is_supplier: Bool, active: Bool,
        document_number: Text, name: Text, updated_at: Timestamp;
    sorts: name, created_at, updated_at;
    default: name);

/// A JSON array stored as text, read as strings; anything else reads as `[]`.
fn string_array(text: Option<String>) -> Vec<String> {
    match text.and_then(|t| serde_json::from_str::<Value>(&t).ok()) {
        Some(Value::Array(items)) => items.into_iter().filter_map(|v| v.as_str().map(str::to_string)).collect(),
        _ => Vec::new(),
    }
}

record_table!(impl Table for People as "Person", audited as "person"; people => Person |row| {
    id, company_id, name, legal_name, nickname, document_number, is_customer, is_supplier, active, notes;
    kind = row.try_get::<Option<String>, _>("kind")?.as_deref().and_then(PersonKind::parse),
    document_type = row.try_get::<Option<String>, _>("document_type")?.as_deref().and_then(DocumentType::parse),
    emails = string_array(row.try_get("emails")?),
    phones = string_array(row.try_get("phones")?);
    reads kind, document_type, emails, phones
});

fn flag(value: bool) -> i64 {
    if value {
        1
    } else {
        0
    }
}

/// Strips the formatting of a document and checks it: digits only, 11 (CPF) or 14
/// (CNPJ) of them, check digits right.
fn check_document(raw: &str) -> Result<(String, DocumentType), ApiError> {
    let digits = normalize(raw);
    let wrong = || {
        unprocessable("document_number", "invalid_document", "The document is not a valid CPF or CNPJ (check digits)")
    };
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(wrong());
    }
    let document_type = DocumentType::of(&digits).ok_or_else(wrong)?;
    let valid = match document_type {
        DocumentType::Cpf => is_valid_cpf(&digits),
        DocumentType::Cnpj => is_valid_cnpj(&digits),
    };
    if !valid {
        return Err(wrong());
    }
    Ok((digits, document_type))
}

/// A `document_type` sent by the caller must agree with the document it ends up with.
fn check_document_type(given: Option<DocumentType>, actual: Option<DocumentType>) -> Result<(), ApiError> {
    match given {
        Some(given) if Some(given) != actual => Err(unprocessable(
            "document_type",
            "document_type_mismatch",
            "document_type does not match the document number (11 digits = cpf, 14 digits = cnpj)",
        )),
        _ => Ok(()),
    }
}

fn conflict_on_duplicate(err: crate::storage::Error) -> ApiError {
    conflict_on_unique(err, "document_number", "A person with this document already exists in the company")
}
