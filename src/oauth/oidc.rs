//! The company's OpenID Connect provider as the identity source of a deployment (Amazon
//! Cognito, Keycloak, Entra ID, Auth0, Kobana's own: any conforming provider).
//!
//! A sign-in goes to the provider with the authorization code flow, PKCE S256, a `state`
//! and a `nonce`. What the callback needs is kept in the database under the `state`'s
//! digest (`storage::oauth::SignInRow`: the authorization request it resumes, the nonce,
//! the verifier — which never leaves the server), single use and ten minutes long, so
//! the callback may land on any instance; the browser's cookie holds the `state` too, so
//! a callback in another browser than the one that began is refused. The code is
//! exchanged at the provider's token endpoint (the client's secret, when it has one,
//! from Secrets Manager), its ID token verified (`id_token`), and the person found by
//! the provider's `iss` + `sub`, or let in by an invitation of their verified e-mail
//! (`storage::people::sign_in`).
//!
//! The provider's discovery document and keys are fetched on the first sign-in and kept
//! an hour; a key id not among them fetches the keys once more (the provider rotated
//! them). A provider that does not answer is a page that says so (503), and nothing of
//! a failed fetch is kept: the next sign-in tries again. None of it runs on the path of
//! an MCP or `/v1` request.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use base64::Engine;
use bytes::Bytes;
use http_body_util::Full;
use jsonwebtoken::jwk::JwkSet;
use serde::Deserialize;

use super::id_token::{self, Expected, Refused};
use super::identity::{param, BoxFuture, IdentitySource, Params, SignedIn, Step};
use super::pages::Lang;
use super::{Oauth, OauthError};
use crate::config::{OidcConfig, OidcSecret};
use crate::https::Https;
use crate::storage::oauth::{self as store, SignInRow};
use crate::storage::people::{self, Signing};

/// The path the provider sends the browser back to.
pub const CALLBACK_PATH: &str = "/oauth/callback";

/// The cookie that binds a sign-in to the browser that began it.
pub const COOKIE: &str = "kfin_sign_in";

/// How long a person has at the provider.
const SIGN_IN_SECONDS: i64 = 10 * 60;

/// How long the discovery document and the keys are kept.
const KEPT: Duration = Duration::from_secs(3600);

/// How long a call to the provider may take.
const DEADLINE: Duration = Duration::from_secs(5);

/// The parts of the provider's discovery document a sign-in uses.
#[derive(Debug, Clone, Deserialize)]
pub struct Discovery {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub jwks_uri: String,
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
}

type Kept<T> = Mutex<Option<(Arc<T>, Instant)>>;

/// The provider: its configuration, and what was fetched of it.
pub struct Provider {
    config: OidcConfig,
    aws: crate::aws::Aws,
    /// Made at the first sign-in: its TLS roots are read then, never at a cold start.
    https: OnceLock<Https>,
    discovery: Kept<Discovery>,
    keys: Kept<JwkSet>,
    secret: Kept<String>,
}

const NOT_VERIFIED: &str = "The identity provider's answer could not be verified; start again from the app";

const UNAVAILABLE: &str =
    "The company's sign-in (its identity provider) does not answer right now; try again in a minute";

fn unavailable(what: &str) -> OauthError {
    tracing::warn!(what, "the identity provider did not answer");
    OauthError::new("temporarily_unavailable", UNAVAILABLE).with_status(503)
}

/// The provider's silence, or an answer that did not verify, told in the person's
/// language (the page shows it).
fn spoken(e: OauthError, lang: Lang) -> OauthError {
    match lang {
        Lang::Pt if e.description == UNAVAILABLE => OauthError {
            description: "O acesso da empresa (o seu provedor de identidade) não responde agora; tente de novo em um \
                          minuto"
                .into(),
            ..e
        },
        Lang::Pt if e.description == NOT_VERIFIED => OauthError {
            description: "Não foi possível verificar a resposta do provedor de identidade; comece de novo pelo \
                          aplicativo"
                .into(),
            ..e
        },
        _ => e,
    }
}

/// `en` or `pt`, as the person reads.
fn said(lang: Lang, en: &str, pt: &str) -> String {
    match lang {
        Lang::Pt => pt.to_string(),
        Lang::En => en.to_string(),
    }
}

