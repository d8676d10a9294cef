//! Reading a client ID metadata document (draft-ietf-oauth-client-id-metadata-document
//! §3, §4, §6.5, §6.6), which means fetching a URL a stranger chose — so it is done with
//! the draft's rules and the usual guards against server-side request forgery:
//!
//! * the URL: `https`, a host, a path other than `/`, no user, query, fragment or dot
//!   segment;
//! * where it points: every address its name resolves to must be a public one — not
//!   loopback, private, link-local, shared, documentation, benchmarking, multicast or
//!   reserved (RFC 6890) — and the connection is made to the addresses so checked (the
//!   connector resolves through [`Vetting`], so a name cannot resolve one way for the
//!   check and another for the connection); an address literal is checked the same way;
//! * the answer: `200` only (a redirect is not followed), within 5 seconds, at most 5 KiB;
//! * its cache: the answer's `max-age`, kept between 5 minutes and a day; `no-store` or
//!   `no-cache`, not kept.
//!
//! The development switch (`KFIN_OAUTH_DEV_CLIENT_METADATA`, refused in Lambda) lets a
//! test or a developer's own client serve its document from a loopback address, over
//! `http` too, and `KFIN_OAUTH_DEV_CA` names the certificate such an HTTPS server uses.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::connect::dns::Name;
use hyper_util::client::legacy::connect::HttpConnector;

use super::{Oauth, OauthError};

/// The most a document may weigh (the draft recommends 5 kilobytes).
pub const MAX_BYTES: usize = 5 * 1024;
/// How long a fetch may take, connection, headers and body together.
pub const TIMEOUT: Duration = Duration::from_secs(5);
/// How long a document is kept at least and at most, whatever its `max-age` says, and
/// when it says nothing.
const CACHE_MIN_SECONDS: i64 = 300;
const CACHE_MAX_SECONDS: i64 = 86_400;
const CACHE_DEFAULT_SECONDS: i64 = 3_600;

/// A document as fetched.
#[derive(Debug)]
pub struct Fetched {
    pub body: Vec<u8>,
    /// How long it may be kept (0: not at all).
    pub cache_seconds: i64,
}

fn refused(why: impl std::fmt::Display) -> OauthError {
    OauthError::new("invalid_client", format!("The client's metadata document {why}"))
}

/// Whether a client id is a URL to read a document from (else it is a registration's):
/// `https://…`, or `http://` under the development switch.
pub fn is_document_url(client_id: &str) -> bool {
    client_id.starts_with("https://") || client_id.starts_with("http://")
}

/// Whether an address is one a stranger's URL may not reach (RFC 6890's special-use
/// blocks and their kin), loopback set apart for the development switch.
pub fn is_special_use(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            a == 0
                || a == 10
                || a == 127
                || (a == 100 && (64..128).contains(&b))
                || (a == 169 && b == 254)
                || (a == 172 && (16..32).contains(&b))
                || (a == 192 && b == 0 && (c == 0 || c == 2))
                || (a == 192 && b == 88 && c == 99)
                || (a == 192 && b == 168)
                || (a == 198 && (18..20).contains(&b))
                || (a == 198 && b == 51 && c == 100)
                || (a == 203 && b == 0 && c == 113)
                || a >= 224
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_special_use(IpAddr::V4(v4));
            }
            let s = v6.segments();
            v6.is_unspecified()
                || v6.is_loopback()
                || (s[0] == 0x64 && s[1] == 0xff9b)
                || (s[0] == 0x100 && s[1] == 0 && s[2] == 0 && s[3] == 0)
                || (s[0] == 0x2001 && s[1] < 0x200)
                || (s[0] == 0x2001 && s[1] == 0xdb8)
                || (s[0] == 0x2002)
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] & 0xffc0) == 0xfe80
                || (s[0] & 0xff00) == 0xff00
        }
    }
}

fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
    }
}

/// Whether an address may be connected to: a public one, or a loopback one under the
/// development switch.
fn allowed(ip: IpAddr, loopback: bool) -> bool {
    !is_special_use(ip) || (loopback && is_loopback(ip))
}

/// The resolver of the fetch's connector: a name's addresses, refused as a whole when
/// any of them may not be reached.
#[derive(Debug, Clone, Copy)]
pub struct Vetting {
    /// Loopback addresses allowed (the development switch).
    pub loopback: bool,
}

