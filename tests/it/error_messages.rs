//! Errors that say what to do: a refused token says why — the wrong kind for this door,
//! expired, revoked, or simply not valid (a forger learns nothing more than that) — in
//! the message and in the challenge's `error_description` (RFC 6750); a value out of
//! range or in the wrong format names the bounds or the format, on either door.

use crate::common::*;
use http::Method;
use kobana_finance_mcp::auth::jwt::{self, Audience};
use kobana_finance_mcp::auth::keys::Keys;
use serde_json::{json, Value};

/// The 401 of `token` at the MCP endpoint: its JSON-RPC message and `error_description`.
async fn refused_at_mcp(h: &Harness, token: &str) -> (String, String) {
    let reply = h.send(Mcp::modern("tools/list", json!({})).path("/mcp").bearer(token).build()).await;
    assert_eq!(reply.status, 401, "{}", text(&reply));
    (reply.json()["error"]["message"].as_str().unwrap().to_string(), description(&reply))
}

/// The 401 of `token` at `/v1`: the envelope's message and `error_description`.
async fn refused_at_v1(h: &Harness, token: &str) -> (String, String) {
    let reply = send(h, Method::GET, "/v1/payables", token, None).await;
    assert_eq!(reply.status, 401, "{}", text(&reply));
    assert_eq!(reply.json()["error"]["code"], "invalid_token");
    (reply.json()["error"]["message"].as_str().unwrap().to_string(), description(&reply))
}

/// The challenge's `error_description`, after its `error="invalid_token"`.
fn description(reply: &Reply) -> String {
    let challenge = reply.header("www-authenticate").expect("a challenge");
    let (_, after) = challenge.split_once("error=\"invalid_token\", error_description=\"").expect(challenge);
    after.strip_suffix('"').expect(challenge).to_string()
}

fn assert_says(said: &(String, String), words: &[&str], never: &[&str]) {
    let (message, description) = said;
    assert_eq!(message, description, "the message and the error_description say the same");
    for word in words {
        assert!(message.contains(word), "{word:?} missing from: {message}");
    }
    for word in never {
        assert!(!message.contains(word), "{word:?} must not be said: {message}");
    }
}

#[tokio::test]
async fn an_api_token_at_the_mcp_endpoint_is_told_it_is_the_wrong_kind() {
    let h = Harness::with_demo().await;
    let said = refused_at_mcp(&h, &h.api_token(DEMO_OWNER)).await;
    assert_says(&said, &["API token", "/v1", "MCP token", "--audience mcp"], &["expired"]);
}

#[tokio::test]
async fn an_mcp_token_at_v1_is_told_it_is_the_wrong_kind() {
    let h = Harness::with_demo().await;
    let said = refused_at_v1(&h, &h.token(DEMO_OWNER)).await;
    assert_says(&said, &["MCP token", "/v1 takes an API token", "--audience api"], &["expired"]);
}

#[tokio::test]
async fn an_expired_token_is_told_it_expired_at_both_doors() {
    let h = Harness::with_demo().await;
    let long_ago = |c: &mut jwt::Claims| c.exp = kobana_finance_mcp::clock::now_unix() as u64 - 3_600;
    let mcp = h.token_with(DEMO_OWNER, None, long_ago);
    assert_says(&refused_at_mcp(&h, &mcp).await, &["expired", "sign in again"], &["not valid"]);
    let api = h.token_with(DEMO_OWNER, None, |c| {
        long_ago(c);
        c.aud = Audience::One(format!("{PUBLIC_URL}/v1"));
    });
    assert_says(&refused_at_v1(&h, &api).await, &["expired", "--audience api"], &["not valid"]);
}

#[tokio::test]
async fn a_revoked_token_is_told_it_was_revoked() {
    let h = Harness::with_demo().await;
    let mcp = h.token_with(DEMO_OWNER, None, |c| c.jti = Some("told-revoked-mcp".into()));
    let api = h.token_with(DEMO_OWNER, None, |c| {
        c.jti = Some("told-revoked-api".into());
        c.aud = Audience::One(format!("{PUBLIC_URL}/v1"));
    });
    for jti in ["told-revoked-mcp", "told-revoked-api"] {
        assert!(kobana_finance_mcp::storage::identity::revoke(&h.state.db, jti).await.unwrap());
    }
    assert_says(&refused_at_mcp(&h, &mcp).await, &["revoked", "sign in again"], &[]);
    assert_says(&refused_at_v1(&h, &api).await, &["revoked", "--audience api"], &[]);
}

