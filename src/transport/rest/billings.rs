//! `/v1/payables` and `/v1/receivables` routes: the same handlers for both kinds (the
//! [`BillKind`] parameter says which), thin adapters onto `ops::bills`.

use axum::extract::State;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use http::{HeaderMap, HeaderValue, StatusCode};

use super::{begin_create, body_json, caller, door, error_response, finish_create, ok_json, Query, QueryPairs, RecordId, RestBody};
use crate::app::AppState;
use crate::error::ApiError;
use crate::ops::bills::{self, BillKind, Payable, Receivable};
use crate::ops::list::ListRequest;
use crate::ops::rate_limit::Budget;
use crate::ops::{idempotency, validate};

pub fn routes() -> Router<AppState> {
    Router::new().merge(routes_of::<Payable>()).merge(routes_of::<Receivable>())
}

fn routes_of<B: BillKind>() -> Router<AppState> {
    let at = |suffix: &str| format!("{}{suffix}", B::COLLECTION);
    Router::new()
        .route(B::COLLECTION, get(list::<B>).post(create::<B>))
        .route(&at("/aggregates"), get(aggregates::<B>))
        .route(&at("/ids"), get(ids::<B>))
        .route(&at("/{id}"), get(get_one::<B>).patch(update::<B>).delete(delete::<B>))
        .route(&at("/{id}/settle"), post(settle::<B>))
        .route(&at("/{id}/cancel"), post(cancel::<B>))
        .route(&at("/{id}/reopen"), post(reopen::<B>))
}

/// `GET /v1/{kind}`
async fn list<B: BillKind>(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query) -> Response {
    door::read(&state, &headers, &query, async |ctx, conn, ws| bills::list::<B>(ctx, conn, ws, &ListRequest::from_query(&query)?).await).await
}

/// `GET /v1/{kind}/aggregates`
async fn aggregates<B: BillKind>(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query) -> Response {
    door::read(&state, &headers, &query, async |ctx, conn, ws| bills::aggregates::<B>(ctx, conn, ws, &query).await).await
}

/// `GET /v1/{kind}/ids`
async fn ids<B: BillKind>(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query) -> Response {
    door::read(&state, &headers, &query, async |ctx, conn, ws| bills::ids::<B>(ctx, conn, ws, &query).await).await
}

/// `GET /v1/{kind}/{id}`
async fn get_one<B: BillKind>(State(state): State<AppState>, headers: HeaderMap, RecordId(id): RecordId, QueryPairs(query): Query) -> Response {
    door::read(&state, &headers, &query, async |ctx, conn, ws| bills::get::<B>(ctx, conn, ws, &id).await).await
}

/// `POST /v1/{kind}` (idempotent with a key)
async fn create<B: BillKind>(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query, RestBody(body): RestBody) -> Response {
    door::create(&state, &headers, &query, B::COLLECTION, &body, async |ctx, conn, ws, input: bills::BillingCreate| {
        bills::create::<B>(ctx, conn, ws, input).await
    })
    .await
}

/// `PATCH /v1/{kind}/{id}`
async fn update<B: BillKind>(State(state): State<AppState>, headers: HeaderMap, RecordId(id): RecordId, QueryPairs(query): Query, RestBody(body): RestBody) -> Response {
    door::update(&state, &headers, &query, &body, async |ctx, conn, ws, input: bills::BillingUpdate| {
        bills::update::<B>(ctx, conn, ws, &id, input).await
    })
    .await
}

/// `DELETE /v1/{kind}/{id}` → 204
async fn delete<B: BillKind>(State(state): State<AppState>, headers: HeaderMap, RecordId(id): RecordId, QueryPairs(query): Query) -> Response {
    door::remove(&state, &headers, &query, async |ctx, conn, ws| bills::delete::<B>(ctx, conn, ws, &id).await).await
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

/// An action with its checked body (only settle has fields; the others take none).
enum Checked {
    Settle(bills::SettleRequest),
    Cancel,
    Reopen,
}

fn check_body(action: Action, body: &[u8]) -> Result<Checked, ApiError> {
    if let Action::Settle = action {
        return Ok(Checked::Settle(validate::parse(body_json(body)?)?));
    }
    if !body.iter().all(u8::is_ascii_whitespace) {
        validate::parse::<bills::EmptyRequest>(body_json(body)?)?;
    }
    Ok(if let Action::Cancel = action { Checked::Cancel } else { Checked::Reopen })
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
async fn action<B: BillKind>(state: AppState, headers: HeaderMap, id: String, query: Vec<(String, String)>, body: axum::body::Bytes, action: Action) -> Response {
    let caller = match caller(&state, &headers, &query, Budget::Write).await {
        Ok(c) => c,
        Err(answer) => return answer,
    };
    let ctx = caller.ctx(&state);
    let route = format!("{}/{}/{}", B::COLLECTION, id, action.name());
    let outcome: Result<(idempotency::Stored, bool), ApiError> = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let checked = check_body(action, &body)?;
        let (mut tx, key) = match begin_create(&state, &ctx, &ws.workspace_id, &headers, &route, &body).await {
            Ok(started) => started,
            Err(Ok(replay)) => return Ok((replay, true)),
            Err(Err(e)) => return Err(e),
        };
        let billing = match checked {
            Checked::Settle(input) => bills::settle::<B>(&ctx, &mut tx, ws, &id, input).await?,
            Checked::Cancel => bills::cancel::<B>(&ctx, &mut tx, ws, &id).await?,
            Checked::Reopen => bills::reopen::<B>(&ctx, &mut tx, ws, &id).await?,
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
async fn settle<B: BillKind>(
    State(state): State<AppState>,
    headers: HeaderMap,
    RecordId(id): RecordId,
    QueryPairs(query): Query,
    RestBody(body): RestBody,
) -> Response {
    action::<B>(state, headers, id, query, body, Action::Settle).await
}

/// `POST /v1/{kind}/{id}/cancel`
async fn cancel<B: BillKind>(
    State(state): State<AppState>,
    headers: HeaderMap,
    RecordId(id): RecordId,
    QueryPairs(query): Query,
    RestBody(body): RestBody,
) -> Response {
    action::<B>(state, headers, id, query, body, Action::Cancel).await
}

/// `POST /v1/{kind}/{id}/reopen`
async fn reopen<B: BillKind>(
    State(state): State<AppState>,
    headers: HeaderMap,
    RecordId(id): RecordId,
    QueryPairs(query): Query,
    RestBody(body): RestBody,
) -> Response {
    action::<B>(state, headers, id, query, body, Action::Reopen).await
}
