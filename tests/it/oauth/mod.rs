//! The authorization server (SPEC §6), driven as a browser and a client drive it: the
//! metadata, registration, the development login, the consent page, codes, tokens,
//! refresh and revocation — and every refusal, each with nothing issued. The server runs
//! on its generated development secret (the only way the development login signs anyone
//! in); client metadata documents are served from 127.0.0.1 by the test under the
//! development switch. Real clients and a real browser drive the same flow in
//! `tests/clients/oauth_clients.py`.

mod documents;
mod refusals;

use http::{HeaderMap, Method, StatusCode};
use serde_json::{json, Value};

use kobana_finance_mcp::config::KeySourceConfig;

use crate::common::*;

/// The demo on its generated development secret, as `make run` serves it.
pub(crate) async fn development() -> Harness {
    development_with(|_| {}).await
}

pub(crate) async fn development_with(adjust: impl FnOnce(&mut kobana_finance_mcp::config::Config)) -> Harness {
    let dir = TempDir::new();
    let path = dir.0.join("dev-secret");
    std::mem::forget(dir);
    Harness::with_demo_and(move |c| {
        c.keys = KeySourceConfig::DevFile { path };
        adjust(c);
    })
    .await
}

/// A request to the authorization server.
pub(crate) fn to(method: Method, path: &str) -> Mcp {
    Mcp::raw(Vec::new()).method(method).path(path)
}

/// A form post.
pub(crate) fn form(path: &str, pairs: &[(&str, &str)]) -> Mcp {
    let mut body = url::form_urlencoded::Serializer::new(String::new());
    for (name, value) in pairs {
        body.append_pair(name, value);
    }
    to(Method::POST, path).header("content-type", "application/x-www-form-urlencoded").body(body.finish())
}

/// A PKCE verifier and its S256 challenge.
pub(crate) fn pkce() -> (String, String) {
    let verifier = format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
    let challenge = kobana_finance_mcp::oauth::s256(&verifier);
    (verifier, challenge)
}

/// The MCP resource tokens are asked for.
pub(crate) const RESOURCE: &str = "http://127.0.0.1:8080/mcp";
pub(crate) const CALLBACK: &str = "http://127.0.0.1:7777/callback";

/// Registers a public client at `/register` with `redirect_uris`; its id.
pub(crate) async fn register(h: &Harness, redirect_uris: &[&str]) -> String {
    let body =
        json!({"redirect_uris": redirect_uris, "client_name": "Agente de teste", "token_endpoint_auth_method": "none"});
    let reply = h
        .send(to(Method::POST, "/register").header("content-type", "application/json").body(body.to_string()).build())
        .await;
    assert_eq!(reply.status, 201, "{}", text(&reply));
    reply.json()["client_id"].as_str().unwrap().to_string()
}

/// The authorization request's query.
pub(crate) fn authorize_query(client_id: &str, redirect_uri: &str, challenge: &str, extra: &[(&str, &str)]) -> String {
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    query.append_pair("response_type", "code");
    query.append_pair("client_id", client_id);
    query.append_pair("redirect_uri", redirect_uri);
    query.append_pair("state", "xyz-state");
    query.append_pair("code_challenge", challenge);
    query.append_pair("code_challenge_method", "S256");
    query.append_pair("resource", RESOURCE);
    for (name, value) in extra {
        query.append_pair(name, value);
    }
    query.finish()
}

/// The value of the hidden field `name` of a page.
pub(crate) fn field(html: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html.find(&marker).unwrap_or_else(|| panic!("no field {name} in {html}")) + marker.len();
    html[start..start + html[start..].find('"').unwrap()].to_string()
}

pub(crate) fn location(reply: &Reply) -> String {
    reply.header("location").unwrap_or_else(|| panic!("no Location: {} {}", reply.status, text(reply))).to_string()
}

