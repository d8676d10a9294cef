//! The tools of a declared resource, built from its rows ([`tools`]): the record
//! shapes every resource shares — list, get, create, update, delete — written once,
//! generic over the resource's operations ([`Records`], [`Writable`], [`Deletable`],
//! declared with the resource in `ops`; [`list_tool`], [`get_tool`], [`create_tool`],
//! [`update_tool`], [`delete_tool`] carry the permission, annotations, schemas, handler
//! and confirmation of each shape), and every other row through the runner and the
//! question its row names ([`own`], [`ask`]).

use crate::storage::Conn;
use serde::Serialize;
use serde_json::{json, Value};

use super::{
    get_schema, id_schema, list_request, list_schema, project, project_page, projected, query_pairs, write_schema,
    Route, Scope, CREATE, DESTRUCTIVE, READ, UPDATE,
};
use crate::domain::roles::Access;
use crate::domain::text::quoted;
use crate::error::ApiError;
use crate::mcp::tools::{
    answer, Annotations, Answer, Answering, Asking, Describe, Handler, Schemas, ToolCall, ToolSpec,
};
use crate::ops::machinery::openapi::page_of;
use crate::ops::machinery::pick;
use crate::ops::machinery::resource::{
    label_of, Call, Declaration, Deletable, Op, Question, Records, Shape, Tool, Writable,
};
use crate::ops::machinery::validate::{parse, schema_of};

pub fn to_value<T: Serialize>(value: &T) -> Result<Value, ApiError> {
    serde_json::to_value(value).map_err(|_| ApiError::internal())
}

fn list_input<R: Records>() -> Value {
    list_schema(R::LIST)
}

fn list_output<R: Records>() -> Value {
    page_of(projected(schema_of::<R::Row>()))
}

fn get_output<R: Records>() -> Value {
    projected(R::read_schema())
}

fn record_output<R: Records>() -> Value {
    schema_of::<R::Record>()
}

fn created_output<R: Writable>() -> Value {
    schema_of::<R::Created>()
}

fn create_input<R: Writable>() -> Value {
    write_schema(schema_of::<R::Create>(), false, true)
}

fn update_input<R: Writable>() -> Value {
    write_schema(schema_of::<R::Update>(), true, false)
}

fn list<'a, R: Records>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> Answering<'a> {
    Box::pin(async move {
        let s = Scope::of(call).await?;
        let request = list_request(call.arguments)?;
        pick::check::<R::Row>(request.fields.as_deref())?;
        if let Some(json) = R::list_written(&s.ctx, conn, s.ws, &request).await? {
            return Ok(Answer::Json(json));
        }
        let page = R::list(&s.ctx, conn, s.ws, &request).await?;
        project_page(&page, s.args.fields.as_deref())
    })
}

fn get<'a, R: Records>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> Answering<'a> {
    Box::pin(async move {
        let s = Scope::of(call).await?;
        pick::check::<R::Record>(s.args.fields.as_deref())?;
        let record = R::get(&s.ctx, conn, s.ws, s.id()).await?;
        project(&record, s.args.fields.as_deref())
    })
}

fn create<'a, R: Writable>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> Answering<'a> {
    answer(async move {
        let s = Scope::of(call).await?;
        let input: R::Create = parse(s.body())?;
        s.once(conn, R::COLLECTION, async |conn| R::create(&s.ctx, conn, s.ws, input).await).await
    })
}

fn update<'a, R: Writable>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> Answering<'a> {
    answer(async move {
        let s = Scope::of(call).await?;
        let input: R::Update = parse(s.body())?;
        to_value(&R::update(&s.ctx, conn, s.ws, s.id(), input).await?)
    })
}

fn delete<'a, R: Deletable>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> Answering<'a> {
    answer(async move {
        let s = Scope::of(call).await?;
        R::delete(&s.ctx, conn, s.ws, s.id()).await?;
        Ok(json!({ "deleted": true, "id": s.id() }))
    })
}

fn describe_delete<'a, R: Deletable>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> Asking<'a> {
    Box::pin(async move {
        let s = Scope::of(call).await?;
        let mut question = Question::binding();
        let label = label_of::<R>(&s.ctx, conn, s.ws, s.id(), &mut question).await?;
        R::refused(conn, s.ws, s.id()).await?;
        Ok(question.asks(format!(
            "Delete the {} {label} from the workspace {}? This cannot be undone.",
            R::NOUN,
            quoted(&s.ws.workspace_name)
        )))
    })
}

