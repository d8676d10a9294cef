//! The clients: registered by RFC 7591 (`/register`) or known by a client ID metadata
//! document (the client id is the document's HTTPS URL; [`super::fetch`] reads it), and
//! which redirect URIs each may be answered at.
//!
//! Every client here is public (`token_endpoint_auth_method` `none`): PKCE proves who
//! exchanges a code. A redirect URI is `https`, a loopback `http` URI (`127.0.0.1`,
//! `[::1]`, `localhost`) or a native app's private-use scheme (`cursor://…`); never a
//! fragment, never `javascript:` and its kin. A request's redirect URI matches a
//! registered one character for character, except that a loopback URI may name any
//! port (RFC 8252 §7.3; a CLI binds a free port each time and registers none).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{Oauth, OauthError};
use crate::domain::text;
use crate::storage::oauth::{self as store, ClientRow};

/// A client as the flow needs it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Client {
    pub client_id: String,
    pub client_name: Option<String>,
    pub redirect_uris: Vec<String>,
    /// Known by its metadata document (its id is a URL).
    pub by_document: bool,
}

impl Client {
    /// The host the person is shown for this client: its document's host (a URL id),
    /// else its first redirect URI's.
    pub fn host(&self) -> String {
        let of = |url: &str| host_of(url).unwrap_or_else(|| url.to_string());
        if self.by_document {
            of(&self.client_id)
        } else {
            self.redirect_uris.first().map(|u| of(u)).unwrap_or_default()
        }
    }

    /// The redirect URI a request names, if it is one of this client's (`None` naming
    /// none: its only one).
    pub fn redirect_uri(&self, asked: Option<&str>) -> Option<String> {
        match asked {
            Some(asked) => self.redirect_uris.iter().any(|r| redirect_matches(r, asked)).then(|| asked.to_string()),
            None if self.redirect_uris.len() == 1 => self.redirect_uris.first().cloned(),
            None => None,
        }
    }

    /// Whether every redirect URI is on this machine (a local app, or one that only
    /// pretends): the person is warned.
    pub fn only_local(&self) -> bool {
        self.redirect_uris.iter().all(|u| loopback_host(u).is_some())
    }

    fn of(row: &ClientRow) -> Result<Client, OauthError> {
        let redirect_uris: Vec<String> = serde_json::from_str(&row.redirect_uris)
            .map_err(|_| OauthError::new("server_error", "A client's registration is unreadable").with_status(500))?;
        Ok(Client {
            client_id: row.client_id.clone(),
            client_name: row.client_name.clone(),
            redirect_uris,
            by_document: row.kind == "metadata_document",
        })
    }
}

/// The host (and port) of a URL.
pub fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// The loopback host of an `http` URL (`127.0.0.1`, `[::1]`, `localhost`), without its
/// port.
fn loopback_host(url: &str) -> Option<&str> {
    let rest = url.strip_prefix("http://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = match authority.strip_prefix('[') {
        Some(v6) => &authority[..v6.find(']')? + 2],
        None => authority.split(':').next()?,
    };
    matches!(host, "127.0.0.1" | "[::1]" | "localhost").then_some(host)
}

/// A loopback URL without its port: `http://127.0.0.1:53219/callback` →
/// `http://127.0.0.1/callback`.
fn without_port(url: &str) -> Option<String> {
    let host = loopback_host(url)?;
    let rest = &url["http://".len() + host.len()..];
    let rest = match rest.strip_prefix(':') {
        Some(port) => &port[port.find(|c: char| !c.is_ascii_digit()).unwrap_or(port.len())..],
        None => rest,
    };
    Some(format!("http://{host}{rest}"))
}

/// Whether `asked` is the registered redirect URI `registered`: the same string, or both
/// loopback URIs that differ only in the port.
pub fn redirect_matches(registered: &str, asked: &str) -> bool {
    if registered == asked {
        return true;
    }
    match (without_port(registered), without_port(asked)) {
        (Some(registered), Some(asked)) => registered == asked,
        _ => false,
    }
}