/// The query pairs of a URL.
pub(crate) fn query_of(url: &str) -> Vec<(String, String)> {
    let query = url.split_once('?').map(|(_, q)| q).unwrap_or_default();
    url::form_urlencoded::parse(query.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
}

pub(crate) fn value_of(pairs: &[(String, String)], name: &str) -> Option<String> {
    pairs.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
}

/// The session cookie a reply sets (`name=value`).
pub(crate) fn cookie_of(headers: &HeaderMap) -> String {
    headers
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .expect("a session cookie")
        .to_string()
}

/// A browser signed in as `user` through the development login, starting from the
/// authorization request `query`: the consent page's HTML and the session cookie.
pub(crate) async fn sign_in(h: &Harness, query: &str, user: &str) -> (String, String) {
    let login = h.send(to(Method::GET, &format!("/authorize?{query}")).build()).await;
    assert_eq!(login.status, 200, "the development login: {}", text(&login));
    let page = text(&login);
    assert!(page.contains("desenvolvimento") && page.contains(user), "{page}");
    let signed = h
        .send(
            form(
                "/oauth/login",
                &[("request", &field(&page, "request")), ("csrf", &field(&page, "csrf")), ("user_id", user)],
            )
            .build(),
        )
        .await;
    assert_eq!(signed.status, StatusCode::FOUND, "{}", text(&signed));
    let cookie = cookie_of(&signed.headers);
    let consent = h.send(to(Method::GET, &location(&signed)).header("cookie", &cookie).build()).await;
    assert_eq!(consent.status, 200, "{}", text(&consent));
    (text(&consent), cookie)
}

/// The person's answer on the consent page: the redirect's query.
pub(crate) async fn answer(h: &Harness, consent: &str, cookie: &str, decision: &str) -> Vec<(String, String)> {
    let reply = h
        .send(
            form(
                "/authorize",
                &[("request", &field(consent, "request")), ("csrf", &field(consent, "csrf")), ("decision", decision)],
            )
            .header("cookie", cookie)
            .build(),
        )
        .await;
    assert_eq!(reply.status, StatusCode::FOUND, "{}", text(&reply));
    let to = location(&reply);
    assert!(to.starts_with(CALLBACK) || !to.starts_with("/"), "{to}");
    query_of(&to)
}

/// A code for `user` by a freshly registered client: (client, verifier, code).
pub(crate) async fn code_for(h: &Harness, user: &str, extra: &[(&str, &str)]) -> (String, String, String) {
    let client = register(h, &[CALLBACK]).await;
    let (verifier, challenge) = pkce();
    let (consent, cookie) = sign_in(h, &authorize_query(&client, CALLBACK, &challenge, extra), user).await;
    let back = answer(h, &consent, &cookie, "approve").await;
    (client, verifier, value_of(&back, "code").expect("a code"))
}

/// `POST /token` with `pairs`.
pub(crate) async fn token(h: &Harness, pairs: &[(&str, &str)]) -> Reply {
    h.send(form("/token", pairs).build()).await
}

/// The code exchanged: the token answer.
pub(crate) async fn exchange(h: &Harness, client: &str, verifier: &str, code: &str) -> Value {
    let reply = token(
        h,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", CALLBACK),
            ("code_verifier", verifier),
            ("client_id", client),
            ("resource", RESOURCE),
        ],
    )
    .await;
    assert_eq!(reply.status, 200, "{}", text(&reply));
    assert_eq!(reply.header("cache-control"), Some("no-store"));
    reply.json()
}

/// `tools/list` with `access_token`: its status.
pub(crate) async fn tools_list_status(h: &Harness, access_token: &str) -> u16 {
    h.send(Mcp::modern("tools/list", json!({})).path("/mcp").bearer(access_token).build()).await.status.as_u16()
}

