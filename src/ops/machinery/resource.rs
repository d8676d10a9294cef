//! A resource's declaration: the table of its `/v1` operations (route, what each needs,
//! what it takes and answers) and the traits that name its operation functions. Both
//! doors are generated from these: the REST routes mount the declared routes, the MCP
//! tools call the same functions, the OpenAPI document lists the rows, and the scope
//! of each row follows from the resource (`finance.<resource>`, `.write`).
//!
//! The record shapes — list, get, create, update, delete — are rows the doors know how
//! to serve for any resource ([`Shape`]); every other operation is [`Shape::Own`]: its
//! row names the function that runs it ([`Runner`]), which both doors call the same
//! way ([`Op::run`]).

use std::future::Future;
use std::pin::Pin;

use crate::storage::Conn;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use super::list::{ListRequest, ListSpec};
use super::openapi::{page_of, Operation};
pub use super::validate::parse;
use super::validate::{self, schema_of};
use crate::domain::roles::{Access, Resource};
use crate::error::{ApiError, ErrorCode};
use crate::ops::{OpContext, Page};
use crate::storage::identity::Membership;

/// A resource's read operations.
pub trait Records: 'static {
    const RESOURCE: Resource;
    /// The `/v1` collection (routes and the idempotency key's fingerprint).
    const COLLECTION: &'static str;
    /// What a confirmation calls one record: "payable", "person", …
    const NOUN: &'static str;
    type Row: Serialize + JsonSchema + Send;
    type Record: Serialize + JsonSchema + Send;
    /// The list: its table, filters and sorts, and which rows are live.
    const LIST: &'static ListSpec;
    fn list(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        request: &ListRequest,
    ) -> impl Future<Output = Result<Page<Self::Row>, ApiError>> + Send;
    fn get(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        id: &str,
    ) -> impl Future<Output = Result<Self::Record, ApiError>> + Send;
    /// The list page with `request.fields` only, written as JSON straight from the rows,
    /// where the resource can (every field asked for is in its rows); `None` where it
    /// cannot, and the caller writes the typed page ([`Records::list`]).
    fn list_written(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        request: &ListRequest,
    ) -> impl Future<Output = Result<Option<Vec<u8>>, ApiError>> + Send {
        let _ = (ctx, conn, ws, request);
        std::future::ready(Ok(None))
    }
    /// The record in the user's terms, for a confirmation ("“Aluguel” to Imobiliária
    /// Centro, R$ 4.500,00 due 2026-11-10").
    fn label(record: &Self::Record) -> String;
    /// The schema of a get's answer (its OpenAPI row, its tool's output): the record's,
    /// unless a get answers more than the other answers do (a bill's files).
    fn read_schema() -> Value {
        schema_of::<Self::Record>()
    }
}

/// Drops from a `PATCH` body what `R`'s get answered that `Request` does not take
/// ([`validate::strip_answer`]): a client sends back what it read.
pub fn strip_read<R: Records, Request: JsonSchema + 'static>(body: &mut Map<String, Value>) {
    validate::strip_answer_of::<R, Request>(R::read_schema, body);
}

/// A resource's create and update operations.
pub trait Writable: Records {
    type Create: DeserializeOwned + JsonSchema + Send;
    type Created: Serialize + JsonSchema + Send;
    type Update: DeserializeOwned + JsonSchema + Send;
    fn create(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        input: Self::Create,
    ) -> impl Future<Output = Result<Self::Created, ApiError>> + Send;
    fn update(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        id: &str,
        input: Self::Update,
    ) -> impl Future<Output = Result<Self::Record, ApiError>> + Send;
}

/// A resource's delete operation.
pub trait Deletable: Records {
    fn delete(
        ctx: &OpContext<'_>,
        conn: &mut Conn,
        ws: &Membership,
        id: &str,
    ) -> impl Future<Output = Result<(), ApiError>> + Send;

    /// What refuses deleting `id` whatever the user says (a record a reconciliation
    /// holds): a delete's confirmation checks it first, so the user is never asked to
    /// confirm what cannot happen. The delete checks it again. Nothing by default.
    fn refused(_conn: &mut Conn, _ws: &Membership, _id: &str) -> impl Future<Output = Result<(), ApiError>> + Send {
        async { Ok(()) }
    }
}

