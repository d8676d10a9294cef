//! The `Origin` check (SPEC §2 step 2): a request that carries an `Origin` must name an
//! allowed one (`KFIN_ALLOWED_ORIGINS`; loopback origins too when running locally).
//! This is what stops a web page from driving the server through a user's browser
//! (DNS rebinding included).

use http::HeaderMap;

use crate::config::{Config, Mode};

fn is_loopback(origin: &str) -> bool {
    let Some(rest) = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://")) else {
        return false;
    };
    let host = if let Some(v6) = rest.strip_prefix('[') {
        match v6.split_once(']') {
            Some((addr, port)) if port.is_empty() || port.starts_with(':') => return addr == "::1" && valid_port(port),
            _ => return false,
        }
    } else {
        rest
    };
    let (name, port) = match host.find(':') {
        Some(i) => (&host[..i], &host[i..]),
        None => (host, ""),
    };
    (name.eq_ignore_ascii_case("localhost") || name == "127.0.0.1") && valid_port(port)
}

fn valid_port(port: &str) -> bool {
    port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()))
}

/// `true` when the request may proceed.
pub fn allowed(config: &Config, headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(http::header::ORIGIN) else { return true };
    let Ok(origin) = origin.to_str() else { return false };
    let origin = origin.trim().trim_end_matches('/');
    if config.allowed_origins.iter().any(|o| o.eq_ignore_ascii_case(origin)) {
        return true;
    }
    config.mode == Mode::Local && is_loopback(origin)
}

#[cfg(test)]
mod tests {
    use super::is_loopback;

    #[test]
    fn loopback_origins() {
        for ok in [
            "http://localhost",
            "http://localhost:3000",
            "http://127.0.0.1:8080",
            "http://[::1]:9",
            "https://LOCALHOST",
        ] {
            assert!(is_loopback(ok), "{ok}");
        }
        for bad in [
            "http://evil.example.com",
            "http://localhost.evil.com",
            "http://127.0.0.1.evil.com",
            "http://[::1].evil",
            "null",
            "http://localhost:abc",
            "file://localhost",
        ] {
            assert!(!is_loopback(bad), "{bad}");
        }
    }
}