#[tokio::test]
async fn the_metadata_says_what_mcp_clients_need() {
    let h = development().await;
    for path in ["/.well-known/oauth-authorization-server", "/.well-known/oauth-authorization-server/mcp"] {
        let reply = h.send(to(Method::GET, path).build()).await;
        assert_eq!(reply.status, 200, "{path}");
        assert!(reply.header("content-type").unwrap().starts_with("application/json"));
        let document = reply.json();
        assert_eq!(document["issuer"], PUBLIC_URL);
        assert_eq!(document["code_challenge_methods_supported"], json!(["S256"]));
        assert_eq!(document["response_types_supported"], json!(["code"]));
        assert_eq!(document["token_endpoint_auth_methods_supported"], json!(["none"]));
        assert_eq!(document["client_id_metadata_document_supported"], true);
        assert_eq!(document["authorization_response_iss_parameter_supported"], true);
        for endpoint in ["authorization_endpoint", "token_endpoint", "registration_endpoint", "revocation_endpoint"] {
            assert!(document[endpoint].as_str().unwrap().starts_with(PUBLIC_URL), "{endpoint}");
        }
    }
    assert_eq!(h.send(to(Method::GET, "/.well-known/openid-configuration").build()).await.status, 404);
    // The protected resource names this server as its authorization server, and the 401
    // the scopes to ask for.
    let resource = h.send(to(Method::GET, "/.well-known/oauth-protected-resource/mcp").build()).await.json();
    assert_eq!(resource["authorization_servers"], json!([PUBLIC_URL]));
    let challenge = h.send(Mcp::modern("tools/list", json!({})).path("/mcp").build()).await;
    assert!(challenge.header("www-authenticate").unwrap().contains("scope=\"finance.companies "));
}

/// A client running in a web page (the Inspector's, a web app) reads the metadata,
/// registers and exchanges its code: those answers open to any origin, without
/// credentials; the pages a person signs in on and the MCP endpoint stay closed.
#[tokio::test]
async fn a_client_in_a_web_page_reaches_the_endpoints_but_not_the_sign_in_pages() {
    let h = development().await;
    let page = "http://localhost:6274";
    for path in [
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
        "/register",
        "/token",
        "/revoke",
    ] {
        let preflight = h
            .send(
                to(Method::OPTIONS, path)
                    .header("origin", page)
                    .header("access-control-request-method", "POST")
                    .header("access-control-request-headers", "content-type")
                    .build(),
            )
            .await;
        assert_eq!(preflight.status, 204, "{path}");
        assert_eq!(preflight.header("access-control-allow-origin"), Some("*"), "{path}");
        assert!(preflight.header("access-control-allow-methods").unwrap().contains("POST"), "{path}");
        assert!(preflight.header("access-control-allow-headers").unwrap().contains("Content-Type"), "{path}");
        assert!(preflight.header("access-control-allow-credentials").is_none(), "{path}: never with credentials");
    }
    let metadata =
        h.send(to(Method::GET, "/.well-known/oauth-authorization-server").header("origin", page).build()).await;
    assert_eq!((metadata.status.as_u16(), metadata.header("access-control-allow-origin")), (200, Some("*")));
    let client = register(&h, &["http://localhost:6274/oauth/callback"]).await;
    let refused = token(&h, &[("grant_type", "authorization_code"), ("code", "nope"), ("client_id", &client)]).await;
    assert_eq!((refused.status.as_u16(), refused.header("access-control-allow-origin")), (400, Some("*")));
    // The sign-in pages and the MCP endpoint answer no web page.
    let (_, challenge) = pkce();
    let authorize = h
        .send(
            to(
                Method::GET,
                &format!(
                    "/authorize?{}",
                    authorize_query(&client, "http://localhost:6274/oauth/callback", &challenge, &[])
                ),
            )
            .header("origin", page)
            .build(),
        )
        .await;
    assert_eq!(authorize.status, 200);
    assert!(authorize.header("access-control-allow-origin").is_none());
    let preflight = h
        .send(
            to(Method::OPTIONS, "/authorize")
                .header("origin", page)
                .header("access-control-request-method", "POST")
                .build(),
        )
        .await;
    assert!(preflight.header("access-control-allow-origin").is_none(), "{}", preflight.status);
    let mcp = h.send(Mcp::modern("tools/list", json!({})).path("/mcp").header("origin", page).build()).await;
    assert!(mcp.header("access-control-allow-origin").is_none());
}

