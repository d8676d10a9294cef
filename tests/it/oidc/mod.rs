//! Sign-in through the company's OpenID Connect provider (SPEC §6), against a stand-in of
//! one on 127.0.0.1 that speaks the protocol's documents and endpoints (discovery, keys,
//! the token endpoint with the client's secret and PKCE) and signs ID tokens as each
//! test tells it to — so every refusal of a token can be shown one by one. Real
//! `oidc-provider` and a real browser drive the same flow in `tests/clients/`.
//! The people: a workspace created as `workspace create` creates it, its owner and the
//! people they invite, each bound at first sign-in to the provider's subject.

mod access;
mod refusals;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http::{HeaderMap, Method, StatusCode};
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{json, Value};

use kobana_finance_mcp::config::{OidcConfig, OidcSecret};

use crate::common::*;
use crate::oauth::{authorize_query, field, form, location, pkce, query_of, register, to, value_of, CALLBACK};

pub(crate) const CLIENT_ID: &str = "kobana-finance";
const CLIENT_SECRET: &str = "provider-client-secret-for-tests";

pub(crate) const RSA: &[u8] = include_bytes!("../../fixtures/oidc/rsa.der");
pub(crate) const OTHER: &[u8] = include_bytes!("../../fixtures/oidc/rsa-other.der");
pub(crate) const EC: &[u8] = include_bytes!("../../fixtures/oidc/ec.der");

/// How the provider signs one ID token.
#[derive(Clone)]
pub(crate) struct Signer {
    pub alg: Algorithm,
    pub kid: Option<String>,
    pub key: EncodingKey,
}

impl Signer {
    pub fn rsa() -> Signer {
        Signer { alg: Algorithm::RS256, kid: Some("r1".into()), key: EncodingKey::from_rsa_der(RSA) }
    }
}

/// A code the provider issued, and what its exchange answers.
struct Issued {
    challenge: String,
    claims: Value,
    signer: Signer,
}

/// The stand-in provider.
pub(crate) struct Provider {
    pub issuer: String,
    keys: Mutex<JwkSet>,
    pub key_fetches: AtomicUsize,
    pub discovery_fetches: AtomicUsize,
    pub down: AtomicBool,
    codes: Mutex<HashMap<String, Issued>>,
    /// The next token answer's ID token exactly (a token no key signed).
    exact: Mutex<Option<String>>,
}

pub(crate) fn published(key: &EncodingKey, alg: Algorithm, kid: &str) -> Jwk {
    let mut jwk = Jwk::from_encoding_key(key, alg).unwrap();
    jwk.common.key_id = Some(kid.into());
    jwk
}

impl Provider {
    /// Starts one on 127.0.0.1 (stopped with the test's runtime).
    pub async fn start() -> Arc<Provider> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let issuer = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let keys = JwkSet {
            keys: vec![
                published(&EncodingKey::from_rsa_der(RSA), Algorithm::RS256, "r1"),
                published(&EncodingKey::from_ec_der(EC), Algorithm::ES256, "e1"),
            ],
        };
        let provider = Arc::new(Provider {
            issuer,
            keys: Mutex::new(keys),
            key_fetches: AtomicUsize::new(0),
            discovery_fetches: AtomicUsize::new(0),
            down: AtomicBool::new(false),
            codes: Mutex::new(HashMap::new()),
            exact: Mutex::new(None),
        });
        let app = axum::Router::new()
            .route("/.well-known/openid-configuration", get(discovery))
            .route("/jwks", get(jwks))
            .route("/token", post(token_endpoint))
            .with_state(provider.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        provider
    }

    /// The next code's exchange answers `id_token` as it is.
    pub fn answer_exactly(&self, id_token: String) {
        *self.exact.lock().unwrap() = Some(id_token);
    }

    /// The provider publishes another key (a rotation).
    pub fn publish(&self, jwk: Jwk) {
        self.keys.lock().unwrap().keys.push(jwk);
    }
}

fn unavailable(provider: &Provider) -> Option<Response> {
    provider.down.load(Ordering::SeqCst).then(|| StatusCode::SERVICE_UNAVAILABLE.into_response())
}

async fn discovery(State(p): State<Arc<Provider>>) -> Response {
    if let Some(down) = unavailable(&p) {
        return down;
    }
    p.discovery_fetches.fetch_add(1, Ordering::SeqCst);
    axum::Json(json!({
        "issuer": p.issuer,
        "authorization_endpoint": format!("{}/authorize", p.issuer),
        "token_endpoint": format!("{}/token", p.issuer),
        "jwks_uri": format!("{}/jwks", p.issuer),
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256", "ES256"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic"],
        "code_challenge_methods_supported": ["S256"],
    }))
    .into_response()
}

