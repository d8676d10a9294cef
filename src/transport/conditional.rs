//! Conditional reads on `/v1`, as the real API answers them: every `200` JSON answer
//! of a `GET` carries an `ETag` (a digest of its bytes) and, for one record, a
//! `Last-Modified` (its `updated_at`); a request whose `If-None-Match` names that tag,
//! or (without `If-None-Match`) whose `If-Modified-Since` is not older than the record,
//! is answered `304 Not Modified` without a body. The read still runs: the answer is
//! what decides, so a tag changes exactly when the answer would.

use std::hash::{Hash, Hasher};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{header, HeaderMap, HeaderValue, Method, StatusCode};

use crate::domain::dates::Timestamp;
use crate::error::ApiError;

/// The middleware of the REST door.
pub async fn reads(request: Request, next: Next) -> Response {
    if request.method() != Method::GET {
        return next.run(request).await;
    }
    let asked = Asked::of(request.headers());
    let answer = next.run(request).await;
    let is_json = answer
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if answer.status() != StatusCode::OK || !is_json {
        return answer;
    }
    let (mut parts, body) = answer.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return ApiError::internal().into_response();
    };
    let tag = etag(&bytes);
    let modified = last_modified(&bytes);
    if let Ok(value) = HeaderValue::from_str(&tag) {
        parts.headers.insert(header::ETAG, value);
    }
    if let Some(value) = modified.and_then(|at| HeaderValue::from_str(&httpdate::fmt_http_date(at)).ok()) {
        parts.headers.insert(header::LAST_MODIFIED, value);
    }
    if asked.is_fresh(&tag, modified) {
        parts.status = StatusCode::NOT_MODIFIED;
        parts.headers.remove(header::CONTENT_LENGTH);
        parts.headers.remove(header::CONTENT_TYPE);
        return Response::from_parts(parts, Body::empty());
    }
    Response::from_parts(parts, Body::from(bytes))
}

/// What the request's conditional headers ask.
struct Asked {
    none_match: Option<String>,
    modified_since: Option<SystemTime>,
}

impl Asked {
    fn of(headers: &HeaderMap) -> Asked {
        let text = |name| headers.get(name).and_then(|v: &HeaderValue| v.to_str().ok());
        Asked {
            none_match: text(header::IF_NONE_MATCH).map(str::to_string),
            modified_since: text(header::IF_MODIFIED_SINCE).and_then(|v| httpdate::parse_http_date(v).ok()),
        }
    }

    /// Whether the client's copy is the answer (RFC 9110 §13.1.2, §13.1.3: with
    /// `If-None-Match`, `If-Modified-Since` is not looked at; tags compare weakly).
    fn is_fresh(&self, tag: &str, modified: Option<SystemTime>) -> bool {
        if let Some(tags) = &self.none_match {
            let opaque = |t: &str| t.trim().trim_start_matches("W/").to_string();
            return tags.split(',').any(|t| t.trim() == "*" || opaque(t) == opaque(tag));
        }
        match (self.modified_since, modified) {
            (Some(since), Some(at)) => at <= since,
            _ => false,
        }
    }
}

/// A strong tag of the answer's bytes.
fn etag(bytes: &[u8]) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    format!("\"{:016x}{:08x}\"", hasher.finish(), bytes.len())
}

/// The `updated_at` of an answer that is one record. A page (`{"data": […], "meta": …}`,
/// the largest answers) is no one record and is not scanned for it.
fn last_modified(bytes: &[u8]) -> Option<SystemTime> {
    if bytes.starts_with(b"{\"data\":") {
        return None;
    }
    #[derive(serde::Deserialize)]
    struct Record {
        updated_at: Option<String>,
    }
    let record: Record = serde_json::from_slice(bytes).ok()?;
    let at = Timestamp::parse(record.updated_at.as_deref()?)?;
    Some(UNIX_EPOCH + Duration::from_secs(u64::try_from(at.unix()).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(none_match: Option<&str>, since: Option<&str>) -> Asked {
        Asked {
            none_match: none_match.map(str::to_string),
            modified_since: since.map(|s| httpdate::parse_http_date(s).unwrap()),
        }
    }

    #[test]
    fn a_tag_matches_itself_weakly_in_a_list_or_as_a_star() {
        let tag = etag(b"{\"a\":1}");
        assert_ne!(tag, etag(b"{\"a\":2}"));
        assert!(asked(Some(&tag), None).is_fresh(&tag, None));
        assert!(asked(Some(&format!("\"x\", W/{tag}")), None).is_fresh(&tag, None));
        assert!(asked(Some("*"), None).is_fresh(&tag, None));
        assert!(!asked(Some("\"other\""), None).is_fresh(&tag, None));
        // With If-None-Match, a date that would match is not looked at.
        let at = httpdate::parse_http_date("Thu, 03 Dec 2026 12:00:00 GMT").ok();
        assert!(!asked(Some("\"other\""), Some("Thu, 03 Dec 2026 13:00:00 GMT")).is_fresh(&tag, at));
    }

    #[test]
    fn a_record_is_fresh_since_a_date_not_older_than_its_change() {
        let at = last_modified(br#"{"id":"x","updated_at":"2026-12-03T12:00:00Z"}"#);
        assert_eq!(at.map(httpdate::fmt_http_date).as_deref(), Some("Thu, 03 Dec 2026 12:00:00 GMT"));
        assert!(asked(None, Some("Thu, 03 Dec 2026 12:00:00 GMT")).is_fresh("\"t\"", at));
        assert!(!asked(None, Some("Thu, 03 Dec 2026 11:59:59 GMT")).is_fresh("\"t\"", at));
        assert!(!asked(None, None).is_fresh("\"t\"", at));
        assert_eq!(last_modified(br#"{"data":[],"meta":{"next_cursor":null}}"#), None);
    }
}
