//! Who is signing in: the identity source a deployment trusts to say who a person is.
//! The authorization server asks it to begin a sign-in (a page, or a redirect to a
//! provider) and to complete it (the form posted back, or the provider's callback), and
//! gets the person and the authorization request to resume; it never sees a password.
//!
//! One source here: the **development login** of `make run` — a page listing the demo
//! people, no password, marked as development, offered only while the server runs locally
//! on its generated development secret (never with a configured secret, never on
//! Lambda); and the company's OpenID Connect provider ([`super::oidc`]), a deployment's.

use std::future::Future;
use std::pin::Pin;

use super::pages::{self, DevelopmentLogin, Lang, Person};
use super::session::sign_in_csrf;
use super::{Oauth, OauthError};

/// A boxed future that may be sent between threads.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The parameters a step received (a form's fields, a callback's query), in order.
pub type Params = [(String, String)];

/// The first value of `name` among `params`.
pub fn param<'a>(params: &'a Params, name: &str) -> Option<&'a str> {
    params.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

/// What the browser is shown to begin a sign-in.
pub enum Step {
    /// A page of this server's (HTML).
    Page(String),
    /// The provider's own page, with the cookie that binds the sign-in to this browser.
    Redirect { to: String, cookie: Option<String> },
}

/// A sign-in completed: the person, and the authorization request it resumes.
#[derive(Debug)]
pub struct SignedIn {
    pub user_id: String,
    pub request: String,
}

/// A source of signed-in people.
pub trait IdentitySource: Send + Sync {
    /// Begins a sign-in that resumes `request` (a sealed authorization request) once the
    /// person is known.
    fn begin<'a>(&'a self, oauth: Oauth<'a>, request: &'a str, lang: Lang) -> BoxFuture<'a, Result<Step, OauthError>>;

    /// Completes a sign-in from what the browser brought back (a form, a callback's
    /// query) and the cookies it carries.
    fn complete<'a>(
        &'a self,
        oauth: Oauth<'a>,
        answer: &'a Params,
        cookie: Option<&'a str>,
        lang: Lang,
    ) -> BoxFuture<'a, Result<SignedIn, OauthError>>;
}

/// The development login.
pub struct Development;

/// The path the development login posts to.
pub const LOGIN_PATH: &str = "/oauth/login";

impl IdentitySource for Development {
    fn begin<'a>(&'a self, oauth: Oauth<'a>, request: &'a str, lang: Lang) -> BoxFuture<'a, Result<Step, OauthError>> {
        Box::pin(async move {
            let keys = oauth.keys.current().await.map_err(|_| OauthError::unavailable())?;
            let people = crate::storage::oauth::people(oauth.db)
                .await?
                .into_iter()
                .map(|p| Person {
                    roles: p.workspaces.iter().map(|(w, r)| format!("{w}: {r}")).collect::<Vec<_>>().join(" · "),
                    id: p.id,
                    name: p.name,
                    email: p.email,
                })
                .collect();
            let csrf = sign_in_csrf(&keys.state, request);
            Ok(Step::Page(pages::render(&DevelopmentLogin {
                t: lang.texts(),
                lang: lang.tag(),
                people,
                action: LOGIN_PATH,
                request,
                csrf: &csrf,
            })))
        })
    }

    fn complete<'a>(
        &'a self,
        oauth: Oauth<'a>,
        answer: &'a Params,
        _cookie: Option<&'a str>,
        _lang: Lang,
    ) -> BoxFuture<'a, Result<SignedIn, OauthError>> {
        Box::pin(async move {
            let keys = oauth.keys.current().await.map_err(|_| OauthError::unavailable())?;
            let request = param(answer, "request").unwrap_or_default();
            let csrf = param(answer, "csrf").unwrap_or_default();
            if request.is_empty() || !super::same(&sign_in_csrf(&keys.state, request), csrf) {
                return Err(OauthError::new("invalid_request", "The sign-in form is not this server's (CSRF token)"));
            }
            let user_id = param(answer, "user_id").unwrap_or_default();
            if crate::storage::oauth::person(oauth.db, user_id).await?.is_none() {
                return Err(OauthError::new("access_denied", "No such person"));
            }
            Ok(SignedIn { user_id: user_id.to_string(), request: request.to_string() })
        })
    }
}

/// The identity source of this deployment: the company's OpenID provider when one is
/// configured; else the development login locally on the generated secret; else none
/// (sign-in is then not offered).
pub fn source<'a>(oauth: Oauth<'a>) -> Option<&'a dyn IdentitySource> {
    static DEVELOPMENT: Development = Development;
    if let Some(provider) = oauth.provider {
        return Some(provider as &dyn IdentitySource);
    }
    oauth.config.development_login().then_some(&DEVELOPMENT as &dyn IdentitySource)
}