impl tower::Service<Name> for Vetting {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let loopback = self.loopback;
        Box::pin(async move {
            let addresses: Vec<SocketAddr> = tokio::net::lookup_host((name.as_str(), 0)).await?.collect();
            if addresses.is_empty() || addresses.iter().any(|a| !allowed(a.ip(), loopback)) {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::PermissionDenied,
                    "the name resolves to an address a client document may not be at",
                ));
            }
            Ok(addresses.into_iter())
        })
    }
}

type Client = hyper_util::client::legacy::Client<hyper_rustls::HttpsConnector<HttpConnector<Vetting>>, Empty<Bytes>>;

/// The fetching client of a configuration (the development switch and its CA), made once
/// per process and kept.
fn client(oauth: Oauth<'_>) -> Result<&'static Client, OauthError> {
    type Made = std::collections::HashMap<(bool, Option<std::path::PathBuf>), &'static Client>;
    static CLIENTS: OnceLock<std::sync::Mutex<Made>> = OnceLock::new();
    let dev = oauth.config.oauth.dev_client_metadata;
    let ca = oauth.config.oauth.dev_ca.clone();
    let mut clients = CLIENTS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(client) = clients.get(&(dev, ca.clone())) {
        return Ok(client);
    }
    let made = make_client(dev, ca.as_deref()).map_err(|e| {
        tracing::error!(error = %e, "the client document fetcher cannot be made");
        OauthError::new("server_error", "Client metadata documents cannot be read now").with_status(500)
    })?;
    let made: &'static Client = Box::leak(Box::new(made));
    clients.insert((dev, ca), made);
    Ok(made)
}

fn make_client(dev: bool, ca: Option<&std::path::Path>) -> Result<Client, String> {
    let mut http = HttpConnector::new_with_resolver(Vetting { loopback: dev });
    http.enforce_http(false);
    http.set_connect_timeout(Some(TIMEOUT));
    let builder = hyper_rustls::HttpsConnectorBuilder::new();
    let builder = match ca {
        Some(path) => {
            use rustls::pki_types::pem::PemObject;
            let mut roots = rustls::RootCertStore::empty();
            for cert in rustls::pki_types::CertificateDer::pem_file_iter(path)
                .map_err(|e| format!("KFIN_OAUTH_DEV_CA {}: {e}", path.display()))?
            {
                roots.add(cert.map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
            }
            builder.with_tls_config(rustls::ClientConfig::builder().with_root_certificates(roots).with_no_client_auth())
        }
        None => builder.with_native_roots().map_err(|e| format!("no TLS roots: {e}"))?,
    };
    let connector =
        if dev { builder.https_or_http() } else { builder.https_only() }.enable_http1().wrap_connector(http);
    Ok(hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .pool_max_idle_per_host(0)
        .build(connector))
}

/// Why a client id URL may not be fetched, if it may not (before any connection).
pub fn url_refusal(url: &str, dev: bool) -> Option<String> {
    let uri: http::Uri = match url.parse() {
        Ok(uri) => uri,
        Err(_) => return Some("URL is not a URL".into()),
    };
    let scheme = uri.scheme_str().unwrap_or_default();
    let host = uri.host().unwrap_or_default().trim_start_matches('[').trim_end_matches(']');
    let literal: Option<IpAddr> = host.parse().ok();
    let loopback_host = host == "localhost" || literal.is_some_and(is_loopback);
    if scheme != "https" && !(dev && scheme == "http" && loopback_host) {
        return Some("URL must use https".into());
    }
    if host.is_empty() || url.contains('@') {
        return Some("URL must name a host and no user".into());
    }
    let path = uri.path();
    if path.is_empty() || path == "/" {
        return Some("URL must have a path".into());
    }
    if uri.query().is_some() || url.contains('#') {
        return Some("URL must have no query or fragment".into());
    }
    if path.split('/').any(|segment| segment == "." || segment == "..") {
        return Some("URL must have no dot segment".into());
    }
    if host == "localhost" && !dev {
        return Some("URL is at a loopback address".into());
    }
    if let Some(ip) = literal {
        if !allowed(ip, dev) {
            return Some("URL is at an address a client document may not be at".into());
        }
    }
    None
}

/// The document at `url`, fetched under the rules above.
pub async fn document(oauth: Oauth<'_>, url: &str) -> Result<Fetched, OauthError> {
    let dev = oauth.config.oauth.dev_client_metadata;
    if let Some(why) = url_refusal(url, dev) {
        return Err(refused(format!("cannot be read: its {why}")));
    }
    let client = client(oauth)?;
    let request = http::Request::get(url)
        .header(http::header::ACCEPT, "application/json")
        .header(http::header::USER_AGENT, "kobana-finance-mcp")
        .body(Empty::new())
        .map_err(|_| refused("cannot be read: its URL is not a URL"))?;
    let fetched = tokio::time::timeout(TIMEOUT, async {
        let response = client.request(request).await.map_err(|e| {
            tracing::info!(url, error = %crate::https::with_causes(&e), "a client document could not be fetched");
            refused("could not be fetched (no connection, or an address it may not be at)")
        })?;
        if response.status() != http::StatusCode::OK {
            return Err(refused(format!(
                "answered {} (only 200 is a document; redirects are not followed)",
                response.status().as_u16()
            )));
        }
        let cache_seconds = cache_seconds(response.headers().get(http::header::CACHE_CONTROL));
        let mut body = response.into_body();
        let mut read = Vec::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|_| refused("was cut off"))?;
            if let Some(data) = frame.data_ref() {
                read.extend_from_slice(data);
                if read.len() > MAX_BYTES {
                    return Err(refused(format!("is larger than {MAX_BYTES} bytes")));
                }
            }
        }
        Ok(Fetched { body: read, cache_seconds })
    })
    .await;
    match fetched {
        Ok(result) => result,
        Err(_) => Err(refused(format!("took longer than {} seconds", TIMEOUT.as_secs()))),
    }
}

