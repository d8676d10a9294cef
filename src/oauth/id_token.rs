//! The ID token of the company's OpenID provider, verified as OpenID Connect Core 1.0
//! §3.1.3.7 asks: signed with one of the provider's published keys (RS256 or ES256 —
//! `none`, an HMAC, or any algorithm the key was not made for is refused), issued by the
//! configured issuer, for this client (`aud`, and `azp` when there are several
//! audiences), not expired (60 s of leeway), and carrying the nonce this sign-in sent.

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;

/// What the sign-in needs to know of the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdClaims {
    pub sub: String,
    pub email: Option<String>,
    pub email_verified: bool,
    pub name: Option<String>,
}

/// What the token must say.
pub struct Expected<'a> {
    pub issuer: &'a str,
    pub client_id: &'a str,
    pub nonce: &'a str,
}

/// Why a token is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Its key id is not among the keys given: worth one fetch of the provider's keys.
    UnknownKey,
    /// Anything else, with what was wrong (never the token).
    Invalid(String),
}

/// The seconds of clock difference tolerated on `exp`, `nbf` and `iat`.
pub const LEEWAY_SECONDS: u64 = 60;

#[derive(Deserialize)]
struct Claims {
    sub: String,
    #[serde(default)]
    nonce: Option<String>,
    #[serde(default)]
    azp: Option<String>,
    /// One audience or several (`jsonwebtoken` checked that this client is one of them).
    #[serde(default)]
    aud: Option<serde_json::Value>,
    #[serde(default)]
    iat: Option<serde_json::Number>,
    #[serde(default)]
    email: Option<String>,
    /// A boolean, as the standard says; some providers have sent the string "true".
    #[serde(default)]
    email_verified: Option<serde_json::Value>,
    #[serde(default)]
    name: Option<String>,
}

/// The key of `jwks` the token's header names, if it suits the header's algorithm.
fn key_for<'k>(jwks: &'k JwkSet, kid: Option<&str>, alg: Algorithm) -> Result<&'k Jwk, Refused> {
    let suits = |key: &&Jwk| {
        let kind = match (&key.algorithm, alg) {
            (AlgorithmParameters::RSA(_), Algorithm::RS256) => true,
            (AlgorithmParameters::EllipticCurve(ec), Algorithm::ES256) => ec.curve == EllipticCurve::P256,
            _ => false,
        };
        let usage = !matches!(key.common.public_key_use, Some(ref u) if *u != PublicKeyUse::Signature);
        let declared = key.common.key_algorithm.is_none_or(|a| a.to_string() == format!("{alg:?}"));
        kind && usage && declared
    };
    match kid {
        Some(kid) => {
            let key = jwks.keys.iter().find(|k| k.common.key_id.as_deref() == Some(kid)).ok_or(Refused::UnknownKey)?;
            Some(key).filter(suits).ok_or_else(|| Refused::Invalid(format!("key {kid} is not an {alg:?} signing key")))
        }
        // No key id: the provider's only key of that kind.
        None => {
            let mut candidates = jwks.keys.iter().filter(suits);
            match (candidates.next(), candidates.next()) {
                (Some(key), None) => Ok(key),
                _ => Err(Refused::UnknownKey),
            }
        }
    }
}

