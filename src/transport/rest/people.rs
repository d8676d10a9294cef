//! `/v1/people` routes.

use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use axum::Router;
use http::{HeaderMap, StatusCode};

use super::{begin_create, body_json, caller, created, error_response, finish_create, no_content, ok_json, Query, QueryPairs};
use crate::app::AppState;
use crate::error::ApiError;
use crate::ops::list::ListRequest;
use crate::ops::rate_limit::Budget;
use crate::ops::{idempotency, people, validate};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/people", get(list).post(create))
        .route("/v1/people/ids", get(ids))
        .route("/v1/people/{id}", get(get_one).patch(update).delete(delete))
}


/// `GET /v1/people`
async fn list(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query) -> Response {
    let caller = match caller(&state, &headers, &query, Budget::Read).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let request = ListRequest::from_query(&query)?;
        let mut conn = state.db.pool.acquire().await.map_err(crate::storage::db_error)?;
        people::list(&ctx, &mut conn, ws, &request).await
    }
    .await;
    match outcome {
        Ok(page) => ok_json(StatusCode::OK, &page),
        Err(e) => error_response(&e),
    }
}

/// `GET /v1/people/ids` (the id sweep)
async fn ids(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query) -> Response {
    let caller = match caller(&state, &headers, &query, Budget::Read).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let request = ListRequest::from_query(&query)?;
        let mut conn = state.db.pool.acquire().await.map_err(crate::storage::db_error)?;
        people::ids(&ctx, &mut conn, ws, &request).await
    }
    .await;
    match outcome {
        Ok(page) => ok_json(StatusCode::OK, &page),
        Err(e) => error_response(&e),
    }
}

/// `GET /v1/people/{id}`
async fn get_one(State(state): State<AppState>, headers: HeaderMap, Path(id): Path<String>, QueryPairs(query): Query) -> Response {
    let caller = match caller(&state, &headers, &query, Budget::Read).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let mut conn = state.db.pool.acquire().await.map_err(crate::storage::db_error)?;
        people::get(&ctx, &mut conn, ws, &id).await
    }
    .await;
    match outcome {
        Ok(person) => ok_json(StatusCode::OK, &person),
        Err(e) => error_response(&e),
    }
}

/// `POST /v1/people` (idempotent with a key)
async fn create(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query, body: axum::body::Bytes) -> Response {
    const ROUTE: &str = "/v1/people";
    let caller = match caller(&state, &headers, &query, Budget::Write).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome: Result<(idempotency::Stored, bool), ApiError> = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let input: people::PersonCreate = validate::parse(body_json(&body)?)?;
        let (mut tx, key) = match begin_create(&state, &ctx, &ws.workspace_id, &headers, ROUTE, &body).await {
            Ok(started) => started,
            Err(Ok(replay)) => return Ok((replay, true)),
            Err(Err(e)) => return Err(e),
        };
        let person = people::create(&ctx, &mut tx, ws, input).await?;
        let stored = idempotency::Stored { status: 201, body: serde_json::to_value(&person).map_err(|_| ApiError::internal())? };
        finish_create(tx, &ws.workspace_id, key, &stored).await?;
        Ok((stored, false))
    }
    .await;
    match outcome {
        Ok((stored, replayed)) => created(&stored, ROUTE, replayed),
        Err(e) => error_response(&e),
    }
}

/// `PATCH /v1/people/{id}`
async fn update(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    QueryPairs(query): Query,
    body: axum::body::Bytes,
) -> Response {
    let caller = match caller(&state, &headers, &query, Budget::Write).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let input: people::PersonUpdate = validate::parse(body_json(&body)?)?;
        let mut tx = state.db.pool.begin().await.map_err(crate::storage::db_error)?;
        let person = people::update(&ctx, &mut tx, ws, &id, input).await?;
        tx.commit().await.map_err(crate::storage::db_error)?;
        Ok(person)
    }
    .await;
    match outcome {
        Ok(person) => ok_json(StatusCode::OK, &person),
        Err(e) => error_response(&e),
    }
}

/// `DELETE /v1/people/{id}` → 204
async fn delete(State(state): State<AppState>, headers: HeaderMap, Path(id): Path<String>, QueryPairs(query): Query) -> Response {
    let caller = match caller(&state, &headers, &query, Budget::Write).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let mut tx = state.db.pool.begin().await.map_err(crate::storage::db_error)?;
        people::delete(&ctx, &mut tx, ws, &id).await?;
        tx.commit().await.map_err(crate::storage::db_error)
    }
    .await;
    match outcome {
        Ok(()) => no_content(),
        Err(e) => error_response(&e),
    }
}

