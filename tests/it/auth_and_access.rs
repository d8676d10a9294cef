//! Authentication, authorization and isolation beyond the matrix: revocation, scopes ∩
//! role, workspace isolation, audience separation on `/v1`, rate limits on both doors,
//! the protected-resource metadata, and 503 when the database is gone.

use crate::common;

use common::*;
use http::Method;
use serde_json::{json, Value};

async fn workspaces(h: &Harness, token: &str) -> Value {
    let reply = h
        .send(Mcp::modern("tools/call", json!({"name":"finance_workspaces_list","arguments":{}})).bearer(token).build())
        .await;
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.bytes));
    reply.result()["structuredContent"].clone()
}

#[tokio::test]
async fn revoked_token_is_refused() {
    let h = Harness::new().await;
    let token = h.token_with(DEMO_OWNER, None, |c| c.jti = Some("revoke-me".into()));
    let discover = || Mcp::modern("server/discover", json!({})).bearer(&token).build();
    assert_eq!(h.send(discover()).await.status, 200);
    assert!(kobana_finance_mcp::storage::identity::revoke(&h.state.db, "revoke-me").await.unwrap());
    let reply = h.send(discover()).await;
    assert_eq!(reply.status, 401);
    assert!(reply.header("www-authenticate").unwrap().contains("error=\"invalid_token\""));
    assert!(
        !kobana_finance_mcp::storage::identity::revoke(&h.state.db, "revoke-me").await.unwrap(),
        "second revoke is a no-op"
    );
}

/// A token verified once (and kept as verified) is refused the moment it is revoked, on
/// the REST door as on the MCP one.
#[tokio::test]
async fn an_api_token_revoked_after_use_is_refused() {
    let h = Harness::new().await;
    let token = h.token_with(DEMO_OWNER, None, |c| {
        c.aud = kobana_finance_mcp::auth::jwt::Audience::One(format!("{PUBLIC_URL}/v1"));
        c.jti = Some("revoke-me-api".into());
    });
    let workspaces = || Mcp::raw("").method(Method::GET).path("/v1/workspaces").bearer(&token).build();
    assert_eq!(h.send(workspaces()).await.status, 200);
    assert_eq!(h.send(workspaces()).await.status, 200);
    assert!(kobana_finance_mcp::storage::identity::revoke(&h.state.db, "revoke-me-api").await.unwrap());
    let reply = h.send(workspaces()).await;
    assert_eq!(reply.status, 401);
    assert_eq!(reply.json()["error"]["code"], "invalid_token");
    assert!(reply.header("www-authenticate").unwrap().contains("error=\"invalid_token\""));
}

#[tokio::test]
async fn a_revoked_token_is_401_whatever_the_body() {
    let h = Harness::with(|c| c.rate_limits.reads = 1).await;
    let token = h.token_with(DEMO_OWNER, None, |c| c.jti = Some("gone".into()));
    kobana_finance_mcp::storage::identity::revoke(&h.state.db, "gone").await.unwrap();
    let bodies = [
        "{not json",
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    ];
    for body in bodies {
        let reply = h.send(Mcp::raw(body).header("content-type", "application/json").bearer(&token).build()).await;
        assert_eq!(reply.status, 401, "{body}");
        assert!(reply.header("www-authenticate").unwrap().contains("invalid_token"), "{body}");
    }
    let oversized = h.send(Mcp::raw(vec![b' '; 14_680_065]).bearer(&token).build()).await;
    assert_eq!(oversized.status, 401, "revocation answers before the size of an unread body");
    // Nothing a revoked token sent was counted: a fresh token of the same user still has
    // its one request of budget.
    let fresh = h.token(DEMO_OWNER);
    assert_eq!(h.send(Mcp::modern("server/discover", json!({})).bearer(&fresh).build()).await.status, 200);
    assert_eq!(h.send(Mcp::modern("server/discover", json!({})).bearer(&fresh).build()).await.status, 429);
}

