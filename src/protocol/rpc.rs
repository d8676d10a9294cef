//! JSON-RPC 2.0: classifying an incoming message (SPEC §2 steps 6–8) and the
//! protocol errors the server answers with, each carrying its HTTP status.

use http::StatusCode;
use serde_json::{json, Map, Value};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
/// 2025 era "resource not found" (never emitted in 2026).
pub const RESOURCE_NOT_FOUND_2025: i64 = -32002;
pub const HEADER_MISMATCH: i64 = -32020;
pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
/// Rate limited (application code, outside the reserved range).
pub const RATE_LIMITED: i64 = -31429;

/// A protocol-level error: JSON-RPC code, message, optional data, and the HTTP status
/// it is answered with.
#[derive(Debug, Clone)]
pub struct RpcError {
    pub status: StatusCode,
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
    /// Becomes `Retry-After` (429, 503).
    pub retry_after_seconds: Option<u64>,
}

impl RpcError {
    pub fn new(status: StatusCode, code: i64, message: impl Into<String>) -> Self {
        RpcError { status, code, message: message.into(), data: None, retry_after_seconds: None }
    }

    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    pub fn parse_error() -> Self {
        Self::new(StatusCode::BAD_REQUEST, PARSE_ERROR, "Parse error: the body is not valid JSON")
    }

    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, INVALID_REQUEST, message)
    }

    pub fn too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            INVALID_REQUEST,
            format!("Request body too large (limit {limit} bytes)"),
        )
    }

    /// Invalid params answered in the body of a 200 (unknown tool, bad cursor, …).
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(StatusCode::OK, INVALID_PARAMS, message)
    }

    /// Invalid params answered with HTTP 400 (malformed request metadata).
    pub fn bad_params(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, INVALID_PARAMS, message)
    }

    pub fn header_mismatch(detail: impl std::fmt::Display) -> Self {
        Self::new(StatusCode::BAD_REQUEST, HEADER_MISMATCH, format!("Header mismatch: {detail}"))
    }

    pub fn unsupported_version(requested: &str) -> Self {
        Self::new(StatusCode::BAD_REQUEST, UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version")
            .with_data(json!({ "supported": super::era::SUPPORTED_VERSIONS, "requested": requested }))
    }

    pub fn missing_capability(message: impl Into<String>, capabilities: Value) -> Self {
        Self::new(StatusCode::BAD_REQUEST, MISSING_CLIENT_CAPABILITY, message)
            .with_data(json!({ "requiredCapabilities": capabilities }))
    }

    pub fn method_not_found(method: &str, status: StatusCode) -> Self {
        Self::new(status, METHOD_NOT_FOUND, format!("Method not found: {method}"))
    }

    pub fn internal() -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, INTERNAL_ERROR, "Internal error")
    }

    /// A dependency failure: 503, -32603, `data.retryAfterSeconds`.
    pub fn unavailable(message: impl Into<String>, retry_after: u64) -> Self {
        let mut e = Self::new(StatusCode::SERVICE_UNAVAILABLE, INTERNAL_ERROR, message)
            .with_data(json!({ "retryAfterSeconds": retry_after }));
        e.retry_after_seconds = Some(retry_after);
        e
    }

    pub fn rate_limited(retry_after: u64) -> Self {
        let mut e = Self::new(StatusCode::TOO_MANY_REQUESTS, RATE_LIMITED, "Rate limit exceeded")
            .with_data(json!({ "retryAfterSeconds": retry_after }));
        e.retry_after_seconds = Some(retry_after);
        e
    }

    /// The error response object for request `id` (`null` when it was unreadable).
    pub fn to_response(&self, id: &Value) -> Value {
        let mut error = json!({ "code": self.code, "message": self.message });
        if let Some(data) = &self.data {
            error["data"] = data.clone();
        }
        json!({ "jsonrpc": "2.0", "id": id, "error": error })
    }
}

/// A JSON-RPC request: it has an id and expects one response.
#[derive(Debug, Clone)]
pub struct Request {
    pub id: Value,
    pub method: String,
    pub params: Map<String, Value>,
    /// Whether `params` was present in the message at all.
    pub has_params: bool,
}

/// What an incoming message is.
#[derive(Debug)]
pub enum Incoming {
    Request(Request),
    /// A notification or a client's JSON-RPC response: accepted with 202, no body.
    Accepted,
}

