//! `/v1/payables` and `/v1/receivables` routes: the same handlers for both kinds (the
//! const parameter says which), thin adapters onto `ops::billings`.

use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use http::{HeaderMap, HeaderValue, StatusCode};

use super::{begin_create, body_json, caller, created, error_response, finish_create, no_content, ok_json, Query, QueryPairs};
use crate::app::AppState;
use crate::error::ApiError;
use crate::ops::billings::{self, BillingKind};
use crate::ops::list::ListRequest;
use crate::ops::rate_limit::Budget;
use crate::ops::{idempotency, validate};

const PAYABLE: bool = false;
const RECEIVABLE: bool = true;

fn kind<const R: bool>() -> BillingKind {
    if R {
        BillingKind::Receivable
    } else {
        BillingKind::Payable
    }
}

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/payables", get(list::<PAYABLE>).post(create::<PAYABLE>))
        .route("/v1/payables/aggregates", get(aggregates::<PAYABLE>))
        .route("/v1/payables/ids", get(ids::<PAYABLE>))
        .route("/v1/payables/{id}", get(get_one::<PAYABLE>).patch(update::<PAYABLE>).delete(delete::<PAYABLE>))
        .route("/v1/payables/{id}/settle", post(settle::<PAYABLE>))
        .route("/v1/payables/{id}/cancel", post(cancel::<PAYABLE>))
        .route("/v1/payables/{id}/reopen", post(reopen::<PAYABLE>))
        .route("/v1/receivables", get(list::<RECEIVABLE>).post(create::<RECEIVABLE>))
        .route("/v1/receivables/aggregates", get(aggregates::<RECEIVABLE>))
        .route("/v1/receivables/ids", get(ids::<RECEIVABLE>))
        .route("/v1/receivables/{id}", get(get_one::<RECEIVABLE>).patch(update::<RECEIVABLE>).delete(delete::<RECEIVABLE>))
        .route("/v1/receivables/{id}/settle", post(settle::<RECEIVABLE>))
        .route("/v1/receivables/{id}/cancel", post(cancel::<RECEIVABLE>))
        .route("/v1/receivables/{id}/reopen", post(reopen::<RECEIVABLE>))
}

/// `GET /v1/{kind}`
async fn list<const R: bool>(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query) -> Response {
    let caller = match caller(&state, &headers, &query, Budget::Read).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let request = ListRequest::from_query(&query)?;
        let mut conn = state.db.pool.acquire().await.map_err(crate::storage::db_error)?;
        billings::list(&ctx, &mut conn, ws, kind::<R>(), &request).await
    }
    .await;
    match outcome {
        Ok(page) => ok_json(StatusCode::OK, &page),
        Err(e) => error_response(&e),
    }
}

/// `GET /v1/{kind}/aggregates`
async fn aggregates<const R: bool>(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query) -> Response {
    let caller = match caller(&state, &headers, &query, Budget::Read).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let mut conn = state.db.pool.acquire().await.map_err(crate::storage::db_error)?;
        billings::aggregates(&ctx, &mut conn, ws, kind::<R>(), &query).await
    }
    .await;
    match outcome {
        Ok(body) => ok_json(StatusCode::OK, &body),
        Err(e) => error_response(&e),
    }
}

/// `GET /v1/{kind}/ids`
async fn ids<const R: bool>(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query) -> Response {
    let caller = match caller(&state, &headers, &query, Budget::Read).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let mut conn = state.db.pool.acquire().await.map_err(crate::storage::db_error)?;
        billings::ids(&ctx, &mut conn, ws, kind::<R>(), &query).await
    }
    .await;
    match outcome {
        Ok(page) => ok_json(StatusCode::OK, &page),
        Err(e) => error_response(&e),
    }
}

/// `GET /v1/{kind}/{id}`
async fn get_one<const R: bool>(State(state): State<AppState>, headers: HeaderMap, Path(id): Path<String>, QueryPairs(query): Query) -> Response {
    let caller = match caller(&state, &headers, &query, Budget::Read).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let mut conn = state.db.pool.acquire().await.map_err(crate::storage::db_error)?;
        billings::get(&ctx, &mut conn, ws, kind::<R>(), &id).await
    }
    .await;
    match outcome {
        Ok(billing) => ok_json(StatusCode::OK, &billing),
        Err(e) => error_response(&e),
    }
}

/// `POST /v1/{kind}` (idempotent with a key)
async fn create<const R: bool>(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query, body: axum::body::Bytes) -> Response {
    let kind = kind::<R>();
    let route = kind.collection();
    let caller = match caller(&state, &headers, &query, Budget::Write).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome: Result<(idempotency::Stored, bool), ApiError> = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let input: billings::BillingCreate = validate::parse(body_json(&body)?)?;
        let (mut tx, key) = match begin_create(&state, &ctx, &ws.workspace_id, &headers, route, &body).await {
            Ok(started) => started,
            Err(Ok(replay)) => return Ok((replay, true)),
            Err(Err(e)) => return Err(e),
        };
        let billing = billings::create(&ctx, &mut tx, ws, kind, input).await?;
        let stored = idempotency::Stored { status: 201, body: serde_json::to_value(&billing).map_err(|_| ApiError::internal())? };
        finish_create(tx, &ws.workspace_id, key, &stored).await?;
        Ok((stored, false))
    }
    .await;
    match outcome {
        Ok((stored, replayed)) => created(&stored, route, replayed),
        Err(e) => error_response(&e),
    }
}