#[tokio::test]
async fn workspaces_are_isolated_between_tenants() {
    let h = Harness::new().await;
    let acme = workspaces(&h, &h.token(DEMO_OWNER)).await;
    let ids: Vec<_> = acme["data"].as_array().unwrap().iter().map(|w| w["id"].clone()).collect();
    assert_eq!(ids, vec![json!(DEMO_WORKSPACE_ACME)]);
    let beta = workspaces(&h, &h.token(DEMO_BETA_OWNER)).await;
    let ids: Vec<_> = beta["data"].as_array().unwrap().iter().map(|w| w["id"].clone()).collect();
    assert_eq!(ids, vec![json!(DEMO_WORKSPACE_BETA)]);
    assert!(!beta.to_string().contains(DEMO_WORKSPACE_ACME));
}

#[tokio::test]
async fn permissions_are_scopes_intersected_with_role() {
    let h = Harness::new().await;
    // The viewer holds every scope but may only read.
    let viewer = workspaces(&h, &h.token(DEMO_VIEWER)).await;
    let p = &viewer["data"][0]["permissions"]["payables"];
    assert_eq!(p, &json!({"read": true, "write": false, "delete": false}));
    // The owner with finance.all may read everything and change nothing.
    let reader = workspaces(&h, &h.token_with(DEMO_OWNER, Some("finance.all"), |_| {})).await;
    for (_, p) in reader["data"][0]["permissions"].as_object().unwrap() {
        assert_eq!(p, &json!({"read": true, "write": false, "delete": false}));
    }
    // finance may not delete companies or accounts; .write does not imply read.
    let finance = workspaces(
        &h,
        &h.token_with(DEMO_FINANCE, Some("finance.companies.write finance.payables.write finance.payables"), |_| {}),
    )
    .await;
    let acme = finance["data"].as_array().unwrap().iter().find(|w| w["id"] == DEMO_WORKSPACE_ACME).unwrap();
    assert_eq!(acme["role"], "finance");
    assert_eq!(acme["permissions"]["companies"], json!({"read": false, "write": true, "delete": false}));
    assert_eq!(acme["permissions"]["payables"], json!({"read": true, "write": true, "delete": true}));
    // The same person is a viewer in the other workspace.
    let beta = finance["data"].as_array().unwrap().iter().find(|w| w["id"] == DEMO_WORKSPACE_BETA).unwrap();
    assert_eq!(beta["role"], "viewer");
    assert_eq!(beta["permissions"]["payables"], json!({"read": true, "write": false, "delete": false}));
    assert_eq!(beta["permissions"]["companies"], json!({"read": false, "write": false, "delete": false}));
}

#[tokio::test]
async fn workspaces_list_is_visible_to_a_token_without_scopes() {
    let h = Harness::new().await;
    let token = h.token_with(DEMO_VIEWER, Some(""), |_| {});
    let reply = h.send(Mcp::modern("tools/list", json!({})).bearer(&token).build()).await;
    assert_eq!(reply.result()["tools"][0]["name"], "finance_workspaces_list");
    assert_eq!(workspaces(&h, &token).await["data"][0]["role"], "viewer");
}

#[tokio::test]
async fn a_user_without_workspaces_gets_an_empty_list() {
    let h = Harness::new().await;
    let token = h.token("9a0b7c6d-0000-4000-8000-000000000000");
    assert_eq!(workspaces(&h, &token).await["data"], json!([]));
}

#[tokio::test]
async fn rest_door_takes_api_tokens_only() {
    let h = Harness::new().await;
    let get = |token: &str| Mcp::raw("").method(Method::GET).path("/v1/workspaces").bearer(token).build();
    let reply = h.send(get(&h.api_token(DEMO_OWNER))).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["data"][0]["id"], DEMO_WORKSPACE_ACME);
    assert_eq!(reply.header("cache-control"), Some("no-store"));
    // The MCP and REST doors give the same answer: one operation.
    let via_mcp = workspaces(&h, &h.token(DEMO_OWNER)).await;
    assert_eq!(reply.json(), via_mcp);
    let refused = h.send(get(&h.token(DEMO_OWNER))).await;
    assert_eq!(refused.status, 401);
    assert_eq!(refused.json()["error"]["code"], "invalid_token");
    let none = h.send(Mcp::raw("").method(Method::GET).path("/v1/workspaces").build()).await;
    assert_eq!(none.status, 401);
    let missing = h.send(Mcp::raw("").method(Method::GET).path("/v1/nothing").build()).await;
    assert_eq!(missing.status, 404);
    assert_eq!(missing.json()["error"]["code"], "not_found");
}