/// A token this server did not sign is only "not valid", whatever its claims say: not
/// expired, not the other door's, even when its claims would be both.
#[tokio::test]
async fn a_forged_or_malformed_token_is_told_only_that_it_is_not_valid() {
    let h = Harness::with_demo().await;
    let now = kobana_finance_mcp::clock::now_unix() as u64;
    let forge = |aud: String| {
        let claims = jwt::Claims {
            iss: PUBLIC_URL.into(),
            aud: Audience::One(aud),
            sub: DEMO_OWNER.into(),
            scope: String::new(),
            exp: now - 3_600,
            iat: Some(now - 7_200),
            nbf: None,
            jti: None,
            client_id: None,
            gid: None,
        };
        jwt::mint(&claims, &Keys::from_secret("not the server's secret", None)).unwrap()
    };
    let never = ["expired", "API token", "MCP token", "revoked"];
    for token in [forge(format!("{PUBLIC_URL}/v1")), "not-a-jwt".to_string()] {
        assert_says(&refused_at_mcp(&h, &token).await, &["not valid", "sign in again"], &never);
    }
    // At /v1 every refusal says which token it takes, the same words for any token.
    let never = ["expired", "MCP token", "revoked"];
    for token in [forge(PUBLIC_URL.to_string()), "not-a-jwt".to_string()] {
        assert_says(&refused_at_v1(&h, &token).await, &["not valid", "use an API token"], &never);
    }
    // A token of this server's for another resource is not the other door's either.
    let elsewhere = h.token_with(DEMO_OWNER, None, |c| c.aud = Audience::One("https://elsewhere.example".into()));
    assert_says(&refused_at_mcp(&h, &elsewhere).await, &["not valid"], &never);
}

/// The message of an `isError` tool result.
async fn tool_message(h: &Harness, tool: &str, arguments: Value) -> String {
    let reply = h.send(call(tool, arguments).bearer(&h.token(DEMO_OWNER)).build()).await;
    tool_error(&reply.result())["message"].as_str().unwrap().to_string()
}

/// The message of a refused `/v1` read.
async fn rest_message(h: &Harness, path: &str) -> String {
    let reply = send(h, Method::GET, path, &h.api_token(DEMO_OWNER), None).await;
    assert_eq!(reply.status, 400, "{path}: {}", text(&reply));
    reply.json()["error"]["message"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_limit_out_of_range_names_the_bounds_on_both_doors() {
    let h = Harness::with_demo().await;
    for limit in [0, 101, 100_000] {
        let message = tool_message(&h, "finance_payables_list", json!({"limit": limit})).await;
        assert!(message.contains("between 1 and 100"), "{limit}: {message}");
        let message = rest_message(&h, &format!("/v1/payables?limit={limit}")).await;
        assert!(message.contains("between 1 and 100"), "{limit}: {message}");
    }
}

#[tokio::test]
async fn a_bad_date_in_a_filter_names_the_format_on_both_doors() {
    let h = Harness::with_demo().await;
    let message =
        tool_message(&h, "finance_payables_list", json!({"filters": {"due_date": {"gte": "2026-13-01"}}})).await;
    assert!(message.contains("YYYY-MM-DD"), "{message}");
    for query in ["due_date=31/12/2026", "due_date[gte]=2026-13-01", "due_date[in]=2026-01-01,tomorrow"] {
        let message = rest_message(&h, &format!("/v1/payables?{query}")).await;
        assert!(message.contains("due_date") && message.contains("YYYY-MM-DD"), "{query}: {message}");
    }
}

/// Every kind of filter value says what it takes.
#[tokio::test]
async fn a_filter_value_of_the_wrong_form_names_the_form() {
    let h = Harness::with_demo().await;
    let cases = [
        ("/v1/payables?company_id=acme", "UUID"),
        ("/v1/payables?status=late", "pending"),
        ("/v1/payables?amount[gte]=mil", "1500.00"),
        ("/v1/payables?ir_relevant=yes", "true or false"),
        ("/v1/payables?updated_at[gte]=ontem", "RFC 3339"),
    ];
    for (path, words) in cases {
        let message = rest_message(&h, path).await;
        assert!(message.contains(words), "{path}: {message}");
    }
}

#[tokio::test]
async fn a_value_out_of_range_or_too_long_names_the_bound() {
    let h = Harness::with_demo().await;
    let message = tool_message(&h, "finance_payables_aggregates", json!({"month": 13, "year": 2026})).await;
    assert!(message.contains("between 1 and 12"), "{message}");
    let long = "x".repeat(5_000);
    let message = tool_message(&h, "finance_taxes_create", json!({"name": long})).await;
    assert!(message.contains("at most") && message.contains("characters"), "{message}");
}
