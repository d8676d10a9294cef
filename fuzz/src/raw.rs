//! The request pipeline target's input format and the rules every answer must keep.
//!
//! An input is a request written as text: a line `METHOD PATH`, header lines
//! `Name: value`, an empty line, then the body (any bytes):
//!
//! ```text
//! POST /
//! Authorization: Bearer $MCP_TOKEN
//! MCP-Protocol-Version: 2025-06-18
//!
//! {"jsonrpc":"2.0","id":1,"method":"ping"}
//! ```
//!
//! `$MCP_TOKEN` and `$API_TOKEN` in header values stand for a genuine token of the
//! demo owner for each door (tokens expire; corpus files must not). What no HTTP
//! server would hand to the application (an invalid method, path or header) is
//! dropped, as the HTTP layer would refuse it before the router.

use axum::body::Body;
use serde_json::Value;

/// Genuine tokens substituted for the placeholders.
pub struct Tokens {
    pub mcp: String,
    pub api: String,
}

/// The request an input describes, if an HTTP server could deliver it.
pub fn parse(data: &[u8], tokens: &Tokens) -> Option<http::Request<Body>> {
    let split = data.windows(2).position(|w| w == b"\n\n");
    let (head, body) = match split {
        Some(at) => (&data[..at], &data[at + 2..]),
        None => (data, &[][..]),
    };
    let head = std::str::from_utf8(head).ok()?;
    let mut lines = head.split('\n');
    let (method, path) = lines.next()?.split_once(' ')?;
    let method = http::Method::from_bytes(method.as_bytes()).ok()?;
    let uri: http::Uri = path.parse().ok()?;
    if !uri.path().starts_with('/') || uri.scheme().is_some() {
        return None;
    }
    let mut builder = http::Request::builder().method(method).uri(uri);
    for line in lines {
        let Some((name, value)) = line.split_once(':') else { continue };
        let value = value.trim_start().replace("$MCP_TOKEN", &tokens.mcp).replace("$API_TOKEN", &tokens.api);
        let (Ok(name), Ok(value)) =
            (http::HeaderName::from_bytes(name.as_bytes()), http::HeaderValue::from_str(&value))
        else {
            continue;
        };
        builder = builder.header(name, value);
    }
    builder.body(Body::from(body.to_vec())).ok()
}

/// Statuses the MCP endpoint may answer (SPEC §2–§4, §8: no 406 or 415 — a wrong
/// `Accept` or `Content-Type` is judged by the body, not refused).
pub const MCP_STATUSES: &[u16] = &[200, 202, 400, 401, 403, 404, 405, 413, 429, 503];
/// Statuses `/v1` and the metadata routes may answer: successes, the statuses of the
/// stable error codes of SPEC §7 (never 500 for anything a client can send), 405 for a
/// method a route does not have, 413 over the body cap.
pub const REST_STATUSES: &[u16] = &[200, 201, 204, 400, 401, 403, 404, 405, 409, 413, 422, 429, 503];

/// Checks an answer against the contract; `Err` says which rule it broke.
pub fn check(path: &str, status: u16, headers: &http::HeaderMap, body: &[u8]) -> Result<(), String> {
    let mcp = path == "/" || path == "/mcp";
    let allowed = if mcp { MCP_STATUSES } else { REST_STATUSES };
    if !allowed.contains(&status) {
        return Err(format!("status {status} is not one of {allowed:?}"));
    }
    if headers.get(http::header::CACHE_CONTROL).and_then(|v| v.to_str().ok()).is_none_or(|v| !v.contains("no-store")) {
        return Err("Cache-Control without no-store".into());
    }
    let downloads = path.ends_with("/download") && status == 200;
    if !body.is_empty() && !downloads {
        let json = headers
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        if !json {
            return Err("a body without Content-Type: application/json".into());
        }
        let Ok(value) = serde_json::from_slice::<Value>(body) else { return Err("a body that is not JSON".into()) };
        if mcp && value.get("jsonrpc") != Some(&Value::from("2.0")) {
            return Err("an MCP answer that is not JSON-RPC 2.0".into());
        }
        if mcp && status != 200 && value.get("error").is_none() {
            return Err(format!("a {status} MCP answer without a JSON-RPC error"));
        }
        if !mcp && status >= 400 && value["error"]["code"].as_str().is_none() {
            return Err(format!("a {status} REST answer without the error envelope"));
        }
    }
    if status == 202 && !body.is_empty() {
        return Err("202 with a body".into());
    }
    if status == 401 && headers.get(http::header::WWW_AUTHENTICATE).is_none() {
        return Err("401 without WWW-Authenticate".into());
    }
    if (status == 429 || status == 503) && headers.get(http::header::RETRY_AFTER).is_none() {
        return Err(format!("{status} without Retry-After"));
    }
    Ok(())
}