/// Verifies `token` against the provider's keys `jwks` and what this sign-in expects.
pub fn verify(token: &str, jwks: &JwkSet, expected: &Expected<'_>) -> Result<IdClaims, Refused> {
    let header = jsonwebtoken::decode_header(token).map_err(|_| Refused::Invalid("not a signed JWT".into()))?;
    if !matches!(header.alg, Algorithm::RS256 | Algorithm::ES256) {
        return Err(Refused::Invalid(format!("signed with {:?}; RS256 or ES256 expected", header.alg)));
    }
    let jwk = key_for(jwks, header.kid.as_deref(), header.alg)?;
    let key = DecodingKey::from_jwk(jwk).map_err(|_| Refused::Invalid("the provider's key is malformed".into()))?;
    let mut validation = Validation::new(header.alg);
    validation.leeway = LEEWAY_SECONDS;
    validation.set_issuer(&[expected.issuer]);
    validation.set_audience(&[expected.client_id]);
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    validation.validate_nbf = true;
    let claims = jsonwebtoken::decode::<Claims>(token, &key, &validation)
        .map_err(|e| Refused::Invalid(format!("the ID token is not valid: {:?}", e.kind())))?
        .claims;
    let several = claims.aud.as_ref().and_then(serde_json::Value::as_array).is_some_and(|a| a.len() > 1);
    if several && claims.azp.as_deref() != Some(expected.client_id) {
        return Err(Refused::Invalid("several audiences and azp is not this client".into()));
    }
    if claims.iat.is_none() {
        return Err(Refused::Invalid("iat is missing".into()));
    }
    if !claims.nonce.as_deref().is_some_and(|n| super::same(n, expected.nonce)) {
        return Err(Refused::Invalid("the nonce is not this sign-in's".into()));
    }
    if claims.sub.is_empty() || claims.sub.len() > 255 {
        return Err(Refused::Invalid("sub is empty or longer than 255 characters".into()));
    }
    let email_verified = match &claims.email_verified {
        Some(serde_json::Value::Bool(verified)) => *verified,
        Some(serde_json::Value::String(text)) => text == "true",
        _ => false,
    };
    Ok(IdClaims { sub: claims.sub, email: claims.email, email_verified, name: claims.name })
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{encode, EncodingKey, Header};
    use serde_json::json;

    const RSA: &[u8] = include_bytes!("../../tests/fixtures/oidc/rsa.der");
    const OTHER: &[u8] = include_bytes!("../../tests/fixtures/oidc/rsa-other.der");
    const EC: &[u8] = include_bytes!("../../tests/fixtures/oidc/ec.der");
    const ISSUER: &str = "https://idp.example.com";

    fn rsa() -> EncodingKey {
        EncodingKey::from_rsa_der(RSA)
    }

    fn ec() -> EncodingKey {
        EncodingKey::from_ec_der(EC)
    }

    fn jwks() -> JwkSet {
        let mut rsa = Jwk::from_encoding_key(&self::rsa(), Algorithm::RS256).unwrap();
        rsa.common.key_id = Some("r1".into());
        let mut ec = Jwk::from_encoding_key(&self::ec(), Algorithm::ES256).unwrap();
        ec.common.key_id = Some("e1".into());
        JwkSet { keys: vec![rsa, ec] }
    }

    fn claims() -> serde_json::Value {
        let now = crate::clock::now_unix();
        json!({"iss": ISSUER, "aud": "kfin", "sub": "u-1", "exp": now + 300, "iat": now, "nonce": "n-1",
               "email": "Ana@Acme.com.br", "email_verified": true, "name": "Ana"})
    }

    fn signed(alg: Algorithm, kid: Option<&str>, key: &EncodingKey, claims: &serde_json::Value) -> String {
        let mut header = Header::new(alg);
        header.kid = kid.map(str::to_string);
        encode(&header, claims, key).unwrap()
    }

    fn check(token: &str) -> Result<IdClaims, Refused> {
        verify(token, &jwks(), &Expected { issuer: ISSUER, client_id: "kfin", nonce: "n-1" })
    }

    fn invalid(token: &str) -> String {
        match check(token) {
            Err(Refused::Invalid(why)) => why,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn a_token_signed_by_a_published_key_for_this_client_and_sign_in_passes() {
        let person = check(&signed(Algorithm::RS256, Some("r1"), &rsa(), &claims())).unwrap();
        assert_eq!(person.sub, "u-1");
        assert_eq!(person.email.as_deref(), Some("Ana@Acme.com.br"));
        assert!(person.email_verified);
        assert!(check(&signed(Algorithm::ES256, Some("e1"), &ec(), &claims())).is_ok());
        let mut text = claims();
        text["email_verified"] = json!("true");
        assert!(check(&signed(Algorithm::RS256, Some("r1"), &rsa(), &text)).unwrap().email_verified);
        text["email_verified"] = json!("false");
        assert!(!check(&signed(Algorithm::RS256, Some("r1"), &rsa(), &text)).unwrap().email_verified);
    }

    #[test]
    fn every_claim_that_is_not_this_sign_ins_is_refused() {
        for (name, value) in [
            ("aud", json!("another-client")),
            ("iss", json!("https://idp.example.com/other")),
            ("nonce", json!("n-2")),
            ("exp", json!(crate::clock::now_unix() - 120)),
            ("nbf", json!(crate::clock::now_unix() + 600)),
        ] {
            let mut claims = claims();
            claims[name] = value;
            invalid(&signed(Algorithm::RS256, Some("r1"), &rsa(), &claims));
        }
        for name in ["nonce", "sub", "exp", "iat"] {
            let mut claims = claims();
            claims.as_object_mut().unwrap().remove(name);
            invalid(&signed(Algorithm::RS256, Some("r1"), &rsa(), &claims));
        }
        let mut several = claims();
        several["aud"] = json!(["kfin", "other"]);
        assert!(invalid(&signed(Algorithm::RS256, Some("r1"), &rsa(), &several)).contains("azp"));
        several["azp"] = json!("kfin");
        assert!(check(&signed(Algorithm::RS256, Some("r1"), &rsa(), &several)).is_ok());
    }

    #[test]
    fn a_key_the_provider_never_published_or_an_algorithm_it_was_not_made_for_is_refused() {
        let other = EncodingKey::from_rsa_der(OTHER);
        assert_eq!(check(&signed(Algorithm::RS256, Some("r9"), &other, &claims())), Err(Refused::UnknownKey));
        // A published key id, another key's signature.
        invalid(&signed(Algorithm::RS256, Some("r1"), &other, &claims()));
        // The RSA key's id on an ES256 token, and the other way round.
        invalid(&signed(Algorithm::ES256, Some("r1"), &ec(), &claims()));
        invalid(&signed(Algorithm::RS256, Some("e1"), &rsa(), &claims()));
        // HS256 keyed with the public key's bytes (the algorithm confusion attack).
        let public = serde_json::to_vec(&jwks().keys[0]).unwrap();
        let hs = signed(Algorithm::HS256, Some("r1"), &EncodingKey::from_secret(&public).unwrap(), &claims());
        assert!(invalid(&hs).contains("HS256"));
        // alg none: a header and claims with no signature.
        use base64::Engine;
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let none =
            format!("{}.{}.", b64.encode(br#"{"alg":"none","kid":"r1"}"#), b64.encode(claims().to_string().as_bytes()));
        invalid(&none);
        invalid("not.a.token");
    }
}
