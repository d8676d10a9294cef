//! Every refusal of the authorization server is an OAuth error with nothing issued: a
//! page when the client or its redirect URI cannot be trusted, a redirect with `error`,
//! `state` and `iss` after, a 400 JSON error at the token endpoint.

use http::{Method, StatusCode};
use serde_json::json;

use super::*;

/// Codes, grants and tokens issued so far.
async fn issued(h: &Harness) -> (i64, i64) {
    let codes = count(h, "SELECT COUNT(*) FROM oauth_codes WHERE code_hash <> $1", "").await;
    let grants = count(h, "SELECT COUNT(*) FROM oauth_grants WHERE id <> $1", "").await;
    (codes, grants)
}

/// An error page: 400, HTML, no redirect.
fn is_page(reply: &Reply) {
    assert_eq!(reply.status, 400, "{}", text(reply));
    assert!(reply.header("location").is_none());
    assert!(reply.header("content-type").unwrap().starts_with("text/html"));
}

#[tokio::test]
async fn a_request_that_cannot_be_trusted_is_refused_on_a_page_never_redirected() {
    let h = development().await;
    let client = register(&h, &[CALLBACK]).await;
    let (_, challenge) = pkce();
    let cases = [
        ("an unknown client", authorize_query("kfin-unknown", CALLBACK, &challenge, &[])),
        ("an unregistered redirect URI", authorize_query(&client, "https://evil.example.com/cb", &challenge, &[])),
        (
            "a redirect URI one character off",
            authorize_query(&client, "http://127.0.0.1:7777/callbacK", &challenge, &[]),
        ),
        (
            "a redirect URI with another path on loopback",
            authorize_query(&client, "http://127.0.0.1:7777/callback2", &challenge, &[]),
        ),
        ("no client", "response_type=code&redirect_uri=http://127.0.0.1:7777/callback".to_string()),
    ];
    for (what, query) in cases {
        let reply = h.send(to(Method::GET, &format!("/authorize?{query}")).build()).await;
        is_page(&reply);
        assert!(!text(&reply).contains("desenvolvimento"), "{what}: no sign-in offered");
    }
    // The loopback exception: another port of the registered loopback URI is this client's.
    let other_port = authorize_query(&client, "http://127.0.0.1:9999/callback", &challenge, &[]);
    assert_eq!(h.send(to(Method::GET, &format!("/authorize?{other_port}")).build()).await.status, 200);
    assert_eq!(issued(&h).await, (0, 0));
}

#[tokio::test]
async fn a_bad_request_of_a_trusted_client_goes_back_with_its_error_state_and_issuer() {
    let h = development().await;
    let client = register(&h, &[CALLBACK]).await;
    let (_, challenge) = pkce();
    let without = |name: &str| {
        authorize_query(&client, CALLBACK, &challenge, &[])
            .split('&')
            .filter(|pair| !pair.starts_with(&format!("{name}=")))
            .collect::<Vec<_>>()
            .join("&")
    };
    let cases = [
        ("no PKCE", without("code_challenge"), "invalid_request"),
        ("plain PKCE", without("code_challenge_method") + "&code_challenge_method=plain", "invalid_request"),
        ("no resource", without("resource"), "invalid_request"),
        (
            "a foreign resource",
            without("resource") + "&resource=https%3A%2F%2Fother.example.com%2Fmcp",
            "invalid_target",
        ),
        (
            "a scope not offered",
            authorize_query(&client, CALLBACK, &challenge, &[("scope", "finance.payables admin.all")]),
            "invalid_scope",
        ),
        ("another response type", without("response_type") + "&response_type=token", "unsupported_response_type"),
    ];
    for (what, query, error) in cases {
        let reply = h.send(to(Method::GET, &format!("/authorize?{query}")).build()).await;
        assert_eq!(reply.status, StatusCode::FOUND, "{what}: {}", text(&reply));
        let to = location(&reply);
        assert!(to.starts_with(CALLBACK), "{what}: {to}");
        let back = query_of(&to);
        assert_eq!(value_of(&back, "error").as_deref(), Some(error), "{what}");
        assert_eq!(value_of(&back, "state").as_deref(), Some("xyz-state"), "{what}");
        assert_eq!(value_of(&back, "iss").as_deref(), Some(PUBLIC_URL), "{what}");
        assert!(value_of(&back, "code").is_none());
    }
    assert_eq!(issued(&h).await, (0, 0));
}

