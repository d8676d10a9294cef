//! `/authorize`: an authorization request checked, the person signed in and asked, a code
//! issued (OAuth 2.1 §4.1; RFC 7636; RFC 8707; RFC 9207).
//!
//! The order of the checks decides where an error goes: while the client or its redirect
//! URI is not known good, an error is a page here (never a redirect to a URI nobody
//! vouched for); after, it goes back to the client's redirect URI with `error`, `state`
//! and `iss`. A checked request is sealed into the pages that follow (sign-in, consent),
//! so no step keeps anything on the server until the person approves: then the grant and
//! its code are written, the code single use, valid 60 seconds, bound to the client, the
//! redirect URI, the PKCE challenge and the resource.

use serde::{Deserialize, Serialize};

use super::clients::{self, Client};
use super::identity::{self, param, Params, Step};
use super::metadata;
use super::pages::{self, Consent, Lang};
use super::session::{self, Purpose, Session};
use super::{Oauth, OauthError, CODE_SECONDS};
use crate::storage::oauth::{self as store, CodeRow, GrantRow};

/// The path of the endpoint (and of the consent form's post).
pub const PATH: &str = "/authorize";

/// How long a person has to sign in and answer.
const REQUEST_SECONDS: i64 = 15 * 60;

/// A checked authorization request.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    pub client: Client,
    pub redirect_uri: String,
    pub state: Option<String>,
    pub code_challenge: String,
    pub scope: String,
    pub resource: String,
}

/// What `/authorize` answers.
#[derive(Debug)]
pub enum Outcome {
    /// A page: an error that cannot go back to the client (status 400), the sign-in, the
    /// consent (200).
    Page { status: u16, html: String },
    /// A redirect: back to the client (a code or an error), or to the identity provider.
    Redirect(String),
}

/// Why a request is refused, and where the refusal goes.
enum Refusal {
    Page(OauthError),
    Back { request: Box<Request>, error: OauthError },
}

fn page(lang: Lang, error: &OauthError) -> Outcome {
    let status = match error.status {
        403 | 500..=599 => error.status,
        _ => 400,
    };
    Outcome::Page { status, html: pages::error(lang, &error.description) }
}

/// The client's redirect URI with `pairs`, `state` and `iss` added to its query.
fn back(oauth: Oauth<'_>, request: &Request, pairs: &[(&str, &str)]) -> String {
    let mut url = match url::Url::parse(&request.redirect_uri) {
        Ok(url) => url,
        // Checked when it was registered: a URI that does not parse was never accepted.
        Err(_) => return request.redirect_uri.clone(),
    };
    {
        let mut query = url.query_pairs_mut();
        for (name, value) in pairs {
            query.append_pair(name, value);
        }
        if let Some(state) = &request.state {
            query.append_pair("state", state);
        }
        query.append_pair("iss", &oauth.config.auth_server);
    }
    url.to_string()
}

fn error_back(oauth: Oauth<'_>, request: &Request, error: &OauthError) -> Outcome {
    Outcome::Redirect(back(oauth, request, &[("error", error.error), ("error_description", &error.description)]))
}

/// The request's parameters checked, in the order that decides where an error goes.
async fn check(oauth: Oauth<'_>, params: &Params) -> Result<Request, Refusal> {
    let once = |name: &str| -> Result<Option<&str>, OauthError> {
        let mut values = params.iter().filter(|(n, _)| n == name).map(|(_, v)| v.as_str());
        let first = values.next();
        if values.next().is_some() {
            return Err(OauthError::new("invalid_request", format!("{name} is sent more than once")));
        }
        Ok(first.filter(|v| !v.is_empty()))
    };
    let client_id = once("client_id")
        .map_err(Refusal::Page)?
        .ok_or_else(|| Refusal::Page(OauthError::new("invalid_request", "client_id is required")))?;
    let client = clients::resolve(oauth, client_id).await.map_err(Refusal::Page)?;
    let asked = once("redirect_uri").map_err(Refusal::Page)?;
    let redirect_uri = client.redirect_uri(asked).ok_or_else(|| {
        Refusal::Page(OauthError::new(
            "invalid_request",
            match asked {
                Some(_) => "redirect_uri is not one this client registered",
                None => "redirect_uri is required: the client registered several",
            },
        ))
    })?;
    let mut request = Request {
        client,
        redirect_uri,
        state: params.iter().find(|(n, _)| n == "state").map(|(_, v)| v.clone()),
        code_challenge: String::new(),
        scope: String::new(),
        resource: String::new(),
    };
    let checked = (|| -> Result<(String, String, String), OauthError> {
        for name in ["state", "response_type", "code_challenge", "code_challenge_method", "scope", "resource"] {
            once(name)?;
        }
        match once("response_type")? {
            Some("code") => {}
            _ => return Err(OauthError::new("unsupported_response_type", "response_type must be code")),
        }
        let challenge = once("code_challenge")?
            .ok_or_else(|| OauthError::new("invalid_request", "PKCE is required: code_challenge with S256"))?;
        if once("code_challenge_method")? != Some("S256") {
            return Err(OauthError::new("invalid_request", "code_challenge_method must be S256"));
        }
        if challenge.len() != 43 || !challenge.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
            return Err(OauthError::new("invalid_request", "code_challenge is not an S256 challenge"));
        }
        let resource = metadata::resource(oauth.config, once("resource")?)?;
        let scope = metadata::requested_scope(once("scope")?)?;
        metadata::scope_fits(oauth.config, &scope, &resource)?;
        Ok((challenge.to_string(), scope, resource))
    })();
    match checked {
        Ok((challenge, scope, resource)) => {
            request.code_challenge = challenge;
            request.scope = scope;
            request.resource = resource;
            Ok(request)
        }
        Err(error) => Err(Refusal::Back { request: Box::new(request), error }),
    }
}