fn fresh<T>(kept: &Kept<T>, within: Duration) -> Option<Arc<T>> {
    let kept = kept.lock().unwrap_or_else(|e| e.into_inner());
    kept.as_ref().filter(|(_, at)| at.elapsed() < within).map(|(value, _)| value.clone())
}

fn keep<T>(kept: &Kept<T>, value: T) -> Arc<T> {
    let value = Arc::new(value);
    *kept.lock().unwrap_or_else(|e| e.into_inner()) = Some((value.clone(), Instant::now()));
    value
}

/// `a` and `b` name the same issuer, a trailing slash aside.
fn same_issuer(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

impl Provider {
    pub fn new(config: OidcConfig, aws: crate::aws::Aws) -> Provider {
        Provider {
            config,
            aws,
            https: OnceLock::new(),
            discovery: Mutex::new(None),
            keys: Mutex::new(None),
            secret: Mutex::new(None),
        }
    }

    /// An endpoint the provider names may be used: HTTPS, or the loopback `http` a local
    /// issuer was allowed to be.
    fn usable(&self, url: &str) -> bool {
        url.starts_with("https://") || (self.config.issuer.starts_with("http://") && url.starts_with("http://"))
    }

    async fn get(&self, url: &str) -> Result<Bytes, String> {
        let request = http::Request::get(url)
            .header(http::header::ACCEPT, "application/json")
            .body(Full::new(Bytes::new()))
            .map_err(|e| e.to_string())?;
        let answer = tokio::time::timeout(DEADLINE, self.https.get_or_init(Https::new).send(request))
            .await
            .map_err(|_| "no answer in time".to_string())?
            .map_err(|e| e.to_string())?;
        if answer.status != http::StatusCode::OK {
            return Err(format!("answered {}", answer.status));
        }
        Ok(answer.body)
    }

    /// The discovery document, fetched when none younger than an hour is kept.
    pub async fn discovery(&self) -> Result<Arc<Discovery>, OauthError> {
        if let Some(kept) = fresh(&self.discovery, KEPT) {
            return Ok(kept);
        }
        let url = format!("{}/.well-known/openid-configuration", self.config.issuer.trim_end_matches('/'));
        let body = self.get(&url).await.map_err(|e| {
            tracing::warn!(error = %e, url, "discovery document");
            unavailable("discovery")
        })?;
        let document: Discovery = serde_json::from_slice(&body).map_err(|e| {
            tracing::error!(error = %e, "the provider's discovery document is not one");
            unavailable("discovery")
        })?;
        if !same_issuer(&document.issuer, &self.config.issuer) {
            tracing::error!(configured = %self.config.issuer, stated = %document.issuer, "the provider states another issuer");
            return Err(OauthError::new(
                "server_error",
                "The identity provider configured here states another issuer: its administrator checks KFIN_OIDC_ISSUER",
            )
            .with_status(500));
        }
        let endpoints = [&document.authorization_endpoint, &document.token_endpoint, &document.jwks_uri];
        if !endpoints.iter().all(|u| self.usable(u)) {
            tracing::error!("the provider's endpoints are not all https");
            return Err(
                OauthError::new("server_error", "The identity provider's endpoints are not HTTPS").with_status(500)
            );
        }
        Ok(keep(&self.discovery, document))
    }

    /// The provider's keys: those kept, or fetched (`again`: whatever is kept).
    async fn keys(&self, discovery: &Discovery, again: bool) -> Result<Arc<JwkSet>, OauthError> {
        if !again {
            if let Some(kept) = fresh(&self.keys, KEPT) {
                return Ok(kept);
            }
        }
        let body = self.get(&discovery.jwks_uri).await.map_err(|e| {
            tracing::warn!(error = %e, "the provider's keys");
            unavailable("keys")
        })?;
        let keys: JwkSet = serde_json::from_slice(&body).map_err(|e| {
            tracing::error!(error = %e, "the provider's keys are not a JWK set");
            unavailable("keys")
        })?;
        Ok(keep(&self.keys, keys))
    }

    /// The client's secret, if it has one.
    async fn client_secret(&self) -> Result<Option<Arc<String>>, OauthError> {
        if self.config.secret == OidcSecret::None {
            return Ok(None);
        }
        if let Some(kept) = fresh(&self.secret, self.config.secret_ttl) {
            return Ok(Some(kept));
        }
        let secret = match &self.config.secret {
            OidcSecret::None => return Ok(None),
            OidcSecret::File(path) => std::fs::read_to_string(path).map(|s| s.trim().to_string()).map_err(|e| {
                tracing::error!(error = %e, path = %path.display(), "the OpenID client secret file");
                unavailable("client secret")
            })?,
            OidcSecret::SecretsManager { secret_id } => {
                #[derive(Deserialize)]
                struct Stored {
                    client_secret: String,
                }
                let text = self.aws.get_secret_string(secret_id).await.map_err(|e| {
                    tracing::warn!(error = %e, "the OpenID client secret");
                    unavailable("client secret")
                })?;
                let stored: Stored = text.as_deref().and_then(|t| serde_json::from_str(t).ok()).ok_or_else(|| {
                    tracing::error!(secret_id, "the OpenID client secret is not {{\"client_secret\": \"…\"}}");
                    unavailable("client secret")
                })?;
                stored.client_secret
            }
        };
        Ok(Some(keep(&self.secret, secret)))
    }

    /// The code exchanged at the provider's token endpoint: its ID token.
    async fn exchange(
        &self,
        oauth: Oauth<'_>,
        discovery: &Discovery,
        code: &str,
        verifier: &str,
    ) -> Result<String, OauthError> {
        let redirect_uri = format!("{}{CALLBACK_PATH}", oauth.config.public_url);
        let secret = self.client_secret().await?;
        let mut request = http::Request::post(&discovery.token_endpoint)
            .header(http::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(http::header::ACCEPT, "application/json");
        let body = {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            form.append_pair("grant_type", "authorization_code")
                .append_pair("code", code)
                .append_pair("redirect_uri", &redirect_uri)
                .append_pair("code_verifier", verifier);
            match secret {
                None => {
                    form.append_pair("client_id", &self.config.client_id);
                }
                Some(secret) => {
                    let methods = discovery.token_endpoint_auth_methods_supported.as_deref().unwrap_or_default();
                    if methods.is_empty() || methods.iter().any(|m| m == "client_secret_basic") {
                        // RFC 6749 §2.3.1: each part form-encoded, then Basic.
                        let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
                        let pair = format!("{}:{}", encode(&self.config.client_id), encode(&secret));
                        let value = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(pair));
                        request = request.header(http::header::AUTHORIZATION, value);
                    } else {
                        form.append_pair("client_id", &self.config.client_id).append_pair("client_secret", &secret);
                    }
                }
            }
            form.finish()
        };
        let request = request.body(Full::new(Bytes::from(body))).map_err(|_| OauthError::unavailable())?;
        let answer = tokio::time::timeout(DEADLINE, self.https.get_or_init(Https::new).send(request))
            .await
            .map_err(|_| unavailable("token"))?
            .map_err(|e| {
                tracing::warn!(error = %e, "the provider's token endpoint");
                unavailable("token")
            })?;
        #[derive(Deserialize)]
        struct Tokens {
            id_token: Option<String>,
            error: Option<String>,
        }
        let tokens: Option<Tokens> = serde_json::from_slice(&answer.body).ok();
        match tokens {
            Some(Tokens { id_token: Some(id_token), .. }) if answer.status.is_success() => Ok(id_token),
            _ if answer.status.is_server_error() => Err(unavailable("token")),
            other => {
                let error = other.and_then(|t| t.error).unwrap_or_else(|| answer.status.to_string());
                tracing::warn!(error, "the provider refused the code");
                Err(OauthError::new(
                    "access_denied",
                    format!("The identity provider refused the sign-in ({error}); start again from the app"),
                )
                .with_status(403))
            }
        }
    }

    /// The ID token verified; the provider's keys fetched once more when its key id is
    /// not among those kept.
    async fn verified(
        &self,
        discovery: &Discovery,
        token: &str,
        nonce: &str,
    ) -> Result<id_token::IdClaims, OauthError> {
        let expected = Expected { issuer: &discovery.issuer, client_id: &self.config.client_id, nonce };
        let mut keys = self.keys(discovery, false).await?;
        for again in [false, true] {
            match id_token::verify(token, &keys, &expected) {
                Ok(claims) => return Ok(claims),
                Err(Refused::UnknownKey) if !again => keys = self.keys(discovery, true).await?,
                Err(refused) => {
                    let why = match refused {
                        Refused::UnknownKey => "signed by a key the provider does not publish".to_string(),
                        Refused::Invalid(why) => why,
                    };
                    tracing::warn!(why, "an ID token refused");
                    break;
                }
            }
        }
        Err(OauthError::new("access_denied", NOT_VERIFIED).with_status(403))
    }
}

/// The cookie of a sign-in's `state` (sent back only to the callback).
fn cookie(state: &str, max_age: i64, secure: bool) -> String {
    format!(
        "{COOKIE}={state}; Path={CALLBACK_PATH}; Max-Age={max_age}; HttpOnly; SameSite=Lax{}",
        if secure { "; Secure" } else { "" }
    )
}

/// The cookie that ends a sign-in's binding.
pub fn spent_cookie(secure: bool) -> String {
    cookie("", 0, secure)
}

fn cookie_state(header: Option<&str>) -> Option<&str> {
    header?.split(';').filter_map(|pair| pair.trim().split_once('=')).find_map(|(n, v)| (n == COOKIE).then_some(v))
}

/// What a person is told when nobody is let in.
fn refusal(refused: people::Refused, email: Option<&str>, lang: Lang) -> OauthError {
    let email = email.unwrap_or("—");
    let text = match (refused, lang) {
        (people::Refused::EmailNotVerified, Lang::Pt) => "O provedor de identidade da empresa não confirmou o seu e-mail: confirme-o lá e entre de novo.".to_string(),
        (people::Refused::EmailNotVerified, Lang::En) => "The company's identity provider has not verified your e-mail: verify it there and sign in again.".to_string(),
        (people::Refused::NotInvited, Lang::Pt) => format!("Nenhum espaço de trabalho daqui convidou {email}. Peça a um proprietário do seu espaço de trabalho que convide você."),
        (people::Refused::NotInvited, Lang::En) => format!("No workspace here has invited {email}. Ask an owner of your workspace to invite you."),
        (people::Refused::InvitationExpired, Lang::Pt) => format!("O convite de {email} expirou. Peça a um proprietário do seu espaço de trabalho um convite novo."),
        (people::Refused::InvitationExpired, Lang::En) => format!("The invitation of {email} has expired. Ask an owner of your workspace for a new one."),
        (people::Refused::InvitationUsed, Lang::Pt) => format!("O convite de {email} já foi usado por outra conta. Peça a um proprietário do seu espaço de trabalho um convite novo."),
        (people::Refused::InvitationUsed, Lang::En) => format!("The invitation of {email} was used by another account. Ask an owner of your workspace for a new one."),
        (people::Refused::AccountBound, Lang::Pt) => format!("{email} já é a conta de outra pessoa deste provedor de identidade. Entre com a conta que recebeu o convite."),
        (people::Refused::AccountBound, Lang::En) => format!("{email} is already another person's account at this identity provider. Sign in with the account that was invited."),
    };
    OauthError::new("access_denied", text).with_status(403)
}

impl IdentitySource for Provider {
    fn begin<'a>(&'a self, oauth: Oauth<'a>, request: &'a str, lang: Lang) -> BoxFuture<'a, Result<Step, OauthError>> {
        Box::pin(async move { self.redirect(oauth, request).await.map_err(|e| spoken(e, lang)) })
    }

    fn complete<'a>(
        &'a self,
        oauth: Oauth<'a>,
        answer: &'a Params,
        cookie: Option<&'a str>,
        lang: Lang,
    ) -> BoxFuture<'a, Result<SignedIn, OauthError>> {
        Box::pin(async move { self.signed_in(oauth, answer, cookie, lang).await.map_err(|e| spoken(e, lang)) })
    }
}

