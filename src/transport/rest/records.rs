//! The routes of every declared resource ([`Declaration`]): each record shape — list,
//! get, create, update, delete — served by one generic handler over the resource's
//! operations ([`Writable`], [`Deletable`]); every other row by its own [`Runner`],
//! through the door of its method: a `GET` reads, anything else writes in one
//! transaction under its idempotency key. A route's path is the declaration's.

use axum::body::Bytes;
use axum::response::{IntoResponse, Response};
use axum::routing::{self, MethodFilter, MethodRouter};
use axum::Router;
use http::{HeaderMap, Method};
use serde_json::{json, Map, Value};

use super::{body_json, created, door, keyed, Caller, Location, Query, QueryPairs, RecordId, WithBody};
use crate::app::AppState;
use crate::domain::roles::{Access, Resource};
use crate::error::ApiError;
use crate::ops::machinery::resource::{
    Call, Check, Declaration, Deletable, EmptyRequest, Op, Patch, Records, Registrar, Runner, Shape, Writable, Written,
};
use crate::ops::machinery::validate;

/// The routes of every registered resource ([`crate::ops::registry::register`]).
pub fn registered() -> Router<AppState> {
    let mut routes = Routes(Router::new());
    crate::ops::registry::register(&mut routes);
    routes.0
}

/// The routes of the resources registered so far.
struct Routes(Router<AppState>);

impl Registrar for Routes {
    fn records<R: Writable + Deletable>(&mut self, _toolset: &'static str, declaration: &'static Declaration) {
        self.merge(routes::<R>(declaration));
    }

    fn read_only<R: Records>(&mut self, _toolset: &'static str, declaration: &'static Declaration) {
        self.merge(read_routes::<R>(declaration));
    }

    fn own(&mut self, _toolset: &'static str, declaration: &'static Declaration) {
        self.merge(own(declaration));
    }

    /// The routes written out in full: the attachments' uploads and downloads, who has access.
    fn written(&mut self, written: &'static Written) {
        match written.resource {
            Resource::Attachments => self.merge(super::attachments::routes()),
            Resource::Access => self.merge(super::access::routes()),
            _ => {}
        }
    }
}

impl Routes {
    fn merge(&mut self, routes: Router<AppState>) {
        self.0 = std::mem::take(&mut self.0).merge(routes);
    }
}

/// The routes of `declaration`, whose record shapes are the operations of `R`.
fn routes<R: Writable + Deletable>(declaration: &'static Declaration) -> Router<AppState> {
    mount(declaration, |op| match (op.shape, op.patch) {
        (Shape::List, _) => Some(routing::get(list::<R>)),
        (Shape::Get, _) => Some(routing::get(get::<R>)),
        (Shape::Create, _) => Some(routing::post(create::<R>)),
        (Shape::Update, None) => Some(routing::patch(update::<R>)),
        (Shape::Update, Some(patch)) => Some(patched(declaration, op, patch)),
        (Shape::Delete, _) => Some(routing::delete(delete::<R>)),
        (Shape::Own, _) => None,
    })
}

/// The routes of a resource that is only read: its list and get, and its own rows.
fn read_routes<R: Records>(declaration: &'static Declaration) -> Router<AppState> {
    mount(declaration, |op| match op.shape {
        Shape::List => Some(routing::get(list::<R>)),
        Shape::Get => Some(routing::get(get::<R>)),
        _ => None,
    })
}

/// The routes of a declaration whose every row is its own.
fn own(declaration: &'static Declaration) -> Router<AppState> {
    mount(declaration, |_| None)
}

/// Every row of `declaration` at its path. An own row without a runner is a
/// declaration the doors cannot serve: the server does not start.
fn mount(
    declaration: &'static Declaration,
    shaped: impl Fn(&'static Op) -> Option<MethodRouter<AppState>>,
) -> Router<AppState> {
    let mut router = Router::new();
    for op in declaration.operations {
        let handler = shaped(op).unwrap_or_else(|| own_route(declaration, op));
        router = router.route(&declaration.path(op), handler);
    }
    router
}

/// An update row's `PATCH` of its own ([`Patch`]): the answer's fields dropped, then
/// a keyed write of its runner.
fn patched(declaration: &'static Declaration, op: &'static Op, patch: Patch) -> MethodRouter<AppState> {
    routing::patch(move |headers: HeaderMap, RecordId(id): RecordId, WithBody(caller, body): WithBody| {
        let body = stripped(body, patch.strip);
        write(declaration, op, patch.run, Some(patch.check), id, headers, caller, body)
    })
}

/// A `PATCH` body without the fields `strip` drops; a body that is not a JSON object
/// is left for the check to refuse.
fn stripped(body: Bytes, strip: fn(&mut Map<String, Value>)) -> Bytes {
    match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Object(mut object)) => {
            strip(&mut object);
            serde_json::to_vec(&object).map(Bytes::from).unwrap_or(body)
        }
        _ => body,
    }
}