/// Why a redirect URI is refused, if it is.
pub fn redirect_refusal(uri: &str) -> Option<&'static str> {
    let Some((scheme, rest)) = uri.split_once(':') else { return Some("is not an absolute URI") };
    if uri.len() > 2000 || !uri.is_ascii() || uri.contains(char::is_whitespace) || !text::is_plain(uri) {
        return Some("is not a URI");
    }
    if uri.contains('#') {
        return Some("has a fragment");
    }
    let scheme = scheme.to_ascii_lowercase();
    match scheme.as_str() {
        "https" => (host_of(uri).is_none() || !rest.starts_with("//")).then_some("has no host"),
        "http" => {
            loopback_host(uri).is_none().then_some("is http but not a loopback address (127.0.0.1, [::1], localhost)")
        }
        "javascript" | "data" | "file" | "vbscript" | "blob" | "about" | "ftp" | "ws" | "wss" => {
            Some("has a scheme a browser runs or reads, not an app's")
        }
        _ if scheme.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-'))
            && scheme.bytes().next().is_some_and(|b| b.is_ascii_alphabetic()) =>
        {
            None
        }
        _ => Some("has an invalid scheme"),
    }
}

/// The registration a client sends (RFC 7591 §2): what this server reads of it.
#[derive(Debug, Deserialize)]
pub struct Registration {
    #[serde(default)]
    pub redirect_uris: Option<Vec<String>>,
    #[serde(default)]
    pub client_name: Option<String>,
    #[serde(default)]
    pub token_endpoint_auth_method: Option<String>,
    #[serde(default)]
    pub grant_types: Option<Vec<String>>,
    #[serde(default)]
    pub response_types: Option<Vec<String>>,
    #[serde(default)]
    pub application_type: Option<String>,
    #[serde(default)]
    pub client_uri: Option<String>,
    #[serde(default)]
    pub scope: Option<String>,
}

fn invalid_metadata(description: impl Into<String>) -> OauthError {
    OauthError::new("invalid_client_metadata", description)
}

/// A client's name as shown: plain, at most 100 characters.
fn checked_name(name: Option<String>) -> Result<Option<String>, OauthError> {
    match name.map(|n| n.trim().to_string()).filter(|n| !n.is_empty()) {
        Some(name) if name.chars().count() > 100 || !text::is_plain(&name) => {
            Err(invalid_metadata("client_name must be one line of at most 100 characters"))
        }
        name => Ok(name),
    }
}

/// The redirect URIs of a registration or a document, each checked.
fn checked_redirects(uris: Option<Vec<String>>) -> Result<Vec<String>, OauthError> {
    let uris = uris.filter(|u| !u.is_empty()).ok_or_else(|| {
        OauthError::new("invalid_redirect_uri", "redirect_uris is required: the URIs the client is answered at")
    })?;
    if uris.len() > 20 {
        return Err(OauthError::new("invalid_redirect_uri", "redirect_uris has more than 20 URIs"));
    }
    for uri in &uris {
        if let Some(why) = redirect_refusal(uri) {
            return Err(OauthError::new("invalid_redirect_uri", format!("The redirect URI {uri:?} {why}")));
        }
    }
    Ok(uris)
}

/// The grant types a client may use here: the authorization code and its refresh.
const GRANTS: [&str; 2] = ["authorization_code", "refresh_token"];

/// `POST /register` (RFC 7591): a public client, answered 201 with what was registered.
/// A secret-based `token_endpoint_auth_method` is replaced by `none` (the server may,
/// §3.2.1): this server issues no client secret.
pub async fn register(oauth: Oauth<'_>, body: &[u8]) -> Result<Value, OauthError> {
    if body.len() > 16 * 1024 {
        return Err(invalid_metadata("The registration is larger than 16 KB"));
    }
    let registration: Registration = serde_json::from_slice(body)
        .map_err(|_| invalid_metadata("The registration must be a JSON object of RFC 7591 client metadata"))?;
    let redirect_uris = checked_redirects(registration.redirect_uris)?;
    let client_name = checked_name(registration.client_name)?;
    let grant_types = registration.grant_types.unwrap_or_else(|| GRANTS.map(String::from).to_vec());
    if let Some(unsupported) = grant_types.iter().find(|g| !GRANTS.contains(&g.as_str())) {
        return Err(invalid_metadata(format!(
            "grant_types may hold authorization_code and refresh_token only, not {unsupported}"
        )));
    }
    if !grant_types.iter().any(|g| g == "authorization_code") {
        return Err(invalid_metadata("grant_types must include authorization_code"));
    }
    let response_types = registration.response_types.unwrap_or_else(|| vec!["code".into()]);
    if response_types.iter().any(|r| r != "code") {
        return Err(invalid_metadata("response_types may hold code only"));
    }
    let now = crate::clock::now_unix();
    let client_id = format!("kfin-{}", uuid::Uuid::new_v4().simple());
    let mut answer = json!({
        "client_id": client_id,
        "client_id_issued_at": now,
        "redirect_uris": redirect_uris,
        "token_endpoint_auth_method": "none",
        "grant_types": grant_types,
        "response_types": response_types,
    });
    if let Some(name) = &client_name {
        answer["client_name"] = json!(name);
    }
    if let Some(kind) = registration.application_type.filter(|k| k == "native" || k == "web") {
        answer["application_type"] = json!(kind);
    }
    let row = ClientRow {
        client_id: client_id.clone(),
        kind: "registered".into(),
        client_name,
        redirect_uris: serde_json::to_string(&redirect_uris).unwrap_or_default(),
        document: answer.to_string(),
        created_at: now,
        expires_at: None,
    };
    let mut conn = oauth.db.acquire().await?;
    store::keep_client(&mut conn, &row).await?;
    Ok(answer)
}