impl Provider {
    /// To the provider's authorization endpoint, with this sign-in's state, nonce and
    /// PKCE challenge kept for the callback.
    async fn redirect(&self, oauth: Oauth<'_>, request: &str) -> Result<Step, OauthError> {
        let discovery = self.discovery().await?;
        let state = super::random_value();
        let row = SignInRow {
            request: request.to_string(),
            nonce: super::random_value(),
            verifier: super::random_value(),
            expires_at: crate::clock::now_unix() + SIGN_IN_SECONDS,
        };
        store::insert_sign_in(oauth.db, &super::digest_of(&state), &row).await?;
        let mut to = url::Url::parse(&discovery.authorization_endpoint).map_err(|_| unavailable("discovery"))?;
        to.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.config.client_id)
            .append_pair("redirect_uri", &format!("{}{CALLBACK_PATH}", oauth.config.public_url))
            .append_pair("scope", "openid email profile")
            .append_pair("state", &state)
            .append_pair("nonce", &row.nonce)
            .append_pair("code_challenge", &super::s256(&row.verifier))
            .append_pair("code_challenge_method", "S256");
        let secure = oauth.config.public_url.starts_with("https://");
        Ok(Step::Redirect { to: to.to_string(), cookie: Some(cookie(&state, SIGN_IN_SECONDS, secure)) })
    }

    /// The provider's answer at the callback: the person it signed in, bound or claimed.
    async fn signed_in(
        &self,
        oauth: Oauth<'_>,
        answer: &Params,
        cookie: Option<&str>,
        lang: Lang,
    ) -> Result<SignedIn, OauthError> {
        let again = |en: &str, pt: &str| {
            let text = said(
                lang,
                &format!("{en}: start the sign-in again from the app"),
                &format!("{pt}: comece o acesso de novo pelo aplicativo"),
            );
            OauthError::new("invalid_request", text).with_status(400)
        };
        let state = param(answer, "state").unwrap_or_default();
        // The browser that began is the one that comes back.
        if state.is_empty() || !cookie_state(cookie).is_some_and(|c| super::same(c, state)) {
            return Err(again(
                "This sign-in was not started in this browser",
                "Este acesso não foi começado neste navegador",
            ));
        }
        let now = crate::clock::now_unix();
        let Some(pending) = store::take_sign_in(oauth.db, &super::digest_of(state), now).await? else {
            return Err(again(
                "This sign-in has expired or was answered already",
                "Este acesso expirou ou já foi respondido",
            ));
        };
        if let Some(error) = param(answer, "error") {
            tracing::info!(error, "the identity provider did not sign the person in");
            let text = said(
                lang,
                &format!("The identity provider did not sign you in ({error})"),
                &format!("O provedor de identidade não fez o seu acesso ({error})"),
            );
            return Err(OauthError::new("access_denied", text).with_status(403));
        }
        let code = param(answer, "code").filter(|c| !c.is_empty()).ok_or_else(|| {
            again("The identity provider sent no code", "O provedor de identidade não enviou o código")
        })?;
        let discovery = self.discovery().await?;
        let token = self.exchange(oauth, &discovery, code, &pending.verifier).await?;
        let claims = self.verified(&discovery, &token, &pending.nonce).await?;
        let signing = Signing {
            issuer: &discovery.issuer,
            subject: &claims.sub,
            email: claims.email.as_deref(),
            email_verified: claims.email_verified,
            name: claims.name.as_deref(),
        };
        // A second sign-in of the same new person at the same moment: the loser of
        // the race finds the winner's binding.
        let mut outcome = None;
        for _ in 0..2 {
            let mut tx = oauth.db.begin().await?;
            match people::sign_in(&mut tx, &signing, now).await {
                Ok(answer) => {
                    tx.commit().await?;
                    outcome = Some(answer);
                    break;
                }
                Err(e) if e.is_unique_violation() => continue,
                Err(e) => return Err(e.into()),
            }
        }
        match outcome {
            Some(Ok(user_id)) => Ok(SignedIn { user_id, request: pending.request }),
            Some(Err(refused)) => Err(refusal(refused, claims.email.as_deref(), lang)),
            None => Err(OauthError::unavailable()),
        }
    }
}