/// A tool's input and output schemas.
type Pair = (fn() -> Value, fn() -> Value);

/// A record tool of `R`: its texts, what it needs (on `R`'s resource), its route (under
/// `R`'s collection), its input and output schemas and its handler.
const fn tool<R: Records>(
    text: Tool,
    (access, annotations): (Access, Annotations),
    route: Option<Route>,
    (input_schema, output_schema): Pair,
    handler: Handler,
) -> ToolSpec {
    ToolSpec {
        name: text.name,
        title: text.title,
        description: text.description,
        permission: Some((R::RESOURCE, access)),
        annotations,
        route,
        schemas: Schemas::Given { input: input_schema, output: Some(output_schema) },
        handler,
        describe: None,
    }
}

/// `finance_<resource>_list`
pub const fn list_tool<R: Records>(text: Tool) -> ToolSpec {
    let route = Route::get(R::COLLECTION, "");
    tool::<R>(text, (Access::Read, READ), route, (list_input::<R>, list_output::<R>), list::<R>)
}

/// `finance_<resource>_get`
pub const fn get_tool<R: Records>(text: Tool) -> ToolSpec {
    let route = Route::get(R::COLLECTION, "/{id}");
    tool::<R>(text, (Access::Read, READ), route, (get_schema, get_output::<R>), get::<R>)
}

/// `finance_<resource>_create` (idempotent with a key)
const fn create_tool<R: Writable>(text: Tool) -> ToolSpec {
    let route = Route::post(R::COLLECTION, "");
    tool::<R>(text, (Access::Write, CREATE), route, (create_input::<R>, created_output::<R>), create::<R>)
}

/// `finance_<resource>_update`
const fn update_tool<R: Writable>(text: Tool) -> ToolSpec {
    let route = Route::patch(R::COLLECTION, "/{id}");
    tool::<R>(text, (Access::Write, UPDATE), route, (update_input::<R>, record_output::<R>), update::<R>)
}

/// `finance_<resource>_delete` (destructive: confirmed by the user)
pub const fn delete_tool<R: Deletable>(text: Tool) -> ToolSpec {
    let route = Route::delete(R::COLLECTION, "/{id}");
    let tool = tool::<R>(
        text,
        (Access::Delete, DESTRUCTIVE),
        route,
        (id_schema, crate::ops::machinery::resource::deleted_schema),
        delete::<R>,
    );
    ToolSpec { describe: Some(describe_delete::<R>), ..tool }
}

/// The tools of `declaration`, one per row that has a tool, in row order: a record
/// shape runs through `R`'s operations, any other row through its own runner.
pub fn tools<R: Writable + Deletable>(declaration: &'static Declaration) -> Vec<ToolSpec> {
    let tools = declaration.operations.iter().filter_map(|op| {
        let text = op.tool?;
        Some(match op.shape {
            Shape::List => list_tool::<R>(text),
            Shape::Get => get_tool::<R>(text),
            Shape::Create => create_tool::<R>(text),
            Shape::Update => update_tool::<R>(text),
            Shape::Delete => delete_tool::<R>(text),
            Shape::Own => own_tool(declaration, op),
        })
    });
    tools.collect()
}

/// The tools of a resource that is only read: its list and get, and its own rows. A
/// write shape in its declaration is one the catalogue cannot serve: building it
/// panics (the unit tests build it).
pub fn read_tools<R: Records>(declaration: &'static Declaration) -> Vec<ToolSpec> {
    let tools = declaration.operations.iter().filter_map(|op| {
        let text = op.tool?;
        Some(match op.shape {
            Shape::List => list_tool::<R>(text),
            Shape::Get => get_tool::<R>(text),
            Shape::Own => own_tool(declaration, op),
            shape => panic!("{}: a read-only resource has no {shape:?} row", declaration.collection),
        })
    });
    tools.collect()
}

/// The tools of a declaration whose every row is the resource's own.
pub fn own_tools(declaration: &'static Declaration) -> Vec<ToolSpec> {
    declaration.operations.iter().filter(|op| op.tool.is_some()).map(|op| own_tool(declaration, op)).collect()
}

