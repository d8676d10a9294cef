//! Database credentials from AWS Secrets Manager (the Lambda deployment).
//!
//! `KFIN_DATABASE_SECRET_ID` names an RDS-style secret,
//! `{"username","password","host","port","dbname"}` (a secret managed by RDS carries only
//! the user and password: `KFIN_DATABASE_HOST` / `KFIN_DATABASE_NAME` supply the rest, and
//! override the secret's when both are given — an RDS Proxy endpoint, for instance).
//!
//! * The secret is fetched at cold start (beside the keys secret) and the pool is built
//!   from it; the password lives only in the pool's connect options, never in the
//!   configuration, the environment or a log line.
//! * It is fetched again after the same TTL as the keys, and when the server refuses the
//!   password (SQLSTATE 28P01/28000: a rotation happened): the new options go to the pool
//!   with `set_connect_options`, so connections opened from then on use the new password
//!   while the open ones keep working. The refresh runs on its own task; requests never
//!   wait for it. A failed refresh keeps the options in force and is retried soon.
//! * TLS: `sslmode` is `KFIN_DATABASE_SSL_MODE` (default `verify-full`) and the server's
//!   certificate must chain to `KFIN_DATABASE_SSL_ROOT_CERT` (the Amazon RDS CA bundle
//!   the deployment ships) when it is given.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;
use sqlx::postgres::PgConnectOptions;
use sqlx::ConnectOptions;

use crate::config::DatabaseSecretConfig;

/// How soon a failed refresh is tried again, and the least time between two refreshes.
const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(5);
const MIN_INTERVAL: Duration = Duration::from_secs(1);

/// Set when PostgreSQL refused the password; the next request starts a refresh.
static CREDENTIALS_REFUSED: AtomicBool = AtomicBool::new(false);

/// Called by the error mapping when the server refuses the credentials.
pub(crate) fn note_refused() {
    CREDENTIALS_REFUSED.store(true, Ordering::Relaxed);
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Port {
    Number(u16),
    Text(String),
}

/// The fields of an RDS-style secret this server reads (`engine` and the rest are ignored).
#[derive(Deserialize)]
struct RdsSecret {
    username: String,
    password: String,
    host: Option<String>,
    port: Option<Port>,
    dbname: Option<String>,
}

/// Builds the connect options from the secret's text and the configured overrides. The
/// errors never quote the secret.
fn connect_options(text: &str, config: &DatabaseSecretConfig) -> Result<PgConnectOptions, String> {
    let secret: RdsSecret = serde_json::from_str(text)
        .map_err(|_| "the database secret is not an RDS-style JSON document with username and password".to_string())?;
    if secret.username.is_empty() || secret.password.is_empty() {
        return Err("the database secret has an empty username or password".into());
    }
    let host = config
        .host
        .clone()
        .or(secret.host.filter(|h| !h.trim().is_empty()))
        .ok_or("the database secret has no host: set KFIN_DATABASE_HOST (the cluster or RDS Proxy endpoint)")?;
    let port = match secret.port {
        None => 5432,
        Some(Port::Number(p)) => p,
        Some(Port::Text(p)) => {
            p.trim().parse().map_err(|_| "the database secret's port is not a number".to_string())?
        }
    };
    let dbname = config.dbname.clone().or(secret.dbname.filter(|d| !d.is_empty())).unwrap_or_else(|| "postgres".into());
    let mut url = url::Url::parse("postgres://localhost").map_err(|e| e.to_string())?;
    url.set_host(Some(host.trim())).map_err(|_| format!("the database host {host:?} is not a valid host name"))?;
    url.set_port(Some(port)).map_err(|_| "the database port cannot be set".to_string())?;
    url.set_username(&secret.username).map_err(|_| "the database username cannot be used in a URL".to_string())?;
    url.set_password(Some(&secret.password))
        .map_err(|_| "the database password cannot be used in a URL".to_string())?;
    url.set_path(&dbname);
    {
        let mut query = url.query_pairs_mut();
        query.append_pair("sslmode", &config.ssl_mode);
        if let Some(path) = &config.ssl_root_cert {
            query.append_pair("sslrootcert", &path.to_string_lossy());
        }
    }
    PgConnectOptions::from_url(&url).map_err(|_| "the database secret does not make a valid connection".to_string())
}

/// The database secret of this process and when it is next due for a refresh.
pub struct DatabaseCredentials {
    aws: crate::aws::Aws,
    config: DatabaseSecretConfig,
    next_refresh: Mutex<Instant>,
    last_refresh: Mutex<Instant>,
    refreshing: AtomicBool,
}

impl std::fmt::Debug for DatabaseCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DatabaseCredentials {{ secret_id: {:?}, password: [redacted] }}", self.config.secret_id)
    }
}

