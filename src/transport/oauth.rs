//! The authorization server's HTTP door (`crate::oauth` holds its rules): its metadata,
//! `/authorize` (the request, the sign-in's pages, the consent's post), `/oauth/login`,
//! `/token`, `/register` and `/revoke`. Forms and queries are read as pairs in their
//! order (a repeated parameter is an error the rules see); pages are HTML that no other
//! site may frame; the token endpoint's answers are never cached.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use http::{header, HeaderMap, HeaderValue, StatusCode};

use crate::app::AppState;
use crate::oauth::authorize::{self, Outcome};
use crate::oauth::identity::LOGIN_PATH;
use crate::oauth::pages::Lang;
use crate::oauth::{apps, oidc};
use crate::oauth::{clients, metadata, tokens, Oauth, OauthError};

/// The largest form or registration a request may carry.
const BODY_LIMIT: usize = 64 * 1024;

/// The authorization server's routes, when this server is its own authorization server
/// (`KFIN_AUTH_SERVER` unset or this server's URL); none otherwise.
pub fn routes(serves: bool) -> Router<AppState> {
    if !serves {
        return Router::new();
    }
    // What a client program calls, from a web page too (`cors::open`).
    let endpoints = Router::new()
        .route("/.well-known/oauth-authorization-server", get(metadata_document))
        .route("/.well-known/oauth-authorization-server/mcp", get(metadata_document))
        .route("/token", post(token))
        .route("/register", post(register))
        .route("/revoke", post(revoke))
        .layer(axum::middleware::from_fn(super::cors::open));
    // The pages a person's browser visits.
    Router::new()
        .route(authorize::PATH, get(authorize_get).post(authorize_post))
        .route(LOGIN_PATH, post(login))
        .route(oidc::CALLBACK_PATH, get(callback))
        .route(apps::PATH, get(apps_page).post(apps_revoke))
        .merge(endpoints)
}

fn oauth(state: &AppState) -> Oauth<'_> {
    Oauth { config: &state.config, db: &state.db, keys: &state.keys, provider: state.oidc.as_ref() }
}

/// Pairs of a query string or a form body, in order.
fn pairs(text: &[u8]) -> Vec<(String, String)> {
    url::form_urlencoded::parse(text).map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
}

fn lang(headers: &HeaderMap) -> Lang {
    Lang::of(headers.get(header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok()))
}

fn cookie(headers: &HeaderMap) -> Option<&str> {
    headers.get(header::COOKIE).and_then(|v| v.to_str().ok())
}

/// The request's body, at most [`BODY_LIMIT`] bytes.
async fn body(request: Request) -> Result<(HeaderMap, bytes::Bytes), Response> {
    let (parts, body) = request.into_parts();
    match axum::body::to_bytes(body, BODY_LIMIT).await {
        Ok(bytes) => Ok((parts.headers, bytes)),
        Err(_) => {
            Err(json_error(&OauthError::new("invalid_request", "The request body is too large").with_status(413)))
        }
    }
}

/// A page: HTML nobody may frame, which loads nothing from elsewhere.
pub(super) fn page(status: u16, html: String, set_cookies: Vec<String>) -> Response {
    let mut response = (StatusCode::from_u16(status).unwrap_or(StatusCode::OK), html).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    set_cookies_on(headers, set_cookies);
    response
}

fn set_cookies_on(headers: &mut HeaderMap, cookies: Vec<String>) {
    for cookie in cookies.into_iter().filter_map(|c| HeaderValue::from_str(&c).ok()) {
        headers.append(header::SET_COOKIE, cookie);
    }
}

fn outcome(outcome: Outcome, set_cookies: impl IntoIterator<Item = String>) -> Response {
    let set_cookies: Vec<String> = set_cookies.into_iter().collect();
    match outcome {
        Outcome::Page { status, html } => page(status, html, set_cookies),
        Outcome::Redirect(to) => {
            let mut response = Response::builder().status(StatusCode::FOUND).body(Body::empty()).unwrap_or_default();
            if let Ok(location) = HeaderValue::from_str(&to) {
                response.headers_mut().insert(header::LOCATION, location);
            }
            set_cookies_on(response.headers_mut(), set_cookies);
            response.headers_mut().insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
            response
        }
    }
}

