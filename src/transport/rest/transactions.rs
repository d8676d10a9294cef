//! `/v1/financial-transactions` and `/v1/transfers` routes.

use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use http::{HeaderMap, HeaderValue, StatusCode};

use super::{begin_create, body_json, caller, created, error_response, finish_create, no_content, ok_json, Query, QueryPairs};
use crate::app::AppState;
use crate::error::ApiError;
use crate::ops::list::ListRequest;
use crate::ops::rate_limit::Budget;
use crate::ops::{idempotency, transactions, validate};
use crate::transport::response;

const COLLECTION: &str = "/v1/financial-transactions";
const TRANSFERS: &str = "/v1/transfers";

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/financial-transactions", get(list).post(create))
        .route("/v1/financial-transactions/aggregates", get(aggregates))
        .route("/v1/financial-transactions/ids", get(ids))
        .route("/v1/financial-transactions/{id}", get(get_one).patch(update).delete(delete))
        .route("/v1/transfers", post(create_transfer))
        .route("/v1/transfers/{id}", get(get_transfer))
}

/// 201 with the given `Location`, marked when it is a replay: for creates whose
/// answer has no `id` (transfers, balance adjustments).
pub(crate) fn created_at_location(stored: &idempotency::Stored, location: Option<String>, replayed: bool) -> Response {
    let status = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::CREATED);
    let mut answer = response::json(status, &stored.body, None);
    if let Some(value) = location.and_then(|l| HeaderValue::from_str(&l).ok()) {
        answer.headers_mut().insert(http::header::LOCATION, value);
    }
    if replayed {
        answer.headers_mut().insert("x-idempotency-replayed", HeaderValue::from_static("true"));
    }
    answer
}

/// `GET /v1/financial-transactions`
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
        transactions::list(&ctx, &mut conn, ws, &request).await
    }
    .await;
    match outcome {
        Ok(page) => ok_json(StatusCode::OK, &page),
        Err(e) => error_response(&e),
    }
}

/// `GET /v1/financial-transactions/aggregates`
async fn aggregates(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query) -> Response {
    let caller = match caller(&state, &headers, &query, Budget::Read).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let mut conn = state.db.pool.acquire().await.map_err(crate::storage::db_error)?;
        transactions::aggregates(&ctx, &mut conn, ws, &query).await
    }
    .await;
    match outcome {
        Ok(totals) => ok_json(StatusCode::OK, &totals),
        Err(e) => error_response(&e),
    }
}

/// `GET /v1/financial-transactions/ids`
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
        transactions::ids(&ctx, &mut conn, ws, &request).await
    }
    .await;
    match outcome {
        Ok(page) => ok_json(StatusCode::OK, &page),
        Err(e) => error_response(&e),
    }
}

/// `GET /v1/financial-transactions/{id}`
async fn get_one(State(state): State<AppState>, headers: HeaderMap, Path(id): Path<String>, QueryPairs(query): Query) -> Response {
    let caller = match caller(&state, &headers, &query, Budget::Read).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let mut conn = state.db.pool.acquire().await.map_err(crate::storage::db_error)?;
        transactions::get(&ctx, &mut conn, ws, &id).await
    }
    .await;
    match outcome {
        Ok(transaction) => ok_json(StatusCode::OK, &transaction),
        Err(e) => error_response(&e),
    }
}

/// `POST /v1/financial-transactions` (idempotent with a key)
async fn create(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query, body: axum::body::Bytes) -> Response {
    let caller = match caller(&state, &headers, &query, Budget::Write).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome: Result<(idempotency::Stored, bool), ApiError> = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let input: transactions::TransactionCreate = validate::parse(body_json(&body)?)?;
        let (mut tx, key) = match begin_create(&state, &ctx, &ws.workspace_id, &headers, COLLECTION, &body).await {
            Ok(started) => started,
            Err(Ok(replay)) => return Ok((replay, true)),
            Err(Err(e)) => return Err(e),
        };
        let transaction = transactions::create(&ctx, &mut tx, ws, input).await?;
        let stored = idempotency::Stored { status: 201, body: serde_json::to_value(&transaction).map_err(|_| ApiError::internal())? };
        finish_create(tx, &ws.workspace_id, key, &stored).await?;
        Ok((stored, false))
    }
    .await;
    match outcome {
        Ok((stored, replayed)) => created(&stored, COLLECTION, replayed),
        Err(e) => error_response(&e),
    }
}

/// `PATCH /v1/financial-transactions/{id}`
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
        let input: transactions::TransactionUpdate = validate::parse(body_json(&body)?)?;
        let mut tx = state.db.pool.begin().await.map_err(crate::storage::db_error)?;
        let transaction = transactions::update(&ctx, &mut tx, ws, &id, input).await?;
        tx.commit().await.map_err(crate::storage::db_error)?;
        Ok(transaction)
    }
    .await;
    match outcome {
        Ok(transaction) => ok_json(StatusCode::OK, &transaction),
        Err(e) => error_response(&e),
    }
}

/// `DELETE /v1/financial-transactions/{id}` → 204 (a transfer leg goes with its pair)
async fn delete(State(state): State<AppState>, headers: HeaderMap, Path(id): Path<String>, QueryPairs(query): Query) -> Response {
    let caller = match caller(&state, &headers, &query, Budget::Write).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let mut tx = state.db.pool.begin().await.map_err(crate::storage::db_error)?;
        transactions::delete(&ctx, &mut tx, ws, &id).await?;
        tx.commit().await.map_err(crate::storage::db_error)
    }
    .await;
    match outcome {
        Ok(()) => no_content(),
        Err(e) => error_response(&e),
    }
}

/// `POST /v1/transfers` → 201, `Location` → the transfer (idempotent with a key)
async fn create_transfer(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query, body: axum::body::Bytes) -> Response {
    let caller = match caller(&state, &headers, &query, Budget::Write).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome: Result<(idempotency::Stored, bool), ApiError> = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let input: transactions::TransferCreate = validate::parse(body_json(&body)?)?;
        let (mut tx, key) = match begin_create(&state, &ctx, &ws.workspace_id, &headers, TRANSFERS, &body).await {
            Ok(started) => started,
            Err(Ok(replay)) => return Ok((replay, true)),
            Err(Err(e)) => return Err(e),
        };
        let transfer = transactions::create_transfer(&ctx, &mut tx, ws, input).await?;
        let stored = idempotency::Stored { status: 201, body: serde_json::to_value(&transfer).map_err(|_| ApiError::internal())? };
        finish_create(tx, &ws.workspace_id, key, &stored).await?;
        Ok((stored, false))
    }
    .await;
    match outcome {
        Ok((stored, replayed)) => {
            let location = stored.body.get("transfer_id").and_then(serde_json::Value::as_str).map(|t| format!("{TRANSFERS}/{t}"));
            created_at_location(&stored, location, replayed)
        }
        Err(e) => error_response(&e),
    }
}

/// `GET /v1/transfers/{transfer_id}`
async fn get_transfer(State(state): State<AppState>, headers: HeaderMap, Path(id): Path<String>, QueryPairs(query): Query) -> Response {
    let caller = match caller(&state, &headers, &query, Budget::Read).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let mut conn = state.db.pool.acquire().await.map_err(crate::storage::db_error)?;
        transactions::get_transfer(&ctx, &mut conn, ws, &id).await
    }
    .await;
    match outcome {
        Ok(transfer) => ok_json(StatusCode::OK, &transfer),
        Err(e) => error_response(&e),
    }
}
