//! Signing keys: where they come from and how long they are trusted.
//!
//! * Lambda: AWS Secrets Manager (`KFIN_SECRET_ID`), a JSON secret
//!   `{"jwt_keys":["<current>","<previous>"],"state_key":"…"}`, fetched at cold start,
//!   cached, refreshed after a TTL. Both JWT keys verify (rotation); tokens are minted
//!   with the first.
//! * Local: `KFIN_JWT_SECRET` (its UTF-8 bytes are the HMAC key), or a random dev
//!   secret kept in a file beside the SQLite database.
//!
//! The request-state key (confirmations, cursors) comes from the secret, from
//! `KFIN_STATE_KEY`, or is derived from the JWT secret.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_lc_rs::hmac;
use serde::Deserialize;
use tokio::sync::{Mutex, RwLock};

use crate::config::KeySourceConfig;
use crate::error::ApiError;

/// Key material in force.
pub struct Keys {
    /// HMAC keys that verify tokens, current first.
    pub jwt: Vec<Vec<u8>>,
    /// Key for HMAC-signed request state.
    pub state: Vec<u8>,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Keys {{ {} jwt keys, state key: [redacted] }}", self.jwt.len())
    }
}

impl Keys {
    /// Keys from one shared secret, the state key derived from it unless given.
    pub fn from_secret(jwt_secret: &str, state_key: Option<&str>) -> Keys {
        let state = match state_key {
            Some(k) => k.as_bytes().to_vec(),
            None => derive_state_key(jwt_secret.as_bytes()),
        };
        Keys { jwt: vec![jwt_secret.as_bytes().to_vec()], state }
    }
}

fn derive_state_key(secret: &[u8]) -> Vec<u8> {
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret);
    hmac::sign(&key, b"kobana-finance/request-state-key/v1").as_ref().to_vec()
}

#[derive(Deserialize)]
struct SecretDocument {
    jwt_keys: Vec<String>,
    state_key: Option<String>,
}

/// Parses the Secrets Manager document; refuses one without a usable key.
fn parse_secret(text: &str) -> Result<Keys, String> {
    let doc: SecretDocument =
        serde_json::from_str(text).map_err(|e| format!("secret is not the expected JSON: {e}"))?;
    let jwt: Vec<Vec<u8>> = doc.jwt_keys.into_iter().filter(|k| !k.is_empty()).map(String::into_bytes).collect();
    if jwt.is_empty() {
        return Err("secret has no jwt_keys".into());
    }
    let state = match doc.state_key.filter(|k| !k.is_empty()) {
        Some(k) => k.into_bytes(),
        None => derive_state_key(&jwt[0]),
    };
    Ok(Keys { jwt, state })
}

struct Remote {
    aws: crate::aws::Aws,
    secret_id: String,
    ttl: Duration,
    cache: RwLock<Option<(Arc<Keys>, Instant)>>,
    /// Held by the one fetch in flight.
    refresh: Mutex<()>,
    /// When the last fetch failed (`None` once one succeeds).
    last_failure: std::sync::Mutex<Option<Instant>>,
}

/// After a failed fetch, requests answer 503 at once for this long instead of queueing
/// for fetches of their own (a store that is down would otherwise make every request
/// wait for every earlier request's attempt).
const FAILED_FETCH_BACKOFF: Duration = Duration::from_secs(1);

enum Source {
    Fixed(Arc<Keys>),
    SecretsManager(Box<Remote>),
}

/// The process's key store. Cheap to share behind an `Arc`.
pub struct KeyStore {
    source: Source,
}

impl KeyStore {
    pub fn fixed(keys: Keys) -> KeyStore {
        KeyStore { source: Source::Fixed(Arc::new(keys)) }
    }

    /// A store reading `secret_id` through `aws`; nothing is fetched until
    /// [`KeyStore::current`] (or [`KeyStore::warm`]) is called.
    pub fn secrets_manager(aws: crate::aws::Aws, secret_id: String, ttl: Duration) -> KeyStore {
        KeyStore {
            source: Source::SecretsManager(Box::new(Remote {
                aws,
                secret_id,
                ttl,
                cache: RwLock::new(None),
                refresh: Mutex::new(()),
                last_failure: std::sync::Mutex::new(None),
            })),
        }
    }

    /// Builds the store the configuration asks for; a secret is read through `aws` (the
    /// AWS environment: region, credentials, endpoint, see [`crate::aws`]).
    pub async fn from_config(config: &KeySourceConfig, aws: &crate::aws::Aws) -> Result<KeyStore, String> {
        match config {
            KeySourceConfig::Static { jwt_secret, state_key } => {
                Ok(KeyStore::fixed(Keys::from_secret(jwt_secret, state_key.as_deref())))
            }
            KeySourceConfig::DevFile { path } => {
                let secret = load_or_create_dev_secret(path)?;
                let state_key = std::env::var("KFIN_STATE_KEY").ok().filter(|k| !k.is_empty());
                Ok(KeyStore::fixed(Keys::from_secret(&secret, state_key.as_deref())))
            }
            KeySourceConfig::SecretsManager { secret_id, ttl } => {
                Ok(KeyStore::secrets_manager(aws.clone(), secret_id.clone(), *ttl))
            }
        }
    }