/// How long a document may be kept, from its `Cache-Control`.
fn cache_seconds(header: Option<&http::HeaderValue>) -> i64 {
    let Some(value) = header.and_then(|v| v.to_str().ok()) else { return CACHE_DEFAULT_SECONDS };
    let mut max_age = None;
    for directive in value.split(',').map(|d| d.trim().to_ascii_lowercase()) {
        if directive == "no-store" || directive == "no-cache" {
            return 0;
        }
        if let Some(seconds) = directive.strip_prefix("max-age=").or_else(|| directive.strip_prefix("s-maxage=")) {
            max_age = seconds.trim_matches('"').parse::<i64>().ok().or(max_age);
        }
    }
    max_age.unwrap_or(CACHE_DEFAULT_SECONDS).clamp(CACHE_MIN_SECONDS, CACHE_MAX_SECONDS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_use_addresses_are_refused() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "192.0.2.1",
            "198.51.100.7",
            "203.0.113.5",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fc00::1",
            "fe80::1",
            "::ffff:10.0.0.1",
            "2001:db8::1",
            "ff02::1",
        ] {
            assert!(is_special_use(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "151.101.1.69"] {
            assert!(!is_special_use(ip.parse().unwrap()), "{ip}");
        }
        assert!(allowed("127.0.0.1".parse().unwrap(), true));
        assert!(!allowed("10.0.0.1".parse().unwrap(), true));
    }

    #[test]
    fn a_client_id_url_is_https_with_a_path_and_nothing_else() {
        assert_eq!(url_refusal("https://claude.ai/oauth/mcp-oauth-client-metadata", false), None);
        for (bad, dev) in [
            ("http://example.com/client.json", false),
            ("https://example.com", false),
            ("https://example.com/", false),
            ("https://example.com/a?b=c", false),
            ("https://example.com/a#b", false),
            ("https://user@example.com/a", false),
            ("https://example.com/a/../b", false),
            ("https://127.0.0.1/client.json", false),
            ("https://localhost/client.json", false),
            ("https://10.0.0.5/client.json", true),
            ("https://[::1]/client.json", false),
            ("http://example.com/client.json", true),
        ] {
            assert!(url_refusal(bad, dev).is_some(), "{bad} (dev {dev})");
        }
        assert_eq!(url_refusal("http://127.0.0.1:8000/client.json", true), None);
        assert_eq!(url_refusal("https://localhost:8443/client.json", true), None);
    }

    #[test]
    fn a_document_is_kept_by_its_max_age_within_bounds() {
        let value = |s: &'static str| Some(http::HeaderValue::from_static(s));
        assert_eq!(cache_seconds(None), CACHE_DEFAULT_SECONDS);
        assert_eq!(cache_seconds(value("public, max-age=600").as_ref()), 600);
        assert_eq!(cache_seconds(value("max-age=5").as_ref()), CACHE_MIN_SECONDS);
        assert_eq!(cache_seconds(value("max-age=99999999").as_ref()), CACHE_MAX_SECONDS);
        assert_eq!(cache_seconds(value("no-store").as_ref()), 0);
        assert_eq!(cache_seconds(value("max-age=600, no-cache").as_ref()), 0);
    }
}