impl DatabaseCredentials {
    /// A source reading `config.secret_id` through `aws`; nothing is fetched yet.
    pub fn new(aws: crate::aws::Aws, config: DatabaseSecretConfig) -> DatabaseCredentials {
        let now = Instant::now();
        DatabaseCredentials {
            aws,
            next_refresh: Mutex::new(now + config.ttl),
            // A password refused right after the start is refreshed at once.
            last_refresh: Mutex::new(now.checked_sub(MIN_INTERVAL).unwrap_or(now)),
            config,
            refreshing: AtomicBool::new(false),
        }
    }

    /// Fetches the secret and builds the connect options from it.
    pub async fn fetch(&self) -> Result<PgConnectOptions, String> {
        let text = self
            .aws
            .get_secret_string(&self.config.secret_id)
            .await
            .map_err(|e| format!("cannot read the database secret: {e}"))?
            .ok_or("the database secret has no string value")?;
        connect_options(&text, &self.config)
    }

    /// Whether a refresh is due now; if so, the caller owns it until [`Self::finish`].
    pub(crate) fn claim(&self) -> bool {
        let now = Instant::now();
        let refused = CREDENTIALS_REFUSED.load(Ordering::Relaxed);
        let due = now >= *self.next_refresh.lock().unwrap_or_else(|p| p.into_inner())
            || (refused
                && now.duration_since(*self.last_refresh.lock().unwrap_or_else(|p| p.into_inner())) >= MIN_INTERVAL);
        due && self.refreshing.compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed).is_ok()
    }

    /// Fetches the secret and hands the options to `pool` (future connections); a
    /// failure keeps the options in force and schedules a retry.
    pub(crate) async fn refresh(&self, pool: &super::pool::PgPool) {
        CREDENTIALS_REFUSED.store(false, Ordering::Relaxed);
        let outcome = self.fetch().await;
        let now = Instant::now();
        *self.last_refresh.lock().unwrap_or_else(|p| p.into_inner()) = now;
        let next = match outcome {
            Ok(options) => {
                pool.set_connect_options(options);
                tracing::info!("database credentials refreshed");
                now + self.config.ttl
            }
            Err(e) => {
                tracing::warn!(error = %e, "database credentials not refreshed; the ones in force stay");
                now + RETRY_AFTER_FAILURE.min(self.config.ttl)
            }
        };
        *self.next_refresh.lock().unwrap_or_else(|p| p.into_inner()) = next;
        self.refreshing.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> DatabaseSecretConfig {
        DatabaseSecretConfig {
            secret_id: "db".into(),
            host: None,
            dbname: None,
            ssl_mode: "verify-full".into(),
            ssl_root_cert: Some("/opt/db-ca-bundle.pem".into()),
            ttl: Duration::from_secs(300),
        }
    }

    fn url(options: &PgConnectOptions) -> url::Url {
        options.to_url_lossy()
    }

    #[test]
    fn an_rds_secret_becomes_a_verified_tls_connection() {
        let text = r#"{"engine":"postgres","username":"kfin","password":"p@ss:/w?rd#1","host":"db.cluster-x.us-east-1.rds.amazonaws.com","port":5432,"dbname":"finance"}"#;
        let u = url(&connect_options(text, &config()).unwrap());
        assert_eq!(u.host_str(), Some("db.cluster-x.us-east-1.rds.amazonaws.com"));
        assert_eq!(u.port(), Some(5432));
        assert_eq!(u.username(), "kfin");
        let password = url::form_urlencoded::parse(format!("p={}", u.password().unwrap()).as_bytes())
            .next()
            .unwrap()
            .1
            .into_owned();
        assert_eq!(password, "p@ss:/w?rd#1", "special characters survive the URL");
        assert_eq!(u.path(), "/finance");
        let query: Vec<(String, String)> = u.query_pairs().into_owned().collect();
        assert!(query.contains(&("sslmode".into(), "verify-full".into())));
        // (sqlx writes the bundle back as `file: PATH`.)
        assert!(
            query
                .iter()
                .any(|(k, v)| k == "sslrootcert" && v.trim_start_matches("file:").trim() == "/opt/db-ca-bundle.pem"),
            "{query:?}"
        );
    }

    #[test]
    fn the_proxy_host_and_database_name_override_the_secret() {
        let mut c = config();
        c.host = Some("kfin.proxy-x.us-east-1.rds.amazonaws.com".into());
        c.dbname = Some("kobana_finance".into());
        let u = url(&connect_options(r#"{"username":"u","password":"p","host":"h","port":"6432"}"#, &c).unwrap());
        assert_eq!(u.host_str(), Some("kfin.proxy-x.us-east-1.rds.amazonaws.com"));
        assert_eq!(u.port(), Some(6432));
        assert_eq!(u.path(), "/kobana_finance");
    }

    #[test]
    fn a_secret_without_what_is_needed_is_refused_without_quoting_it() {
        for text in [
            "not json",
            r#"{"username":"u"}"#,
            r#"{"username":"u","password":""}"#,
            r#"{"username":"u","password":"hunter2"}"#,
        ] {
            let err = connect_options(text, &config()).unwrap_err();
            assert!(!err.contains("hunter2"), "{err}");
        }
    }
}