#[tokio::test]
async fn a_denied_consent_or_a_forged_answer_issues_nothing() {
    let h = development().await;
    let client = register(&h, &[CALLBACK]).await;
    let (_, challenge) = pkce();
    let query = authorize_query(&client, CALLBACK, &challenge, &[]);
    let (consent, cookie) = sign_in(&h, &query, DEMO_OWNER).await;
    let back = answer(&h, &consent, &cookie, "deny").await;
    assert_eq!(value_of(&back, "error").as_deref(), Some("access_denied"));
    assert_eq!(value_of(&back, "iss").as_deref(), Some(PUBLIC_URL));
    assert!(value_of(&back, "code").is_none());

    let request = field(&consent, "request");
    let csrf = field(&consent, "csrf");
    let (_, other_cookie) = sign_in(&h, &query, DEMO_FINANCE).await;
    let attempts = [
        ("no CSRF token", vec![("request", request.as_str()), ("decision", "approve")], Some(cookie.as_str())),
        (
            "a wrong CSRF token",
            vec![("request", &request), ("csrf", "AAAA"), ("decision", "approve")],
            Some(cookie.as_str()),
        ),
        (
            "another session's",
            vec![("request", &request), ("csrf", &csrf), ("decision", "approve")],
            Some(other_cookie.as_str()),
        ),
        ("no session", vec![("request", &request), ("csrf", &csrf), ("decision", "approve")], None),
        (
            "a forged request",
            vec![("request", "e30.AAAA"), ("csrf", &csrf), ("decision", "approve")],
            Some(cookie.as_str()),
        ),
    ];
    for (what, pairs, cookie) in attempts {
        let mut post = form("/authorize", &pairs);
        if let Some(cookie) = cookie {
            post = post.header("cookie", cookie);
        }
        let reply = h.send(post.build()).await;
        assert!(reply.status == 403 || reply.status == 400, "{what}: {} {}", reply.status, text(&reply));
        assert!(reply.header("location").is_none(), "{what}");
    }
    // A forged sign-in form is refused too.
    let login =
        h.send(form("/oauth/login", &[("request", &request), ("csrf", "AAAA"), ("user_id", DEMO_OWNER)]).build()).await;
    assert_eq!(login.status, 400, "{}", text(&login));
    assert!(login.header("set-cookie").is_none());
    assert_eq!(issued(&h).await, (0, 0));
}

#[tokio::test]
async fn a_code_is_exchanged_once_by_its_client_with_its_verifier_in_time() {
    let h = development().await;
    let (client, verifier, code) = code_for(&h, DEMO_OWNER, &[]).await;
    let other = register(&h, &[CALLBACK]).await;
    let exchange_with = |client: &str, verifier: &str, code: &str, redirect: &str| {
        let pairs = [
            ("grant_type".to_string(), "authorization_code".to_string()),
            ("code".into(), code.to_string()),
            ("redirect_uri".into(), redirect.to_string()),
            ("code_verifier".into(), verifier.to_string()),
            ("client_id".into(), client.to_string()),
        ];
        let h = &h;
        async move {
            let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            token(h, &pairs).await
        }
    };
    let (wrong_verifier, _) = pkce();
    for (what, reply) in [
        ("a wrong verifier", exchange_with(&client, &wrong_verifier, &code, CALLBACK).await),
        ("another client", exchange_with(&other, &verifier, &code, CALLBACK).await),
        ("another redirect URI", exchange_with(&client, &verifier, &code, "http://127.0.0.1:7777/other").await),
    ] {
        assert_eq!((reply.status.as_u16(), reply.json()["error"].clone()), (400, json!("invalid_grant")), "{what}");
    }
    // Each of those spent the code: a code is tried once.
    let late = exchange_with(&client, &verifier, &code, CALLBACK).await;
    assert_eq!(late.json()["error"], "invalid_grant");
    let (client, verifier, code) = code_for(&h, DEMO_OWNER, &[]).await;
    let first = exchange(&h, &client, &verifier, &code).await;
    let access = first["access_token"].as_str().unwrap();
    assert_eq!(tools_list_status(&h, access).await, 200);
    let replay = exchange_with(&client, &verifier, &code, CALLBACK).await;
    assert_eq!(replay.json()["error"], "invalid_grant");
    assert_eq!(tools_list_status(&h, access).await, 401, "the first use's tokens are revoked");
    let refresh = token(
        &h,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", first["refresh_token"].as_str().unwrap()),
            ("client_id", &client),
        ],
    )
    .await;
    assert_eq!(refresh.json()["error"], "invalid_grant");

    // An expired code.
    let (client, verifier, code) = code_for(&h, DEMO_OWNER, &[]).await;
    exec(&h, "UPDATE oauth_codes SET expires_at = 1 WHERE client_id = $1", &[&client]).await;
    let late = exchange_with(&client, &verifier, &code, CALLBACK).await;
    assert_eq!(late.json()["error"], "invalid_grant");
    // A code for another resource than the token request's.
    let (client, verifier, code) = code_for(&h, DEMO_OWNER, &[]).await;
    let foreign = token(
        &h,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("code_verifier", &verifier),
            ("client_id", &client),
            ("resource", "http://127.0.0.1:8080/v1"),
        ],
    )
    .await;
    assert_eq!(foreign.json()["error"], "invalid_target");
    // A client that authenticates (this server's are public), a grant type not served.
    let basic = h
        .send(
            form("/token", &[("grant_type", "authorization_code"), ("code", "x"), ("client_id", &client)])
                .header("authorization", "Basic a2Zpbjpz")
                .build(),
        )
        .await;
    assert_eq!((basic.status.as_u16(), basic.json()["error"].clone()), (401, json!("invalid_client")));
    let password = token(&h, &[("grant_type", "password"), ("client_id", &client)]).await;
    assert_eq!(password.json()["error"], "unsupported_grant_type");
}

