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
    pub verified: &'a VerifiedTokens,
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

/// Tokens this process verified, kept until they expire: an agent sends the same
/// token with every request, and checking its signature and claims again each time
/// would be the same work for the same answer. An entry holds only for the signing
/// keys it was verified with (a rotation starts afresh) and for the door it was
/// presented at; revocation is not cached (the deny list is read with every request's
/// rate-limit count). Bounded: past a number of entries it starts afresh.
#[derive(Default)]
pub struct VerifiedTokens {
    mcp: std::sync::Mutex<std::collections::HashMap<Box<str>, Verified>>,
    api: std::sync::Mutex<std::collections::HashMap<Box<str>, Verified>>,
}

struct Verified {
    identity: Identity,
    expires: u64,
    keys: std::sync::Arc<keys::Keys>,
}

impl VerifiedTokens {
    const BOUND: usize = 4096;

    fn door(&self, surface: Surface) -> std::sync::MutexGuard<'_, std::collections::HashMap<Box<str>, Verified>> {
        match surface {
            Surface::Mcp => &self.mcp,
            Surface::Api => &self.api,
        }
        .lock()
        .unwrap_or_else(|e| e.into_inner())
    }

    /// The identity of `token` if it was verified at `surface` with `keys` and has not
    /// expired at `now` (Unix seconds; the same leeway as a fresh verification).
    fn get(&self, surface: Surface, token: &str, keys: &std::sync::Arc<keys::Keys>, now: u64) -> Option<Identity> {
        self.door(surface)
            .get(token)
            .filter(|v| std::sync::Arc::ptr_eq(&v.keys, keys) && now <= v.expires.saturating_add(jwt::LEEWAY_SECONDS))
            .map(|v| v.identity.clone())
    }

    fn keep(
        &self,
        surface: Surface,
        token: &str,
        keys: &std::sync::Arc<keys::Keys>,
        identity: &Identity,
        expires: u64,
    ) {
        let mut door = self.door(surface);
        if door.len() >= VerifiedTokens::BOUND {
            door.clear();
        }
        door.insert(
            Box::from(token),
            Verified { identity: identity.clone(), expires, keys: std::sync::Arc::clone(keys) },
        );
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
    /// The OAuth client its token was issued to (the audit trail records it).
    pub client_id: Option<String>,
}

/// Why authentication failed.
#[derive(Debug)]
pub enum AuthFailure {
    /// No `Authorization: Bearer` header.
    Missing,
    /// A token was sent but is not acceptable.
    Refused(Refusal),
    /// The secret store or database could not be asked.
    Unavailable(ApiError),
}

/// Why a token that was sent is refused, as far as its holder may be told. Only a token
/// whose signature this server verified is told more than "not valid": the holder of a
/// forged or malformed token learns nothing a valid token's holder would not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Not signed by this server, malformed, or a claim that is wrong for every door.
    Invalid,
    /// Signed here, and past its expiry (and the leeway).
    Expired,
    /// Signed here for the other door: an API token at the MCP endpoint, an MCP token
    /// at `/v1`.
    OtherDoor,
    /// Signed here, and revoked.
    Revoked,
}

impl Refusal {
    /// What the holder is told at `surface`, and what to do: the error's message and the
    /// challenge's `error_description` (RFC 6750: printable ASCII, no `"` or `\`).
    pub fn description(self, surface: Surface) -> &'static str {
        match (self, surface) {
            (Refusal::Invalid, Surface::Mcp) => {
                "The bearer token is not valid for this server (not issued by it, or malformed); sign in again to \
                 get a new token"
            }
            (Refusal::Invalid, Surface::Api) => {
                "The bearer token is not valid for this server (not issued by it, or malformed); use an API token \
                 (kobana-finance-mcp token --audience api)"
            }
            (Refusal::Expired, Surface::Mcp) => {
                "The bearer token has expired; sign in again (or refresh it) to get a new token"
            }
            (Refusal::Expired, Surface::Api) => {
                "The API token has expired; mint a new one (kobana-finance-mcp token --audience api)"
            }
            (Refusal::OtherDoor, Surface::Mcp) => {
                "This is an API token, for the REST API /v1; the MCP endpoint takes an MCP token: sign in from the \
                 client, or mint one (kobana-finance-mcp token --audience mcp)"
            }
            (Refusal::OtherDoor, Surface::Api) => {
                "This is an MCP token, for the MCP endpoint; /v1 takes an API token \
                 (kobana-finance-mcp token --audience api)"
            }
            (Refusal::Revoked, Surface::Mcp) => "The bearer token has been revoked; sign in again to get a new token",
            (Refusal::Revoked, Surface::Api) => {
                "The API token has been revoked; mint a new one (kobana-finance-mcp token --audience api)"
            }
        }
    }
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
        Some(_) => bearer(headers).ok_or(AuthFailure::Refused(Refusal::Invalid))?,
    };
    let keys = state.keys.current().await.map_err(AuthFailure::Unavailable)?;
    if let Some(identity) = state.verified.get(surface, token, &keys, crate::clock::now_unix().max(0) as u64) {
        return Ok(identity);
    }
    let (rules, other_door) = match surface {
        Surface::Mcp => (&state.rules.mcp, &state.rules.api),
        Surface::Api => (&state.rules.api, &state.rules.mcp),
    };
    let claims = jwt::verify(token, &keys, rules).map_err(|rejection| {
        tracing::debug!(?rejection, "token refused");
        AuthFailure::Refused(refusal(&rejection, || jwt::verify(token, &keys, other_door).is_ok()))
    })?;
    if claims.sub.trim().is_empty() {
        return Err(AuthFailure::Refused(Refusal::Invalid));
    }
    let identity = Identity {
        user_id: claims.sub,
        scopes: ScopeSet::parse(&claims.scope),
        jti: claims.jti,
        client_id: claims.client_id,
    };
    state.verified.keep(surface, token, &keys, &identity, claims.exp);
    Ok(identity)
}