/// A boxed future that may be sent between threads (what a [`Runner`] answers).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A call of an own operation, as either door hands it over.
pub struct Call<'a> {
    pub ctx: &'a OpContext<'a>,
    /// A pooled connection (reads) or the write's transaction.
    pub conn: &'a mut Conn,
    pub ws: &'a Membership,
    /// The path's `{id}` (empty on a route without one).
    pub id: &'a str,
    /// A read's query, as pairs (a tool's arguments, on the MCP door).
    pub query: &'a [(String, String)],
    /// A write's body, already checked against the row's request type (`{}` for a row
    /// that takes none); the runner reads it with [`parse`].
    pub body: Value,
}

/// Runs an own operation: both doors call it, REST with the route's id, query and
/// body, MCP with the tool's arguments.
pub type Runner = for<'a> fn(Call<'a>) -> Running<'a>;

/// What a [`Runner`] answers: its result as JSON, once it has run.
pub type Running<'a> = BoxFuture<'a, Result<Value, ApiError>>;

/// The question a user confirms before a confirmed own row runs (SPEC §5.2), in their
/// terms: the record, the counterparty, the amount in R$, the date and the account. It
/// reads what it names but changes nothing; what cannot happen whatever the user says
/// (a missing account, a wrong status, a lock) it refuses instead of asking.
pub type Confirm = for<'a> fn(Call<'a>) -> Asking<'a>;

/// What a [`Confirm`] answers: the question, once it has read what it names.
pub type Asking<'a> = BoxFuture<'a, Result<Question, ApiError>>;

/// A question put to the user, and every value the operation it asks about depends on:
/// the records it read (whole, their version included) and what it will send (a
/// payment's destination). The confirmation carries its [`Question::digest`]; when the
/// user answers, the question is built again from the records as they are then, in the
/// operation's own transaction, and the operation runs only if the digest is the same.
/// Anything changed in between — an amount, a payee, a bank account, a status — is
/// asked again instead of carried out.
#[derive(Debug, Clone)]
pub struct Question {
    /// What the user reads.
    pub text: String,
    /// The bound values, serialised one after another.
    bound: Vec<u8>,
}

impl Question {
    /// A question whose text is yet to be written ([`Question::asks`]), its values
    /// bound as they are read.
    pub fn binding() -> Question {
        Question { text: String::new(), bound: Vec::new() }
    }

    /// Binds `value`: the operation runs only if it is the same when the user answers.
    pub fn bind<T: Serialize + ?Sized>(&mut self, value: &T) {
        // A value that does not serialise binds its absence; the text still binds.
        let _ = serde_json::to_writer(&mut self.bound, value);
        self.bound.push(b'\n');
    }

    /// [`Question::bind`], by value.
    pub fn binds<T: Serialize + ?Sized>(mut self, value: &T) -> Question {
        self.bind(value);
        self
    }

    /// The question's text.
    pub fn asks(mut self, text: impl Into<String>) -> Question {
        self.text = text.into();
        self
    }

    /// The digest of the text and every bound value (SHA-256, base64url).
    pub fn digest(&self) -> String {
        use base64::Engine;
        let mut context = aws_lc_rs::digest::Context::new(&aws_lc_rs::digest::SHA256);
        context.update(self.text.as_bytes());
        context.update(&[0]);
        context.update(&self.bound);
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(context.finish().as_ref())
    }
}

/// The record `id` of `R` as a confirmation names it: `None` when the caller may
/// change it but not read it (the question then names it by id; the operation checks
/// its own permission when it runs). Not found is an error.
pub async fn peek<R: Records>(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
) -> Result<Option<R::Record>, ApiError> {
    match R::get(ctx, conn, ws, id).await {
        Ok(record) => Ok(Some(record)),
        Err(e) if matches!(e.code, ErrorCode::InsufficientScope | ErrorCode::Forbidden) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The record's label for a confirmation ([`Records::label`]), or its id when the
/// caller cannot read it; the record is bound to `question` ([`Question::bind`]).
pub async fn label_of<R: Records>(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
    question: &mut Question,
) -> Result<String, ApiError> {
    let record = peek::<R>(ctx, conn, ws, id).await?;
    question.bind(&record);
    Ok(record.map_or_else(|| id.to_string(), |record| R::label(&record)))
}

/// The answer of a runner: its result as JSON.
pub fn reply<T: Serialize>(value: T) -> Result<Value, ApiError> {
    serde_json::to_value(value).map_err(|_| ApiError::internal())
}

/// Checks a body against a row's request type.
pub type Check = fn(&Value) -> Result<(), ApiError>;

/// A request type's check, before anything opens: the body parses as `T`.
fn check<T: DeserializeOwned + JsonSchema + 'static>(body: &Value) -> Result<(), ApiError> {
    parse::<T>(body.clone()).map(drop)
}

/// The body of an action that takes none: empty, or `{}`.
#[derive(Debug, Default, serde::Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EmptyRequest {}

/// What a row of the table is, for the doors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    List,
    Get,
    Create,
    Update,
    Delete,
    /// Anything else (an id sweep, aggregates, an action): its [`Runner`] runs it.
    Own,
}

