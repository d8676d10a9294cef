//! The REST door (`/v1`) and the unauthenticated well-known metadata.
//!
//! `/v1` takes API tokens only (audience `KFIN_API_BASE_URL/v1`) and answers errors with
//! the REST envelope. Each route is a thin adapter: it takes the [`Caller`] (the token
//! verified and the request counted, by the extractor), calls the operation through
//! one of the [`door`] shapes, and serialises. The declared resources' routes come
//! from their declaration rows ([`records::declared`]); the attachments, whose upload
//! and download are not JSON, have a module of their own.

pub mod access;
pub mod attachments;
pub mod records;
pub mod webhooks;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, Method, StatusCode};

use super::door_step::{self, Turned};
use super::response;
use crate::app::AppState;
use crate::auth::{self, Identity, Surface, WorkspaceHint};
use crate::error::{ApiError, ErrorCode};
use crate::ops::machinery::rate_limit::{Budget, Needs};
use crate::ops::{machinery::idempotency, Channel, OpContext};
use crate::storage::identity::Membership;
use crate::storage::{Conn, Held, Lent};

pub async fn protected_resource(State(state): State<AppState>) -> Response {
    response::json(StatusCode::OK, &auth::protected_resource_metadata(&state.config, ""), None)
}

pub async fn protected_resource_mcp(State(state): State<AppState>) -> Response {
    response::json(StatusCode::OK, &auth::protected_resource_metadata(&state.config, "/mcp"), None)
}

/// The REST answer of `error` (its [`IntoResponse`]), for a route that keeps the error
/// it answers.
pub fn error_response(error: &ApiError) -> Response {
    error.clone().into_response()
}

pub async fn not_found() -> Response {
    ApiError::new(ErrorCode::NotFound, "No such route").into_response()
}

/// The REST envelope for what the router itself refuses on `/v1` — a method the route
/// does not take (405, keeping `Allow`), or an extractor's rejection no route-specific
/// extractor ([`RestBody`], [`RecordId`]) turns into its own answer (e.g. a query
/// string that does not parse: 400) — which would otherwise answer plain text. Every
/// answer of the handlers is already JSON (or a download) and passes as is.
pub async fn envelope_rejections(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let rest = request.uri().path().starts_with("/v1/");
    let method = request.method().clone();
    let answer = next.run(request).await;
    let status = answer.status();
    let is_json = answer
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !rest || is_json || !(status.is_client_error() || status.is_server_error()) {
        return answer;
    }
    let error = match status {
        StatusCode::METHOD_NOT_ALLOWED => {
            ApiError::new(ErrorCode::MethodNotAllowed, format!("This route does not take {method}"))
        }
        s if s.is_server_error() => ApiError::internal(),
        _ => ApiError::bad_request("The request could not be read")
            .with_details(serde_json::json!({ "reason": "invalid_request" })),
    };
    let mut envelope = (status, error).into_response();
    if let Some(allow) = answer.headers().get(http::header::ALLOW) {
        envelope.headers_mut().insert(http::header::ALLOW, allow.clone());
    }
    envelope
}

/// A `/v1` JSON request body, read under axum's default limit (2 MiB; uploads have their
/// own route and limit). Over the limit, or unreadable: the REST envelope (413 with
/// `details.reason = "body_too_large"`, or 400), never the router's plain-text rejection.
pub(crate) struct RestBody(pub(crate) axum::body::Bytes);

impl<S: Send + Sync> axum::extract::FromRequest<S> for RestBody {
    type Rejection = Response;

    async fn from_request(request: axum::extract::Request, state: &S) -> Result<Self, Self::Rejection> {
        match axum::body::Bytes::from_request(request, state).await {
            Ok(bytes) => Ok(RestBody(bytes)),
            Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                let error = ApiError::bad_request(format!("Request body too large (limit {REST_BODY_LIMIT} bytes)"))
                    .with_details(serde_json::json!({ "reason": "body_too_large", "limit": REST_BODY_LIMIT }));
                Err((StatusCode::PAYLOAD_TOO_LARGE, error).into_response())
            }
            Err(_) => Err(ApiError::bad_request("The request body could not be read").into_response()),
        }
    }
}

/// axum's default body limit, which the JSON routes keep.
const REST_BODY_LIMIT: usize = 2 * 1024 * 1024;

