//! The fuzz corpora, replayed in the normal test suite: every committed seed and every
//! input that once broke a rule (fuzz/regressions/<target>/) runs through the same
//! checks as the fuzz targets (fuzz/src/properties.rs and fuzz/src/raw.rs), without the
//! instrumented build. `make fuzz` explores beyond them.

use crate::common;

#[path = "../../fuzz/src/properties.rs"]
mod properties;
#[path = "../../fuzz/src/raw.rs"]
mod raw;

use common::*;
use http_body_util::BodyExt;
use tower::ServiceExt;

/// The inputs of `target`: its seed corpus and its regressions.
fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut files = Vec::new();
    for dir in [root.join("corpus").join(target), root.join("regressions").join(target)] {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            if let Ok(bytes) = std::fs::read(entry.path()) {
                files.push((entry.path().display().to_string(), bytes));
            }
        }
    }
    files.sort();
    files
}

fn replay(target: &str, property: fn(&[u8])) {
    let files = inputs(target);
    assert!(!files.is_empty(), "no corpus for {target} (scripts/fuzz-seeds.sh makes it)");
    for (name, bytes) in files {
        if let Err(panic) = std::panic::catch_unwind(|| property(&bytes)) {
            let message =
                panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
            panic!("{name}: {}", message.unwrap_or_default());
        }
    }
}

#[test]
fn money_corpus() {
    replay("money", properties::money);
}

#[test]
fn mcp_name_corpus() {
    replay("mcp_name", properties::mcp_name);
}

#[test]
fn request_state_corpus() {
    replay("request_state", properties::request_state);
}

#[test]
fn cursor_corpus() {
    replay("cursor", properties::cursor);
}

#[tokio::test]
async fn request_pipeline_corpus() {
    let h = Harness::with_demo().await;
    let tokens = raw::Tokens { mcp: h.token(DEMO_OWNER), api: h.api_token(DEMO_OWNER) };
    let files = inputs("request_pipeline");
    assert!(files.len() >= 50, "{} seeds", files.len());
    let mut failures = Vec::new();
    for (name, bytes) in files {
        let Some(request) = raw::parse(&bytes, &tokens) else { continue };
        let path = request.uri().path().to_string();
        let response = h.app.clone().oneshot(request).await.expect("infallible");
        let (parts, body) = response.into_parts();
        let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
        if let Err(rule) = raw::check(&path, parts.status.as_u16(), &parts.headers, &body) {
            failures.push(format!("{name}: {rule} — {}", String::from_utf8_lossy(&body)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Found by the request pipeline fuzzer: an `{id}` that does not decode (bad
/// percent-encoding, not UTF-8) got the router's plain-text 400. It names no record:
/// 404 with the REST envelope, like any other unknown id.
#[tokio::test]
async fn a_path_id_that_does_not_decode_is_not_found_with_the_envelope() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    for (method, path) in [
        (http::Method::GET, "/v1/people/%FF"),
        (http::Method::PATCH, "/v1/people/9%%%%e0"),
        (http::Method::DELETE, "/v1/companies/%C3%28"),
        (http::Method::POST, "/v1/payables/%FF/settle"),
        (http::Method::GET, "/v1/attachments/%FE%FF/download"),
        (http::Method::GET, "/v1/transfers/%80"),
    ] {
        let reply = h
            .send(
                Mcp::raw("{}")
                    .method(method.clone())
                    .path(path)
                    .bearer(&token)
                    .header("content-type", "application/json")
                    .build(),
            )
            .await;
        assert_eq!(reply.status, 404, "{method} {path}");
        assert_eq!(reply.json()["error"]["code"], "not_found", "{method} {path}");
        assert_eq!(reply.header("cache-control"), Some("no-store"));
    }
}

/// A `/v1` body over what the REST door reads answers with the envelope too.
#[tokio::test]
async fn an_oversized_rest_body_is_refused_with_the_envelope() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let body = format!(r#"{{"name":"{}","cnpj":"11444777000242"}}"#, "x".repeat(3 << 20));
    let reply = h
        .send(
            Mcp::raw(body)
                .method(http::Method::POST)
                .path("/v1/companies")
                .bearer(&token)
                .header("content-type", "application/json")
                .build(),
        )
        .await;
    let check = raw::check("/v1/companies", reply.status.as_u16(), &reply.headers, &reply.bytes);
    assert!(
        check.is_ok(),
        "{check:?}: {} {}",
        reply.status,
        String::from_utf8_lossy(&reply.bytes[..reply.bytes.len().min(300)])
    );
}
