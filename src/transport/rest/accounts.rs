//! `/v1/financial-accounts` routes.

use axum::extract::State;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use http::HeaderMap;

use super::{door, Location, Query, QueryPairs, RecordId, RestBody};
use crate::app::AppState;
use crate::ops::list::ListRequest;
use crate::ops::accounts::{self, AccountCreate, AccountUpdate, AdjustBalance};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/financial-accounts", get(list).post(create))
        .route("/v1/financial-accounts/{id}", get(get_one).patch(update).delete(delete))
        .route("/v1/financial-accounts/{id}/adjust-balance", post(adjust_balance))
}

async fn list(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query) -> Response {
    door::read(&state, &headers, &query, async |ctx, conn, ws| accounts::list(ctx, conn, ws, &ListRequest::from_query(&query)?).await).await
}

async fn get_one(State(state): State<AppState>, headers: HeaderMap, RecordId(id): RecordId, QueryPairs(query): Query) -> Response {
    door::read(&state, &headers, &query, async |ctx, conn, ws| accounts::get(ctx, conn, ws, &id).await).await
}

async fn create(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query, RestBody(body): RestBody) -> Response {
    door::create(&state, &headers, &query, "/v1/financial-accounts", &body, async |ctx, conn, ws, input: AccountCreate| accounts::create(ctx, conn, ws, input).await).await
}

async fn update(State(state): State<AppState>, headers: HeaderMap, RecordId(id): RecordId, QueryPairs(query): Query, RestBody(body): RestBody) -> Response {
    door::update(&state, &headers, &query, &body, async |ctx, conn, ws, input: AccountUpdate| accounts::update(ctx, conn, ws, &id, input).await).await
}

async fn delete(State(state): State<AppState>, headers: HeaderMap, RecordId(id): RecordId, QueryPairs(query): Query) -> Response {
    door::remove(&state, &headers, &query, async |ctx, conn, ws| accounts::delete(ctx, conn, ws, &id).await).await
}

/// `POST /v1/financial-accounts/{id}/adjust-balance` (idempotent with a key): 201 with
/// `Location` at the balancing transaction.
async fn adjust_balance(State(state): State<AppState>, headers: HeaderMap, RecordId(id): RecordId, QueryPairs(query): Query, RestBody(body): RestBody) -> Response {
    let route = format!("/v1/financial-accounts/{id}/adjust-balance");
    let location = Location::Field("/v1/financial-transactions", "transaction_id");
    door::create_keyed(&state, &headers, &query, &route, location, &body, async |ctx, conn, ws, input: AdjustBalance| {
        accounts::adjust_balance(ctx, conn, ws, &id, input).await
    })
    .await
}