/// What a sealed request opens to, if it is this server's and alive.
async fn opened(oauth: Oauth<'_>, sealed: &str) -> Result<Request, OauthError> {
    let keys = oauth.keys.current().await.map_err(|_| OauthError::unavailable())?;
    session::open(&keys.state, Purpose::Request, sealed, crate::clock::now_unix()).ok_or_else(|| {
        OauthError::new(
            "invalid_request",
            "This sign-in has expired or is not this server's: start it again from the app",
        )
    })
}

/// `GET /authorize`: a client's request (or, with `request`, one resumed after the
/// sign-in): the sign-in when nobody is signed in, else the consent page.
pub async fn start(oauth: Oauth<'_>, params: &Params, cookie: Option<&str>, lang: Lang) -> (Outcome, Option<String>) {
    let keys = match oauth.keys.current().await {
        Ok(keys) => keys,
        Err(_) => return (page(lang, &OauthError::unavailable()), None),
    };
    let now = crate::clock::now_unix();
    let (request, sealed) = match param(params, "request") {
        Some(sealed) => match opened(oauth, sealed).await {
            Ok(request) => (request, sealed.to_string()),
            Err(e) => return (page(lang, &e), None),
        },
        None => match check(oauth, params).await {
            Ok(request) => {
                let sealed = session::seal(&keys.state, Purpose::Request, &request, now + REQUEST_SECONDS);
                (request, sealed)
            }
            Err(Refusal::Page(e)) => return (page(lang, &e), None),
            Err(Refusal::Back { request, error }) => return (error_back(oauth, &request, &error), None),
        },
    };
    match Session::of(cookie, &keys.state, now) {
        Some(session) => (consent(oauth, &request, &sealed, &session, lang).await, None),
        None => {
            let Some(source) = identity::source(oauth) else {
                let error = OauthError::new(
                    "temporarily_unavailable",
                    "Sign-in is not configured on this server: its administrator names the company's identity provider",
                );
                return (error_back(oauth, &request, &error), None);
            };
            match source.begin(oauth, &sealed, lang).await {
                Ok(Step::Page(html)) => (Outcome::Page { status: 200, html }, None),
                Ok(Step::Redirect { to, cookie }) => (Outcome::Redirect(to), cookie),
                Err(e) => (page(lang, &e), None),
            }
        }
    }
}

/// The consent page of `request` for the signed-in person.
async fn consent(oauth: Oauth<'_>, request: &Request, sealed: &str, session: &Session, lang: Lang) -> Outcome {
    let keys = match oauth.keys.current().await {
        Ok(keys) => keys,
        Err(_) => return page(lang, &OauthError::unavailable()),
    };
    let person = match store::person(oauth.db, &session.sub).await {
        Ok(Some((name, email))) => format!("{name} <{email}>"),
        Ok(None) => return page(lang, &OauthError::new("access_denied", "The person signed in no longer exists")),
        Err(e) => return page(lang, &OauthError::from(e)),
    };
    let memberships = match crate::storage::identity::memberships(oauth.db, &session.sub).await {
        Ok(memberships) => memberships,
        Err(e) => return page(lang, &OauthError::from(e)),
    };
    let workspaces =
        memberships.iter().map(|m| pages::workspace_line(&m.workspace_name, m.role, &request.scope, lang)).collect();
    let csrf = session.csrf(&keys.state, sealed);
    let client_host = request.client.host();
    let redirect_host = clients::host_of(&request.redirect_uri).unwrap_or_else(|| request.redirect_uri.clone());
    let html = pages::render(&Consent {
        t: lang.texts(),
        lang: lang.tag(),
        development: oauth.config.development_login(),
        client_name: request.client.client_name.as_deref().unwrap_or(&client_host),
        client_host: &client_host,
        redirect_host: &redirect_host,
        local_only: request.client.only_local(),
        person: &person,
        scopes: pages::scope_lines(&request.scope, lang),
        workspaces,
        action: PATH,
        request: sealed,
        csrf: &csrf,
    });
    Outcome::Page { status: 200, html }
}