/// The `{id}` of a `/v1` path. An id that does not decode (bad percent-encoding, not
/// UTF-8) names no record: 404 with the REST envelope, as for any other unknown id —
/// never the router's plain-text rejection.
pub(crate) struct RecordId(pub(crate) String);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for RecordId {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut http::request::Parts, state: &S) -> Result<Self, Self::Rejection> {
        match axum::extract::Path::<String>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(id)) => Ok(RecordId(id)),
            Err(_) => Err(ApiError::new(ErrorCode::NotFound, "No such record").into_response()),
        }
    }
}

/// A request the door step turned away, in the REST envelope: 401 `invalid_token`,
/// 429 `rate_limited`, or the error of the signing keys or the database (503 when
/// unavailable). [`Turned::answer`] adds the challenge and `RateLimit-*`.
fn turned_away(state: &AppState, turned: Turned) -> Response {
    turned.answer(state, Surface::Api, "", |turned| match turned {
        Turned::Unauthorized(refused) => {
            ApiError::new(ErrorCode::InvalidToken, Turned::unauthorized_message(*refused, Surface::Api)).into_response()
        }
        Turned::Limited(error, _) | Turned::Failed(error) => error_response(error),
    })
}

/// A `/v1` caller, extracted before the handler runs by the [`door_step`] both doors
/// take: the API token verified, then the request counted against the caller's budget
/// (the read budget for `GET` and `HEAD`, the write budget otherwise) with the token's
/// revocation and the caller's memberships read in the same round trip as the count. The rejection is the answer
/// of the first step that fails: 401 with `WWW-Authenticate` (no token, a refused one,
/// a revoked one), 429 with the rate-limit headers and `Retry-After`, or the error of
/// the signing keys or the database (503 when unavailable).
///
/// The connection's default workspace (`X-Workspace-Id` or `?workspace_id=`, which must
/// agree) is read with it and resolved by [`Caller::workspace`], the first thing a
/// route that acts in a workspace asks; a route that acts in none (`/v1/workspaces`)
/// never resolves it.
pub(crate) struct Caller {
    state: AppState,
    identity: Identity,
    memberships: Vec<Membership>,
    hint: WorkspaceHint,
    /// A read's connection, from its count on.
    held: Held,
}

impl axum::extract::FromRequestParts<AppState> for Caller {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut http::request::Parts, state: &AppState) -> Result<Caller, Response> {
        let budget = if matches!(parts.method, Method::GET | Method::HEAD) { Budget::Read } else { Budget::Write };
        let identity = door_step::authenticate(state, &parts.headers, Surface::Api)
            .await
            .map_err(|turned| turned_away(state, turned))?;
        // A read keeps the connection its count took, for its own statements.
        let needs = if budget == Budget::Read { Needs::MembershipsAndConnection } else { Needs::Memberships };
        let entry =
            door_step::admit(state, &identity, budget, needs).await.map_err(|turned| turned_away(state, turned))?;
        let (memberships, held) = (entry.memberships.unwrap_or_default(), entry.held);
        let hint = door_step::workspace_hint(parts);
        Ok(Caller { state: state.clone(), identity, memberships, hint, held })
    }
}

impl Caller {
    /// The operation context of the call (the API channel, the caller's memberships).
    pub(crate) fn ctx(&self) -> OpContext<'_> {
        OpContext {
            state: self.state.services(),
            identity: &self.identity,
            channel: Channel::Api,
            memberships: &self.memberships,
        }
    }

    /// The workspace the call acts in: the connection's default (400 when the header
    /// and the query name different ones), else the caller's only workspace.
    pub(crate) fn workspace(&self) -> Result<&Membership, ApiError> {
        let default = self.hint.resolve()?;
        self.ctx().workspace(None, default.as_deref())
    }

    pub(crate) fn state(&self) -> &AppState {
        &self.state
    }

    /// A connection for the call's read: the one its count took, else the pool's.
    pub(crate) async fn connection(&self) -> Result<Lent<'_>, ApiError> {
        Ok(self.held.acquire(&self.state.db).await?)
    }
}

/// A `/v1` request with a JSON body, and its caller: the body is read first (under its
/// limit: 413 or 400 in the envelope, see [`RestBody`]), then the [`Caller`] is
/// extracted — a body that cannot be read is refused before the token is looked at, and
/// is not counted.
pub(crate) struct WithBody(pub(crate) Caller, pub(crate) axum::body::Bytes);