/// What a rejection may tell. The checks of the claims come after the signature's
/// (`jsonwebtoken::decode`), so an expiry or an audience is only ever reported for a
/// token this server signed; the other door is named only when the token passes all of
/// that door's rules (`at_other_door`, asked only for a wrong audience).
fn refusal(rejection: &jwt::TokenRejection, at_other_door: impl FnOnce() -> bool) -> Refusal {
    use jsonwebtoken::errors::ErrorKind;
    match rejection {
        jwt::TokenRejection::Invalid(e) => match e.kind() {
            ErrorKind::ExpiredSignature => Refusal::Expired,
            ErrorKind::InvalidAudience if at_other_door() => Refusal::OtherDoor,
            _ => Refusal::Invalid,
        },
        jwt::TokenRejection::TooLarge => Refusal::Invalid,
    }
}

/// Refuses a token whose `jti` is on the deny list.
pub async fn check_revocation(state: Verifier<'_>, identity: &Identity) -> Result<(), AuthFailure> {
    if let Some(jti) = &identity.jti {
        let revoked = crate::storage::identity::is_revoked(state.db, jti)
            .await
            .map_err(|e| AuthFailure::Unavailable(crate::storage::db_error(e)))?;
        if revoked {
            return Err(AuthFailure::Refused(Refusal::Revoked));
        }
    }
    Ok(())
}

/// The well-known metadata URL for a resource path (`""` for `/`, `"/mcp"` for the alias).
pub fn metadata_url(public_url: &str, resource_path: &str) -> String {
    format!("{public_url}/.well-known/oauth-protected-resource{resource_path}")
}

/// The `WWW-Authenticate` value of a 401: where the metadata is, and the scopes a client
/// asks for (MCP: `scope` beside `resource_metadata`; every read, write and bank scope —
/// the person's role still decides each request); for a token that was sent and refused,
/// RFC 6750's `error` and the `error_description` of why, at `surface`.
pub fn challenge(public_url: &str, resource_path: &str, refused: Option<(Refusal, Surface)>) -> String {
    let mut value = format!(
        "Bearer resource_metadata=\"{}\", scope=\"{}\"",
        metadata_url(public_url, resource_path),
        all_scopes().join(" ")
    );
    if let Some((refusal, surface)) = refused {
        value.push_str(", error=\"invalid_token\", error_description=\"");
        value.push_str(refusal.description(surface));
        value.push('"');
    }
    value
}

/// Scopes advertised in the metadata: the 29 read, write and bank scopes and `finance.all`.
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// RFC 6750 §3: `error_description` is printable ASCII without `"` or `\`.
    #[test]
    fn every_refusal_description_fits_an_error_description() {
        for refusal in [Refusal::Invalid, Refusal::Expired, Refusal::OtherDoor, Refusal::Revoked] {
            for surface in [Surface::Mcp, Surface::Api] {
                let text = refusal.description(surface);
                assert!(
                    text.bytes().all(|b| (0x20..=0x7e).contains(&b) && b != b'"' && b != b'\\'),
                    "{refusal:?} {surface:?}: {text}"
                );
            }
        }
    }

    /// A kept token answers only at its door, with the keys it was verified with, until
    /// its expiry plus the leeway a fresh verification allows.
    #[test]
    fn a_verified_token_is_kept_for_its_door_and_keys_until_it_expires() {
        let verified = VerifiedTokens::default();
        let keys = Arc::new(keys::Keys::from_secret("secret", None));
        let identity = Identity {
            user_id: "u1".into(),
            scopes: ScopeSet::parse("finance.payables"),
            jti: Some("j1".into()),
            client_id: None,
        };
        assert!(verified.get(Surface::Mcp, "t1", &keys, 900).is_none());
        verified.keep(Surface::Mcp, "t1", &keys, &identity, 1_000);
        assert_eq!(verified.get(Surface::Mcp, "t1", &keys, 900).map(|i| i.user_id), Some("u1".into()));
        assert!(verified.get(Surface::Mcp, "t1", &keys, 1_000 + jwt::LEEWAY_SECONDS).is_some());
        assert!(verified.get(Surface::Mcp, "t1", &keys, 1_001 + jwt::LEEWAY_SECONDS).is_none(), "expired");
        assert!(verified.get(Surface::Api, "t1", &keys, 900).is_none(), "another door");
        assert!(verified.get(Surface::Mcp, "t2", &keys, 900).is_none(), "another token");
        let rotated = Arc::new(keys::Keys::from_secret("secret", None));
        assert!(verified.get(Surface::Mcp, "t1", &rotated, 900).is_none(), "other keys: verified again");
    }
}
