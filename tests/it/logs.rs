//! One log line per request, and never a token, a secret or a request body in it
//! (SPEC §12).

use crate::common;

use common::*;
use http::Method;
use serde_json::json;

fn capture(level: tracing::Level) -> (Captured, tracing::subscriber::DefaultGuard) {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber =
        tracing_subscriber::fmt().with_max_level(level).json().with_writer(move || writer.clone()).finish();
    (captured, tracing::subscriber::set_default(subscriber))
}

#[tokio::test]
async fn request_logs_carry_no_token_secret_or_body() {
    let (captured, _guard) = capture(tracing::Level::DEBUG);

    let h = Harness::new().await;
    let token = h.token(DEMO_OWNER);
    let marker = "body-marker-7f3a9c";
    let tool = Mcp::modern(
        "tools/call",
        json!({"name": "finance_companies_create", "arguments": {"name": marker, "cnpj": "11444777000242"}}),
    );
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

/// At every level down to TRACE — ours and every library's — no token (valid,
/// refused, revoked, expired, in the query string), no key, no `requestState` and no
/// request body reaches a log line, whatever the request's fate.
#[tokio::test]
async fn no_token_secret_or_body_at_any_level() {
    const STATE_KEY: &str = "log-test-state-key-5d21";
    let (captured, _guard) = capture(tracing::Level::TRACE);
    let h = Harness::with(|c| {
        c.keys = kobana_finance_mcp::config::KeySourceConfig::Static {
            jwt_secret: SECRET.into(),
            state_key: Some(STATE_KEY.into()),
        }
    })
    .await;
    let token = h.token(DEMO_OWNER);
    let api = h.api_token(DEMO_OWNER);
    let revoked = h.token_with(DEMO_OWNER, None, |c| c.jti = Some("log-test-revoked".into()));
    kobana_finance_mcp::storage::identity::revoke(&h.state.db, "log-test-revoked").await.unwrap();
    let expired = h.token_with(DEMO_OWNER, None, |c| c.exp = 1_000_000);
    let marker = "trace-body-marker-91b2";
    let mut secrets: Vec<String> = vec![
        token.clone(),
        api.clone(),
        revoked.clone(),
        expired.clone(),
        SECRET.into(),
        STATE_KEY.into(),
        marker.into(),
    ];
    // Every part of a token is as secret as the whole (the signature in particular).
    for t in [&token, &api] {
        secrets.extend(t.split('.').map(str::to_string));
    }

    let company = |name: &str, cnpj: &str| json!({"name": name, "cnpj": cnpj});
    let tool = |args: serde_json::Value| {
        Mcp::modern("tools/call", json!({"name": "finance_companies_create", "arguments": args}))
    };
    // `POST /v1/companies` with `body` as it is sent.
    let create_company = |body: String| {
        Mcp::raw(body)
            .method(Method::POST)
            .path("/v1/companies")
            .bearer(&api)
            .header("content-type", "application/json")
            .build()
    };
    let replies = [
        // Accepted writes through both doors.
        h.send(tool(company(marker, "11444777000242")).bearer(&token).build()).await.status,
        h.send(
            Mcp::raw(company(&format!("{marker}-rest"), "11444777000323").to_string())
                .method(Method::POST)
                .path("/v1/companies")
                .bearer(&api)
                .header("content-type", "application/json")
                .header("x-idempotency-key", marker)
                .build(),
        )
        .await
        .status,
        // Refused tokens.
        h.send(Mcp::modern("server/discover", json!({})).bearer(&revoked).build()).await.status,
        h.send(Mcp::modern("server/discover", json!({})).bearer(&expired).build()).await.status,
        h.send(Mcp::raw("").method(Method::GET).path("/v1/workspaces").bearer(&token).build()).await.status,
        h.send(Mcp::raw("").method(Method::GET).path(&format!("/v1/workspaces?access_token={api}")).build())
            .await
            .status,
        h.send(Mcp::modern("server/discover", json!({})).path(&format!("/?access_token={token}")).build()).await.status,
        // Bodies refused at every step of the pipeline.
        h.send(Mcp::raw(format!("{{not json {marker}")).bearer(&token).build()).await.status,
        h.send(Mcp::raw(format!(r#"[{{"jsonrpc":"2.0","id":1,"method":"{marker}"}}]"#)).bearer(&token).build())
            .await
            .status,
        h.send(Mcp::raw(format!(r#"{{"jsonrpc":"1.0","id":1,"method":"{marker}"}}"#)).bearer(&token).build())
            .await
            .status,
        h.send(tool(json!({"name": marker, "cnpj": "00000000000000"})).bearer(&token).build()).await.status,
        h.send(create_company(format!(r#"{{"name":"{marker}","cnpj":"bad"}}"#))).await.status,
        h.send(create_company(format!("{{\"name\":\"{marker}\""))).await.status,
    ];
    assert_eq!(replies, [200, 201, 401, 401, 401, 401, 401, 400, 400, 400, 200, 422, 400], "the requests' fates");

    // A confirmation round trip: the requestState is a bearer of consent, never logged.
    let mut confirm =
        Mcp::modern("tools/call", json!({"name": "finance_companies_delete", "arguments": {"id": ACME_SERVICES}}));
    let mut body: serde_json::Value = serde_json::from_slice(&confirm.body).unwrap();
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {}});
    confirm = confirm.body(body.to_string());
    let asked = h.send(confirm.clone().bearer(&token).build()).await.result();
    let state = asked["requestState"].as_str().expect("a confirmation request").to_string();
    secrets.push(state.clone());
    body["params"]["requestState"] = json!(state);
    body["params"]["inputResponses"] = json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    let done = h.send(confirm.body(body.to_string()).bearer(&token).build()).await;
    assert_ne!(done.result()["isError"], json!(true), "the confirmed delete ran");

    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(logs.lines().count() >= 14, "the trace level is on:\n{logs}");
    for secret in &secrets {
        assert!(!logs.contains(secret.as_str()), "a log line leaks {secret:?}");
    }
    assert!(!logs.contains("11444777000242"), "a request body field reached a log line");
}
