//! The one error type of the operations layer.
//!
//! Every failure an operation can report is an [`ApiError`]: a stable [`ErrorCode`]
//! (which fixes the HTTP status), an English message and optional `details`. The REST
//! door serialises it as the envelope `{"error":{"code","message","details"}}`; the MCP
//! door puts the same envelope in an `isError` tool result. Protocol-level failures
//! (JSON-RPC codes) are a different thing and live in `protocol::rpc`.

use axum::response::{IntoResponse, Response};
use http::{header, HeaderValue, StatusCode};
use serde_json::{json, Value};

/// Stable error codes of SPEC §7. The status of each code is decided here and only here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    BadRequest,
    InvalidToken,
    InsufficientScope,
    Forbidden,
    NotFound,
    WorkspaceRequired,
    Conflict,
    UnprocessableEntity,
    RateLimited,
    InternalError,
    /// A dependency (database, secret store, blob store) is unavailable: retry later.
    ServiceUnavailable,
    /// A `/v1` route asked with a method it does not take (405, with `Allow`).
    MethodNotAllowed,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadRequest => "bad_request",
            ErrorCode::InvalidToken => "invalid_token",
            ErrorCode::InsufficientScope => "insufficient_scope",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::NotFound => "not_found",
            ErrorCode::WorkspaceRequired => "workspace_required",
            ErrorCode::Conflict => "conflict",
            ErrorCode::UnprocessableEntity => "unprocessable_entity",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::InternalError => "internal_error",
            ErrorCode::ServiceUnavailable => "service_unavailable",
            ErrorCode::MethodNotAllowed => "method_not_allowed",
        }
    }

    pub fn status(self) -> StatusCode {
        match self {
            ErrorCode::BadRequest => StatusCode::BAD_REQUEST,
            ErrorCode::InvalidToken => StatusCode::UNAUTHORIZED,
            ErrorCode::InsufficientScope | ErrorCode::Forbidden => StatusCode::FORBIDDEN,
            ErrorCode::NotFound => StatusCode::NOT_FOUND,
            ErrorCode::WorkspaceRequired => StatusCode::BAD_REQUEST,
            ErrorCode::Conflict => StatusCode::CONFLICT,
            ErrorCode::UnprocessableEntity => StatusCode::UNPROCESSABLE_ENTITY,
            ErrorCode::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::InternalError => StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::ServiceUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
        }
    }
}

/// Seconds a client is told to wait after a dependency failure.
pub const UNAVAILABLE_RETRY_AFTER_SECONDS: u64 = 5;

#[derive(Debug, Clone)]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
    pub details: Option<Value>,
    /// Set for `rate_limited` and `service_unavailable`: becomes `Retry-After`.
    pub retry_after_seconds: Option<u64>,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError { code, message: message.into(), details: None, retry_after_seconds: None }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::BadRequest, message)
    }

    pub fn unprocessable(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::UnprocessableEntity, message)
    }

    pub fn not_found(what: &str) -> Self {
        Self::new(ErrorCode::NotFound, format!("{what} not found"))
    }

    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Forbidden, message)
    }

    pub fn insufficient_scope(required: &str, granted: &[String]) -> Self {
        Self::new(ErrorCode::InsufficientScope, format!("This action needs the scope {required}"))
            .with_details(json!({ "required": required, "granted": granted }))
    }

    pub fn workspace_required() -> Self {
        Self::new(
            ErrorCode::WorkspaceRequired,
            "Several workspaces are available: pass workspace_id (see finance_workspaces_list)",
        )
    }

    pub fn unavailable(what: &str) -> Self {
        ApiError {
            code: ErrorCode::ServiceUnavailable,
            message: format!("The {what} is temporarily unavailable; retry later"),
            details: None,
            retry_after_seconds: Some(UNAVAILABLE_RETRY_AFTER_SECONDS),
        }
    }

    pub fn internal() -> Self {
        Self::new(ErrorCode::InternalError, "Internal error")
    }

    /// 409 `concurrent_update`: what the request read was changed by another at the same
    /// time, and nothing it did stays; the same request again sees the change.
    pub fn changed_meanwhile() -> Self {
        Self::new(
            ErrorCode::Conflict,
            "The record was changed by another request at the same time; nothing changed, try again",
        )
        .with_details(serde_json::json!({ "reason": "concurrent_update" }))
    }

    /// Whether this is [`ApiError::changed_meanwhile`].
    pub fn is_changed_meanwhile(&self) -> bool {
        self.code == ErrorCode::Conflict
            && self.details.as_ref().and_then(|d| d.get("reason")).and_then(Value::as_str) == Some("concurrent_update")
    }

    pub fn status(&self) -> StatusCode {
        self.code.status()
    }

    /// The REST envelope `{"error":{"code","message","details"}}`.
    pub fn envelope(&self) -> Value {
        json!({ "error": {
            "code": self.code.as_str(),
            "message": self.message,
            "details": self.details.clone().unwrap_or_else(|| json!({})),
        }})
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for ApiError {}

/// The REST answer of an error: the envelope with the code's status, and `Retry-After`
/// when the error has one.
impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut answer = Response::new(axum::body::Body::from(self.envelope().to_string()));
        *answer.status_mut() = self.status();
        let headers = answer.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(seconds) = self.retry_after_seconds {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        answer
    }
}