/// The tool of an own row: texts, permission, route, annotations, schemas and
/// confirmation from the row; it runs the row's runner ([`own`]). A row without a
/// runner, or confirmed without a question, is a declaration the catalogue cannot
/// serve: building it panics (the unit tests build it).
fn own_tool(declaration: &'static Declaration, op: &'static Op) -> ToolSpec {
    let text = op.tool.expect("a row with a tool");
    assert!(
        op.confirmed == op.confirm.is_some(),
        "{}: {} is confirmed exactly when it has a question",
        declaration.collection,
        op.action
    );
    assert!(op.run.is_some(), "{}: {} has no runner", declaration.collection, op.action);
    ToolSpec {
        name: text.name,
        title: text.title,
        description: text.description,
        permission: Some((declaration.resource, op.access)),
        annotations: match (op.access, op.confirmed) {
            (Access::Read, _) => READ,
            (_, true) => DESTRUCTIVE,
            (_, false) => CREATE,
        },
        route: Some(Route { method: op.method, collection: declaration.collection, suffix: op.suffix }),
        schemas: Schemas::Row(op),
        handler: own,
        describe: op.confirm.map(|_| ask as Describe),
    }
}

/// The question of a confirmed own row's tool: the row's, asked with the arguments as
/// [`own`] hands them over.
fn ask<'a>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> Asking<'a> {
    Box::pin(async move {
        let confirm = call.tool.row().and_then(|op| op.confirm).ok_or_else(ApiError::internal)?;
        let s = Scope::of(call).await?;
        confirm(Call { ctx: &s.ctx, conn, ws: s.ws, id: s.id(), query: &[], body: s.body() }).await
    })
}

/// The input schema of an own row's tool: a read of one record takes its `id` (and
/// `fields`), any other read its query; a write its request (or nothing) with the path
/// `id` where it names a record, and an `idempotency_key` where it creates.
pub fn row_input(op: &Op) -> Value {
    match (op.method, op.query, op.request) {
        ("get", _, _) if op.has_id() => get_schema(),
        ("get", Some(query), _) => query(),
        (_, _, Some(request)) if op.method != "get" => write_schema(request(), op.has_id(), op.creates()),
        _ if op.has_id() => id_schema(),
        _ => write_schema(
            json!({ "type": "object", "properties": {}, "additionalProperties": false }),
            false,
            op.creates(),
        ),
    }
}

/// The output schema of an own row's tool: its response, which `fields` may leave
/// any field out of on a read of one record.
pub fn row_output(op: &Op) -> Option<Value> {
    let response = op.response?();
    Some(if op.method == "get" && op.has_id() { projected(response) } else { response })
}

/// Runs an own row's tool: its runner, with the arguments as the row's door would hand
/// them over — the record's id, the query (a read's arguments as pairs) or the body
/// (checked against the row's request before anything runs; under the call's
/// `idempotency_key` where the row creates).
fn own<'a>(call: &'a ToolCall<'a>, conn: &'a mut Conn) -> Answering<'a> {
    Box::pin(async move {
        let (Some(op), Some(route)) = (call.tool.row(), call.tool.route) else { return Err(ApiError::internal()) };
        let run = op.run.ok_or_else(ApiError::internal)?;
        let s = Scope::of(call).await?;
        if op.method == "get" {
            if op.has_id() {
                if let Some(response) = op.response {
                    pick::check_in(&response(), s.args.fields.as_deref())?;
                }
                let record =
                    run(Call { ctx: &s.ctx, conn, ws: s.ws, id: s.id(), query: &[], body: Value::Null }).await?;
                return project(&record, s.args.fields.as_deref());
            }
            let query = query_pairs(&s.args.body);
            let answer = run(Call { ctx: &s.ctx, conn, ws: s.ws, id: "", query: &query, body: Value::Null }).await?;
            return Ok(Answer::Value(answer));
        }
        let body = s.body();
        if let Some(check) = op.check {
            check(&body)?;
        }
        let answer = if op.creates() {
            let ctx = &s.ctx;
            s.once(conn, &route.path(), async |conn| run(Call { ctx, conn, ws: s.ws, id: "", query: &[], body }).await)
                .await?
        } else {
            run(Call { ctx: &s.ctx, conn, ws: s.ws, id: s.id(), query: &[], body }).await?
        };
        Ok(Answer::Value(answer))
    })
}
