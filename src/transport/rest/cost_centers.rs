//! `/v1/classification_centers` routes (the underscore path is the contract; there is
//! no hyphenated alias, which answers 404 like any unknown route).

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
use crate::ops::{cost_centers, idempotency, validate};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/classification_centers", get(list).post(create))
        .route("/v1/classification_centers/{id}", get(get_one).patch(update).delete(delete))
}


/// `GET /v1/classification_centers`
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
        cost_centers::list(&ctx, &mut conn, ws, &request).await
    }
    .await;
    match outcome {
        Ok(page) => ok_json(StatusCode::OK, &page),
        Err(e) => error_response(&e),
    }
}

/// `GET /v1/classification_centers/{id}`
async fn get_one(State(state): State<AppState>, headers: HeaderMap, Path(id): Path<String>, QueryPairs(query): Query) -> Response {
    let caller = match caller(&state, &headers, &query, Budget::Read).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let mut conn = state.db.pool.acquire().await.map_err(crate::storage::db_error)?;
        cost_centers::get(&ctx, &mut conn, ws, &id).await
    }
    .await;
    match outcome {
        Ok(center) => ok_json(StatusCode::OK, &center),
        Err(e) => error_response(&e),
    }
}

/// `POST /v1/classification_centers` (idempotent with a key)
async fn create(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query, body: axum::body::Bytes) -> Response {
    const ROUTE: &str = "/v1/classification_centers";
    let caller = match caller(&state, &headers, &query, Budget::Write).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome: Result<(idempotency::Stored, bool), ApiError> = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let input: cost_centers::CenterCreate = validate::parse(body_json(&body)?)?;
        let (mut tx, key) = match begin_create(&state, &ctx, &ws.workspace_id, &headers, ROUTE, &body).await {
            Ok(started) => started,
            Err(Ok(replay)) => return Ok((replay, true)),
            Err(Err(e)) => return Err(e),
        };
        let center = cost_centers::create(&ctx, &mut tx, ws, input).await?;
        let stored = idempotency::Stored { status: 201, body: serde_json::to_value(&center).map_err(|_| ApiError::internal())? };
        finish_create(tx, &ws.workspace_id, key, &stored).await?;
        Ok((stored, false))
    }
    .await;
    match outcome {
        Ok((stored, replayed)) => created(&stored, ROUTE, replayed),
        Err(e) => error_response(&e),
    }
}

/// `PATCH /v1/classification_centers/{id}`
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
        let input: cost_centers::CenterUpdate = validate::parse(body_json(&body)?)?;
        let mut tx = state.db.pool.begin().await.map_err(crate::storage::db_error)?;
        let center = cost_centers::update(&ctx, &mut tx, ws, &id, input).await?;
        tx.commit().await.map_err(crate::storage::db_error)?;
        Ok(center)
    }
    .await;
    match outcome {
        Ok(center) => ok_json(StatusCode::OK, &center),
        Err(e) => error_response(&e),
    }
}

/// `DELETE /v1/classification_centers/{id}` → 204
async fn delete(State(state): State<AppState>, headers: HeaderMap, Path(id): Path<String>, QueryPairs(query): Query) -> Response {
    let caller = match caller(&state, &headers, &query, Budget::Write).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let mut tx = state.db.pool.begin().await.map_err(crate::storage::db_error)?;
        cost_centers::delete(&ctx, &mut tx, ws, &id).await?;
        tx.commit().await.map_err(crate::storage::db_error)
    }
    .await;
    match outcome {
        Ok(()) => no_content(),
        Err(e) => error_response(&e),
    }
}

