//! What the browser carries between the steps of a sign-in, signed so the server keeps
//! nothing of it: the authorization request being answered, the signed-in person's
//! session (a cookie), and the CSRF token of each form, bound to that session.
//!
//! A sealed value is `base64url(JSON) "." base64url(HMAC-SHA256)`, keyed by the state key
//! (the one `requestState` and cursors use) and by its purpose, so a value sealed for one
//! use (a session) is never accepted for another (a request). Each carries its expiry.

use base64::Engine;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::b64;

/// What a sealed value is for: part of what its signature covers.
#[derive(Debug, Clone, Copy)]
pub enum Purpose {
    /// An authorization request checked and waiting for the person.
    Request,
    /// A signed-in person.
    Session,
    /// A sign-in handed to an identity provider (its state, nonce and verifier).
    SignIn,
}

impl Purpose {
    fn label(self) -> &'static [u8] {
        match self {
            Purpose::Request => b"kfin-oauth-request",
            Purpose::Session => b"kfin-oauth-session",
            Purpose::SignIn => b"kfin-oauth-sign-in",
        }
    }
}

#[derive(Serialize, Deserialize)]
struct Sealed<T> {
    /// Expiry, Unix seconds.
    exp: i64,
    v: T,
}

fn mac(key: &[u8], purpose: Purpose, payload: &[u8]) -> aws_lc_rs::hmac::Tag {
    let key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, key);
    let mut context = aws_lc_rs::hmac::Context::with_key(&key);
    context.update(purpose.label());
    context.update(&[0]);
    context.update(payload);
    context.sign()
}

/// `value` sealed for `purpose`, valid until `expires` (Unix seconds).
pub fn seal<T: Serialize>(key: &[u8], purpose: Purpose, value: &T, expires: i64) -> String {
    let payload = serde_json::to_vec(&Sealed { exp: expires, v: value }).unwrap_or_default();
    let tag = mac(key, purpose, &payload);
    format!("{}.{}", b64().encode(&payload), b64().encode(tag.as_ref()))
}

/// The value `token` seals for `purpose`, if `key` sealed it and it has not expired at
/// `now`.
pub fn open<T: DeserializeOwned>(key: &[u8], purpose: Purpose, token: &str, now: i64) -> Option<T> {
    let (payload, tag) = token.split_once('.')?;
    let payload = b64().decode(payload).ok()?;
    let tag = b64().decode(tag).ok()?;
    let hmac_key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, key);
    let mut expected = Vec::with_capacity(purpose.label().len() + 1 + payload.len());
    expected.extend_from_slice(purpose.label());
    expected.push(0);
    expected.extend_from_slice(&payload);
    aws_lc_rs::hmac::verify(&hmac_key, &expected, &tag).ok()?;
    let sealed: Sealed<T> = serde_json::from_slice(&payload).ok()?;
    (sealed.exp >= now).then_some(sealed.v)
}

/// The name of the session cookie.
pub const COOKIE: &str = "kfin_session";

/// How long a sign-in lasts in the browser (the consents given meanwhile need no
/// second sign-in).
pub const SESSION_SECONDS: i64 = 8 * 3600;

/// A signed-in person, as the session cookie carries them.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Session {
    /// The person (a user id).
    pub sub: String,
    /// The session's own id: what its CSRF tokens are bound to.
    pub sid: String,
}

impl Session {
    pub fn new(user_id: &str) -> Session {
        Session { sub: user_id.to_string(), sid: super::random_value() }
    }

    /// The cookie that carries it (`Secure` when the server is reached over HTTPS).
    pub fn cookie(&self, key: &[u8], now: i64, secure: bool) -> String {
        let value = seal(key, Purpose::Session, self, now + SESSION_SECONDS);
        format!(
            "{COOKIE}={value}; Path=/; Max-Age={SESSION_SECONDS}; HttpOnly; SameSite=Lax{}",
            if secure { "; Secure" } else { "" }
        )
    }

    /// The session the request's `Cookie` header carries, if valid.
    pub fn of(cookie_header: Option<&str>, key: &[u8], now: i64) -> Option<Session> {
        let value = cookie_header?
            .split(';')
            .filter_map(|pair| pair.trim().split_once('='))
            .find_map(|(name, value)| (name == COOKIE).then_some(value))?;
        open(key, Purpose::Session, value, now)
    }

    /// The CSRF token of a form about `subject` (the sealed request it answers) in this
    /// session: another session's, or another form's, does not match.
    pub fn csrf(&self, key: &[u8], subject: &str) -> String {
        let tag = mac(key, Purpose::Session, format!("csrf\0{}\0{subject}", self.sid).as_bytes());
        b64().encode(tag.as_ref())
    }

    /// Whether `token` is this session's CSRF token for `subject`.
    pub fn checks(&self, key: &[u8], subject: &str, token: &str) -> bool {
        super::same(&self.csrf(key, subject), token)
    }
}

/// The CSRF token of a sign-in form before anyone is signed in: bound to the sealed
/// request the form continues.
pub fn sign_in_csrf(key: &[u8], request: &str) -> String {
    b64().encode(mac(key, Purpose::SignIn, format!("csrf\0{request}").as_bytes()).as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_value_opens_only_with_its_key_purpose_and_time() {
        let token = seal(b"key", Purpose::Request, &"value", 100);
        assert_eq!(open::<String>(b"key", Purpose::Request, &token, 100).as_deref(), Some("value"));
        assert_eq!(open::<String>(b"key", Purpose::Request, &token, 101), None, "expired");
        assert_eq!(open::<String>(b"other", Purpose::Request, &token, 50), None, "another key");
        assert_eq!(open::<String>(b"key", Purpose::Session, &token, 50), None, "another purpose");
        let (payload, tag) = token.split_once('.').unwrap();
        let forged = b64().encode(br#"{"exp":100,"v":"other"}"#);
        assert_eq!(open::<String>(b"key", Purpose::Request, &format!("{forged}.{tag}"), 50), None);
        assert_eq!(open::<String>(b"key", Purpose::Request, payload, 50), None);
    }

    #[test]
    fn a_csrf_token_is_its_sessions_and_its_forms() {
        let one = Session::new("u1");
        let two = Session::new("u1");
        let token = one.csrf(b"key", "request-a");
        assert!(one.checks(b"key", "request-a", &token));
        assert!(!two.checks(b"key", "request-a", &token), "another session");
        assert!(!one.checks(b"key", "request-b", &token), "another form");
        let cookie = one.cookie(b"key", 10, false);
        let header = format!("other=1; {}", cookie.split(';').next().unwrap());
        assert_eq!(Session::of(Some(&header), b"key", 20), Some(one));
        assert_eq!(Session::of(Some(&header), b"key", 20 + SESSION_SECONDS), None);
    }
}