#[tokio::test]
async fn protected_resource_metadata_needs_no_token() {
    let h = Harness::new().await;
    let reply = h.send(Mcp::raw("").method(Method::GET).path("/.well-known/oauth-protected-resource").build()).await;
    assert_eq!(reply.status, 200);
    let body = reply.json();
    assert_eq!(body["resource"], PUBLIC_URL);
    assert_eq!(body["authorization_servers"], json!([PUBLIC_URL]));
    assert_eq!(body["bearer_methods_supported"], json!(["header"]));
    assert_eq!(body["scopes_supported"].as_array().unwrap().len(), 31);
    assert!(body["resource_name"].is_string());
    let mcp = h.send(Mcp::raw("").method(Method::GET).path("/.well-known/oauth-protected-resource/mcp").build()).await;
    assert_eq!(mcp.json()["resource"], format!("{PUBLIC_URL}/mcp"));
}

#[tokio::test]
async fn rate_limit_on_the_mcp_door() {
    let h = Harness::with(|c| c.rate_limits.reads = 2).await;
    let token = h.token(DEMO_OWNER);
    let discover = || Mcp::modern("server/discover", json!({})).bearer(&token).build();
    assert_eq!(h.send(discover()).await.status, 200);
    assert_eq!(h.send(discover()).await.status, 200);
    let reply = h.send(discover()).await;
    assert_eq!(reply.status, 429);
    assert_eq!(reply.rpc_code(), Some(-31429));
    assert_eq!(reply.json()["id"], 1);
    let retry: u64 = reply.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=3600).contains(&retry));
    assert_eq!(reply.json()["error"]["data"]["retryAfterSeconds"], retry);
    assert_eq!(reply.header("ratelimit-limit"), Some("2"));
    assert_eq!(reply.header("ratelimit-remaining"), Some("0"));
    assert!(reply.header("ratelimit-reset").is_some());
    // Budgets are per user.
    let other = h.token(DEMO_VIEWER);
    assert_eq!(h.send(Mcp::modern("server/discover", json!({})).bearer(&other).build()).await.status, 200);
}

#[tokio::test]
async fn rate_limit_on_the_rest_door() {
    let h = Harness::with(|c| c.rate_limits.reads = 1).await;
    let token = h.api_token(DEMO_OWNER);
    let get = || Mcp::raw("").method(Method::GET).path("/v1/workspaces").bearer(&token).build();
    assert_eq!(h.send(get()).await.status, 200);
    let reply = h.send(get()).await;
    assert_eq!(reply.status, 429);
    assert_eq!(reply.json()["error"]["code"], "rate_limited");
    // The headers the real API documents on a 429.
    let retry: u64 = reply.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=3600).contains(&retry));
    assert_eq!(reply.header("ratelimit-limit"), Some("1"));
    assert_eq!(reply.header("ratelimit-remaining"), Some("0"));
    let reset: u64 = reply.header("ratelimit-reset").unwrap().parse().unwrap();
    assert!(reset <= 3600, "{reset}");
    assert!(reply.header("request-id").is_some());
}