#[tokio::test]
async fn a_person_signs_in_consents_and_the_client_calls_tools_then_refreshes() {
    let h = development().await;
    let (client, verifier, code) = code_for(&h, DEMO_OWNER, &[]).await;
    let tokens = exchange(&h, &client, &verifier, &code).await;
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["expires_in"], 3600);
    let access = tokens["access_token"].as_str().unwrap().to_string();
    assert_eq!(tools_list_status(&h, &access).await, 200);
    // A write made with the token records its client in the audit trail.
    let arguments =
        json!({"name": "Fornecedor OAuth", "company_id": ACME_COMPANY, "workspace_id": DEMO_WORKSPACE_ACME});
    let made = h.send(call("finance_people_create", arguments).path("/mcp").bearer(&access).build()).await.result();
    assert_eq!(made.get("isError"), None, "{made}");
    let audited =
        count(&h, "SELECT COUNT(*) FROM audit_events WHERE action = 'people.create' AND client_id = $1", &client).await;
    assert_eq!(audited, 1);

    // A refresh: new tokens; the refresh token just replaced, sent again at once (a
    // retry), answers the same successor; the successor refreshes in turn.
    let refresh = tokens["refresh_token"].as_str().unwrap().to_string();
    let refreshing = |refresh: String| {
        let client = client.clone();
        let h = &h;
        async move {
            token(
                h,
                &[
                    ("grant_type", "refresh_token"),
                    ("refresh_token", &refresh),
                    ("client_id", &client),
                    ("resource", RESOURCE),
                ],
            )
            .await
        }
    };
    let first = refreshing(refresh.clone()).await;
    assert_eq!(first.status, 200, "{}", text(&first));
    let first = first.json();
    assert_ne!(first["refresh_token"], json!(refresh));
    let again = refreshing(refresh.clone()).await;
    assert_eq!(again.status, 200, "{}", text(&again));
    assert_eq!(again.json()["refresh_token"], first["refresh_token"], "one successor for both answers");
    let second = refreshing(first["refresh_token"].as_str().unwrap().to_string()).await;
    assert_eq!(second.status, 200, "{}", text(&second));
    let refreshed = second.json()["access_token"].as_str().unwrap().to_string();
    assert_eq!(tools_list_status(&h, &refreshed).await, 200);
}

#[tokio::test]
async fn a_viewer_who_consents_to_write_scopes_still_cannot_write() {
    let h = development().await;
    let (client, verifier, code) = code_for(&h, DEMO_VIEWER, &[]).await;
    let access = exchange(&h, &client, &verifier, &code).await["access_token"].as_str().unwrap().to_string();
    let arguments = json!({"name": "Fornecedor", "company_id": ACME_COMPANY, "workspace_id": DEMO_WORKSPACE_ACME});
    let refused = h.send(call("finance_people_create", arguments).path("/mcp").bearer(&access).build()).await.result();
    assert_eq!(refused["isError"], true, "{refused}");
    assert_eq!(tool_error(&refused)["code"], "forbidden", "the role refuses, not the scope: {refused}");
    let listed = h.send(Mcp::modern("tools/list", json!({})).path("/mcp").bearer(&access).build()).await.result();
    assert!(!listed["tools"].as_array().unwrap().iter().any(|t| t["name"] == "finance_people_create"));
}