/// `PATCH /v1/{kind}/{id}`
async fn update<const R: bool>(
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
        let input: billings::BillingUpdate = validate::parse(body_json(&body)?)?;
        let mut tx = state.db.pool.begin().await.map_err(crate::storage::db_error)?;
        let billing = billings::update(&ctx, &mut tx, ws, kind::<R>(), &id, input).await?;
        tx.commit().await.map_err(crate::storage::db_error)?;
        Ok(billing)
    }
    .await;
    match outcome {
        Ok(billing) => ok_json(StatusCode::OK, &billing),
        Err(e) => error_response(&e),
    }
}

/// `DELETE /v1/{kind}/{id}` → 204
async fn delete<const R: bool>(State(state): State<AppState>, headers: HeaderMap, Path(id): Path<String>, QueryPairs(query): Query) -> Response {
    let caller = match caller(&state, &headers, &query, Budget::Write).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let outcome = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let mut tx = state.db.pool.begin().await.map_err(crate::storage::db_error)?;
        billings::delete(&ctx, &mut tx, ws, kind::<R>(), &id).await?;
        tx.commit().await.map_err(crate::storage::db_error)
    }
    .await;
    match outcome {
        Ok(()) => no_content(),
        Err(e) => error_response(&e),
    }
}

#[derive(Clone, Copy)]
enum Action {
    Settle,
    Cancel,
    Reopen,
}

impl Action {
    fn name(self) -> &'static str {
        match self {
            Action::Settle => "settle",
            Action::Cancel => "cancel",
            Action::Reopen => "reopen",
        }
    }
}

/// The answer of an action: 200 with the record, marked when it is a replay.
fn action_answer(stored: &idempotency::Stored, replayed: bool) -> Response {
    let mut answer = ok_json(StatusCode::from_u16(stored.status).unwrap_or(StatusCode::OK), &stored.body);
    if replayed {
        answer.headers_mut().insert("x-idempotency-replayed", HeaderValue::from_static("true"));
    }
    answer
}

/// `POST /v1/{kind}/{id}/{settle|cancel|reopen}`: one transaction, idempotent with a
/// key (a retried settle never moves money twice).
async fn action(state: AppState, headers: HeaderMap, id: String, query: Vec<(String, String)>, body: axum::body::Bytes, kind: BillingKind, action: Action) -> Response {
    let caller = match caller(&state, &headers, &query, Budget::Write).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let route = format!("{}/{}/{}", kind.collection(), id, action.name());
    let outcome: Result<(idempotency::Stored, bool), ApiError> = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let settle_input = match action {
            Action::Settle => Some(validate::parse::<billings::SettleRequest>(body_json(&body)?)?),
            _ => {
                if !body.iter().all(u8::is_ascii_whitespace) {
                    validate::parse::<billings::EmptyRequest>(body_json(&body)?)?;
                }
                None
            }
        };
        let (mut tx, key) = match begin_create(&state, &ctx, &ws.workspace_id, &headers, &route, &body).await {
            Ok(started) => started,
            Err(Ok(replay)) => return Ok((replay, true)),
            Err(Err(e)) => return Err(e),
        };
        let billing = match (action, settle_input) {
            (Action::Settle, Some(input)) => billings::settle(&ctx, &mut tx, ws, kind, &id, input).await?,
            (Action::Cancel, _) => billings::cancel(&ctx, &mut tx, ws, kind, &id).await?,
            (Action::Reopen, _) => billings::reopen(&ctx, &mut tx, ws, kind, &id).await?,
            (Action::Settle, None) => return Err(ApiError::internal()),
        };
        let stored = idempotency::Stored { status: 200, body: serde_json::to_value(&billing).map_err(|_| ApiError::internal())? };
        finish_create(tx, &ws.workspace_id, key, &stored).await?;
        Ok((stored, false))
    }
    .await;
    match outcome {
        Ok((stored, replayed)) => action_answer(&stored, replayed),
        Err(e) => error_response(&e),
    }
}

/// `POST /v1/{kind}/{id}/settle`
async fn settle<const R: bool>(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    QueryPairs(query): Query,
    body: axum::body::Bytes,
) -> Response {
    action(state, headers, id, query, body, kind::<R>(), Action::Settle).await
}

/// `POST /v1/{kind}/{id}/cancel`
async fn cancel<const R: bool>(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    QueryPairs(query): Query,
    body: axum::body::Bytes,
) -> Response {
    action(state, headers, id, query, body, kind::<R>(), Action::Cancel).await
}

/// `POST /v1/{kind}/{id}/reopen`
async fn reopen<const R: bool>(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    QueryPairs(query): Query,
    body: axum::body::Bytes,
) -> Response {
    action(state, headers, id, query, body, kind::<R>(), Action::Reopen).await
}
