//! `/token` and `/revoke` (OAuth 2.1 §3.2, §4.1.3, §4.3; RFC 7636; RFC 8707; RFC 7009).
//!
//! * **A code** is exchanged once, by its client, at its redirect URI, with the verifier of
//!   its PKCE challenge, for its resource: an access token and a refresh token. A code
//!   presented again revokes its grant, so whatever its first use issued stops working.
//! * **An access token** is this server's JWT (HS512, the keys every token is verified
//!   with): `iss` the issuer, `aud` the resource, `sub` the person, the granted `scope`,
//!   one hour, and the `client_id` and grant (`gid`) it was issued under; its id is kept
//!   with the grant so that revoking the grant puts it on the deny list.
//! * **A refresh token** is rotated at each use: the answer carries its successor and the
//!   token used is replaced. For [`GRACE_SECONDS`] after, the replaced token still
//!   refreshes, answering the same successor (derived from it, so two answers to one
//!   token agree) — a client that sent one refresh twice keeps its grant. Later, a replaced
//!   token is a stolen or confused one: the grant is revoked.

use serde_json::{json, Value};

use super::identity::{param, Params};
use super::{metadata, Oauth, OauthError, ACCESS_SECONDS, GRACE_SECONDS, REFRESH_SECONDS};
use crate::auth::jwt::{self, Audience, Claims};
use crate::storage::oauth::{self as store, CodeUse, GrantRow};
use crate::storage::Conn;

fn invalid_grant(description: &str) -> OauthError {
    OauthError::new("invalid_grant", description)
}

/// The one value of a parameter (`invalid_request` when it is sent twice).
fn once<'a>(params: &'a Params, name: &str) -> Result<Option<&'a str>, OauthError> {
    let mut values = params.iter().filter(|(n, _)| n == name).map(|(_, v)| v.as_str());
    let first = values.next();
    if values.next().is_some() {
        return Err(OauthError::new("invalid_request", format!("{name} is sent more than once")));
    }
    Ok(first.filter(|v| !v.is_empty()))
}

/// `POST /token`: the form's grant, answered as RFC 6749 §5.1 says (the caller adds
/// `Cache-Control: no-store`). `authorization` is the request's `Authorization` header:
/// this server's clients are public, so a client that authenticates is one it does not
/// know (`invalid_client`, 401).
pub async fn token(oauth: Oauth<'_>, form: &Params, authorization: Option<&str>) -> Result<Value, OauthError> {
    if authorization.is_some_and(|a| a.trim_start().to_ascii_lowercase().starts_with("basic ")) {
        return Err(
            OauthError::new("invalid_client", "This server's clients are public: no client secret").with_status(401)
        );
    }
    let client_id =
        once(form, "client_id")?.ok_or_else(|| OauthError::new("invalid_request", "client_id is required"))?;
    match once(form, "grant_type")? {
        Some("authorization_code") => exchange(oauth, form, client_id).await,
        Some("refresh_token") => refresh(oauth, form, client_id).await,
        Some(_) => Err(OauthError::new("unsupported_grant_type", "grant_type is authorization_code or refresh_token")),
        None => Err(OauthError::new("invalid_request", "grant_type is required")),
    }
}