#[tokio::test]
async fn the_consent_page_names_the_client_its_host_the_scopes_and_what_the_role_refuses() {
    let h = development().await;
    let client = register(&h, &[CALLBACK]).await;
    let (_, challenge) = pkce();
    let query = authorize_query(&client, CALLBACK, &challenge, &[("scope", "finance.payables finance.payables.write")]);
    let (consent, _) = sign_in(&h, &query, DEMO_FINANCE).await;
    for part in [
        "Agente de teste",
        "127.0.0.1",
        "Contas a pagar",
        "criar, alterar e excluir",
        "Beta Tecnologia",
        "visualizador",
        "Seu papel aqui não permite",
        "Autorizar",
        "Recusar",
    ] {
        assert!(consent.contains(part), "{part} in {consent}");
    }
    // In English when the browser prefers it.
    let english = h
        .send(to(Method::GET, &format!("/authorize?{query}")).header("accept-language", "en-US,en;q=0.9").build())
        .await;
    assert!(text(&english).contains("Sign in (development)"), "{}", text(&english));
}

#[tokio::test]
async fn revoking_a_grant_ends_its_refresh_tokens_and_its_access_tokens_next_request() {
    let h = development().await;
    let (client, verifier, code) = code_for(&h, DEMO_OWNER, &[]).await;
    let tokens = exchange(&h, &client, &verifier, &code).await;
    let access = tokens["access_token"].as_str().unwrap();
    assert_eq!(tools_list_status(&h, access).await, 200);
    let revoked = h
        .send(form("/revoke", &[("token", tokens["refresh_token"].as_str().unwrap()), ("client_id", &client)]).build())
        .await;
    assert_eq!(revoked.status, 200);
    assert_eq!(tools_list_status(&h, access).await, 401, "the access token is refused on its next request");
    let refresh = token(
        &h,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
            ("client_id", &client),
        ],
    )
    .await;
    assert_eq!(refresh.json()["error"], "invalid_grant");
    // An unknown token is answered 200 all the same (RFC 7009 §2.2).
    assert_eq!(h.send(form("/revoke", &[("token", "nothing-of-ours")]).build()).await.status, 200);

    // The command line revokes a grant by its id, the access token an own request later.
    let (client, verifier, code) = code_for(&h, DEMO_OWNER, &[]).await;
    let access = exchange(&h, &client, &verifier, &code).await["access_token"].as_str().unwrap().to_string();
    let grant: String = sql::query("SELECT id FROM oauth_grants WHERE client_id = $1")
        .bind(client.clone())
        .fetch_one(&h.state.db)
        .await
        .unwrap()
        .try_get(0)
        .unwrap();
    let oauth = kobana_finance_mcp::oauth::Oauth {
        config: &h.state.config,
        db: &h.state.db,
        keys: &h.state.keys,
        provider: None,
    };
    assert!(kobana_finance_mcp::oauth::tokens::revoke_grant(oauth, &grant).await.unwrap());
    assert_eq!(tools_list_status(&h, &access).await, 401);
}

/// The housekeeping every replica runs sweeps what expired: codes, refresh tokens, the ids
/// of expired access tokens, cached documents, ended grants and unused registrations.
#[tokio::test]
async fn the_housekeeping_sweeps_what_expired() {
    let h = development().await;
    let (client, verifier, code) = code_for(&h, DEMO_OWNER, &[]).await;
    exchange(&h, &client, &verifier, &code).await;
    code_for(&h, DEMO_OWNER, &[]).await; // a code never exchanged
    let rows = |table: &'static str| {
        let h = &h;
        async move { count(h, &format!("SELECT COUNT(*) FROM {table} WHERE $1 = $1"), "").await }
    };
    assert!(rows("oauth_codes").await >= 2 && rows("oauth_refresh_tokens").await == 1);
    let long_ago = 1_000;
    for table in ["oauth_codes", "oauth_refresh_tokens", "oauth_access_tokens", "oauth_grants"] {
        exec(&h, &format!("UPDATE {table} SET expires_at = {long_ago} WHERE $1 = $1"), &[""]).await;
    }
    exec(&h, &format!("UPDATE oauth_clients SET created_at = {long_ago} WHERE $1 = $1"), &[""]).await;
    h.state.housekeep().await;
    for table in ["oauth_codes", "oauth_refresh_tokens", "oauth_access_tokens", "oauth_grants", "oauth_clients"] {
        assert_eq!(rows(table).await, 0, "{table}");
    }
}
