//! The MCP endpoint (`POST /`, alias `/mcp`, and the views of SPEC §5.4 under
//! `/mcp/x/…`, `/mcp/readonly` and `/mcp/find`): the request pipeline of SPEC §2, one step
//! after the other in the contract's order. The first step that fails answers.
//!
//! | # | step | where |
//! |---|---|---|
//! | – | GET/DELETE/… → 405 | here |
//! | 1 | declared `Content-Length` over the cap → 413 | [`body`] |
//! | 2 | `Origin` not allowed → 403 | [`origin`] |
//! | 3 | bearer token → 401 (revocation: with step 9, or alone on an early answer) | [`door_step`] |
//! | 4 | body read under the cap → 413 | [`body`] |
//! | 5–8 | JSON, batch, JSON-RPC shape, notification → 400/202 | [`crate::protocol::rpc`] |
//! | 9 | rate limit → 429 | [`door_step`] |
//! | 10 | era and version checks → 400 | [`crate::protocol::era`] |
//! | 11 | method dispatch (first the connection's metadata: workspace hint, view) | [`crate::mcp`] |

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use bytes::Bytes;
use http::request::Parts;
use http::{HeaderValue, Method, StatusCode};
use serde_json::Value;

use super::body::{self, BodyError, MAX_BODY_BYTES};
use super::door_step::{self, Turned};
use super::{origin, response};
use crate::app::AppState;
use crate::auth::{self, Surface};
use crate::mcp;
use crate::mcp::context::Admitted;
use crate::mcp::view::View;
use crate::ops::machinery::rate_limit::Budget;
use crate::protocol::era;
use crate::protocol::rpc::{self, Incoming, RpcError};

/// What the one log line of a request says. Never tokens, secrets or bodies.
#[derive(Default)]
struct RequestLog {
    era: Option<&'static str>,
    method: Option<String>,
    tool: Option<String>,
    user_id: Option<String>,
    workspace: Option<String>,
}

pub async fn handle(State(state): State<AppState>, request: http::Request<Body>) -> Response {
    let started = Instant::now();
    let (parts, body) = request.into_parts();
    let mut log = RequestLog::default();
    let response = pipeline(&state, &parts, body, &mut log).await;
    tracing::info!(
        target: "kobana_finance_mcp::request",
        request_id = %super::RequestId::of(&parts.extensions),
        era = log.era.unwrap_or("-"),
        method = log.method.as_deref().unwrap_or("-"),
        tool = log.tool.as_deref().unwrap_or("-"),
        status = response.status().as_u16(),
        latency_us = started.elapsed().as_micros() as u64,
        user_id = log.user_id.as_deref().unwrap_or("-"),
        workspace = log.workspace.as_deref().unwrap_or("-"),
    );
    response
}

/// Answers `early` (a refusal of steps 2–3) only after the body has been read to its
/// end, so the connection stays in sync. A body that runs past the cap is not read
/// further: the refusal still answers (it comes first in the contract's order), and the
/// connection is closed after it, so an unauthenticated client cannot make the server
/// read more than the cap.
async fn after_draining(body: Body, mut early: Response) -> Response {
    match body::drain(body, MAX_BODY_BYTES).await {
        Ok(()) | Err(BodyError::Broken) => early,
        Err(BodyError::TooLarge) => {
            early.headers_mut().insert(http::header::CONNECTION, HeaderValue::from_static("close"));
            early
        }
    }
}

/// A request the door step turned away, in the JSON-RPC envelope: 401 (its `id` null
/// wherever the refusal was found, as at step 3), 429 with `Retry-After`, or 503.
/// [`door_step::Turned::answer`] adds the challenge and `RateLimit-*`.
fn turned_away(state: &AppState, resource_path: &str, id: &Value, turned: Turned) -> Response {
    turned.answer(state, Surface::Mcp, resource_path, |turned| {
        let (id, error) = match turned {
            Turned::Unauthorized(refused) => {
                let message = Turned::unauthorized_message(*refused, Surface::Mcp);
                (&Value::Null, RpcError::new(StatusCode::UNAUTHORIZED, rpc::INVALID_REQUEST, message))
            }
            Turned::Limited(error, _) => (id, RpcError::rate_limited(error.retry_after_seconds.unwrap_or(1))),
            Turned::Failed(error) => (id, mcp::unavailable(error)),
        };
        response::rpc_error(id, &error, None)
    })
}

