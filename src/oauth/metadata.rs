//! The authorization server's metadata (RFC 8414) and the scopes it grants.
//!
//! The issuer is `KFIN_AUTH_SERVER`, this server's public URL by default; the document is
//! served at `/.well-known/oauth-authorization-server` and, for clients that insert the
//! MCP endpoint's path, at `/.well-known/oauth-authorization-server/mcp` too — always a
//! direct 200, never a redirect (a client stops its discovery at one). Its `issuer` is
//! exactly the configured one, as clients compare it byte for byte.

use serde_json::{json, Value};

use crate::config::Config;
use crate::domain::roles::{all_scopes, Resource, ALL_READS_SCOPE};

use super::OauthError;

/// The scope a client may ask for to get a refresh token (RFC 6749 grants one anyway,
/// to a public client, rotated): accepted and left out of the token's scopes.
pub const OFFLINE_ACCESS: &str = "offline_access";

/// The scopes this server grants: every read, write and bank scope, `finance.all`, and
/// the scopes of who has access (for the REST API only: [`scope_fits`]).
pub fn scopes_supported() -> Vec<String> {
    let mut scopes = all_scopes();
    scopes.push(ALL_READS_SCOPE.to_string());
    scopes.push(Resource::Access.read_scope());
    scopes.push(Resource::Access.write_scope());
    scopes
}

/// Whether `scope` may be granted for `resource`: who has access is managed through the
/// REST API only (no tool reaches it), so an MCP token never carries its scopes.
pub fn scope_fits(config: &Config, scope: &str, resource: &str) -> Result<(), OauthError> {
    let access =
        scope.split_ascii_whitespace().any(|s| Resource::of_scope(s).is_some_and(|(r, _)| r == Resource::Access));
    if access && resource != config.api_audience() {
        return Err(OauthError::new(
            "invalid_scope",
            "finance.access and finance.access.write are for the REST API (resource …/v1) only",
        ));
    }
    Ok(())
}

/// The scopes granted when a client asks for none (and the ones the 401 challenge names):
/// every read, write and bank scope. The consent page shows them, and each request is
/// still held to the person's role.
pub fn default_scope() -> String {
    all_scopes().join(" ")
}

/// The scopes a request asks for, checked: every one known (`invalid_scope` otherwise),
/// `offline_access` set apart, none asked for meaning the default set. Runs of spaces
/// separate them.
pub fn requested_scope(scope: Option<&str>) -> Result<String, OauthError> {
    let supported = scopes_supported();
    let mut granted: Vec<&str> = Vec::new();
    for scope in scope.unwrap_or_default().split_ascii_whitespace() {
        if scope == OFFLINE_ACCESS || granted.contains(&scope) {
            continue;
        }
        if !supported.iter().any(|s| s == scope) {
            return Err(OauthError::new("invalid_scope", format!("Unknown scope: {scope}")));
        }
        granted.push(scope);
    }
    Ok(if granted.is_empty() { default_scope() } else { granted.join(" ") })
}

/// Whether every scope of `asked` is in `held` (a refresh may narrow a grant, never
/// widen it).
pub fn is_within(asked: &str, held: &str) -> bool {
    asked
        .split_ascii_whitespace()
        .all(|scope| scope == OFFLINE_ACCESS || held.split_ascii_whitespace().any(|h| h == scope))
}

/// The RFC 8414 document.
pub fn document(config: &Config) -> Value {
    let issuer = &config.auth_server;
    let mut scopes = scopes_supported();
    scopes.push(OFFLINE_ACCESS.to_string());
    json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "registration_endpoint": format!("{issuer}/register"),
        "revocation_endpoint": format!("{issuer}/revoke"),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": scopes,
        "authorization_response_iss_parameter_supported": true,
        "client_id_metadata_document_supported": true,
        "service_documentation": format!("{}/", config.public_url),
    })
}

/// The resource a request names (RFC 8707): one of this server's (its MCP endpoint,
/// either form, or its REST API), compared with the scheme and host in any case and a
/// trailing slash ignored. `invalid_request` without one, `invalid_target` for another.
pub fn resource(config: &Config, resource: Option<&str>) -> Result<String, OauthError> {
    let Some(asked) = resource.map(str::trim).filter(|r| !r.is_empty()) else {
        return Err(OauthError::new(
            "invalid_request",
            format!("resource (RFC 8707) is required: this server's MCP URL, {}/mcp", config.public_url),
        ));
    };
    let wanted = canonical(asked);
    config
        .resources()
        .into_iter()
        .find(|ours| canonical(ours) == wanted)
        .ok_or_else(|| OauthError::new("invalid_target", "The resource is not this server's"))
}

/// A URL with its scheme and host lower-cased and no trailing slash (for comparing
/// resources; the path keeps its case).
fn canonical(url: &str) -> String {
    let url = url.trim_end_matches('/');
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            format!("{}://{}{path}", scheme.to_ascii_lowercase(), host.to_ascii_lowercase())
        }
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_asks_for_known_scopes_or_the_default() {
        assert_eq!(requested_scope(None).unwrap(), default_scope());
        assert_eq!(requested_scope(Some("  offline_access ")).unwrap(), default_scope());
        assert_eq!(
            requested_scope(Some("finance.payables  finance.payables offline_access finance.all")).unwrap(),
            "finance.payables finance.all"
        );
        assert_eq!(requested_scope(Some("finance.payables admin")).unwrap_err().error, "invalid_scope");
        assert!(is_within("finance.payables offline_access", "finance.payables finance.all"));
        assert!(!is_within("finance.payables.write", "finance.payables"));
    }

    #[test]
    fn a_resource_is_compared_as_a_url() {
        assert_eq!(canonical("HTTPS://Example.COM/mcp/"), "https://example.com/mcp");
        assert_eq!(canonical("https://example.com/MCP"), "https://example.com/MCP");
    }
}