/// A code for tokens.
async fn exchange(oauth: Oauth<'_>, form: &Params, client_id: &str) -> Result<Value, OauthError> {
    let code = once(form, "code")?.ok_or_else(|| OauthError::new("invalid_request", "code is required"))?;
    let verifier = once(form, "code_verifier")?
        .ok_or_else(|| OauthError::new("invalid_request", "code_verifier is required (PKCE)"))?;
    let redirect_uri = once(form, "redirect_uri")?;
    let resource = once(form, "resource")?;
    let now = crate::clock::now_unix();
    let mut tx = oauth.db.begin().await?;
    let row = match store::spend_code(&mut tx, &super::digest_of(code), now).await? {
        CodeUse::First(row) => row,
        CodeUse::Again(row) => {
            // A replay: whoever holds the first answer's tokens loses them too.
            store::revoke_grant(&mut tx, &row.grant_id, now).await?;
            tx.commit().await?;
            tracing::warn!(grant = %row.grant_id, "an authorization code was presented again: its grant is revoked");
            return Err(invalid_grant("The code was already used; the access it gave is revoked"));
        }
        CodeUse::Unknown => return Err(invalid_grant("The code is not valid")),
    };
    // A code is tried once: an exchange that fails spends it all the same.
    let checked = (|| {
        if row.expires_at < now {
            return Err(invalid_grant("The code has expired"));
        }
        if row.client_id != client_id {
            return Err(invalid_grant("The code was issued to another client"));
        }
        if redirect_uri.is_some_and(|uri| uri != row.redirect_uri) {
            return Err(invalid_grant("redirect_uri is not the one the code was issued for"));
        }
        if !super::is_verifier(verifier) || !super::same(&super::s256(verifier), &row.code_challenge) {
            return Err(invalid_grant("code_verifier does not match the code's challenge"));
        }
        match resource {
            Some(resource) if metadata::resource(oauth.config, Some(resource))? != row.resource => {
                Err(OauthError::new("invalid_target", "resource is not the one the code was issued for"))
            }
            _ => Ok(()),
        }
    })();
    let grant = match checked {
        Ok(()) => live_grant(&mut tx, &row.grant_id, client_id, now).await,
        Err(e) => Err(e),
    };
    let grant = match grant {
        Ok(grant) => grant,
        Err(e) => {
            tx.commit().await?;
            return Err(e);
        }
    };
    store::touch_grant(&mut tx, &grant.id, now, now + REFRESH_SECONDS).await?;
    let refresh_token = super::random_value();
    store::insert_refresh(&mut tx, &super::digest_of(&refresh_token), &grant.id, now, now + REFRESH_SECONDS).await?;
    let answer = issue(oauth, &mut tx, &grant, &grant.scope, &refresh_token, now).await?;
    tx.commit().await?;
    Ok(answer)
}

/// The grant `id` if it is alive and `client_id`'s.
async fn live_grant(conn: &mut Conn, id: &str, client_id: &str, now: i64) -> Result<GrantRow, OauthError> {
    match store::grant(conn, id).await? {
        Some(grant) if grant.revoked_at.is_none() && grant.expires_at >= now && grant.client_id == client_id => {
            Ok(grant)
        }
        Some(grant) if grant.client_id != client_id => Err(invalid_grant("The token was issued to another client")),
        _ => Err(invalid_grant("The access was revoked or has expired")),
    }
}

/// The successor of the refresh token whose digest is `hash`: the same whoever asks, so
/// the answers to one token sent twice agree.
fn successor(state_key: &[u8], hash: &str) -> String {
    use base64::Engine;
    let key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, state_key);
    let tag = aws_lc_rs::hmac::sign(&key, format!("kfin-refresh-successor\0{hash}").as_bytes());
    super::b64().encode(tag.as_ref())
}

/// A refresh token for tokens.
async fn refresh(oauth: Oauth<'_>, form: &Params, client_id: &str) -> Result<Value, OauthError> {
    let presented =
        once(form, "refresh_token")?.ok_or_else(|| OauthError::new("invalid_request", "refresh_token is required"))?;
    let keys = oauth.keys.current().await.map_err(|_| OauthError::unavailable())?;
    let now = crate::clock::now_unix();
    let hash = super::digest_of(presented);
    let mut tx = oauth.db.begin().await?;
    let Some(row) = store::refresh(&mut tx, &hash).await? else {
        return Err(invalid_grant("The refresh token is not valid"));
    };
    if row.expires_at < now {
        return Err(invalid_grant("The refresh token has expired"));
    }
    let grant = live_grant(&mut tx, &row.grant_id, client_id, now).await?;
    let replaced_at = match row.replaced_at {
        None if store::replace_refresh(&mut tx, &hash, now).await? => now,
        None => now,
        Some(at) => at,
    };
    if now - replaced_at > GRACE_SECONDS {
        store::revoke_grant(&mut tx, &grant.id, now).await?;
        tx.commit().await?;
        tracing::warn!(grant = %grant.id, "a replaced refresh token was presented again: its grant is revoked");
        return Err(invalid_grant("The refresh token was already used; the access it gave is revoked"));
    }
    let scope = match once(form, "scope")? {
        Some(asked) if !metadata::is_within(asked, &grant.scope) => {
            return Err(OauthError::new("invalid_scope", "A refresh may narrow the granted scopes, not add to them"))
        }
        Some(asked) => metadata::requested_scope(Some(asked))?,
        None => grant.scope.clone(),
    };
    if let Some(resource) = once(form, "resource")? {
        if metadata::resource(oauth.config, Some(resource))? != grant.resource {
            return Err(OauthError::new("invalid_target", "resource is not the one the access was granted for"));
        }
    }
    let next = successor(&keys.state, &hash);
    let next_hash = super::digest_of(&next);
    // The successor, unless an answer within the grace window wrote it already; then it
    // must still be the current one (a successor replaced in turn means the chain moved
    // on, and this token is a stale copy).
    match store::refresh(&mut tx, &next_hash).await? {
        Some(kept) if kept.replaced_at.is_some() => {
            store::revoke_grant(&mut tx, &grant.id, now).await?;
            tx.commit().await?;
            return Err(invalid_grant("The refresh token was already used; the access it gave is revoked"));
        }
        Some(_) => {}
        None => store::insert_refresh(&mut tx, &next_hash, &grant.id, now, now + REFRESH_SECONDS).await?,
    }
    store::touch_grant(&mut tx, &grant.id, now, now + REFRESH_SECONDS).await?;
    let answer = issue(oauth, &mut tx, &grant, &scope, &next, now).await?;
    tx.commit().await?;
    Ok(answer)
}