/// One `/v1` operation.
#[derive(Debug, Clone, Copy)]
pub struct Op {
    pub shape: Shape,
    pub method: &'static str,
    /// The path after the collection: `""`, `"/{id}"`, `"/{id}/settle"`.
    pub suffix: &'static str,
    /// What the operation does to the collection (`list`, `settle`, `adjust_balance`):
    /// its OpenAPI `operationId` is `{collection}_{action}` ([`Declaration::id`]).
    pub action: &'static str,
    /// One line for the OpenAPI document; `{collection}` stands for the collection's
    /// name ([`Declaration::summary`]).
    pub summary: &'static str,
    /// What the caller needs (the scope and the role rule follow from it).
    pub access: Access,
    /// The request body's schema (from the request type).
    pub request: Option<fn() -> Value>,
    /// The body's check against the request type (an own row's; a record shape's
    /// door parses its type itself).
    pub check: Option<Check>,
    /// A read's query parameters, as a schema: a tool's arguments besides the workspace.
    pub query: Option<fn() -> Value>,
    /// A list's filters and sorts (its query parameters on `/v1`).
    pub list: Option<&'static ListSpec>,
    pub success: u16,
    pub response: Option<fn() -> Value>,
    /// Where a created answer lives, for `Location`: `{prefix}/{body[field]}`.
    pub location: Option<(&'static str, &'static str)>,
    /// What runs an own row (record shapes run through the resource's traits).
    pub run: Option<Runner>,
    /// Its MCP tool, if it has one: the name, title and description; the tool's
    /// permission, route, annotations and schemas follow from the row.
    pub tool: Option<Tool>,
    /// Whether the user confirms it before it runs (a destructive tool: it moves money
    /// or changes what is owed). Deletes always are.
    pub confirmed: bool,
    /// The question of a confirmed own row (a delete's is the same for every resource).
    pub confirm: Option<Confirm>,
    /// How `/v1` runs an update row that takes more than its tool (the bills' `PATCH`
    /// also moves their status, as the real API's does).
    pub patch: Option<Patch>,
    /// Why the operation is this product's and not the real API's (its OpenAPI
    /// `x-kobana-extension`).
    pub extension: Option<&'static str>,
    /// What a caller should know beyond the summary (its OpenAPI `description`).
    pub description: Option<&'static str>,
}

/// A `/v1` `PATCH` of its own: the request type's schema and check, what runs it, and
/// which fields of the record's answer it drops (a client sends back what it read).
#[derive(Debug, Clone, Copy)]
pub struct Patch {
    pub request: fn() -> Value,
    pub check: Check,
    pub strip: fn(&mut Map<String, Value>),
    pub run: Runner,
}

/// What an agent reads of an operation's tool.
#[derive(Debug, Clone, Copy)]
pub struct Tool {
    /// `finance_<resource>_<action>`.
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
}

/// `{"deleted": true, "id": …}`: what a delete tool answers (`/v1` answers 204).
pub fn deleted_schema() -> Value {
    serde_json::json!({
        "type": "object",
        "properties": { "deleted": { "type": "boolean" }, "id": { "type": "string", "format": "uuid" } },
        "required": ["deleted", "id"],
    })
}

fn page_schema<R: Records>() -> Value {
    page_of(schema_of::<R::Row>())
}

impl Op {
    const fn shaped(
        shape: Shape,
        method: &'static str,
        suffix: &'static str,
        action: &'static str,
        summary: &'static str,
        access: Access,
    ) -> Op {
        Op {
            shape,
            method,
            suffix,
            action,
            summary,
            access,
            request: None,
            check: None,
            query: None,
            list: None,
            success: 200,
            response: None,
            location: None,
            run: None,
            tool: None,
            confirmed: matches!(shape, Shape::Delete),
            confirm: None,
            patch: None,
            extension: None,
            description: None,
        }
    }

