//! The routes of a declared resource ([`Declaration`]): each record shape — list, get,
//! create, update, delete — served by one generic handler over the resource's
//! operations ([`Writable`], [`Deletable`]); every other declared operation by the
//! handler its route module names for it. A route's path is the declaration's.

use axum::response::Response;
use axum::routing::{self, MethodRouter};
use axum::Router;
use http::HeaderMap;

use super::{door, Caller, Query, QueryPairs, RecordId, WithBody};
use crate::app::AppState;
use crate::ops::list::ListRequest;
use crate::ops::resource::{Declaration, Deletable, Records, Shape, Writable};

/// The routes of `declaration`, whose record shapes are the operations of `R`; each
/// [`Shape::Own`] row is served by the handler `own` names for its `operationId`.
pub(crate) fn routes<R: Writable + Deletable>(
    declaration: &'static Declaration,
    own: Vec<(String, MethodRouter<AppState>)>,
) -> Router<AppState> {
    mount(declaration, own, |shape| match shape {
        Shape::List => Some(routing::get(list::<R>)),
        Shape::Get => Some(routing::get(get::<R>)),
        Shape::Create => Some(routing::post(create::<R>)),
        Shape::Update => Some(routing::patch(update::<R>)),
        Shape::Delete => Some(routing::delete(delete::<R>)),
        Shape::Own => None,
    })
}

/// The routes of a declaration whose every row has a handler of its own in `own`.
pub(crate) fn own(declaration: &'static Declaration, own: Vec<(String, MethodRouter<AppState>)>) -> Router<AppState> {
    mount(declaration, own, |_| None)
}

/// Every row of `declaration` at its path. A row without a handler, or a handler for
/// no row, is a declaration and routes that disagree: the server does not start.
fn mount(
    declaration: &'static Declaration,
    mut own: Vec<(String, MethodRouter<AppState>)>,
    shaped: impl Fn(Shape) -> Option<MethodRouter<AppState>>,
) -> Router<AppState> {
    let mut router = Router::new();
    for op in declaration.operations {
        let handler = match shaped(op.shape) {
            Some(handler) => handler,
            None => match own.iter().position(|(action, _)| action == op.action) {
                Some(at) => own.swap_remove(at).1,
                None => panic!("{}: the declared operation {} has no route", declaration.collection, op.action),
            },
        };
        router = router.route(&declaration.path(op), handler);
    }
    if let Some((id, _)) = own.first() {
        panic!("{}: a route for {}, which is not declared", declaration.collection, id);
    }
    router
}

async fn list<R: Records>(QueryPairs(query): Query, caller: Caller) -> Response {
    door::read(&caller, async |ctx, conn, ws| R::list(ctx, conn, ws, &ListRequest::from_query(&query)?).await).await
}

async fn get<R: Records>(RecordId(id): RecordId, caller: Caller) -> Response {
    door::read(&caller, async |ctx, conn, ws| R::get(ctx, conn, ws, &id).await).await
}

async fn create<R: Writable>(headers: HeaderMap, WithBody(caller, body): WithBody) -> Response {
    door::create(&caller, &headers, R::COLLECTION, &body, async |ctx, conn, ws, input: R::Create| {
        R::create(ctx, conn, ws, input).await
    })
    .await
}

async fn update<R: Writable>(RecordId(id): RecordId, WithBody(caller, body): WithBody) -> Response {
    door::update(&caller, &body, async |ctx, conn, ws, input: R::Update| R::update(ctx, conn, ws, &id, input).await)
        .await
}

async fn delete<R: Deletable>(RecordId(id): RecordId, caller: Caller) -> Response {
    door::remove(&caller, async |ctx, conn, ws| R::delete(ctx, conn, ws, &id).await).await
}