/// Both doors take one door step: the same refusal is the same status with the same
/// headers on the MCP endpoint and on `/v1` (each in its own envelope) — no token, a
/// revoked one, the budget spent.
#[tokio::test]
async fn both_doors_refuse_alike_at_the_door_step() {
    let h = Harness::with(|c| c.rate_limits.reads = 1).await;
    let at_mcp = |token: Option<&str>| {
        let request = Mcp::modern("server/discover", json!({}));
        match token {
            Some(t) => request.bearer(t),
            None => request,
        }
        .build()
    };
    let at_v1 = |token: Option<&str>| {
        let request = Mcp::raw("").method(Method::GET).path("/v1/workspaces");
        match token {
            Some(t) => request.bearer(t),
            None => request,
        }
        .build()
    };
    let challenge = |reply: &Reply| reply.header("www-authenticate").expect("a challenge").to_string();
    let (mcp, v1) = (h.send(at_mcp(None)).await, h.send(at_v1(None)).await);
    for reply in [&mcp, &v1] {
        assert_eq!(reply.status, 401);
        assert!(reply.header("ratelimit-limit").is_none());
    }
    assert_eq!(challenge(&mcp), challenge(&v1), "one challenge for a missing token");
    assert!(!challenge(&mcp).contains("error="));

    let mcp_token = h.token_with(DEMO_OWNER, None, |c| c.jti = Some("door-step-mcp".into()));
    let api_token = h.token_with(DEMO_OWNER, None, |c| {
        c.jti = Some("door-step-api".into());
        c.aud = kobana_finance_mcp::auth::jwt::Audience::One(format!("{PUBLIC_URL}/v1"));
    });
    for jti in ["door-step-mcp", "door-step-api"] {
        kobana_finance_mcp::storage::identity::revoke(&h.state.db, jti).await.unwrap();
    }
    let (mcp, v1) = (h.send(at_mcp(Some(&mcp_token))).await, h.send(at_v1(Some(&api_token))).await);
    let metadata = |reply: &Reply| challenge(reply).split_once(", error=").expect("an error").0.to_string();
    for reply in [&mcp, &v1] {
        assert_eq!(reply.status, 401);
        assert!(challenge(reply).contains("error=\"invalid_token\""));
        assert!(reply.header("ratelimit-limit").is_none());
    }
    assert_eq!(metadata(&mcp), metadata(&v1), "one resource and scopes for a revoked token");

    // Two callers, so that each door spends a budget of its own.
    let (mcp_token, api_token) = (h.token(DEMO_OWNER), h.api_token(DEMO_VIEWER));
    assert_eq!(h.send(at_mcp(Some(&mcp_token))).await.status, 200);
    assert_eq!(h.send(at_v1(Some(&api_token))).await.status, 200);
    let (mcp, v1) = (h.send(at_mcp(Some(&mcp_token))).await, h.send(at_v1(Some(&api_token))).await);
    for reply in [&mcp, &v1] {
        assert_eq!(reply.status, 429);
        assert_eq!(reply.header("ratelimit-limit"), Some("1"));
        assert_eq!(reply.header("ratelimit-remaining"), Some("0"));
        assert_eq!(reply.header("retry-after"), reply.header("ratelimit-reset"), "the wait is the window's rest");
        assert!(reply.header("www-authenticate").is_none());
    }
}

/// The `/v1` door's checks, in order: a JSON body over its limit before the token (and
/// uncounted), the token, the budget of the method (reads: `GET` and `HEAD`; writes:
/// the rest), then the workspace hint — which a route acting in no workspace
/// (`/v1/workspaces`) never resolves.
#[tokio::test]
async fn the_rest_door_reads_the_body_then_the_token_then_the_budget_then_the_hint() {
    let h = Harness::with(|c| {
        c.rate_limits.reads = 1;
        c.rate_limits.writes = 1;
    })
    .await;
    let token = h.api_token(DEMO_OWNER);
    let huge = format!("{{\"name\":\"{}\"}}", "x".repeat(3 * 1024 * 1024));
    let post = |body: String| {
        Mcp::raw(body).method(Method::POST).path("/v1/companies").header("content-type", "application/json")
    };
    let anonymous = h.send(post(huge.clone()).build()).await;
    assert_eq!(anonymous.status, 413, "the body is read before the token is looked at");
    assert_eq!(anonymous.json()["error"]["details"]["reason"], "body_too_large");
    assert_eq!(h.send(post(huge).bearer(&token).build()).await.status, 413);
    let write = h.send(post("{}".into()).bearer(&token).build()).await;
    assert_eq!(write.status, 422, "the refused body spent no write budget: {}", String::from_utf8_lossy(&write.bytes));
    let limited = h.send(post("{}".into()).bearer(&token).build()).await;
    assert_eq!(limited.status, 429);
    assert!(limited.header("retry-after").is_some());

    let disagreeing = |path: &str, token: &str| {
        Mcp::raw("")
            .method(Method::GET)
            .path(&format!("{path}?workspace_id={DEMO_WORKSPACE_ACME}"))
            .header("x-workspace-id", "another-workspace")
            .bearer(token)
            .build()
    };
    assert_eq!(h.send(disagreeing("/v1/workspaces", &token)).await.status, 200, "reads have their own budget");
    let head = h.send(Mcp::raw("").method(Method::HEAD).path("/v1/workspaces").bearer(&token).build()).await;
    assert_eq!(head.status, 429, "HEAD spends the read budget");
    assert_eq!(h.send(disagreeing("/v1/companies", &token)).await.status, 429, "the budget before the hint");
    let other = h.api_token(DEMO_VIEWER);
    let hint = h.send(disagreeing("/v1/companies", &other)).await;
    assert_eq!(hint.status, 400, "{}", String::from_utf8_lossy(&hint.bytes));
    let unauthenticated = h.send(disagreeing("/v1/companies", "not-a-token")).await;
    assert_eq!(unauthenticated.status, 401);
    assert!(unauthenticated.header("www-authenticate").is_some());
}