impl axum::extract::FromRequest<AppState> for WithBody {
    type Rejection = Response;

    async fn from_request(request: axum::extract::Request, state: &AppState) -> Result<WithBody, Response> {
        use axum::extract::FromRequestParts;
        let (mut parts, body) = request.into_parts();
        let RestBody(bytes) = RestBody::from_request(axum::extract::Request::new(body), state).await?;
        let caller = Caller::from_request_parts(&mut parts, state).await?;
        Ok(WithBody(caller, bytes))
    }
}

/// `GET /v1/workspaces`
pub(crate) async fn list_workspaces(caller: Caller) -> Response {
    match crate::ops::workspaces::list(&caller.ctx())
        .and_then(|l| serde_json::to_value(l).map_err(|_| ApiError::internal()))
    {
        Ok(body) => response::json(StatusCode::OK, &body, None),
        Err(e) => e.into_response(),
    }
}

pub(crate) fn ok_json<T: serde::Serialize>(status: StatusCode, value: &T) -> Response {
    match serde_json::to_value(value) {
        Ok(body) => response::json(status, &body, None),
        Err(_) => ApiError::internal().into_response(),
    }
}

pub(crate) fn body_json(body: &[u8]) -> Result<serde_json::Value, ApiError> {
    serde_json::from_slice(body).map_err(|_| {
        ApiError::bad_request("The request body is not valid JSON")
            .with_details(serde_json::json!({"reason": "invalid_json"}))
    })
}

/// The request's idempotency key (`X-Idempotency-Key`, alias `Idempotency-Key`), as
/// sent; [`idempotency::run`] checks its form.
pub(crate) fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let value = headers.get("x-idempotency-key").or_else(|| headers.get("idempotency-key"));
    match value {
        None => Ok(None),
        Some(v) => {
            let key = v
                .to_str()
                .map_err(|_| ApiError::bad_request("The idempotency key must be visible ASCII"))?
                .trim()
                .to_string();
            Ok(Some(key))
        }
    }
}

/// A keyed write (a create or an action) in one transaction: the operation runs under
/// the request's idempotency key, if it sent one (see [`idempotency::run`]: the same
/// orchestration and fingerprint as the tools' `idempotency_key`). `input` is the
/// validated request as JSON; a fresh answer has `status`.
pub(crate) async fn keyed<T: serde::Serialize>(
    ctx: &OpContext<'_>,
    ws: &crate::storage::identity::Membership,
    headers: &HeaderMap,
    operation: &str,
    input: &serde_json::Value,
    status: u16,
    op: impl AsyncFnOnce(&mut Conn) -> Result<T, ApiError>,
) -> Result<idempotency::Answer, ApiError> {
    let key = idempotency_key(headers)?;
    let mut tx = ctx.state.db.begin().await?;
    let keyed = idempotency::Keyed { key: key.as_deref(), operation, input, status };
    let answer = idempotency::run(&mut tx, ws, &ctx.identity.user_id, keyed, op).await?;
    tx.commit().await?;
    Ok(answer)
}

/// Where a created record lives, for the `Location` header.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Location<'a> {
    /// `{collection}/{body.id}`
    Id(&'a str),
    /// `{prefix}/{body[field]}` (a transfer, the transaction of a balance adjustment)
    Field(&'a str, &'static str),
    /// No URL of its own (a link).
    None,
}

/// 201 with `Location`, marked when it is a replay.
pub(crate) fn created(stored: &idempotency::Stored, location: Location<'_>, replayed: bool) -> Response {
    let status = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::CREATED);
    let mut answer =
        if status == StatusCode::NO_CONTENT { no_content() } else { response::json(status, &stored.body, None) };
    let url = match location {
        Location::Id(collection) => {
            stored.body.get("id").and_then(serde_json::Value::as_str).map(|id| format!("{collection}/{id}"))
        }
        Location::Field(prefix, field) => {
            stored.body.get(field).and_then(serde_json::Value::as_str).map(|v| format!("{prefix}/{v}"))
        }
        Location::None => None,
    };
    if let Some(value) = url.and_then(|l| HeaderValue::from_str(&l).ok()) {
        answer.headers_mut().insert(http::header::LOCATION, value);
    }
    if replayed {
        answer.headers_mut().insert("x-idempotency-replayed", HeaderValue::from_static("true"));
    }
    answer
}