async fn pipeline(state: &AppState, parts: &Parts, body: Body, log: &mut RequestLog) -> Response {
    if parts.method != Method::POST {
        // A browser at the endpoint gets a page saying what this is and how to connect.
        if parts.method == Method::GET && super::home::wants_page(&parts.headers) {
            return super::home::page(state, &parts.headers);
        }
        return response::method_not_allowed();
    }
    // 1. A declared length over the cap is refused before anything is read.
    if body::declared_length(&parts.headers).is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return response::too_large();
    }
    // 2. Origin.
    if !origin::allowed(&state.config, &parts.headers) {
        let error = RpcError::new(StatusCode::FORBIDDEN, rpc::INVALID_REQUEST, "Forbidden: origin not allowed");
        return after_draining(body, response::rpc_error(&Value::Null, &error, None)).await;
    }
    // 3. Authentication. The token itself is verified here, without the database; its
    //    revocation is checked in the same statement as the rate-limit count (step 9),
    //    or on its own when the request ends before that — so a revoked token is
    //    always answered 401, exactly as if it had been refused here.
    // Views (`/mcp/x/…`, `/mcp/readonly`, `/mcp/find`) are the `/mcp` resource: their challenge
    // points at its metadata, whose `resource` their URL starts with.
    let resource_path = if parts.uri.path() == "/" { "" } else { "/mcp" };
    let identity = match door_step::authenticate(state, &parts.headers, Surface::Mcp).await {
        Ok(identity) => identity,
        Err(turned) => return after_draining(body, turned_away(state, resource_path, &Value::Null, turned)).await,
    };
    log.user_id = Some(identity.user_id.clone());
    // 4–8. Body, JSON, JSON-RPC shape; notifications and responses are accepted.
    let request = match read_request(body).await {
        Ok(request) => request,
        Err(early) => {
            return match door_step::check_revocation(state, &identity).await {
                Ok(()) => early,
                Err(turned @ Turned::Unauthorized(_)) => {
                    let mut answer = turned_away(state, resource_path, &Value::Null, turned);
                    if let Some(close) = early.headers().get(http::header::CONNECTION) {
                        answer.headers_mut().insert(http::header::CONNECTION, close.clone());
                    }
                    answer
                }
                Err(turned) => turned_away(state, resource_path, &Value::Null, turned),
            };
        }
    };
    log.method = Some(request.method.clone());
    let tool = (request.method == "tools/call").then(|| request.params.get("name").and_then(Value::as_str)).flatten();
    log.tool = tool.map(str::to_string);
    // The view this connection asked for (SPEC §5.4); a malformed one is answered at
    // dispatch, with the connection's other metadata.
    let view = View::of_request(parts.uri.path(), &parts.headers);
    // 9. Rate limit (tools that change data spend the write budget; a tool the view
    //    hides is as unknown as a name that does not exist), with the token's
    //    revocation checked in the same statement.
    let writes = tool.is_some_and(|name| mcp::tools::spends_write_budget(name, view.as_ref().unwrap_or(&View::all())));
    let budget = if writes { Budget::Write } else { Budget::Read };
    let needs = mcp::Method::needs(&request.method, budget);
    let (entry, riding) = match door_step::admit_or_ride(state, &identity, budget, needs).await {
        Ok(admitted) => admitted,
        Err(turned) => return turned_away(state, resource_path, &request.id, turned),
    };
    let held = Arc::new(entry.held);
    let riding = riding.map(|riding| (riding, Arc::clone(&held)));
    let admitted = Admitted { memberships: entry.memberships, held };
    let answered = answer(state, parts, &identity, &request, &view, admitted, log).await;
    let Some((riding, held)) = riding else { return answered };
    // The count rode on the request's first statement: the answer stands only as the
    // count says (the request only read, so an answer set aside changed nothing).
    match door_step::settle(state, &identity, riding, &held).await {
        Ok(None) => answered,
        Ok(Some(memberships)) => {
            let admitted = Admitted { memberships: Some(memberships), held: Arc::default() };
            answer(state, parts, &identity, &request, &view, admitted, log).await
        }
        Err(turned) => turned_away(state, resource_path, &request.id, turned),
    }
}

