//! One log line per request, and never a token, a secret or a request body in it
//! (SPEC §12).

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};

use common::*;
use http::Method;
use serde_json::json;

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().map_err(|_| std::io::Error::other("poisoned"))?.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn request_logs_carry_no_token_secret_or_body() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt().with_max_level(tracing::Level::DEBUG).json().with_writer(move || writer.clone()).finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let h = Harness::new().await;
    let token = h.token(DEMO_OWNER);
    let marker = "body-marker-7f3a9c";
    let tool = Mcp::modern("tools/call", json!({"name": "finance_companies_create", "arguments": {"name": marker, "cnpj": "11444777000242"}}));
    assert_eq!(h.send(tool.bearer(&token).build()).await.status, 200);
    assert_eq!(h.send(Mcp::modern("server/discover", json!({})).bearer("not.a.valid-token").build()).await.status, 401);
    let rest = Mcp::raw(json!({"name": marker, "cnpj": "11444777000323"}).to_string())
        .method(Method::POST)
        .path("/v1/companies")
        .bearer(&h.api_token(DEMO_OWNER))
        .header("content-type", "application/json");
    assert_eq!(h.send(rest.build()).await.status, 201);

    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let request_lines = logs.lines().filter(|l| l.contains("latency_us")).count();
    assert_eq!(request_lines, 3, "one line per request:\n{logs}");
    assert!(logs.contains("finance_companies_create") && logs.contains(DEMO_OWNER), "the line names tool and user");
    for secret in [token.as_str(), "not.a.valid-token", SECRET, marker, "11444777000242"] {
        assert!(!logs.contains(secret), "a log line leaks {secret:?}:\n{logs}");
    }
}