/// An access token under `grant` for `scope`, recorded with the grant, and the answer
/// that carries it with `refresh_token`.
async fn issue(
    oauth: Oauth<'_>,
    conn: &mut Conn,
    grant: &GrantRow,
    scope: &str,
    refresh_token: &str,
    now: i64,
) -> Result<Value, OauthError> {
    let keys = oauth.keys.current().await.map_err(|_| OauthError::unavailable())?;
    let jti = uuid::Uuid::new_v4().to_string();
    let expires = now + ACCESS_SECONDS;
    let claims = Claims {
        iss: oauth.config.auth_server.clone(),
        aud: Audience::One(grant.resource.clone()),
        sub: grant.user_id.clone(),
        scope: scope.to_string(),
        exp: expires as u64,
        iat: Some(now as u64),
        nbf: None,
        jti: Some(jti.clone()),
        client_id: Some(grant.client_id.clone()),
        gid: Some(grant.id.clone()),
    };
    let access_token = jwt::mint(&claims, &keys).map_err(|e| {
        tracing::error!(error = %e, "an access token could not be signed");
        OauthError::new("server_error", "The token could not be issued").with_status(500)
    })?;
    store::record_access(conn, &jti, &grant.id, expires).await?;
    Ok(json!({
        "access_token": access_token,
        "token_type": "Bearer",
        "expires_in": ACCESS_SECONDS,
        "refresh_token": refresh_token,
        "scope": scope,
    }))
}

/// `POST /revoke` (RFC 7009): a refresh token or an access token of this server revokes
/// its whole grant. Answered 200 whatever the token was (unknown, already revoked,
/// another client's: nothing is said about it).
pub async fn revoke(oauth: Oauth<'_>, form: &Params) -> Result<(), OauthError> {
    let Some(token) = param(form, "token").filter(|t| !t.is_empty()) else {
        return Err(OauthError::new("invalid_request", "token is required"));
    };
    let client_id = param(form, "client_id");
    let now = crate::clock::now_unix();
    let mut tx = oauth.db.begin().await?;
    let grant_id = match store::refresh(&mut tx, &super::digest_of(token)).await? {
        Some(row) => Some(row.grant_id),
        None => grant_of_access_token(oauth, token).await,
    };
    if let Some(grant) = match grant_id {
        Some(id) => store::grant(&mut tx, &id).await?,
        None => None,
    } {
        if client_id.is_none_or(|c| c == grant.client_id) {
            store::revoke_grant(&mut tx, &grant.id, now).await?;
        }
    }
    tx.commit().await?;
    Ok(())
}

/// The grant of an access token this server signed (expired or not).
async fn grant_of_access_token(oauth: Oauth<'_>, token: &str) -> Option<String> {
    let keys = oauth.keys.current().await.ok()?;
    jwt::claims_ignoring_expiry(token, &keys).and_then(|claims| claims.gid)
}

/// Revokes the grant `id` (the command line's, the connected-apps page's): answers
/// whether it was live.
pub async fn revoke_grant(oauth: Oauth<'_>, id: &str) -> Result<bool, OauthError> {
    let mut tx = oauth.db.begin().await?;
    let revoked = store::revoke_grant(&mut tx, id, crate::clock::now_unix()).await?;
    tx.commit().await?;
    Ok(revoked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refresh_tokens_successor_is_one_for_everyone_who_asks() {
        assert_eq!(successor(b"k", "h1"), successor(b"k", "h1"));
        assert_ne!(successor(b"k", "h1"), successor(b"k", "h2"));
        assert_ne!(successor(b"k", "h1"), successor(b"other", "h1"));
    }
}