/// Steps 10 and 11 of a counted request: its era, then its dispatch in the view the
/// connection asked for.
async fn answer(
    state: &AppState,
    parts: &Parts,
    identity: &auth::Identity,
    request: &rpc::Request,
    view: &Result<View, RpcError>,
    admitted: Admitted,
    log: &mut RequestLog,
) -> Response {
    // 10. Era and version checks.
    let era = match era::decide(&parts.headers, request) {
        Ok(era) => era,
        Err(error) => return response::rpc_error(&request.id, &error, None),
    };
    log.era = Some(era.version());
    // 11. Dispatch.
    let hint = door_step::workspace_hint(parts);
    log.workspace = hint.named().map(str::to_string);
    match mcp::dispatch(state, identity, &era, request, hint, view.clone(), admitted).await {
        Ok(done) => {
            log.era = Some(done.version);
            response::json_pieces(
                StatusCode::OK,
                envelope(&request.id, done.result, done.raw_members),
                Some(done.version),
            )
        }
        Err(error) => response::rpc_error(&request.id, &error, Some(era.version())),
    }
}

/// Members kept serialised at least this long are sent as pieces of their own rather
/// than copied into the envelope.
const SHARED_PIECE: usize = 4096;

/// The serialised response envelope, in pieces: `result` with the members kept
/// serialised (`raw`, JSON the server serialised itself) written first, as they are —
/// a large one (a cached `tools/list` array) as a piece of its own, never copied.
fn envelope(id: &Value, result: Value, raw: Vec<(&'static str, Bytes)>) -> Vec<Bytes> {
    let mut pieces = Vec::with_capacity(3);
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    out.extend_from_slice(id.to_string().as_bytes());
    out.extend_from_slice(b",\"result\":{");
    let some_raw = !raw.is_empty();
    for (i, (name, json)) in raw.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'"');
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\":");
        if json.len() >= SHARED_PIECE {
            pieces.push(Bytes::from(std::mem::take(&mut out)));
            pieces.push(json);
        } else {
            out.extend_from_slice(&json);
        }
    }
    // The other members, without the braces of their own object.
    if let Value::Object(members) = result {
        if !members.is_empty() {
            let members = Value::Object(members).to_string();
            if some_raw {
                out.push(b',');
            }
            out.extend_from_slice(&members.as_bytes()[1..members.len() - 1]);
        }
    }
    out.extend_from_slice(b"}}");
    pieces.push(Bytes::from(out));
    pieces
}

/// Steps 4–8: reads the body under the cap and classifies the message. `Err` is the
/// answer for a request that ends here (413, 400, or 202 for a notification).
async fn read_request(body: Body) -> Result<rpc::Request, Response> {
    let bytes = match body::read(body, MAX_BODY_BYTES).await {
        Ok(bytes) => bytes,
        Err(BodyError::TooLarge) => return Err(response::too_large()),
        Err(BodyError::Broken) => {
            return Err(response::rpc_error(
                &Value::Null,
                &RpcError::invalid_request("The request body could not be read"),
                None,
            ))
        }
    };
    let Ok(value) = serde_json::from_slice::<Value>(&bytes) else {
        return Err(response::rpc_error(&Value::Null, &RpcError::parse_error(), None));
    };
    match rpc::classify(value) {
        Ok(Incoming::Request(request)) => Ok(request),
        Ok(Incoming::Accepted) => Err(response::accepted()),
        Err((id, error)) => Err(response::rpc_error(&id, &error, None)),
    }
}