#[tokio::test]
async fn a_refresh_token_reused_after_the_grace_window_revokes_the_grant() {
    let h = development().await;
    let (client, verifier, code) = code_for(&h, DEMO_OWNER, &[("scope", "finance.payables")]).await;
    let tokens = exchange(&h, &client, &verifier, &code).await;
    let old = tokens["refresh_token"].as_str().unwrap().to_string();
    let refresh = |refresh_token: String, scope: Option<&'static str>| {
        let client = client.clone();
        let h = &h;
        async move {
            let mut pairs = vec![
                ("grant_type", "refresh_token"),
                ("refresh_token", refresh_token.as_str()),
                ("client_id", client.as_str()),
            ];
            if let Some(scope) = scope {
                pairs.push(("scope", scope));
            }
            token(h, &pairs).await
        }
    };
    let wider = refresh(old.clone(), Some("finance.payables finance.payables.write")).await;
    assert_eq!(wider.json()["error"], "invalid_scope");
    let rotated = refresh(old.clone(), None).await.json();
    let access = rotated["access_token"].as_str().unwrap().to_string();
    assert_eq!(tools_list_status(&h, &access).await, 200);
    // Past the grace window the old token is a stolen or confused copy.
    exec(&h, "UPDATE oauth_refresh_tokens SET replaced_at = 1 WHERE replaced_at IS NOT NULL AND grant_id <> $1", &[""])
        .await;
    let reused = refresh(old, None).await;
    assert_eq!(reused.json()["error"], "invalid_grant");
    assert_eq!(tools_list_status(&h, &access).await, 401, "the grant's access tokens end too");
    let successor = refresh(rotated["refresh_token"].as_str().unwrap().to_string(), None).await;
    assert_eq!(successor.json()["error"], "invalid_grant", "and its current refresh token");
}

