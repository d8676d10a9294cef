//! The authorization server (SPEC §6; MCP's authorization chapter): how an MCP client —
//! Claude's and ChatGPT's connectors, Claude Code, Cursor, the Inspector, the SDKs — gets
//! a token for a person, in the same binary and on the same origin as the MCP server.
//!
//! OAuth 2.1 with the authorization code and PKCE S256 only, for public clients:
//! * metadata (RFC 8414, [`metadata`]) with `client_id_metadata_document_supported`;
//! * clients registered by RFC 7591 or known by a client ID metadata document, fetched
//!   with its rules and kept within bounds ([`clients`], [`fetch`]);
//! * `/authorize` ([`authorize`]): the request checked, the person signed in by an
//!   identity source ([`identity`]: the development login here; the company's OpenID
//!   provider next), their consent asked on a page ([`pages`]) under a signed browser
//!   session and CSRF token ([`session`]), a code issued — single use, 60 seconds, bound
//!   to its client, redirect URI, PKCE challenge and resource — and `iss` in the answer
//!   (RFC 9207);
//! * `/token` and `/revoke` ([`tokens`]): this product's JWTs as access tokens (one hour,
//!   `aud` the resource asked for, RFC 8707, with the client and the grant), refresh
//!   tokens rotated with a short grace window, a reused one or a replayed code revoking
//!   the whole grant (RFC 7009 for revocation).
//!
//! Stateless: everything a step needs from an earlier one is in the database
//! (`storage::oauth`) or signed in what the browser carries, so each request may land on
//! another process or Lambda instance. Verifying tokens stays `auth`'s: an access token is
//! an ordinary token of this server, and a revoked grant's tokens are on the deny list
//! every request already reads.

pub mod apps;
pub mod authorize;
pub mod clients;
pub mod fetch;
pub mod id_token;
pub mod identity;
pub mod metadata;
pub mod oidc;
pub mod pages;
pub mod session;
pub mod tokens;

use base64::Engine;

use crate::auth::keys::KeyStore;
use crate::config::Config;
use crate::storage::Db;

/// What the authorization server works with.
#[derive(Clone, Copy)]
pub struct Oauth<'a> {
    pub config: &'a Config,
    pub db: &'a Db,
    pub keys: &'a KeyStore,
    /// The company's OpenID provider, when one is configured.
    pub provider: Option<&'a oidc::Provider>,
}

/// How long an authorization code may wait for its exchange (OAuth 2.1 recommends at
/// most ten minutes; a client exchanges it at once).
pub const CODE_SECONDS: i64 = 60;
/// How long an access token lives.
pub const ACCESS_SECONDS: i64 = 3600;
/// How long a refresh token (and its grant, renewed by each refresh) lives unused.
pub const REFRESH_SECONDS: i64 = 30 * 24 * 3600;
/// How long the refresh token just replaced still refreshes, answering what its first
/// refresh answered: a client that sent the same refresh twice at once (a retry after a
/// timeout, two egress addresses of one service) keeps its grant. Long enough for a
/// retried HTTP request (clients give up after 30 s), short enough that a stolen refresh
/// token replayed later revokes the grant; identity providers pick the same order
/// (30–60 s).
pub const GRACE_SECONDS: i64 = 60;

/// An OAuth error: its code (RFC 6749 §4.1.2.1, §5.2; RFC 8707; RFC 7591 §3.2.2), what it
/// says, and the HTTP status of a direct answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OauthError {
    pub error: &'static str,
    pub description: String,
    pub status: u16,
}

impl OauthError {
    pub fn new(error: &'static str, description: impl Into<String>) -> OauthError {
        OauthError { error, description: description.into(), status: 400 }
    }

    pub fn with_status(mut self, status: u16) -> OauthError {
        self.status = status;
        self
    }

    /// The database or the signing keys could not serve.
    pub fn unavailable() -> OauthError {
        OauthError::new("temporarily_unavailable", "The service is temporarily unavailable; try again").with_status(503)
    }

    /// The JSON body of a direct answer.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({ "error": self.error, "error_description": self.description })
    }
}

impl From<crate::storage::Error> for OauthError {
    fn from(e: crate::storage::Error) -> OauthError {
        if e.is_unavailable() {
            tracing::warn!(error = %e, "database unavailable");
        } else {
            tracing::error!(error = %e, "database error");
        }
        OauthError::unavailable()
    }
}

fn b64() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
}

/// A fresh secret value: 32 bytes of the system's CSPRNG, base64url.
pub fn random_value() -> String {
    let mut bytes = [0u8; 32];
    aws_lc_rs::rand::fill(&mut bytes).expect("the system's random source");
    b64().encode(bytes)
}

/// What a secret value (a code, a refresh token) is kept as: its SHA-256, base64url.
pub fn digest_of(value: &str) -> String {
    b64().encode(aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, value.as_bytes()).as_ref())
}

/// The PKCE S256 challenge of a verifier (RFC 7636 §4.2).
pub fn s256(verifier: &str) -> String {
    digest_of(verifier)
}

/// Whether a PKCE verifier has the form RFC 7636 §4.1 allows: 43–128 characters of
/// `[A-Za-z0-9-._~]`.
pub fn is_verifier(verifier: &str) -> bool {
    (43..=128).contains(&verifier.len())
        && verifier.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// Compares two secrets in constant time.
pub fn same(a: &str, b: &str) -> bool {
    aws_lc_rs::constant_time::verify_slices_are_equal(a.as_bytes(), b.as_bytes()).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7636 appendix B's example.
    #[test]
    fn the_s256_challenge_is_rfc_7636s() {
        assert_eq!(s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
        assert!(is_verifier("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"));
        assert!(!is_verifier("short"));
        assert!(!is_verifier(&"a".repeat(129)));
        assert!(!is_verifier(&format!("{}+", "a".repeat(43))));
    }
}
