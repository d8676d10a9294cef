//! Clients known by their metadata document: the documented shapes of Claude's and
//! ChatGPT's documents are accepted and their callbacks answered; a document that names
//! another client, weighs too much, takes too long, redirects, is not HTTPS or lives at
//! an address a stranger's URL may not reach is refused on a page — the last without any
//! connection. Documents are served from 127.0.0.1 by the test, under the development
//! switch where the test needs the server to reach them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::routing::get;
use http::Method;
use serde_json::{json, Value};

use super::*;

/// A server of client documents on 127.0.0.1; its base URL.
async fn documents() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let at = |path: &str| format!("{base}{path}");
    let claude = json!({"client_id": at("/claude/mcp-oauth-client-metadata"), "client_name": "Claude",
        "client_uri": "https://claude.ai",
        "redirect_uris": ["https://claude.ai/api/mcp/auth_callback", "https://claude.com/api/mcp/auth_callback"],
        "grant_types": ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:jwt-bearer"],
        "response_types": ["code"], "token_endpoint_auth_method": "none"});
    let chatgpt = json!({"client_id": at("/chatgpt/client.json"), "client_name": "ChatGPT",
        "redirect_uris": ["https://chatgpt.com/connector_platform_oauth_redirect"],
        "token_endpoint_auth_method": "private_key_jwt", "token_endpoint_auth_methods_supported": ["none", "private_key_jwt"],
        "token_endpoint_auth_signing_alg": "RS256", "jwks_uri": "https://chatgpt.com/oauth/jwks.json"});
    let other = json!({"client_id": at("/someone-else.json"), "redirect_uris": [CALLBACK]});
    let large = json!({"client_id": at("/large.json"), "redirect_uris": [CALLBACK], "padding": "x".repeat(6000)});
    let slow = json!({"client_id": at("/slow.json"), "redirect_uris": [CALLBACK]});
    let secret = json!({"client_id": at("/secret.json"), "redirect_uris": [CALLBACK], "token_endpoint_auth_method": "client_secret_post"});
    let json_of = |value: Value| move || async move { ([("content-type", "application/json")], value.to_string()) };
    let app = axum::Router::new()
        .route("/claude/mcp-oauth-client-metadata", get(json_of(claude)))
        .route("/chatgpt/client.json", get(json_of(chatgpt)))
        .route("/other.json", get(json_of(other)))
        .route("/large.json", get(json_of(large)))
        .route("/secret.json", get(json_of(secret)))
        .route(
            "/slow.json",
            get(move || {
                let slow = slow.clone();
                async move {
                    tokio::time::sleep(Duration::from_secs(7)).await;
                    slow.to_string()
                }
            }),
        )
        .route(
            "/redirect.json",
            get(|| async { (http::StatusCode::FOUND, [("location", "/claude/mcp-oauth-client-metadata")], "") }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

/// A listener that only counts the connections made to it.
async fn counting() -> (u16, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = connections.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            drop(socket);
        }
    });
    (port, connections)
}

async fn dev_switch() -> Harness {
    development_with(|c| c.oauth.dev_client_metadata = true).await
}

#[tokio::test]
async fn claudes_and_chatgpts_documents_are_accepted_and_their_callbacks_answered() {
    let h = dev_switch().await;
    let base = documents().await;
    for (client_id, callback, name) in [
        (format!("{base}/claude/mcp-oauth-client-metadata"), "https://claude.ai/api/mcp/auth_callback", "Claude"),
        (format!("{base}/claude/mcp-oauth-client-metadata"), "https://claude.com/api/mcp/auth_callback", "Claude"),
        (format!("{base}/chatgpt/client.json"), "https://chatgpt.com/connector_platform_oauth_redirect", "ChatGPT"),
    ] {
        let (verifier, challenge) = pkce();
        let query = authorize_query(&client_id, callback, &challenge, &[]);
        let (consent, cookie) = sign_in(&h, &query, DEMO_OWNER).await;
        assert!(consent.contains(name) && consent.contains("127.0.0.1"), "{consent}");
        let reply = h
            .send(
                form(
                    "/authorize",
                    &[
                        ("request", &field(&consent, "request")),
                        ("csrf", &field(&consent, "csrf")),
                        ("decision", "approve"),
                    ],
                )
                .header("cookie", &cookie)
                .build(),
            )
            .await;
        let to = location(&reply);
        assert!(to.starts_with(callback), "{to}");
        let code = value_of(&query_of(&to), "code").unwrap();
        let tokens = token(
            &h,
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", callback),
                ("code_verifier", &verifier),
                ("client_id", &client_id),
                ("resource", RESOURCE),
            ],
        )
        .await;
        assert_eq!(tokens.status, 200, "{}", text(&tokens));
        let access = tokens.json()["access_token"].as_str().unwrap().to_string();
        assert_eq!(tools_list_status(&h, &access).await, 200);
    }
    // A callback the document does not list is refused on a page.
    let (_, challenge) = pkce();
    let query = authorize_query(&format!("{base}/chatgpt/client.json"), "https://chatgpt.com/other", &challenge, &[]);
    assert_eq!(h.send(to(Method::GET, &format!("/authorize?{query}")).build()).await.status, 400);
}

#[tokio::test]
async fn a_document_that_is_not_its_clients_or_not_a_document_is_refused() {
    let h = dev_switch().await;
    let base = documents().await;
    let (_, challenge) = pkce();
    for (path, why) in [
        ("/other.json", "names another client_id"),
        ("/large.json", "larger than"),
        ("/slow.json", "took longer"),
        ("/redirect.json", "answered 302"),
        ("/secret.json", "shared-secret"),
        ("/missing.json", "answered 404"),
    ] {
        let started = std::time::Instant::now();
        let query = authorize_query(&format!("{base}{path}"), CALLBACK, &challenge, &[]);
        let reply = h.send(to(Method::GET, &format!("/authorize?{query}")).build()).await;
        assert_eq!(reply.status, 400, "{path}: {}", text(&reply));
        assert!(text(&reply).contains(why), "{path}: {why} in {}", text(&reply));
        assert!(started.elapsed() < Duration::from_secs(6), "{path}: bounded in time");
    }
    let kept = count(&h, "SELECT COUNT(*) FROM oauth_clients WHERE kind = $1", "metadata_document").await;
    assert_eq!(kept, 0, "nothing refused is kept");
}

#[tokio::test]
async fn a_document_at_an_address_a_stranger_may_not_reach_is_refused_without_a_connection() {
    // Without the development switch, as a deployment runs.
    let h = development().await;
    let (port, connections) = counting().await;
    let (_, challenge) = pkce();
    for client_id in [
        format!("https://127.0.0.1:{port}/client.json"),
        format!("http://127.0.0.1:{port}/client.json"),
        format!("https://localhost:{port}/client.json"),
        format!("https://[::1]:{port}/client.json"),
        "https://10.0.0.1/client.json".to_string(),
        "https://169.254.169.254/latest/meta-data".to_string(),
        "https://192.168.0.10/client.json".to_string(),
        "http://example.com/client.json".to_string(),
        "https://example.com".to_string(),
    ] {
        let query = authorize_query(&client_id, CALLBACK, &challenge, &[]);
        let reply = h.send(to(Method::GET, &format!("/authorize?{query}")).build()).await;
        assert_eq!(reply.status, 400, "{client_id}: {}", text(&reply));
        assert!(reply.header("location").is_none());
    }
    assert_eq!(connections.load(Ordering::SeqCst), 0, "no connection was made");
}