async fn jwks(State(p): State<Arc<Provider>>) -> Response {
    if let Some(down) = unavailable(&p) {
        return down;
    }
    p.key_fetches.fetch_add(1, Ordering::SeqCst);
    axum::Json(p.keys.lock().unwrap().clone()).into_response()
}

/// The token endpoint: the client by its Basic credentials, the code once, its PKCE
/// verifier; the ID token as the test asked.
async fn token_endpoint(State(p): State<Arc<Provider>>, headers: HeaderMap, body: axum::body::Bytes) -> Response {
    let form: HashMap<String, String> = url::form_urlencoded::parse(&body).into_owned().collect();
    if let Some(down) = unavailable(&p) {
        return down;
    }
    use base64::Engine;
    let basic =
        format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{CLIENT_ID}:{CLIENT_SECRET}")));
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(basic.as_str()) {
        return (StatusCode::UNAUTHORIZED, axum::Json(json!({"error": "invalid_client"}))).into_response();
    }
    let refused = |error: &str| (StatusCode::BAD_REQUEST, axum::Json(json!({"error": error}))).into_response();
    if form.get("grant_type").map(String::as_str) != Some("authorization_code") {
        return refused("unsupported_grant_type");
    }
    let Some(issued) = form.get("code").and_then(|c| p.codes.lock().unwrap().remove(c)) else {
        return refused("invalid_grant");
    };
    let verifier = form.get("code_verifier").cloned().unwrap_or_default();
    if kobana_finance_mcp::oauth::s256(&verifier) != issued.challenge {
        return refused("invalid_grant");
    }
    let mut header = Header::new(issued.signer.alg);
    header.kid = issued.signer.kid.clone();
    let exact = p.exact.lock().unwrap().take();
    let id_token = exact.unwrap_or_else(|| jsonwebtoken::encode(&header, &issued.claims, &issued.signer.key).unwrap());
    axum::Json(json!({"access_token": "opaque", "token_type": "Bearer", "expires_in": 300, "id_token": id_token}))
        .into_response()
}

/// A person at the provider.
#[derive(Clone)]
pub(crate) struct Person {
    pub sub: String,
    pub email: String,
    pub verified: bool,
    pub name: String,
}

impl Person {
    pub fn new(sub: &str, email: &str) -> Person {
        Person { sub: sub.into(), email: email.into(), verified: true, name: format!("Pessoa {sub}") }
    }
}

/// A harness of the demo whose sign-in is the stand-in provider, its client secret in a
/// file (a deployment's comes from Secrets Manager).
pub(crate) async fn harness(provider: &Provider) -> Harness {
    let dir = TempDir::new();
    let secret = dir.0.join("client-secret");
    std::fs::write(&secret, format!("{CLIENT_SECRET}\n")).unwrap();
    std::mem::forget(dir);
    let issuer = provider.issuer.clone();
    Harness::with_demo_and(move |c| {
        c.oauth.oidc = Some(OidcConfig {
            issuer,
            client_id: CLIENT_ID.into(),
            secret: OidcSecret::File(secret),
            secret_ttl: std::time::Duration::from_secs(300),
        });
    })
    .await
}

/// The cookie named `name` among a reply's `Set-Cookie`s (`name=value`).
pub(crate) fn set_cookie(reply: &Reply, name: &str) -> Option<String> {
    reply
        .headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| v.split(';').next())
        .find(|pair| pair.split_once('=').is_some_and(|(n, v)| n == name && !v.is_empty()))
        .map(str::to_string)
}

/// A sign-in begun at `path` (`/authorize?…`, `/oauth/apps`): the provider's
/// authorization request's parameters and the browser's binding cookie.
pub(crate) async fn begin(h: &Harness, provider: &Provider, path: &str) -> (Vec<(String, String)>, String) {
    let reply = h.send(to(Method::GET, path).build()).await;
    assert_eq!(reply.status, StatusCode::FOUND, "{}", text(&reply));
    let at = location(&reply);
    assert!(at.starts_with(&format!("{}/authorize?", provider.issuer)), "{at}");
    let params = query_of(&at);
    for (name, value) in [("response_type", "code"), ("client_id", CLIENT_ID), ("code_challenge_method", "S256")] {
        assert_eq!(value_of(&params, name).as_deref(), Some(value), "{name}");
    }
    assert_eq!(value_of(&params, "redirect_uri").as_deref(), Some(&*format!("{PUBLIC_URL}/oauth/callback")));
    assert!(value_of(&params, "scope").unwrap().split(' ').any(|s| s == "openid"));
    let cookie = set_cookie(&reply, "kfin_sign_in").expect("the sign-in's cookie");
    (params, cookie)
}

