//! HS512 bearer tokens: verification (every request) and minting (the `token` command).

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};

use super::keys::Keys;

/// Tokens longer than this are refused before any parsing.
pub const MAX_TOKEN_BYTES: usize = 8 * 1024;
/// Clock skew tolerated on `exp` and `nbf`.
pub const LEEWAY_SECONDS: u64 = 60;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Claims {
    pub iss: String,
    pub aud: Audience,
    pub sub: String,
    #[serde(default)]
    pub scope: String,
    pub exp: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iat: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nbf: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jti: Option<String>,
    /// The OAuth client the token was issued to (RFC 9068 `client_id`); none for a
    /// token the `token` command minted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The grant (a person's consent to a client) the token was issued under: revoking it
    /// ends the token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gid: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Audience {
    One(String),
    Many(Vec<String>),
}

/// Why a token was refused (never shown to the caller in detail).
#[derive(Debug)]
pub enum TokenRejection {
    TooLarge,
    Invalid(jsonwebtoken::errors::Error),
}

/// What a token must satisfy at one door: HS512 only, `exp`, `aud`, `iss` and `sub`
/// present, one of `audiences`, `issuer`, 60 s of leeway. Built once per process.
pub struct Rules(Validation);

impl Rules {
    pub fn new(audiences: &[String], issuer: &str) -> Rules {
        let mut validation = Validation::new(Algorithm::HS512);
        validation.leeway = LEEWAY_SECONDS;
        validation.validate_nbf = true;
        validation.set_required_spec_claims(&["exp", "aud", "iss", "sub"]);
        validation.set_audience(audiences);
        validation.set_issuer(&[issuer]);
        Rules(validation)
    }
}

/// Verifies signature (HS512 only, any of the keys), `exp`/`nbf` with leeway, `aud`,
/// `iss` and the presence of `sub`, as `rules` say.
pub fn verify(token: &str, keys: &Keys, rules: &Rules) -> Result<Claims, TokenRejection> {
    if token.len() > MAX_TOKEN_BYTES {
        return Err(TokenRejection::TooLarge);
    }
    let validation = &rules.0;
    let mut last = None;
    for key in &keys.jwt {
        let key = DecodingKey::from_secret(key).map_err(TokenRejection::Invalid)?;
        match jsonwebtoken::decode::<Claims>(token, &key, validation) {
            Ok(data) => return Ok(data.claims),
            Err(e) => {
                let bad_signature = matches!(e.kind(), jsonwebtoken::errors::ErrorKind::InvalidSignature);
                last = Some(e);
                // Only a signature failure is worth trying the previous key for.
                if !bad_signature {
                    break;
                }
            }
        }
    }
    Err(TokenRejection::Invalid(last.unwrap_or_else(|| jsonwebtoken::errors::ErrorKind::InvalidSignature.into())))
}

/// The claims of a token any of `keys` signed (HS512), whatever its audience, issuer or
/// expiry: for revoking the grant an old token names, never for admitting a request.
pub fn claims_ignoring_expiry(token: &str, keys: &Keys) -> Option<Claims> {
    if token.len() > MAX_TOKEN_BYTES {
        return None;
    }
    let mut validation = Validation::new(Algorithm::HS512);
    validation.validate_exp = false;
    validation.validate_aud = false;
    validation.required_spec_claims.clear();
    keys.jwt.iter().find_map(|key| {
        let key = DecodingKey::from_secret(key).ok()?;
        jsonwebtoken::decode::<Claims>(token, &key, &validation).ok().map(|data| data.claims)
    })
}

/// Signs `claims` with the current key.
pub fn mint(claims: &Claims, keys: &Keys) -> Result<String, String> {
    let key = keys.jwt.first().ok_or("no signing key")?;
    let key = EncodingKey::from_secret(key).map_err(|e| e.to_string())?;
    jsonwebtoken::encode(&Header::new(Algorithm::HS512), claims, &key).map_err(|e| e.to_string())
}