    /// `GET {collection}`: a page of rows.
    pub const fn list<R: Records>(summary: &'static str) -> Op {
        let op = Op::shaped(Shape::List, "get", "", "list", summary, Access::Read).answers(200, page_schema::<R>);
        Op { list: Some(R::LIST), ..op }
    }

    /// `GET {collection}/{id}`
    pub const fn get<R: Records>(summary: &'static str) -> Op {
        Op::shaped(Shape::Get, "get", "/{id}", "get", summary, Access::Read).answers(200, R::read_schema)
    }

    /// `POST {collection}`: 201 (idempotent with a key).
    pub const fn create<R: Writable>(summary: &'static str) -> Op {
        Op::shaped(Shape::Create, "post", "", "create", summary, Access::Write)
            .takes::<R::Create>()
            .answers(201, schema_of::<R::Created>)
    }

    /// `PATCH {collection}/{id}`
    pub const fn update<R: Writable>(summary: &'static str) -> Op {
        Op::shaped(Shape::Update, "patch", "/{id}", "update", summary, Access::Write)
            .takes::<R::Update>()
            .answers(200, schema_of::<R::Record>)
    }

    /// On `/v1`, this update row takes `T` (the update's fields and more) and `run`
    /// runs it; its tool keeps the update's request.
    pub const fn patched<R: Records, T: DeserializeOwned + JsonSchema + 'static>(self, run: Runner) -> Op {
        let patch = Patch { request: schema_of::<T>, check: check::<T>, strip: strip_read::<R, T>, run };
        Op { patch: Some(patch), ..self }
    }

    /// `DELETE {collection}/{id}`: 204.
    pub const fn delete<R: Deletable>(summary: &'static str) -> Op {
        Op { success: 204, ..Op::shaped(Shape::Delete, "delete", "/{id}", "delete", summary, Access::Delete) }
    }

    /// Another read of the resource (`GET {collection}{suffix}`), run by `run`.
    pub const fn read(suffix: &'static str, action: &'static str, summary: &'static str, run: Runner) -> Op {
        Op { run: Some(run), ..Op::shaped(Shape::Own, "get", suffix, action, summary, Access::Read) }
    }

    /// Another write of the resource (`{method} {collection}{suffix}`), run by `run` in
    /// one transaction, idempotent with a key (a retried action never runs twice).
    pub const fn write(
        method: &'static str,
        suffix: &'static str,
        action: &'static str,
        summary: &'static str,
        run: Runner,
    ) -> Op {
        Op { run: Some(run), ..Op::shaped(Shape::Own, method, suffix, action, summary, Access::Write) }
    }

    /// The request body: the type `T` gives its schema and its check.
    pub const fn takes<T: DeserializeOwned + JsonSchema + 'static>(self) -> Op {
        Op { request: Some(schema_of::<T>), check: Some(check::<T>), ..self }
    }

    /// A read's query parameters (the schema of its tool's arguments).
    pub const fn queries(self, query: fn() -> Value) -> Op {
        Op { query: Some(query), ..self }
    }

    /// Where the created answer lives: `Location: {prefix}/{body[field]}`.
    pub const fn located(self, prefix: &'static str, field: &'static str) -> Op {
        Op { location: Some((prefix, field)), ..self }
    }

    /// Whether the path names a record (`…/{id}…`).
    pub fn has_id(&self) -> bool {
        self.suffix.contains("{id}")
    }

    /// Whether it creates under the collection itself (`POST {collection}`): a tool
    /// then takes an `idempotency_key`.
    pub fn creates(&self) -> bool {
        self.method == "post" && self.suffix.is_empty()
    }

    /// The success status and its body.
    pub const fn answers(self, success: u16, response: fn() -> Value) -> Op {
        Op { success, response: Some(response), ..self }
    }

    /// The success status of an answer without a body.
    pub const fn status(self, success: u16) -> Op {
        Op { success, ..self }
    }

    /// An operation of this product's own, not the real API's: `why` says what it is.
    pub const fn extension(self, why: &'static str) -> Op {
        Op { extension: Some(why), ..self }
    }

    /// What the OpenAPI document says of the operation beyond its summary, if anything.
    pub const fn described(self, description: Option<&'static str>) -> Op {
        Op { description, ..self }
    }

    /// An order to the bank through the gateway (a payable's dispatch, a receivable's
    /// charge): it needs the resource's bank scope ([`Access::Bank`]).
    pub const fn bank(self) -> Op {
        Op { access: Access::Bank, ..self }
    }

    /// Its MCP tool.
    pub const fn tool(self, name: &'static str, title: &'static str, description: &'static str) -> Op {
        self.with(Tool { name, title, description })
    }

    /// Its MCP tool, described elsewhere (a kind's texts).
    pub const fn with(self, tool: Tool) -> Op {
        Op { tool: Some(tool), ..self }
    }

    /// Confirmed by the user before it runs (SPEC §5.2), who is asked `confirm`.
    pub const fn confirmed(self, confirm: Confirm) -> Op {
        Op { confirmed: true, confirm: Some(confirm), ..self }
    }
}

