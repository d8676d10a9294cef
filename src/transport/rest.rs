//! The REST door (`/v1`) and the unauthenticated well-known metadata.
//!
//! `/v1` takes API tokens only (audience `KFIN_API_BASE_URL/v1`) and answers errors with
//! the REST envelope. Each route is a thin adapter: authenticate, count, call the
//! operation, serialise.

use axum::extract::State;
use axum::response::Response;
use http::{HeaderMap, HeaderValue, StatusCode};

use super::response;
use crate::app::AppState;
use crate::auth::{self, AuthFailure, Identity, Surface};
use crate::error::{ApiError, ErrorCode};
use crate::ops::rate_limit::{self, Budget};
use crate::ops::{Channel, OpContext};

pub async fn protected_resource(State(state): State<AppState>) -> Response {
    response::json(StatusCode::OK, &auth::protected_resource_metadata(&state, ""), None)
}

pub async fn protected_resource_mcp(State(state): State<AppState>) -> Response {
    response::json(StatusCode::OK, &auth::protected_resource_metadata(&state, "/mcp"), None)
}

/// The REST envelope with the error's status (and `Retry-After` when it has one).
pub fn error_response(error: &ApiError) -> Response {
    let mut answer = response::json(error.status(), &error.envelope(), None);
    response::retry_after(&mut answer, error.retry_after_seconds);
    answer
}

pub async fn not_found() -> Response {
    error_response(&ApiError::new(ErrorCode::NotFound, "No such route"))
}

/// Authenticates an API token and counts the request against the caller's budget.
async fn enter(state: &AppState, headers: &HeaderMap, budget: Budget) -> Result<Identity, Response> {
    let identity = match auth::authenticate(state, headers, Surface::Api).await {
        Ok(identity) => identity,
        Err(AuthFailure::Unavailable(e)) => return Err(error_response(&e)),
        Err(failure) => {
            let sent = matches!(failure, AuthFailure::Invalid);
            let mut answer = error_response(&ApiError::new(
                ErrorCode::InvalidToken,
                "A valid API bearer token is required (MCP tokens are not accepted here)",
            ));
            let challenge = auth::challenge(&state.config.public_url, "", sent);
            if let Ok(value) = HeaderValue::from_str(&challenge) {
                answer.headers_mut().insert(http::header::WWW_AUTHENTICATE, value);
            }
            return Err(answer);
        }
    };
    match rate_limit::check(state, &identity.user_id, budget).await {
        Ok(_) => Ok(identity),
        Err((error, status)) => {
            let mut answer = error_response(&error);
            if let Some(status) = status {
                response::rate_limit_headers(&mut answer, &status);
            }
            Err(answer)
        }
    }
}

/// `GET /v1/workspaces`
pub async fn list_workspaces(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let identity = match enter(&state, &headers, Budget::Read).await {
        Ok(identity) => identity,
        Err(answer) => return answer,
    };
    let memberships = match crate::storage::identity::memberships(&state.db, &identity.user_id).await {
        Ok(m) => m,
        Err(e) => return error_response(&crate::storage::db_error(e)),
    };
    let ctx = OpContext { state: &state, identity: &identity, channel: Channel::Api, memberships: &memberships };
    match crate::ops::workspaces::list(&ctx).and_then(|l| serde_json::to_value(l).map_err(|_| ApiError::internal())) {
        Ok(body) => response::json(StatusCode::OK, &body, None),
        Err(e) => error_response(&e),
    }
}