/// The ID token's claims for `person` answering the authorization request `params`.
pub(crate) fn claims(provider: &Provider, person: &Person, params: &[(String, String)]) -> Value {
    let now = kobana_finance_mcp::clock::now_unix();
    json!({
        "iss": provider.issuer, "aud": CLIENT_ID, "sub": person.sub, "exp": now + 300, "iat": now,
        "nonce": value_of(params, "nonce").unwrap(), "email": person.email, "email_verified": person.verified,
        "name": person.name,
    })
}

/// The provider's answer to `params` with an ID token of `claims` signed by `signer`:
/// our callback's reply.
pub(crate) async fn callback(
    h: &Harness,
    provider: &Provider,
    params: &[(String, String)],
    cookie: &str,
    claims: Value,
    signer: Signer,
) -> Reply {
    let code = uuid::Uuid::new_v4().to_string();
    let challenge = value_of(params, "code_challenge").unwrap();
    provider.codes.lock().unwrap().insert(code.clone(), Issued { challenge, claims, signer });
    let state = value_of(params, "state").unwrap();
    let path = format!(
        "/oauth/callback?code={code}&state={}",
        url::form_urlencoded::byte_serialize(state.as_bytes()).collect::<String>()
    );
    h.send(to(Method::GET, &path).header("cookie", cookie).build()).await
}

/// `person` signs in for `client` (asking `resource`) and consents: the access token answer.
pub(crate) async fn connect(
    h: &Harness,
    provider: &Provider,
    person: &Person,
    resource: &str,
    scope: Option<&str>,
) -> Value {
    let client = register(h, &[CALLBACK]).await;
    let (verifier, challenge) = pkce();
    let mut extra = vec![];
    if let Some(scope) = scope {
        extra.push(("scope", scope));
    }
    let query = authorize_query(&client, CALLBACK, &challenge, &extra).replace(
        &url::form_urlencoded::byte_serialize(crate::oauth::RESOURCE.as_bytes()).collect::<String>(),
        &url::form_urlencoded::byte_serialize(resource.as_bytes()).collect::<String>(),
    );
    let (params, cookie) = begin(h, provider, &format!("/authorize?{query}")).await;
    let back = callback(h, provider, &params, &cookie, claims(provider, person, &params), Signer::rsa()).await;
    assert_eq!(back.status, StatusCode::FOUND, "{}", text(&back));
    let session = set_cookie(&back, "kfin_session").expect("a session");
    let consent = h.send(to(Method::GET, &location(&back)).header("cookie", &session).build()).await;
    assert_eq!(consent.status, 200, "{}", text(&consent));
    let page = text(&consent);
    let approved = h
        .send(
            form(
                "/authorize",
                &[("request", &field(&page, "request")), ("csrf", &field(&page, "csrf")), ("decision", "approve")],
            )
            .header("cookie", &session)
            .build(),
        )
        .await;
    let code = value_of(&query_of(&location(&approved)), "code").expect("a code");
    let reply = crate::oauth::token(
        h,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", CALLBACK),
            ("code_verifier", &verifier),
            ("client_id", &client),
            ("resource", resource),
        ],
    )
    .await;
    assert_eq!(reply.status, 200, "{}", text(&reply));
    let mut answer = reply.json();
    answer["client"] = json!(client);
    answer
}

/// The rows a sign-in may write: people, their bindings, memberships.
pub(crate) async fn written(h: &Harness) -> (i64, i64, i64) {
    (
        count(h, "SELECT COUNT(*) FROM users WHERE id <> $1", "").await,
        count(h, "SELECT COUNT(*) FROM identities WHERE user_id <> $1", "").await,
        count(h, "SELECT COUNT(*) FROM memberships WHERE user_id <> $1", "").await,
    )
}

/// A workspace created as `workspace create` creates it: its id.
pub(crate) async fn workspace(h: &Harness, name: &str, owner_email: &str) -> String {
    let created =
        kobana_finance_mcp::transport::deploy::workspace_create(&h.state.db, name, owner_email).await.unwrap();
    created["workspace_id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn the_provider_is_fetched_at_the_first_sign_in_never_at_start() {
    let provider = Provider::start().await;
    let h = harness(&provider).await;
    let token = h.token(DEMO_OWNER);
    assert_eq!(crate::oauth::tools_list_status(&h, &token).await, 200);
    assert_eq!(provider.discovery_fetches.load(Ordering::SeqCst), 0, "nothing of it on an MCP request");
    let client = register(&h, &[CALLBACK]).await;
    let (_, challenge) = pkce();
    begin(&h, &provider, &format!("/authorize?{}", authorize_query(&client, CALLBACK, &challenge, &[]))).await;
    begin(&h, &provider, &format!("/authorize?{}", authorize_query(&client, CALLBACK, &challenge, &[]))).await;
    assert_eq!(provider.discovery_fetches.load(Ordering::SeqCst), 1, "kept");
}