#[tokio::test]
async fn a_registration_is_refused_with_the_rfc_7591_code_naming_what_is_wrong() {
    let h = development().await;
    let cases = [
        (json!({}), "invalid_redirect_uri"),
        (json!({"redirect_uris": []}), "invalid_redirect_uri"),
        (json!({"redirect_uris": ["http://example.com/cb"]}), "invalid_redirect_uri"),
        (json!({"redirect_uris": ["javascript:alert(1)"]}), "invalid_redirect_uri"),
        (json!({"redirect_uris": ["https://example.com/cb#frag"]}), "invalid_redirect_uri"),
        (
            json!({"redirect_uris": ["https://example.com/cb"], "grant_types": ["client_credentials"]}),
            "invalid_client_metadata",
        ),
        (json!({"redirect_uris": ["https://example.com/cb"], "response_types": ["token"]}), "invalid_client_metadata"),
        (json!({"redirect_uris": ["https://example.com/cb"], "client_name": "A\nB"}), "invalid_client_metadata"),
        (json!(["not an object"]), "invalid_client_metadata"),
    ];
    for (body, error) in cases {
        let reply = h
            .send(
                to(Method::POST, "/register").header("content-type", "application/json").body(body.to_string()).build(),
            )
            .await;
        assert_eq!((reply.status.as_u16(), reply.json()["error"].clone()), (400, json!(error)), "{body}");
    }
    // Cursor's registration (an app scheme, a web callback, a loopback one) and a
    // secret-based method replaced by none: no null member, its URIs echoed.
    let cursor = json!({"redirect_uris": ["cursor://anysphere.cursor-mcp/oauth/callback",
        "https://www.cursor.com/agents/mcp/oauth/callback", "http://localhost:8787/callback"],
        "client_name": "Cursor", "token_endpoint_auth_method": "client_secret_basic"});
    let reply = h
        .send(to(Method::POST, "/register").header("content-type", "application/json").body(cursor.to_string()).build())
        .await;
    assert_eq!(reply.status, 201, "{}", text(&reply));
    let registered = reply.json();
    assert_eq!(registered["token_endpoint_auth_method"], "none");
    assert_eq!(registered["redirect_uris"], cursor["redirect_uris"]);
    assert!(registered.as_object().unwrap().values().all(|v| !v.is_null()));
    assert!(!registered["client_id"].as_str().unwrap().starts_with("https://"));
}

#[tokio::test]
async fn the_development_login_is_refused_without_the_development_secret() {
    // The test harness's own, configured secret: a deployment's, not the development one.
    let h = Harness::with_demo().await;
    let client = register(&h, &[CALLBACK]).await;
    let (_, challenge) = pkce();
    let reply = h
        .send(to(Method::GET, &format!("/authorize?{}", authorize_query(&client, CALLBACK, &challenge, &[]))).build())
        .await;
    assert_eq!(reply.status, StatusCode::FOUND, "{}", text(&reply));
    let back = query_of(&location(&reply));
    assert_eq!(value_of(&back, "error").as_deref(), Some("temporarily_unavailable"));
    let login = h.send(form("/oauth/login", &[("request", "x"), ("csrf", "y"), ("user_id", DEMO_OWNER)]).build()).await;
    assert_eq!(login.status, 400);
    assert!(login.header("set-cookie").is_none());
}

#[tokio::test]
async fn the_development_login_stays_on_this_machine_unless_its_wider_reach_is_meant() {
    // `make run` behind a tunnel: anyone who reaches the URL would sign in as anyone.
    let tunnel = "https://demo-kobana.trycloudflare.com";
    let query = |client: &str, challenge: &str| {
        authorize_query(client, CALLBACK, challenge, &[]).replace(
            &url::form_urlencoded::byte_serialize(RESOURCE.as_bytes()).collect::<String>(),
            &url::form_urlencoded::byte_serialize(format!("{tunnel}/mcp").as_bytes()).collect::<String>(),
        )
    };
    let behind_tunnel = |public: bool| {
        move |c: &mut kobana_finance_mcp::config::Config| {
            c.public_url = tunnel.into();
            c.api_base_url = tunnel.into();
            c.auth_server = tunnel.into();
            c.oauth.dev_login_public = public;
        }
    };
    let h = development_with(behind_tunnel(false)).await;
    let client = register(&h, &[CALLBACK]).await;
    let (_, challenge) = pkce();
    let reply = h.send(to(Method::GET, &format!("/authorize?{}", query(&client, &challenge))).build()).await;
    assert_eq!(reply.status, StatusCode::FOUND, "{}", text(&reply));
    assert_eq!(value_of(&query_of(&location(&reply)), "error").as_deref(), Some("temporarily_unavailable"));
    let login = h.send(form("/oauth/login", &[("request", "x"), ("csrf", "y"), ("user_id", DEMO_OWNER)]).build()).await;
    assert_eq!(login.status, 400);
    assert!(login.header("set-cookie").is_none());

    let h = development_with(behind_tunnel(true)).await;
    let client = register(&h, &[CALLBACK]).await;
    let reply = h.send(to(Method::GET, &format!("/authorize?{}", query(&client, &challenge))).build()).await;
    assert_eq!(reply.status, 200, "{}", text(&reply));
    assert!(text(&reply).contains(DEMO_OWNER), "the development login lists the demo people");
}
