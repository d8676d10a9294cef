//! `/v1/payables` and `/v1/receivables` routes: the record shapes of their declarations,
//! and the same handlers of their own for both kinds (the [`BillKind`] parameter says
//! which), thin adapters onto `ops::bills`.

use axum::response::Response;
use axum::routing::{get, post, MethodRouter};
use axum::Router;
use http::{HeaderMap, HeaderValue, StatusCode};

use super::{body_json, door, error_response, keyed, ok_json, records, Caller, Query, QueryPairs, RecordId, WithBody};
use crate::app::AppState;
use crate::error::ApiError;
use crate::ops::bills::declared::{self, Bills};
use crate::ops::bills::{self, BillKind, Payable, Receivable};
use crate::ops::resource::Declaration;
use crate::ops::{idempotency, validate};

pub fn routes() -> Router<AppState> {
    routes_of::<Payable>(&declared::PAYABLES).merge(routes_of::<Receivable>(&declared::RECEIVABLES))
}

/// The routes of one kind: the record shapes, and the sweep, the totals and the
/// actions, each routed by its declared action.
fn routes_of<B: BillKind>(declaration: &'static Declaration) -> Router<AppState> {
    let own = [
        ("aggregates", get(aggregates::<B>)),
        ("ids", get(ids::<B>)),
        ("settle", act::<B>(Action::Settle)),
        ("cancel", act::<B>(Action::Cancel)),
        ("reopen", act::<B>(Action::Reopen)),
    ];
    records::routes::<Bills<B>>(
        declaration,
        own.into_iter().map(|(action, handler)| (action.into(), handler)).collect(),
    )
}

/// `GET /v1/{kind}/aggregates`
async fn aggregates<B: BillKind>(QueryPairs(query): Query, caller: Caller) -> Response {
    door::read(&caller, async |ctx, conn, ws| bills::aggregates::<B>(ctx, conn, ws, &query).await).await
}

/// `GET /v1/{kind}/ids`
async fn ids<B: BillKind>(QueryPairs(query): Query, caller: Caller) -> Response {
    door::read(&caller, async |ctx, conn, ws| bills::ids::<B>(ctx, conn, ws, &query).await).await
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

/// The checked body and the request it stands for (what its idempotency key covers):
/// cancel and reopen take nothing, whether the body is empty or `{}`.
fn check_body(action: Action, body: &[u8]) -> Result<(Checked, serde_json::Value), ApiError> {
    if let Action::Settle = action {
        let json = body_json(body)?;
        return Ok((Checked::Settle(validate::parse(json.clone())?), json));
    }
    if !body.iter().all(u8::is_ascii_whitespace) {
        validate::parse::<bills::EmptyRequest>(body_json(body)?)?;
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

/// `POST /v1/{kind}/{id}/{settle|cancel|reopen}`
fn act<B: BillKind>(action: Action) -> MethodRouter<AppState> {
    post(move |headers: HeaderMap, RecordId(id): RecordId, WithBody(caller, body): WithBody| {
        run::<B>(caller, headers, id, body, action)
    })
}

/// An action: one transaction, idempotent with a key (a retried settle never moves
/// money twice).
async fn run<B: BillKind>(
    caller: Caller,
    headers: HeaderMap,
    id: String,
    body: axum::body::Bytes,
    action: Action,
) -> Response {
    let ctx = caller.ctx();
    let route = format!("{}/{}/{}", B::COLLECTION, id, action.name());
    let outcome = async {
        let ws = caller.workspace()?;
        let (checked, input) = check_body(action, &body)?;
        keyed(&ctx, ws, &headers, &route, &input, 200, async |tx| match checked {
            Checked::Settle(input) => bills::settle::<B>(&ctx, tx, ws, &id, input).await,
            Checked::Cancel => bills::cancel::<B>(&ctx, tx, ws, &id).await,
            Checked::Reopen => bills::reopen::<B>(&ctx, tx, ws, &id).await,
        })
        .await
    }
    .await;
    match outcome {
        Ok(answer) => action_answer(&answer.stored, answer.replayed),
        Err(e) => error_response(&e),
    }
}
