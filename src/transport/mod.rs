//! Transport: the one `tower::Service` (an axum `Router`) that serves every request,
//! whether it arrives from the local HTTP server, from API Gateway through the Lambda
//! runtime, or from a replayed event fixture.

pub mod body;
pub mod lambda;
pub mod local;
pub mod mcp_endpoint;
pub mod origin;
pub mod response;
pub mod rest;

use axum::routing::{any, get};
use axum::Router;

use crate::app::AppState;

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/", any(mcp_endpoint::handle))
        .route("/mcp", any(mcp_endpoint::handle))
        .route("/.well-known/oauth-protected-resource", get(rest::protected_resource))
        .route("/.well-known/oauth-protected-resource/mcp", get(rest::protected_resource_mcp))
        .route("/v1/workspaces", get(rest::list_workspaces))
        .route("/v1/openapi.json", get(rest::openapi))
        .merge(rest::companies::routes())
        .merge(rest::categories::routes())
        .merge(rest::cost_centers::routes())
        .merge(rest::people::routes())
        .merge(rest::taxes::routes())
        .merge(rest::accounts::routes())
        .merge(rest::transactions::routes())
        .merge(rest::billings::routes())
        .merge(rest::attachments::routes())
        .fallback(rest::not_found)
        .layer(axum::middleware::map_response(response::no_store))
        .with_state(state)
}