/// A `/v1` route's query string as pairs.
pub(crate) type Query = axum::extract::Query<Vec<(String, String)>>;
pub(crate) use axum::extract::Query as QueryPairs;

/// 204 No Content.
pub(crate) fn no_content() -> Response {
    let mut answer = Response::new(axum::body::Body::empty());
    *answer.status_mut() = StatusCode::NO_CONTENT;
    answer
}

/// `GET /v1/openapi.json`: generated from the same types that validate requests.
pub async fn openapi(State(state): State<AppState>) -> Response {
    let mut document = crate::ops::registry::document(&state.config.api_base_url);
    crate::mcp::tools::name_operations(&mut document);
    response::json(StatusCode::OK, &document, None)
}

/// The route shapes every `/v1` resource shares, so a resource's route module only
/// names its operations: for the [`Caller`] the route extracted, resolve the workspace,
/// run the operation (reads on a pooled connection, writes in one transaction), and
/// answer with the REST status and envelope.
pub(crate) mod door {
    use crate::storage::Conn;
    use axum::response::Response;
    use http::{HeaderMap, StatusCode};
    use serde::de::DeserializeOwned;
    use serde::Serialize;

    use axum::response::IntoResponse;

    use super::{body_json, created, keyed, no_content, ok_json, Caller, Location};
    use crate::domain::roles::{Access, Resource};
    use crate::error::ApiError;
    use crate::ops::machinery::list::ListRequest;
    use crate::ops::{machinery::pick, machinery::validate, OpContext, Page};
    use crate::storage::identity::Membership;