/// A JSON answer of the token, registration and revocation endpoints.
fn json(status: StatusCode, value: &serde_json::Value) -> Response {
    let mut response = (status, value.to_string()).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    response
}

fn json_error(error: &OauthError) -> Response {
    let mut response = json(StatusCode::from_u16(error.status).unwrap_or(StatusCode::BAD_REQUEST), &error.json());
    if error.status == 401 {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"kobana-finance\""));
    }
    response
}

async fn metadata_document(State(state): State<AppState>) -> Response {
    json(StatusCode::OK, &metadata::document(&state.config))
}

async fn authorize_get(State(state): State<AppState>, request: Request) -> Response {
    let params = pairs(request.uri().query().unwrap_or_default().as_bytes());
    let (result, set_cookie) =
        authorize::start(oauth(&state), &params, cookie(request.headers()), lang(request.headers())).await;
    outcome(result, set_cookie)
}

async fn authorize_post(State(state): State<AppState>, request: Request) -> Response {
    let (headers, body) = match body(request).await {
        Ok(read) => read,
        Err(response) => return response,
    };
    outcome(authorize::decide(oauth(&state), &pairs(&body), cookie(&headers), lang(&headers)).await, None)
}

/// `GET /oauth/callback`: the company's identity provider sends the browser back.
async fn callback(State(state): State<AppState>, request: Request) -> Response {
    let params = pairs(request.uri().query().unwrap_or_default().as_bytes());
    let (result, set_cookies) =
        authorize::signed_in(oauth(&state), &params, cookie(request.headers()), lang(request.headers())).await;
    outcome(result, set_cookies)
}

async fn apps_page(State(state): State<AppState>, request: Request) -> Response {
    let revoked = pairs(request.uri().query().unwrap_or_default().as_bytes()).iter().any(|(n, _)| n == "revoked");
    let (result, set_cookie) =
        apps::page(oauth(&state), cookie(request.headers()), lang(request.headers()), revoked).await;
    outcome(result, set_cookie)
}

async fn apps_revoke(State(state): State<AppState>, request: Request) -> Response {
    let (headers, body) = match body(request).await {
        Ok(read) => read,
        Err(response) => return response,
    };
    outcome(apps::revoke_form(oauth(&state), &pairs(&body), cookie(&headers), lang(&headers)).await, None)
}

async fn login(State(state): State<AppState>, request: Request) -> Response {
    let (headers, body) = match body(request).await {
        Ok(read) => read,
        Err(response) => return response,
    };
    let (result, set_cookies) =
        authorize::signed_in(oauth(&state), &pairs(&body), cookie(&headers), lang(&headers)).await;
    outcome(result, set_cookies)
}

async fn token(State(state): State<AppState>, request: Request) -> Response {
    let (headers, body) = match body(request).await {
        Ok(read) => read,
        Err(response) => return response,
    };
    let authorization = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
    match tokens::token(oauth(&state), &pairs(&body), authorization).await {
        Ok(answer) => json(StatusCode::OK, &answer),
        Err(error) => json_error(&error),
    }
}

async fn register(State(state): State<AppState>, request: Request) -> Response {
    let (_, body) = match body(request).await {
        Ok(read) => read,
        Err(response) => return response,
    };
    match clients::register(oauth(&state), &body).await {
        Ok(answer) => json(StatusCode::CREATED, &answer),
        Err(error) => json_error(&error),
    }
}

async fn revoke(State(state): State<AppState>, request: Request) -> Response {
    let (_, body) = match body(request).await {
        Ok(read) => read,
        Err(response) => return response,
    };
    match tokens::revoke(oauth(&state), &pairs(&body)).await {
        Ok(()) => json(StatusCode::OK, &serde_json::json!({})),
        Err(error) => json_error(&error),
    }
}