/// The route of an own row: a read at `GET`, a keyed write at any other method.
fn own_route(declaration: &'static Declaration, op: &'static Op) -> MethodRouter<AppState> {
    let Some(run) = op.run else {
        panic!("{}: the declared operation {} has no runner", declaration.collection, op.action)
    };
    if op.method == "get" {
        return if op.has_id() {
            routing::get(move |RecordId(id): RecordId, caller: Caller| read(run, id, Vec::new(), caller))
        } else {
            routing::get(move |QueryPairs(query): Query, caller: Caller| read(run, String::new(), query, caller))
        };
    }
    let method = Method::from_bytes(op.method.to_ascii_uppercase().as_bytes()).expect("a declared method");
    let filter = MethodFilter::try_from(method).expect("a declared method");
    if op.has_id() {
        routing::on(filter, move |headers: HeaderMap, RecordId(id): RecordId, WithBody(caller, body): WithBody| {
            write(declaration, op, run, op.check, id, headers, caller, body)
        })
    } else {
        routing::on(filter, move |headers: HeaderMap, WithBody(caller, body): WithBody| {
            write(declaration, op, run, op.check, String::new(), headers, caller, body)
        })
    }
}

/// An own read: 200 with its answer.
async fn read(run: Runner, id: String, query: Vec<(String, String)>, caller: Caller) -> Response {
    door::read(&caller, async |ctx, conn, ws| {
        run(Call { ctx, conn, ws, id: &id, query: &query, body: Value::Null }).await
    })
    .await
}

/// An own write: the body checked before anything opens, then one transaction under
/// the request's idempotency key (a retried action never runs twice); the row's
/// success status, with `Location` where the row says the answer lives.
#[allow(clippy::too_many_arguments)]
async fn write(
    declaration: &'static Declaration,
    op: &'static Op,
    run: Runner,
    check: Option<Check>,
    id: String,
    headers: HeaderMap,
    caller: Caller,
    body: Bytes,
) -> Response {
    let ctx = caller.ctx();
    let route = declaration.path_of(op, &id);
    let outcome = async {
        let ws = caller.workspace()?;
        ctx.authorize(ws, declaration.resource, op.access)?;
        let input = checked_body(check, &body)?;
        keyed(&ctx, ws, &headers, &route, &input, op.success, async |tx| {
            run(Call { ctx: &ctx, conn: tx, ws, id: &id, query: &[], body: input.clone() }).await
        })
        .await
    }
    .await;
    let location = op.location.map_or(Location::None, |(prefix, field)| Location::Field(prefix, field));
    match outcome {
        Ok(answer) => created(&answer.stored, location, answer.replayed),
        Err(e) => e.into_response(),
    }
}

/// The body of an own write as its idempotency key covers it: the row's request,
/// checked; a row that takes none, `{}` whether the body is empty or `{}`.
fn checked_body(check: Option<Check>, body: &[u8]) -> Result<Value, ApiError> {
    if let Some(check) = check {
        let json = body_json(body)?;
        check(&json)?;
        return Ok(json);
    }
    if !body.iter().all(u8::is_ascii_whitespace) {
        validate::parse::<EmptyRequest>(body_json(body)?)?;
    }
    Ok(json!({}))
}

async fn list<R: Records>(QueryPairs(query): Query, caller: Caller) -> Response {
    door::list(&caller, &query, async |ctx, conn, ws, request| R::list(ctx, conn, ws, request).await).await
}

async fn get<R: Records>(RecordId(id): RecordId, QueryPairs(query): Query, caller: Caller) -> Response {
    door::get(&caller, &query, async |ctx, conn, ws| R::get(ctx, conn, ws, &id).await).await
}

async fn create<R: Writable>(headers: HeaderMap, WithBody(caller, body): WithBody) -> Response {
    let permission = (R::RESOURCE, Access::Write);
    door::create(&caller, permission, &headers, R::COLLECTION, &body, async |ctx, conn, ws, input: R::Create| {
        R::create(ctx, conn, ws, input).await
    })
    .await
}

async fn update<R: Writable>(headers: HeaderMap, RecordId(id): RecordId, WithBody(caller, body): WithBody) -> Response {
    let body = stripped(body, crate::ops::machinery::resource::strip_read::<R, R::Update>);
    let permission = (R::RESOURCE, Access::Write);
    let route = format!("{}/{id}", R::COLLECTION);
    door::update(&caller, permission, &headers, &route, &body, async |ctx, conn, ws, input: R::Update| {
        R::update(ctx, conn, ws, &id, input).await
    })
    .await
}

async fn delete<R: Deletable>(RecordId(id): RecordId, caller: Caller) -> Response {
    door::remove(&caller, async |ctx, conn, ws| R::delete(ctx, conn, ws, &id).await).await
}