    /// A read (list, get, aggregates, ids): 200 with the result.
    pub(crate) async fn read<T: Serialize>(
        caller: &Caller,
        op: impl AsyncFnOnce(&OpContext<'_>, &mut Conn, &Membership) -> Result<T, ApiError>,
    ) -> Response {
        let ctx = caller.ctx();
        let outcome = async {
            let ws = caller.workspace()?;
            let mut conn = caller.connection().await?;
            op(&ctx, &mut conn, ws).await
        }
        .await;
        match outcome {
            Ok(value) => ok_json(StatusCode::OK, &value),
            Err(e) => e.into_response(),
        }
    }

    /// A list: the query's filters, sort, page and `fields` (each name checked against
    /// the row, [`pick::check`]), 200 with the page, each row with those fields only.
    pub(crate) async fn list<T: Serialize + schemars::JsonSchema + 'static>(
        caller: &Caller,
        query: &[(String, String)],
        op: impl AsyncFnOnce(&OpContext<'_>, &mut Conn, &Membership, &ListRequest) -> Result<Page<T>, ApiError>,
    ) -> Response {
        read(caller, async |ctx, conn, ws| {
            let request = ListRequest::from_query(query)?;
            pick::check::<T>(request.fields.as_deref())?;
            let page = op(ctx, conn, ws, &request).await?;
            picked(pick::page(&page, request.fields.as_deref()))
        })
        .await
    }

    /// A record by id, with the query's `fields` only (each name checked against the
    /// record, [`pick::check`]).
    pub(crate) async fn get<T: Serialize + schemars::JsonSchema + 'static>(
        caller: &Caller,
        query: &[(String, String)],
        op: impl AsyncFnOnce(&OpContext<'_>, &mut Conn, &Membership) -> Result<T, ApiError>,
    ) -> Response {
        let fields = query.iter().rev().find(|(key, _)| key == "fields").map(|(_, value)| pick::from_query(value));
        read(caller, async |ctx, conn, ws| {
            pick::check::<T>(fields.as_deref())?;
            let record = op(ctx, conn, ws).await?;
            picked(pick::record(&record, fields.as_deref()))
        })
        .await
    }

    fn picked(written: Result<Vec<u8>, ApiError>) -> Result<serde_json::Value, ApiError> {
        serde_json::from_slice(&written?).map_err(|_| ApiError::internal())
    }

    async fn in_transaction<T>(
        caller: &Caller,
        op: impl AsyncFnOnce(&OpContext<'_>, &mut Conn, &Membership) -> Result<T, ApiError>,
    ) -> Result<T, Response> {
        let ctx = caller.ctx();
        let outcome: Result<T, ApiError> = async {
            let ws = caller.workspace()?;
            let mut tx = caller.state().db.begin().await?;
            let value = op(&ctx, &mut tx, ws).await?;
            tx.commit().await?;
            Ok(value)
        }
        .await;
        outcome.map_err(IntoResponse::into_response)
    }

    /// A PATCH: the caller's permission (`permission`), then the body against `I`'s
    /// schema, both before anything opens (a caller who may not write hears so whatever
    /// the body), then one transaction under the request's idempotency key, if any (the
    /// key covers `route` and the body: a retry answers the first answer, marked
    /// `X-Idempotency-Replayed: true`), 200 with the result.
    pub(crate) async fn update<I: DeserializeOwned + schemars::JsonSchema + 'static, T: Serialize>(
        caller: &Caller,
        permission: (Resource, Access),
        headers: &HeaderMap,
        route: &str,
        body: &[u8],
        op: impl AsyncFnOnce(&OpContext<'_>, &mut Conn, &Membership, I) -> Result<T, ApiError>,
    ) -> Response {
        keyed_write(caller, permission, headers, route, (200, Location::None), body, op).await
    }

    /// A delete: one transaction, 204.
    pub(crate) async fn remove(
        caller: &Caller,
        op: impl AsyncFnOnce(&OpContext<'_>, &mut Conn, &Membership) -> Result<(), ApiError>,
    ) -> Response {
        match in_transaction(caller, op).await {
            Ok(()) => no_content(),
            Err(answer) => answer,
        }
    }

    /// A create with its idempotency key: the caller's permission (`permission`), then
    /// the body against `I`'s schema, then the operation in the key's transaction, 201 +
    /// `Location` under `collection` (a replay is marked `X-Idempotency-Replayed: true`).
    pub(crate) async fn create<I: DeserializeOwned + schemars::JsonSchema + 'static, T: Serialize>(
        caller: &Caller,
        permission: (Resource, Access),
        headers: &HeaderMap,
        collection: &'static str,
        body: &[u8],
        op: impl AsyncFnOnce(&OpContext<'_>, &mut Conn, &Membership, I) -> Result<T, ApiError>,
    ) -> Response {
        create_keyed(caller, permission, headers, collection, Location::Id(collection), body, op).await
    }

    /// As [`create`], for a route that is not a collection (`route` is the key's
    /// fingerprint) and whose answer lives at `location`.
    pub(crate) async fn create_keyed<I: DeserializeOwned + schemars::JsonSchema + 'static, T: Serialize>(
        caller: &Caller,
        permission: (Resource, Access),
        headers: &HeaderMap,
        route: &str,
        location: Location<'_>,
        body: &[u8],
        op: impl AsyncFnOnce(&OpContext<'_>, &mut Conn, &Membership, I) -> Result<T, ApiError>,
    ) -> Response {
        keyed_write(caller, permission, headers, route, (201, location), body, op).await
    }

    /// A write with a JSON body, under the request's idempotency key (covering `route`
    /// and the body): the caller's permission, then the body against `I`'s schema, both
    /// before anything opens; then the operation in the key's transaction, answered with
    /// `status` and `Location` at `location` (a replay marked `X-Idempotency-Replayed`).
    async fn keyed_write<I: DeserializeOwned + schemars::JsonSchema + 'static, T: Serialize>(
        caller: &Caller,
        (resource, access): (Resource, Access),
        headers: &HeaderMap,
        route: &str,
        (status, location): (u16, Location<'_>),
        body: &[u8],
        op: impl AsyncFnOnce(&OpContext<'_>, &mut Conn, &Membership, I) -> Result<T, ApiError>,
    ) -> Response {
        let ctx = caller.ctx();
        let outcome = async {
            let ws = caller.workspace()?;
            ctx.authorize(ws, resource, access)?;
            let json = body_json(body)?;
            let input: I = validate::parse(json.clone())?;
            keyed(&ctx, ws, headers, route, &json, status, async |tx| op(&ctx, tx, ws, input).await).await
        }
        .await;
        match outcome {
            Ok(answer) => created(&answer.stored, location, answer.replayed),
            Err(e) => e.into_response(),
        }
    }
}