/// The rows of `first`, then those of `then`: a table shared by kinds, then one kind's
/// own rows (`T` = `N` + `M`; a wrong `T` fails the build).
pub const fn joined<const N: usize, const M: usize, const T: usize>(first: [Op; N], then: [Op; M]) -> [Op; T] {
    assert!(N + M == T, "joined: T must be N + M");
    let mut out = [first[0]; T];
    let mut i = 0;
    while i < N {
        out[i] = first[i];
        i += 1;
    }
    while i < T {
        out[i] = then[i - N];
        i += 1;
    }
    out
}

/// The operations of one `/v1` collection.
#[derive(Debug)]
pub struct Declaration {
    pub resource: Resource,
    pub collection: &'static str,
    pub operations: &'static [Op],
}

impl Declaration {
    /// The operations of the resource `R`, under its collection.
    pub const fn of<R: Records>(operations: &'static [Op]) -> Declaration {
        Declaration { resource: R::RESOURCE, collection: R::COLLECTION, operations }
    }

    /// The path of an operation.
    pub fn path(&self, op: &Op) -> String {
        format!("{}{}", self.collection, op.suffix)
    }

    /// The path of an operation on the record `id`: what its idempotency key covers.
    pub fn path_of(&self, op: &Op, id: &str) -> String {
        self.path(op).replace("{id}", id)
    }

    /// The collection's name: `payables`, `financial-accounts`.
    pub fn name(&self) -> &'static str {
        self.collection.trim_start_matches("/v1/")
    }

    /// The OpenAPI `operationId` of an operation: `{collection}_{action}`, the
    /// collection's hyphens as underscores (`financial_accounts_adjust_balance`).
    pub fn id(&self, op: &Op) -> String {
        format!("{}_{}", self.name().replace('-', "_"), op.action)
    }

    /// The summary of an operation, `{collection}` replaced by the collection's name.
    pub fn summary(&self, op: &Op) -> String {
        op.summary.replace("{collection}", self.name())
    }

    /// The row of `shape` (the record shapes appear once at most).
    pub fn shaped(&self, shape: Shape) -> Option<&Op> {
        self.operations.iter().find(|op| op.shape == shape)
    }
}

/// Operations written out in full ([`Operation`]): the resources whose routes and
/// tools are their own code rather than a [`Declaration`]'s rows.
pub struct Written {
    pub resource: Resource,
    pub operations: &'static [Operation],
    /// Why they are this product's own, if they are.
    pub extension: Option<&'static str>,
    /// The toolset of their tools, when agents get some.
    pub toolset: Option<&'static str>,
}

/// What a door makes of each registered resource, in the order of
/// [`crate::ops::registry::register`]: the router its routes, the catalogue its tools and
/// toolsets (each registered declaration's tools are one toolset, named by its line),
/// the OpenAPI document its operations.
pub trait Registrar {
    /// A resource whose records `R` lists, reads, creates, updates and deletes, beside
    /// its own rows.
    fn records<R: Writable + Deletable>(&mut self, toolset: &'static str, declaration: &'static Declaration);
    /// A resource whose records `R` only lists and reads, beside its own rows.
    fn read_only<R: Records>(&mut self, toolset: &'static str, declaration: &'static Declaration);
    /// A declaration whose every row is its own.
    fn own(&mut self, toolset: &'static str, declaration: &'static Declaration);
    /// Operations written out in full.
    fn written(&mut self, written: &'static Written);
}
