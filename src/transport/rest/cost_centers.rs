//! `/v1/classification_centers` routes.

use axum::extract::State;
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use http::HeaderMap;

use super::{door, Query, QueryPairs, RecordId, RestBody};
use crate::app::AppState;
use crate::ops::list::ListRequest;
use crate::ops::cost_centers::{self, CenterCreate, CenterUpdate};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/classification_centers", get(list).post(create))
        .route("/v1/classification_centers/{id}", get(get_one).patch(update).delete(delete))
}

async fn list(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query) -> Response {
    door::read(&state, &headers, &query, async |ctx, conn, ws| cost_centers::list(ctx, conn, ws, &ListRequest::from_query(&query)?).await).await
}

async fn get_one(State(state): State<AppState>, headers: HeaderMap, RecordId(id): RecordId, QueryPairs(query): Query) -> Response {
    door::read(&state, &headers, &query, async |ctx, conn, ws| cost_centers::get(ctx, conn, ws, &id).await).await
}

async fn create(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query, RestBody(body): RestBody) -> Response {
    door::create(&state, &headers, &query, "/v1/classification_centers", &body, async |ctx, conn, ws, input: CenterCreate| cost_centers::create(ctx, conn, ws, input).await).await
}

async fn update(State(state): State<AppState>, headers: HeaderMap, RecordId(id): RecordId, QueryPairs(query): Query, RestBody(body): RestBody) -> Response {
    door::update(&state, &headers, &query, &body, async |ctx, conn, ws, input: CenterUpdate| cost_centers::update(ctx, conn, ws, &id, input).await).await
}

async fn delete(State(state): State<AppState>, headers: HeaderMap, RecordId(id): RecordId, QueryPairs(query): Query) -> Response {
    door::remove(&state, &headers, &query, async |ctx, conn, ws| cost_centers::delete(ctx, conn, ws, &id).await).await
}
