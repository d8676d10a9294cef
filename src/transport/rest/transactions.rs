//! `/v1/financial-transactions` and `/v1/transfers` routes.

use axum::extract::State;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use http::HeaderMap;

use super::{door, Location, Query, QueryPairs, RecordId, RestBody};
use crate::app::AppState;
use crate::ops::list::ListRequest;
use crate::ops::transactions::{self, TransactionCreate, TransactionUpdate, TransferCreate};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/financial-transactions", get(list).post(create))
        .route("/v1/financial-transactions/aggregates", get(aggregates))
        .route("/v1/financial-transactions/ids", get(ids))
        .route("/v1/financial-transactions/{id}", get(get_one).patch(update).delete(delete))
        .route("/v1/transfers", post(create_transfer))
        .route("/v1/transfers/{id}", get(get_transfer))
}

async fn list(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query) -> Response {
    door::read(&state, &headers, &query, async |ctx, conn, ws| transactions::list(ctx, conn, ws, &ListRequest::from_query(&query)?).await).await
}

async fn get_one(State(state): State<AppState>, headers: HeaderMap, RecordId(id): RecordId, QueryPairs(query): Query) -> Response {
    door::read(&state, &headers, &query, async |ctx, conn, ws| transactions::get(ctx, conn, ws, &id).await).await
}

async fn create(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query, RestBody(body): RestBody) -> Response {
    door::create(&state, &headers, &query, "/v1/financial-transactions", &body, async |ctx, conn, ws, input: TransactionCreate| transactions::create(ctx, conn, ws, input).await).await
}

async fn update(State(state): State<AppState>, headers: HeaderMap, RecordId(id): RecordId, QueryPairs(query): Query, RestBody(body): RestBody) -> Response {
    door::update(&state, &headers, &query, &body, async |ctx, conn, ws, input: TransactionUpdate| transactions::update(ctx, conn, ws, &id, input).await).await
}

async fn delete(State(state): State<AppState>, headers: HeaderMap, RecordId(id): RecordId, QueryPairs(query): Query) -> Response {
    door::remove(&state, &headers, &query, async |ctx, conn, ws| transactions::delete(ctx, conn, ws, &id).await).await
}

/// `GET /v1/financial-transactions/aggregates`
async fn aggregates(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query) -> Response {
    door::read(&state, &headers, &query, async |ctx, conn, ws| transactions::aggregates(ctx, conn, ws, &query).await).await
}

/// `GET /v1/financial-transactions/ids`: the id sweep.
async fn ids(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query) -> Response {
    door::read(&state, &headers, &query, async |ctx, conn, ws| transactions::ids(ctx, conn, ws, &ListRequest::from_query(&query)?).await).await
}

/// `POST /v1/transfers` (idempotent with a key): 201 with `Location` at the transfer.
async fn create_transfer(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query, RestBody(body): RestBody) -> Response {
    let location = Location::Field("/v1/transfers", "transfer_id");
    door::create_keyed(&state, &headers, &query, "/v1/transfers", location, &body, async |ctx, conn, ws, input: TransferCreate| {
        transactions::create_transfer(ctx, conn, ws, input).await
    })
    .await
}

/// `GET /v1/transfers/{transfer_id}`
async fn get_transfer(State(state): State<AppState>, headers: HeaderMap, RecordId(id): RecordId, QueryPairs(query): Query) -> Response {
    door::read(&state, &headers, &query, async |ctx, conn, ws| transactions::get_transfer(ctx, conn, ws, &id).await).await
}