/// The client `client_id`, registered or fetched by its document (from the cache while
/// it lasts). An error here is shown on a page, never sent to a redirect URI not yet
/// trusted.
pub async fn resolve(oauth: Oauth<'_>, client_id: &str) -> Result<Client, OauthError> {
    let now = crate::clock::now_unix();
    let mut conn = oauth.db.acquire().await?;
    let kept = store::client(&mut conn, client_id).await?;
    drop(conn);
    match kept {
        Some(row) if row.kind == "registered" => Client::of(&row),
        Some(row) if row.expires_at.is_some_and(|end| end > now) => Client::of(&row),
        _ if super::fetch::is_document_url(client_id) => {
            let document = super::fetch::document(oauth, client_id).await?;
            let client = accept_document(client_id, &document.body)?;
            let row = ClientRow {
                client_id: client_id.to_string(),
                kind: "metadata_document".into(),
                client_name: client.client_name.clone(),
                redirect_uris: serde_json::to_string(&client.redirect_uris).unwrap_or_default(),
                document: String::from_utf8_lossy(&document.body).into_owned(),
                created_at: now,
                expires_at: Some(now + document.cache_seconds),
            };
            let mut conn = oauth.db.acquire().await?;
            store::keep_client(&mut conn, &row).await?;
            Ok(client)
        }
        _ => Err(OauthError::new(
            "invalid_client",
            "Unknown client_id: register the client first (RFC 7591) or use \
                  an HTTPS URL of its metadata document",
        )
        .with_status(401)),
    }
}