/// Classifies a parsed body. On failure returns the id to answer with (`null` if none
/// could be read) and the error.
pub fn classify(value: Value) -> Result<Incoming, (Value, RpcError)> {
    let mut object = match value {
        Value::Object(o) => o,
        Value::Array(_) => return Err((Value::Null, RpcError::invalid_request("Batch requests are not supported"))),
        _ => return Err((Value::Null, RpcError::invalid_request("Invalid request: expected a JSON-RPC object"))),
    };
    // An error response may carry `"id": null` (JSON-RPC 2.0 §5: the request's id could
    // not be read); it is still a response, accepted like any other (step 8).
    if object.get("id") == Some(&Value::Null) && is_error_response(&object) {
        return Ok(Incoming::Accepted);
    }
    let id = match object.get("id") {
        None => None,
        Some(id @ (Value::String(_) | Value::Number(_))) => Some(id.clone()),
        Some(_) => {
            return Err((Value::Null, RpcError::invalid_request("Invalid request: id must be a string or a number")))
        }
    };
    let echo = id.clone().unwrap_or(Value::Null);
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err((echo, RpcError::invalid_request("Invalid request: jsonrpc must be \"2.0\"")));
    }
    match object.remove("method") {
        Some(Value::String(method)) => {
            let (params, has_params) = match object.remove("params") {
                None => (Map::new(), false),
                Some(Value::Object(p)) => (p, true),
                Some(_) => return Err((echo, RpcError::invalid_request("Invalid request: params must be an object"))),
            };
            match id {
                Some(id) => Ok(Incoming::Request(Request { id, method, params, has_params })),
                None => Ok(Incoming::Accepted),
            }
        }
        Some(_) => Err((echo, RpcError::invalid_request("Invalid request: method must be a string"))),
        None => {
            let is_response = id.is_some() && (object.contains_key("result") != object.contains_key("error"));
            if is_response {
                Ok(Incoming::Accepted)
            } else {
                Err((
                    echo,
                    RpcError::invalid_request("Invalid request: not a JSON-RPC request, notification or response"),
                ))
            }
        }
    }
}

/// `{"jsonrpc":"2.0","error":{"code":…,"message":…}}` without `method` or `result`.
fn is_error_response(object: &Map<String, Value>) -> bool {
    object.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
        && !object.contains_key("method")
        && !object.contains_key("result")
        && object
            .get("error")
            .and_then(Value::as_object)
            .is_some_and(|e| e.get("code").is_some_and(Value::is_i64) && e.get("message").is_some_and(Value::is_string))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(v: Value) -> i64 {
        match classify(v) {
            Err((_, e)) => e.code,
            Ok(_) => 0,
        }
    }

    #[test]
    fn classification() {
        assert_eq!(code(json!([])), INVALID_REQUEST);
        assert_eq!(code(json!("x")), INVALID_REQUEST);
        assert_eq!(code(json!({"jsonrpc":"1.0","id":1,"method":"ping"})), INVALID_REQUEST);
        assert_eq!(code(json!({"jsonrpc":"2.0","id":1,"method":7})), INVALID_REQUEST);
        assert_eq!(code(json!({"jsonrpc":"2.0","id":1,"method":"ping","params":[1]})), INVALID_REQUEST);
        assert_eq!(code(json!({"jsonrpc":"2.0","id":null,"method":"ping"})), INVALID_REQUEST);
        assert_eq!(code(json!({"jsonrpc":"2.0","id":1})), INVALID_REQUEST);
        assert!(matches!(
            classify(json!({"jsonrpc":"2.0","method":"notifications/initialized"})),
            Ok(Incoming::Accepted)
        ));
        assert!(matches!(classify(json!({"jsonrpc":"2.0","id":3,"result":{}})), Ok(Incoming::Accepted)));
        // An error response with a null id is a response too (SPEC §2 step 8).
        assert!(matches!(
            classify(json!({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}})),
            Ok(Incoming::Accepted)
        ));
        assert_eq!(code(json!({"jsonrpc":"2.0","id":null,"result":{}})), INVALID_REQUEST);
        assert_eq!(code(json!({"jsonrpc":"2.0","id":null,"error":"x"})), INVALID_REQUEST);
        assert!(matches!(classify(json!({"jsonrpc":"2.0","id":"a","method":"ping"})), Ok(Incoming::Request(_))));
    }
}
