//! What a web page may read of this server: the authorization server's machine-facing
//! endpoints (the metadata documents, `/register`, `/token`, `/revoke`) answer any origin,
//! as a browser-based MCP client (the Inspector's page, a web app) needs them to, with
//! no credentials: nothing there reads a cookie, and a token request proves itself by its
//! code's verifier or its refresh token. The pages a person signs in on, the MCP endpoint
//! and `/v1` send no such header (the MCP endpoint checks `Origin` instead).

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{header, HeaderValue, Method, StatusCode};

/// How long a browser may keep a preflight's answer.
const PREFLIGHT_SECONDS: &str = "86400";

/// Answers a CORS preflight itself, and lets any origin read the answer of the rest.
pub async fn open(request: Request, next: Next) -> Response {
    let preflight =
        request.method() == Method::OPTIONS && request.headers().contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    let mut response = if preflight {
        let mut answer = StatusCode::NO_CONTENT.into_response();
        let headers = answer.headers_mut();
        headers.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, POST, OPTIONS"));
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static("Authorization, Content-Type, MCP-Protocol-Version"),
        );
        headers.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static(PREFLIGHT_SECONDS));
        answer
    } else {
        next.run(request).await
    };
    response.headers_mut().insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    response
}
