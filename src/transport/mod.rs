//! Transport: the one `tower::Service` (an axum `Router`) that serves every request,
//! whether it arrives from the local HTTP server, from API Gateway through the Lambda
//! runtime, or from a replayed event fixture. Everything HTTP-shaped lives here — body
//! limits, `Origin`, headers, multipart uploads, the REST envelope as a response — and
//! nothing else does: the routes and the MCP endpoint are thin doors onto `mcp` and
//! `ops`.

pub mod body;
pub mod conditional;
pub mod cors;
pub mod deploy;
pub mod door_step;
pub mod home;
pub mod lambda;
pub mod local;
pub mod mcp_endpoint;
pub mod multipart;
pub mod oauth;
pub mod origin;
pub mod response;
pub mod rest;

use axum::routing::{any, get};
use axum::Router;

use crate::app::AppState;

pub fn router(state: AppState) -> Router {
    // The REST door and everything that is not the MCP endpoint: its refusals get the
    // REST envelope, and each request one log line. The MCP endpoint does both itself.
    let metadata = Router::new()
        .route("/.well-known/oauth-protected-resource", get(rest::protected_resource))
        .route("/.well-known/oauth-protected-resource/mcp", get(rest::protected_resource_mcp))
        .layer(axum::middleware::from_fn(cors::open));
    let rest = Router::new()
        .merge(metadata)
        .route("/v1/workspaces", get(rest::list_workspaces))
        .route("/v1/openapi.json", get(rest::openapi))
        .route("/v1/webhooks/kobana", axum::routing::post(rest::webhooks::kobana))
        .merge(rest::records::registered())
        .fallback(rest::not_found)
        .layer(axum::middleware::from_fn(conditional::reads))
        .layer(axum::middleware::from_fn(rest::envelope_rejections))
        .layer(axum::middleware::from_fn(log_rest));
    Router::new()
        .route("/", any(mcp_endpoint::handle))
        .route("/mcp", any(mcp_endpoint::handle))
        .route("/mcp/readonly", any(mcp_endpoint::handle))
        .route("/mcp/find", any(mcp_endpoint::handle))
        .route("/mcp/find/readonly", any(mcp_endpoint::handle))
        .route("/mcp/x/{toolsets}", any(mcp_endpoint::handle))
        .route("/mcp/x/{toolsets}/readonly", any(mcp_endpoint::handle))
        .merge(oauth::routes(state.config.serves_authorization()).layer(axum::middleware::from_fn(log_rest)))
        .merge(Router::new().route("/health", get(home::health)).layer(axum::middleware::from_fn(log_rest)))
        .merge(rest)
        .layer(axum::middleware::map_response(response::no_store))
        .layer(axum::middleware::from_fn(request_id))
        .with_state(state)
}

/// The id of a request: answered as `Request-Id` on every answer and written on the
/// request's log line, so an answer can be found in the logs. On Lambda it is the
/// invocation's request id (the one its CloudWatch lines carry), else a fresh UUID.
#[derive(Debug, Clone)]
pub struct RequestId(pub String);

impl RequestId {
    /// The id of the request whose extensions these are (`-` before [`request_id`] ran).
    pub fn of(extensions: &http::Extensions) -> &str {
        extensions.get::<RequestId>().map_or("-", |id| id.0.as_str())
    }

    /// The id of an invocation with Lambda context `lambda`, else a fresh one.
    pub fn of_invocation(lambda: Option<&lambda_http::Context>) -> String {
        lambda
            .map(|c| c.request_id.clone())
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string())
    }
}

async fn request_id(mut request: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    let id = RequestId::of_invocation(request.extensions().get::<lambda_http::Context>());
    let value = http::HeaderValue::from_str(&id).ok();
    request.extensions_mut().insert(RequestId(id));
    let mut response = next.run(request).await;
    if let Some(value) = value {
        response.headers_mut().insert("request-id", value);
    }
    response
}

/// One log line per `/v1` and well-known request (the MCP endpoint logs its own, with
/// era, method and tool). Never the query string, headers or body.
async fn log_rest(request: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    let path = request.uri().path().to_string();
    let started = std::time::Instant::now();
    let method = request.method().clone();
    let request_id = RequestId::of(request.extensions()).to_string();
    let response = next.run(request).await;
    tracing::info!(
        target: "kobana_finance_mcp::request",
        request_id = %request_id,
        method = %method,
        path = %path,
        status = response.status().as_u16(),
        latency_us = started.elapsed().as_micros() as u64,
    );
    response
}
