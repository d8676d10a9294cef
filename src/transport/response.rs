//! Building HTTP responses: JSON bodies, JSON-RPC errors with their status and headers,
//! and the fixed answers (202, 405, 413).

use axum::body::Body;
use axum::response::Response;
use http::{header, HeaderValue, StatusCode};
use serde_json::Value;

use super::body::MAX_BODY_BYTES;
use crate::protocol::rpc::RpcError;

pub const MCP_PROTOCOL_VERSION: &str = "mcp-protocol-version";

pub fn json(status: StatusCode, body: &Value, version: Option<&str>) -> Response {
    json_text(status, body.to_string(), version)
}

/// A JSON body of several pieces, sent as they are: a large piece kept shared (a cached
/// `tools/list` array) is never copied into a joined buffer.
pub fn json_pieces(status: StatusCode, pieces: Vec<bytes::Bytes>, version: Option<&str>) -> Response {
    let mut response = json_text(status, String::new(), version);
    *response.body_mut() = Body::new(Pieces(pieces.into()));
    response
}

/// A body of pieces, each one frame; its exact length is known, so it is sent with a
/// `Content-Length`.
struct Pieces(std::collections::VecDeque<bytes::Bytes>);

impl http_body::Body for Pieces {
    type Data = bytes::Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<bytes::Bytes>, Self::Error>>> {
        std::task::Poll::Ready(self.0.pop_front().map(|piece| Ok(http_body::Frame::data(piece))))
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_empty()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(self.0.iter().map(|piece| piece.len() as u64).sum())
    }
}

/// As [`json`], for a body already serialised.
pub fn json_text(status: StatusCode, body: String, version: Option<&str>) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Some(version) = version.and_then(|v| HeaderValue::from_str(v).ok()) {
        headers.insert(MCP_PROTOCOL_VERSION, version);
    }
    response
}

pub fn retry_after(response: &mut Response, seconds: Option<u64>) {
    if let Some(seconds) = seconds {
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
}

/// `RateLimit-Limit`, `-Remaining` and `-Reset` (SPEC §8).
pub fn rate_limit_headers(response: &mut Response, status: &crate::ops::machinery::rate_limit::RateStatus) {
    let headers = response.headers_mut();
    headers.insert("ratelimit-limit", HeaderValue::from(status.limit));
    headers.insert("ratelimit-remaining", HeaderValue::from(status.remaining));
    headers.insert("ratelimit-reset", HeaderValue::from(status.reset));
}

/// A JSON-RPC error answer: its own HTTP status, and `Retry-After` when it has one.
pub fn rpc_error(id: &Value, error: &RpcError, version: Option<&str>) -> Response {
    let mut response = json(error.status, &error.to_response(id), version);
    retry_after(&mut response, error.retry_after_seconds);
    response
}

/// 202 for notifications and client responses: no body.
pub fn accepted() -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::ACCEPTED;
    response
}

/// 405 for anything but POST on the MCP endpoint; reveals nothing else.
pub fn method_not_allowed() -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
    response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
    response
}

/// 413; the connection is closed since the rest of the body was not read.
pub fn too_large() -> Response {
    let mut response = rpc_error(&Value::Null, &RpcError::too_large(MAX_BODY_BYTES), None);
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// Every response is never cached: `no-store`, unless the handler set a stricter
/// policy of its own (downloads: `private, no-store`).
pub async fn no_store(mut response: Response) -> Response {
    let headers = response.headers_mut();
    let keeps_no_store =
        headers.get(header::CACHE_CONTROL).and_then(|v| v.to_str().ok()).is_some_and(|v| v.contains("no-store"));
    if !keeps_no_store {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}
