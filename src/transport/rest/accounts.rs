//! `/v1/financial-accounts` routes.

use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use http::{HeaderMap, StatusCode};

use super::transactions::created_at_location;
use super::{begin_create, body_json, caller, created, error_response, finish_create, no_content, ok_json, Query, QueryPairs};
use crate::app::AppState;
use crate::error::ApiError;
use crate::ops::list::ListRequest;
use crate::ops::rate_limit::Budget;
use crate::ops::{accounts, idempotency, validate};

const COLLECTION: &str = "/v1/financial-accounts";

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/financial-accounts", get(list).post(create))
        .route("/v1/financial-accounts/{id}", get(get_one).patch(update).delete(delete))
        .route("/v1/financial-accounts/{id}/adjust-balance", post(adjust_balance))
}

/// `GET /v1/financial-accounts` (no balance in the list)
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
        accounts::list(&ctx, &mut conn, ws, &request).await
    }
    .await;
    match outcome {
        Ok(page) => ok_json(StatusCode::OK, &page),
        Err(e) => error_response(&e),
    }
}

/// `GET /v1/financial-accounts/{id}` (with the balance)
async fn get_one(State(state): State<AppState>, headers: HeaderMap, Path(id): Path<String>, QueryPairs(query): Query) -> Response {
    let caller = match caller(&state, &headers, &query, Budget::Read).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let mut conn = state.db.pool.acquire().await.map_err(crate::storage::db_error)?;
        accounts::get(&ctx, &mut conn, ws, &id).await
    }
    .await;
    match outcome {
        Ok(account) => ok_json(StatusCode::OK, &account),
        Err(e) => error_response(&e),
    }
}

/// `POST /v1/financial-accounts` (idempotent with a key)
async fn create(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query, body: axum::body::Bytes) -> Response {
    let caller = match caller(&state, &headers, &query, Budget::Write).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome: Result<(idempotency::Stored, bool), ApiError> = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let input: accounts::AccountCreate = validate::parse(body_json(&body)?)?;
        let (mut tx, key) = match begin_create(&state, &ctx, &ws.workspace_id, &headers, COLLECTION, &body).await {
            Ok(started) => started,
            Err(Ok(replay)) => return Ok((replay, true)),
            Err(Err(e)) => return Err(e),
        };
        let account = accounts::create(&ctx, &mut tx, ws, input).await?;
        let stored = idempotency::Stored { status: 201, body: serde_json::to_value(&account).map_err(|_| ApiError::internal())? };
        finish_create(tx, &ws.workspace_id, key, &stored).await?;
        Ok((stored, false))
    }
    .await;
    match outcome {
        Ok((stored, replayed)) => created(&stored, COLLECTION, replayed),
        Err(e) => error_response(&e),
    }
}

/// `PATCH /v1/financial-accounts/{id}`
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
        let input: accounts::AccountUpdate = validate::parse(body_json(&body)?)?;
        let mut tx = state.db.pool.begin().await.map_err(crate::storage::db_error)?;
        let account = accounts::update(&ctx, &mut tx, ws, &id, input).await?;
        tx.commit().await.map_err(crate::storage::db_error)?;
        Ok(account)
    }
    .await;
    match outcome {
        Ok(account) => ok_json(StatusCode::OK, &account),
        Err(e) => error_response(&e),
    }
}

/// `DELETE /v1/financial-accounts/{id}` → 204 (422 `in_use` when referenced)
async fn delete(State(state): State<AppState>, headers: HeaderMap, Path(id): Path<String>, QueryPairs(query): Query) -> Response {
    let caller = match caller(&state, &headers, &query, Budget::Write).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let mut tx = state.db.pool.begin().await.map_err(crate::storage::db_error)?;
        accounts::delete(&ctx, &mut tx, ws, &id).await?;
        tx.commit().await.map_err(crate::storage::db_error)
    }
    .await;
    match outcome {
        Ok(()) => no_content(),
        Err(e) => error_response(&e),
    }
}

/// `POST /v1/financial-accounts/{id}/adjust-balance` → 201, `Location` → the
/// transaction (idempotent with a key: it moves money).
async fn adjust_balance(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    QueryPairs(query): Query,
    body: axum::body::Bytes,
) -> Response {
    let route = format!("{COLLECTION}/{id}/adjust-balance");
    let caller = match caller(&state, &headers, &query, Budget::Write).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome: Result<(idempotency::Stored, bool), ApiError> = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let input: accounts::AdjustBalance = validate::parse(body_json(&body)?)?;
        let (mut tx, key) = match begin_create(&state, &ctx, &ws.workspace_id, &headers, &route, &body).await {
            Ok(started) => started,
            Err(Ok(replay)) => return Ok((replay, true)),
            Err(Err(e)) => return Err(e),
        };
        let adjustment = accounts::adjust_balance(&ctx, &mut tx, ws, &id, input).await?;
        let stored = idempotency::Stored { status: 201, body: serde_json::to_value(&adjustment).map_err(|_| ApiError::internal())? };
        finish_create(tx, &ws.workspace_id, key, &stored).await?;
        Ok((stored, false))
    }
    .await;
    match outcome {
        Ok((stored, replayed)) => {
            let location = stored.body.get("transaction_id").and_then(serde_json::Value::as_str).map(|t| format!("/v1/financial-transactions/{t}"));
            created_at_location(&stored, location, replayed)
        }
        Err(e) => error_response(&e),
    }
}