/// `POST /authorize`: the person's answer on the consent page (`request`, `csrf`,
/// `decision`), in the session that was shown the page: a code, or `access_denied`.
pub async fn decide(oauth: Oauth<'_>, form: &Params, cookie: Option<&str>, lang: Lang) -> Outcome {
    let keys = match oauth.keys.current().await {
        Ok(keys) => keys,
        Err(_) => return page(lang, &OauthError::unavailable()),
    };
    let now = crate::clock::now_unix();
    let sealed = param(form, "request").unwrap_or_default();
    let request = match opened(oauth, sealed).await {
        Ok(request) => request,
        Err(e) => return page(lang, &e),
    };
    let csrf = param(form, "csrf").unwrap_or_default();
    let Some(session) = Session::of(cookie, &keys.state, now).filter(|s| s.checks(&keys.state, sealed, csrf)) else {
        return page(
            lang,
            &OauthError::new(
                "invalid_request",
                "This answer does not come from the page this session was shown (CSRF)",
            )
            .with_status(403),
        );
    };
    if param(form, "decision") != Some("approve") {
        return error_back(oauth, &request, &OauthError::new("access_denied", "The person did not authorize the app"));
    }
    match approve(oauth, &request, &session.sub, now).await {
        Ok(code) => Outcome::Redirect(back(oauth, &request, &[("code", &code)])),
        Err(e) => error_back(oauth, &request, &e),
    }
}

/// The grant of the person's consent and its code.
async fn approve(oauth: Oauth<'_>, request: &Request, user_id: &str, now: i64) -> Result<String, OauthError> {
    let grant = GrantRow {
        id: uuid::Uuid::new_v4().to_string(),
        user_id: user_id.to_string(),
        client_id: request.client.client_id.clone(),
        client_name: request.client.client_name.clone(),
        scope: request.scope.clone(),
        resource: request.resource.clone(),
        created_at: now,
        used_at: None,
        // Until its code is exchanged; the exchange gives it the refresh token's life.
        expires_at: now + CODE_SECONDS,
        revoked_at: None,
    };
    let code = super::random_value();
    let row = CodeRow {
        grant_id: grant.id.clone(),
        client_id: request.client.client_id.clone(),
        redirect_uri: request.redirect_uri.clone(),
        code_challenge: request.code_challenge.clone(),
        resource: request.resource.clone(),
        expires_at: now + CODE_SECONDS,
    };
    let mut tx = oauth.db.begin().await?;
    store::insert_grant(&mut tx, &grant).await?;
    store::insert_code(&mut tx, &super::digest_of(&code), &row).await?;
    tx.commit().await?;
    Ok(code)
}

/// `POST /oauth/login` and `GET /oauth/callback` (the provider's answer): completes the
/// sign-in with the deployment's identity source, sets the session cookie, and resumes
/// what the sign-in was for. Answers the cookies to set: the session's, and the
/// provider sign-in's binding ended.
pub async fn signed_in(oauth: Oauth<'_>, answer: &Params, cookie: Option<&str>, lang: Lang) -> (Outcome, Vec<String>) {
    let secure = oauth.config.public_url.starts_with("https://");
    let spent = if oauth.provider.is_some() { vec![super::oidc::spent_cookie(secure)] } else { Vec::new() };
    let Some(source) = identity::source(oauth) else {
        return (page(lang, &OauthError::new("access_denied", "Sign-in is not offered on this server")), spent);
    };
    let keys = match oauth.keys.current().await {
        Ok(keys) => keys,
        Err(_) => return (page(lang, &OauthError::unavailable()), spent),
    };
    match source.complete(oauth, answer, cookie, lang).await {
        Ok(signed_in) => {
            let now = crate::clock::now_unix();
            let mut cookies = spent;
            cookies.push(Session::new(&signed_in.user_id).cookie(&keys.state, now, secure));
            (Outcome::Redirect(resume(&signed_in.request)), cookies)
        }
        Err(e) => (page(lang, &e), spent),
    }
}

/// Where a completed sign-in goes: the connected apps page, or the authorization
/// request it was for.
fn resume(request: &str) -> String {
    if super::apps::resumes_apps(request) {
        return super::apps::PATH.to_string();
    }
    let mut resume = url::form_urlencoded::Serializer::new(format!("{PATH}?"));
    resume.append_pair("request", request);
    resume.finish()
}