    /// Fetches the keys now (cold start), logging rather than failing: a request that
    /// finds the store still unreachable answers 503 and tries again.
    pub async fn warm(&self) {
        if let Err(e) = self.current().await {
            tracing::warn!(error = %e, "signing keys not available at start");
        }
    }

    /// The keys in force; 503 `service_unavailable` when the secret store cannot be read.
    pub async fn current(&self) -> Result<Arc<Keys>, ApiError> {
        match &self.source {
            Source::Fixed(keys) => Ok(keys.clone()),
            Source::SecretsManager(remote) => remote.current().await,
        }
    }
}

impl Remote {
    async fn current(&self) -> Result<Arc<Keys>, ApiError> {
        let cached = self.cache.read().await.clone();
        if let Some((keys, at)) = &cached {
            if at.elapsed() < self.ttl {
                return Ok(keys.clone());
            }
        }
        // The keys expired (or were never fetched). When the store was just found down,
        // answer 503 at once; when it was down at the last attempt, one request probes it
        // and the others answer 503 rather than queue behind the probe. Otherwise (a
        // routine refresh, a cold start) wait for the one fetch in flight.
        let failed = self.failed_at();
        if failed.is_some_and(|at| at.elapsed() < FAILED_FETCH_BACKOFF) {
            return Err(ApiError::unavailable("secret store"));
        }
        let _guard = if failed.is_some() {
            self.refresh.try_lock().map_err(|_| ApiError::unavailable("secret store"))?
        } else {
            self.refresh.lock().await
        };
        if let Some((keys, at)) = self.cache.read().await.as_ref() {
            if at.elapsed() < self.ttl {
                return Ok(keys.clone());
            }
        }
        if self.failed_at().is_some_and(|at| at.elapsed() < FAILED_FETCH_BACKOFF) {
            return Err(ApiError::unavailable("secret store"));
        }
        let fetched = self.fetch().await;
        *self.last_failure.lock().unwrap_or_else(|p| p.into_inner()) = fetched.as_ref().err().map(|_| Instant::now());
        let keys = Arc::new(fetched?);
        *self.cache.write().await = Some((keys.clone(), Instant::now()));
        Ok(keys)
    }

    fn failed_at(&self) -> Option<Instant> {
        *self.last_failure.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn fetch(&self) -> Result<Keys, ApiError> {
        let text = self.aws.get_secret_string(&self.secret_id).await.map_err(|e| {
            tracing::warn!(error = %e, "secret store unavailable");
            ApiError::unavailable("secret store")
        })?;
        let text = text.ok_or_else(|| {
            tracing::error!("secret has no string value");
            ApiError::unavailable("secret store")
        })?;
        parse_secret(&text).map_err(|e| {
            tracing::error!(error = %e, "secret is malformed");
            ApiError::unavailable("secret store")
        })
    }
}

/// Reads the dev secret at `path`, creating it (random, owner-only) on first use.
pub fn load_or_create_dev_secret(path: &Path) -> Result<String, String> {
    match std::fs::read_to_string(path) {
        Ok(s) if !s.trim().is_empty() => return Ok(s.trim().to_string()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot read dev secret {}: {e}", path.display())),
    }
    if let Some(dir) = path.parent() {
        if !dir.as_os_str().is_empty() {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
    }
    let mut bytes = [0u8; 32];
    aws_lc_rs::rand::fill(&mut bytes).map_err(|_| "no randomness available".to_string())?;
    let secret: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(mut file) => {
            use std::io::Write;
            file.write_all(secret.as_bytes()).map_err(|e| format!("cannot write dev secret: {e}"))?;
            Ok(secret)
        }
        // Another process created it first: use theirs.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => std::fs::read_to_string(path)
            .map(|s| s.trim().to_string())
            .map_err(|e| format!("cannot read dev secret: {e}")),
        Err(e) => Err(format!("cannot create dev secret {}: {e}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_document_with_rotation() {
        let keys = parse_secret(r#"{"jwt_keys":["new","old"],"state_key":"s"}"#).unwrap();
        assert_eq!(keys.jwt, vec![b"new".to_vec(), b"old".to_vec()]);
        assert_eq!(keys.state, b"s".to_vec());
    }

    #[test]
    fn secret_document_without_keys_is_refused() {
        assert!(parse_secret(r#"{"jwt_keys":[]}"#).is_err());
        assert!(parse_secret("not json").is_err());
    }
}