/// A client ID metadata document, checked (draft-ietf-oauth-client-id-metadata-document
/// §4.1): a JSON object whose `client_id` is the URL it was fetched from, character for
/// character, with its redirect URIs, and no shared-secret authentication — a document
/// that prefers `private_key_jwt` is accepted as a public client when it also offers
/// `none` (this server verifies no client key).
pub fn accept_document(url: &str, body: &[u8]) -> Result<Client, OauthError> {
    let refuse = |why: &str| OauthError::new("invalid_client", format!("The client's metadata document {why}"));
    let document: Value = serde_json::from_slice(body).map_err(|_| refuse("is not JSON"))?;
    let Some(object) = document.as_object() else { return Err(refuse("is not a JSON object")) };
    if object.get("client_id").and_then(Value::as_str) != Some(url) {
        return Err(refuse("names another client_id than its URL"));
    }
    if object.contains_key("client_secret") || object.contains_key("client_secret_expires_at") {
        return Err(refuse("carries a client secret, which a document must not"));
    }
    let method = object.get("token_endpoint_auth_method").and_then(Value::as_str).unwrap_or("none");
    let offered: Vec<&str> = object
        .get("token_endpoint_auth_methods_supported")
        .and_then(Value::as_array)
        .map(|methods| methods.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    match method {
        "none" => {}
        "private_key_jwt" if offered.contains(&"none") => {}
        "private_key_jwt" => return Err(refuse("asks for private_key_jwt, which this server does not verify")),
        _ => return Err(refuse("asks for a shared-secret client authentication, which a document may not use")),
    }
    let redirect_uris = object
        .get("redirect_uris")
        .and_then(Value::as_array)
        .map(|uris| uris.iter().filter_map(Value::as_str).map(String::from).collect::<Vec<_>>());
    let redirect_uris =
        checked_redirects(redirect_uris).map_err(|e| refuse(&format!("is refused: {}", e.description)))?;
    let client_name = object.get("client_name").and_then(Value::as_str).map(String::from);
    let client_name = checked_name(client_name).map_err(|_| refuse("has a client_name that is not one short line"))?;
    Ok(Client { client_id: url.to_string(), client_name, redirect_uris, by_document: true })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redirect_uri_matches_exactly_or_on_loopback_by_any_port() {
        assert!(redirect_matches("https://claude.ai/api/mcp/auth_callback", "https://claude.ai/api/mcp/auth_callback"));
        assert!(!redirect_matches(
            "https://claude.ai/api/mcp/auth_callback",
            "https://claude.ai/api/mcp/auth_callbacK"
        ));
        assert!(!redirect_matches(
            "https://claude.ai/api/mcp/auth_callback",
            "https://claude.ai:444/api/mcp/auth_callback"
        ));
        assert!(!redirect_matches(
            "https://claude.ai/api/mcp/auth_callback",
            "https://claude.ai/api/mcp/auth_callback/"
        ));
        assert!(redirect_matches("http://127.0.0.1/callback", "http://127.0.0.1:53219/callback"));
        assert!(redirect_matches("http://localhost:8787/callback", "http://localhost:9999/callback"));
        assert!(redirect_matches("http://[::1]/cb", "http://[::1]:1234/cb"));
        assert!(!redirect_matches("http://127.0.0.1/callback", "http://127.0.0.1:53219/other"));
        assert!(!redirect_matches("http://127.0.0.1/callback", "http://127.0.0.1:53219/callback?x=1"));
        assert!(!redirect_matches("http://127.0.0.1/callback", "http://localhost:53219/callback"));
        assert!(!redirect_matches("http://127.0.0.1/callback", "http://127.0.0.1.evil.com/callback"));
    }

    #[test]
    fn a_redirect_uri_is_https_loopback_or_an_apps_scheme() {
        for good in [
            "https://chatgpt.com/connector_platform_oauth_redirect",
            "http://127.0.0.1:6276/oauth/callback",
            "http://localhost/callback",
            "http://[::1]:3000/cb",
            "cursor://anysphere.cursor-mcp/oauth/callback",
        ] {
            assert_eq!(redirect_refusal(good), None, "{good}");
        }
        for bad in [
            "http://example.com/cb",
            "https://example.com/cb#x",
            "javascript:alert(1)",
            "data:text/html,hi",
            "file:///etc/passwd",
            "/relative",
            "https:/no-host",
            "http://127.0.0.1.evil.com/cb",
            "https://exa mple.com/",
        ] {
            assert!(redirect_refusal(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn a_document_names_itself_and_no_secret() {
        let url = "https://claude.ai/oauth/mcp-oauth-client-metadata";
        let claude = json!({"client_id": url, "client_name": "Claude", "client_uri": "https://claude.ai",
            "redirect_uris": ["https://claude.ai/api/mcp/auth_callback"],
            "grant_types": ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:jwt-bearer"],
            "response_types": ["code"], "token_endpoint_auth_method": "none"});
        let client = accept_document(url, claude.to_string().as_bytes()).unwrap();
        assert_eq!(client.host(), "claude.ai");
        let chatgpt_url = "https://chatgpt.com/oauth/abc/client.json";
        let chatgpt = json!({"client_id": chatgpt_url, "client_name": "ChatGPT",
            "redirect_uris": ["https://chatgpt.com/connector_platform_oauth_redirect"],
            "token_endpoint_auth_method": "private_key_jwt", "token_endpoint_auth_methods_supported": ["none", "private_key_jwt"],
            "jwks_uri": "https://chatgpt.com/oauth/jwks.json"});
        assert!(accept_document(chatgpt_url, chatgpt.to_string().as_bytes()).is_ok());
        let mut other = claude.clone();
        other["client_id"] = json!(format!("{url}/"));
        assert!(accept_document(url, other.to_string().as_bytes()).is_err());
        let mut secret = claude.clone();
        secret["token_endpoint_auth_method"] = json!("client_secret_basic");
        assert!(accept_document(url, secret.to_string().as_bytes()).is_err());
        let mut key_only = chatgpt.clone();
        key_only["token_endpoint_auth_methods_supported"] = json!(["private_key_jwt"]);
        assert!(accept_document(chatgpt_url, key_only.to_string().as_bytes()).is_err());
        assert!(accept_document(url, b"[]").is_err());
    }
}
