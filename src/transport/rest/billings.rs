//! `/v1/payables` and `/v1/receivables` routes: the same handlers for both kinds (the
//! const parameter says which), thin adapters onto `ops::billings`.

use axum::extract::State;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use http::{HeaderMap, HeaderValue, StatusCode};

use super::{body_json, caller, door, error_response, keyed, ok_json, Query, QueryPairs, RecordId, RestBody};
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
    door::read(&state, &headers, &query, async |ctx, conn, ws| billings::list(ctx, conn, ws, kind::<R>(), &ListRequest::from_query(&query)?).await).await
}

/// `GET /v1/{kind}/aggregates`
async fn aggregates<const R: bool>(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query) -> Response {
    door::read(&state, &headers, &query, async |ctx, conn, ws| billings::aggregates(ctx, conn, ws, kind::<R>(), &query).await).await
}

/// `GET /v1/{kind}/ids`
async fn ids<const R: bool>(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query) -> Response {
    door::read(&state, &headers, &query, async |ctx, conn, ws| billings::ids(ctx, conn, ws, kind::<R>(), &query).await).await
}

/// `GET /v1/{kind}/{id}`
async fn get_one<const R: bool>(State(state): State<AppState>, headers: HeaderMap, RecordId(id): RecordId, QueryPairs(query): Query) -> Response {
    door::read(&state, &headers, &query, async |ctx, conn, ws| billings::get(ctx, conn, ws, kind::<R>(), &id).await).await
}

/// `POST /v1/{kind}` (idempotent with a key)
async fn create<const R: bool>(State(state): State<AppState>, headers: HeaderMap, QueryPairs(query): Query, RestBody(body): RestBody) -> Response {
    let kind = kind::<R>();
    door::create(&state, &headers, &query, kind.collection(), &body, async |ctx, conn, ws, input: billings::BillingCreate| {
        billings::create(ctx, conn, ws, kind, input).await
    })
    .await
}

/// `PATCH /v1/{kind}/{id}`
async fn update<const R: bool>(State(state): State<AppState>, headers: HeaderMap, RecordId(id): RecordId, QueryPairs(query): Query, RestBody(body): RestBody) -> Response {
    door::update(&state, &headers, &query, &body, async |ctx, conn, ws, input: billings::BillingUpdate| {
        billings::update(ctx, conn, ws, kind::<R>(), &id, input).await
    })
    .await
}

/// `DELETE /v1/{kind}/{id}` → 204
async fn delete<const R: bool>(State(state): State<AppState>, headers: HeaderMap, RecordId(id): RecordId, QueryPairs(query): Query) -> Response {
    door::remove(&state, &headers, &query, async |ctx, conn, ws| billings::delete(ctx, conn, ws, kind::<R>(), &id).await).await
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
    Settle(billings::SettleRequest),
    Cancel,
    Reopen,
}

/// The checked body and the request it stands for (what its idempotency key covers):
/// cancel and reopen take nothing, whether the body is empty or `{}`.
fn check_body(action: Action, body: &[u8]) -> Result<(Checked, serde_json::Value), ApiError> {
    if let Action::Settle = action {
        let json = body_json(body)?;
        return Ok((Checked::Settle(validate::parse(json.clone())?), json));
    }
    if !body.iter().all(u8::is_ascii_whitespace) {
        validate::parse::<billings::EmptyRequest>(body_json(body)?)?;
    }
    Ok((if let Action::Cancel = action { Checked::Cancel } else { Checked::Reopen }, serde_json::json!({})))
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
    let outcome = async {
        let ws = ctx.workspace(None, caller.default_workspace.as_deref())?;
        let (checked, input) = check_body(action, &body)?;
        keyed(&ctx, ws, &headers, &route, &input, 200, async |tx| match checked {
            Checked::Settle(input) => billings::settle(&ctx, tx, ws, kind, &id, input).await,
            Checked::Cancel => billings::cancel(&ctx, tx, ws, kind, &id).await,
            Checked::Reopen => billings::reopen(&ctx, tx, ws, kind, &id).await,
        })
        .await
    }
    .await;
    match outcome {
        Ok(answer) => action_answer(&answer.stored, answer.replayed),
        Err(e) => error_response(&e),
    }
}

/// `POST /v1/{kind}/{id}/settle`
async fn settle<const R: bool>(
    State(state): State<AppState>,
    headers: HeaderMap,
    RecordId(id): RecordId,
    QueryPairs(query): Query,
    RestBody(body): RestBody,
) -> Response {
    action(state, headers, id, query, body, kind::<R>(), Action::Settle).await
}

/// `POST /v1/{kind}/{id}/cancel`
async fn cancel<const R: bool>(
    State(state): State<AppState>,
    headers: HeaderMap,
    RecordId(id): RecordId,
    QueryPairs(query): Query,
    RestBody(body): RestBody,
) -> Response {
    action(state, headers, id, query, body, kind::<R>(), Action::Cancel).await
}

/// `POST /v1/{kind}/{id}/reopen`
async fn reopen<const R: bool>(
    State(state): State<AppState>,
    headers: HeaderMap,
    RecordId(id): RecordId,
    QueryPairs(query): Query,
    RestBody(body): RestBody,
) -> Response {
    action(state, headers, id, query, body, kind::<R>(), Action::Reopen).await
}