#[tokio::test]
async fn database_failure_is_503_with_retry_after() {
    let h = Harness::new().await;
    let token = h.token(DEMO_OWNER);
    h.state.db.close().await;
    let reply = h.send(Mcp::modern("tools/list", json!({})).bearer(&token).build()).await;
    assert_eq!(reply.status, 503);
    assert_eq!(reply.rpc_code(), Some(-32603));
    let retry = reply.header("retry-after").unwrap().to_string();
    assert_eq!(reply.json()["error"]["data"]["retryAfterSeconds"].to_string(), retry);
    assert_eq!(reply.header("cache-control"), Some("no-store"));
    let rest =
        h.send(Mcp::raw("").method(Method::GET).path("/v1/workspaces").bearer(&h.api_token(DEMO_OWNER)).build()).await;
    assert_eq!(rest.status, 503);
    assert!(rest.header("retry-after").is_some());
}

#[tokio::test]
async fn migrations_are_idempotent_and_seed_runs_once() {
    let h = Harness::new().await;
    assert_eq!(kobana_finance_mcp::storage::migrate::run(&h.state.db).await.unwrap(), 0);
    assert!(!kobana_finance_mcp::storage::seed::run(&h.state.db).await.unwrap());
    assert!(!kobana_finance_mcp::storage::seed::is_empty(&h.state.db).await.unwrap());
}

/// The counters are not durable on PostgreSQL (an unlogged table, which a crash or a
/// failover empties): losing them mid-window resets every caller's count and refuses
/// nothing. Revocations are kept apart and survive (logged).
#[tokio::test]
async fn losing_the_counters_resets_the_budget_and_refuses_no_good_request() {
    let h = Harness::with(|c| c.rate_limits.reads = 3).await;
    if backend() == "postgres" {
        let persistence = sql::query("SELECT relpersistence::text FROM pg_class WHERE relname = $1")
            .bind("rate_limit_counters")
            .map_one(&h.state.db, |r| r.try_get::<String, _>(0))
            .await
            .unwrap();
        assert_eq!(persistence, "u", "rate_limit_counters is unlogged");
        let revoked = sql::query("SELECT relpersistence::text FROM pg_class WHERE relname = $1")
            .bind("revoked_tokens")
            .map_one(&h.state.db, |r| r.try_get::<String, _>(0))
            .await
            .unwrap();
        assert_eq!(revoked, "p", "revocations are durable");
    }
    let token = h.token(DEMO_OWNER);
    let discover = || Mcp::modern("server/discover", json!({})).bearer(&token).build();
    for _ in 0..3 {
        assert_eq!(h.send(discover()).await.status, 200);
    }
    assert_eq!(h.send(discover()).await.status, 429);
    // What crash recovery does to an unlogged table.
    sql::query("DELETE FROM rate_limit_counters").execute(&h.state.db).await.unwrap();
    let reply = h.send(discover()).await;
    assert_eq!(reply.status, 200, "a reset budget answers");
    let hits = sql::query("SELECT CAST(SUM(hits) AS BIGINT) FROM rate_limit_counters WHERE bucket = 'read'")
        .map_one(&h.state.db, |r| r.try_get::<i64, _>(0))
        .await
        .unwrap();
    assert_eq!(hits, 1, "counted again from the start");
    assert_eq!(h.send(discover()).await.status, 200);
    assert_eq!(h.send(discover()).await.status, 200);
    assert_eq!(h.send(discover()).await.status, 429, "and the limit holds again");
}
