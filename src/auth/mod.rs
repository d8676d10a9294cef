//! Authentication (SPEC §6): bearer token → verified [`Identity`], the 401 challenge,
//! the RFC 9728 protected-resource metadata, and the workspace a request names.
//!
//! Below the doors and above storage: it knows the configuration, the signing keys and
//! the deny list (a [`Verifier`]), never the application state that holds them.
//!
//! Two surfaces share the verifier but not their tokens: MCP tokens carry the server's
//! public URL (or it + `/mcp`) as audience, API tokens the API base URL + `/v1`.

pub mod jwt;
pub mod keys;
pub mod workspace;

use http::HeaderMap;
use serde_json::{json, Value};

use crate::config::Config;
use crate::domain::roles::{all_scopes, ScopeSet, ALL_READS_SCOPE};
use crate::error::ApiError;
use crate::storage::Db;
use keys::KeyStore;
pub use workspace::WorkspaceHint;

/// What verifying a token needs: the configuration (audiences, issuer), the signing
/// keys and the database that holds the deny list.
#[derive(Clone, Copy)]
pub struct Verifier<'a> {
    pub config: &'a Config,
    pub rules: &'a TokenRules,
    pub keys: &'a KeyStore,
    pub db: &'a Db,
}

/// The token rules of both doors, from the configuration (audiences, issuer): built
/// once, not per request.
pub struct TokenRules {
    mcp: jwt::Rules,
    api: jwt::Rules,
}

impl TokenRules {
    pub fn new(config: &Config) -> TokenRules {
        TokenRules {
            mcp: jwt::Rules::new(&config.mcp_audiences(), &config.auth_server),
            api: jwt::Rules::new(&[config.api_audience()], &config.auth_server),
        }
    }
}

/// Which door a token is presented at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    Mcp,
    Api,
}

/// A verified caller.
#[derive(Debug, Clone)]
pub struct Identity {
    pub user_id: String,
    pub scopes: ScopeSet,
    pub jti: Option<String>,
}

/// Why authentication failed.
#[derive(Debug)]
pub enum AuthFailure {
    /// No `Authorization: Bearer` header.
    Missing,
    /// A token was sent but is not acceptable (bad, expired, revoked, wrong audience).
    Invalid,
    /// The secret store or database could not be asked.
    Unavailable(ApiError),
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

/// Verifies the token itself — signature, algorithm, audience, issuer, expiry — without
/// the database. A caller that uses this alone must still refuse a revoked token, with
/// [`check_revocation`] or in one statement with other work (both doors fold it into
/// the rate-limit count).
pub async fn verify(state: Verifier<'_>, headers: &HeaderMap, surface: Surface) -> Result<Identity, AuthFailure> {
    let token = match headers.get(http::header::AUTHORIZATION) {
        None => return Err(AuthFailure::Missing),
        Some(_) => bearer(headers).ok_or(AuthFailure::Invalid)?,
    };
    let keys = state.keys.current().await.map_err(AuthFailure::Unavailable)?;
    let rules = match surface {
        Surface::Mcp => &state.rules.mcp,
        Surface::Api => &state.rules.api,
    };
    let claims = jwt::verify(token, &keys, rules).map_err(|rejection| {
        tracing::debug!(?rejection, "token refused");
        AuthFailure::Invalid
    })?;
    if claims.sub.trim().is_empty() {
        return Err(AuthFailure::Invalid);
    }
    Ok(Identity { user_id: claims.sub, scopes: ScopeSet::parse(&claims.scope), jti: claims.jti })
}

/// Refuses a token whose `jti` is on the deny list.
pub async fn check_revocation(state: Verifier<'_>, identity: &Identity) -> Result<(), AuthFailure> {
    if let Some(jti) = &identity.jti {
        let revoked = crate::storage::identity::is_revoked(state.db, jti)
            .await
            .map_err(|e| AuthFailure::Unavailable(crate::storage::db_error(e)))?;
        if revoked {
            return Err(AuthFailure::Invalid);
        }
    }
    Ok(())
}

/// The well-known metadata URL for a resource path (`""` for `/`, `"/mcp"` for the alias).
pub fn metadata_url(public_url: &str, resource_path: &str) -> String {
    format!("{public_url}/.well-known/oauth-protected-resource{resource_path}")
}

/// The `WWW-Authenticate` value of a 401.
pub fn challenge(public_url: &str, resource_path: &str, token_sent: bool) -> String {
    let mut value = format!("Bearer resource_metadata=\"{}\"", metadata_url(public_url, resource_path));
    if token_sent {
        value.push_str(", error=\"invalid_token\"");
    }
    value
}

/// Scopes advertised in the metadata: the 20 read/write scopes and `finance.all`.
pub fn scopes_supported() -> Vec<String> {
    let mut scopes = all_scopes();
    scopes.push(ALL_READS_SCOPE.to_string());
    scopes
}

/// RFC 9728 protected-resource metadata for `resource_path` (`""` or `"/mcp"`).
pub fn protected_resource_metadata(config: &Config, resource_path: &str) -> Value {
    json!({
        "resource": format!("{}{}", config.public_url, resource_path),
        "authorization_servers": [config.auth_server],
        "scopes_supported": scopes_supported(),
        "bearer_methods_supported": ["header"],
        "resource_name": "Kobana Finance",
    })
}
