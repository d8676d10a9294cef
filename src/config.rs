//! Configuration: `KFIN_*` environment variables (SPEC §12), with command-line flags
//! overriding them. Read once at start; nothing here changes while serving.

use std::path::PathBuf;
use std::time::Duration;

/// Where the process runs. Lambda mode is chosen by `AWS_LAMBDA_RUNTIME_API`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Local,
    Lambda,
}

/// Where JWT signing keys (and the request-state key) come from.
#[derive(Debug, Clone)]
pub enum KeySourceConfig {
    /// `KFIN_JWT_SECRET` (optionally `KFIN_STATE_KEY`).
    Static { jwt_secret: String, state_key: Option<String> },
    /// AWS Secrets Manager: `KFIN_SECRET_ID`, cached for `ttl`.
    SecretsManager { secret_id: String, ttl: Duration },
    /// A generated development secret kept in this file (beside the SQLite database).
    DevFile { path: PathBuf },
}

/// Database credentials from an RDS-style Secrets Manager secret
/// (`{"username","password","host","port","dbname"}`), named by `KFIN_DATABASE_SECRET_ID`.
/// Host and database name may be overridden (an RDS Proxy endpoint; a secret managed by
/// RDS carries only the user and password); the password only ever comes from the secret.
#[derive(Debug, Clone)]
pub struct DatabaseSecretConfig {
    pub secret_id: String,
    /// `KFIN_DATABASE_HOST`: wins over the secret's `host`.
    pub host: Option<String>,
    /// `KFIN_DATABASE_NAME`: wins over the secret's `dbname`.
    pub dbname: Option<String>,
    /// `KFIN_DATABASE_SSL_MODE` (default `verify-full`).
    pub ssl_mode: String,
    /// `KFIN_DATABASE_SSL_ROOT_CERT`: the CA bundle the server certificate must chain to.
    pub ssl_root_cert: Option<PathBuf>,
    /// Refreshed on the keys' TTL (`KFIN_SECRET_TTL_SECONDS`).
    pub ttl: Duration,
}

/// The `sslmode`s PostgreSQL (and sqlx) understand.
const SSL_MODES: [&str; 6] = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"];

/// Kobana's banking API (`src/gateway`): where it is and how it knows us.
#[derive(Debug, Clone)]
pub struct GatewayConfig {
    /// `KFIN_KOBANA_URL`; in Lambda, the sandbox by default. Locally, without it, the
    /// embedded stand-in is started (`embedded`) and its address goes here.
    pub url: Option<String>,
    pub credentials: GatewayCredentials,
    /// Whether `serve` starts the embedded stand-in of the banking API.
    pub embedded: bool,
}

/// The gateway's API token and webhook secret.
#[derive(Debug, Clone)]
pub enum GatewayCredentials {
    /// Not connected: a dispatch answers 422 `integration_not_connected`.
    None,
    /// `KFIN_KOBANA_API_TOKEN` and `KFIN_KOBANA_WEBHOOK_SECRET`.
    Static(crate::gateway::Credentials),
    /// AWS Secrets Manager: `KFIN_KOBANA_SECRET_ID`, `{"api_token","webhook_secret"}`.
    Secret { secret_id: String },
}

/// The banking API's sandbox, the gateway's default address in Lambda.
pub const KOBANA_SANDBOX_URL: &str = "https://api-sandbox.kobana.com.br";

impl GatewayConfig {
    /// Not connected: no gateway.
    pub fn none() -> GatewayConfig {
        GatewayConfig { url: None, credentials: GatewayCredentials::None, embedded: false }
    }

    fn from_env(mode: Mode) -> Result<GatewayConfig, ConfigError> {
        let url = env("KFIN_KOBANA_URL").map(|u| normalize_url("KFIN_KOBANA_URL", &u)).transpose()?;
        let credentials =
            match (env("KFIN_KOBANA_SECRET_ID"), env("KFIN_KOBANA_API_TOKEN"), env("KFIN_KOBANA_WEBHOOK_SECRET")) {
                (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
                    return Err(ConfigError(
                        "set KFIN_KOBANA_SECRET_ID or KFIN_KOBANA_API_TOKEN and KFIN_KOBANA_WEBHOOK_SECRET, not both"
                            .into(),
                    ))
                }
                (Some(secret_id), None, None) => GatewayCredentials::Secret { secret_id },
                (None, Some(api_token), Some(webhook_secret)) => {
                    GatewayCredentials::Static(crate::gateway::Credentials { api_token, webhook_secret })
                }
                (None, None, None) => GatewayCredentials::None,
                (None, _, _) => {
                    return Err(ConfigError("KFIN_KOBANA_API_TOKEN and KFIN_KOBANA_WEBHOOK_SECRET go together".into()))
                }
            };
        let connected = !matches!(credentials, GatewayCredentials::None);
        Ok(match (mode, url) {
            (_, Some(url)) => GatewayConfig { url: Some(url), credentials, embedded: false },
            (Mode::Local, None) if !connected => GatewayConfig { url: None, credentials, embedded: true },
            (_, None) if connected => {
                GatewayConfig { url: Some(KOBANA_SANDBOX_URL.into()), credentials, embedded: false }
            }
            (_, None) => GatewayConfig::none(),
        })
    }
}

#[derive(Debug, Clone, Copy)]
pub struct RateLimits {
    pub reads: i64,
    pub writes: i64,
    pub window_seconds: i64,
}

#[derive(Debug, Clone)]
pub struct Config {
    pub mode: Mode,
    /// `sqlite:PATH` or `postgres://…`. With a database secret it is only a
    /// password-free description for logs; the connection is built from the secret.
    pub database_url: String,
    /// Credentials from Secrets Manager instead of the URL (Lambda).
    pub database_secret: Option<DatabaseSecretConfig>,
    pub db_max_connections: u32,
    /// The MCP server's canonical public URL, without a trailing slash.
    pub public_url: String,
    /// The REST API's origin, without a trailing slash.
    pub api_base_url: String,
    pub auth_server: String,
    pub allowed_origins: Vec<String>,
    pub keys: KeySourceConfig,
    pub rate_limits: RateLimits,
    pub blob_url: Option<String>,
    pub gateway: GatewayConfig,
    pub oauth: OAuthConfig,
}

/// The authorization server's switches (`src/oauth`).
#[derive(Debug, Clone, Default)]
pub struct OAuthConfig {
    /// `KFIN_OAUTH_DEV_CLIENT_METADATA=1`: a client metadata document may be fetched from a
    /// loopback address (a test's or a developer's own client), over `http` too. Never in
    /// Lambda: the configuration refuses it there.
    pub dev_client_metadata: bool,
    /// `KFIN_OAUTH_DEV_CA`: a PEM file of certificates trusted, beside the system's, for
    /// those loopback documents (a test's self-signed certificate). Only with the switch.
    pub dev_ca: Option<PathBuf>,
    /// `KFIN_OAUTH_DEV_LOGIN_PUBLIC=1`: the development login also signs people in when
    /// the public URL is not a loopback one (a tunnel to `make run`, for a connector that
    /// calls from its cloud): whoever reaches that URL may then sign in as any person of
    /// the database, without a password. Never in Lambda.
    pub dev_login_public: bool,
    /// The company's OpenID Connect provider people sign in with, when configured: the
    /// identity source of a deployment (`src/oauth/oidc.rs`).
    pub oidc: Option<OidcConfig>,
}

/// The company's OpenID Connect provider: its issuer, this product's client there, and
/// where the client's secret is kept (never a parameter or an environment value).
#[derive(Debug, Clone)]
pub struct OidcConfig {
    /// `KFIN_OIDC_ISSUER`: the provider's issuer, as its discovery document states it.
    pub issuer: String,
    /// `KFIN_OIDC_CLIENT_ID`.
    pub client_id: String,
    pub secret: OidcSecret,
    /// How long a fetched secret is used before it is read again.
    pub secret_ttl: Duration,
}

/// Where the OpenID client's secret comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OidcSecret {
    /// A public client (PKCE only): the provider's app client has no secret.
    None,
    /// `KFIN_OIDC_SECRET_ID`: a Secrets Manager secret `{"client_secret": "…"}`, read at
    /// the first sign-in and again after `KFIN_SECRET_TTL_SECONDS`.
    SecretsManager { secret_id: String },
    /// `KFIN_OIDC_CLIENT_SECRET_FILE`: a file holding it (local use; never Lambda).
    File(PathBuf),
}

impl OidcConfig {
    fn from_env(mode: Mode, secret_ttl: Duration) -> Result<Option<OidcConfig>, ConfigError> {
        let (issuer, client_id) = match (env("KFIN_OIDC_ISSUER"), env("KFIN_OIDC_CLIENT_ID")) {
            (None, None) => {
                if env("KFIN_OIDC_SECRET_ID").is_some() || env("KFIN_OIDC_CLIENT_SECRET_FILE").is_some() {
                    return Err(ConfigError(
                        "an OpenID client secret needs KFIN_OIDC_ISSUER and KFIN_OIDC_CLIENT_ID".into(),
                    ));
                }
                return Ok(None);
            }
            (Some(issuer), Some(client_id)) => (issuer.trim().to_string(), client_id.trim().to_string()),
            _ => return Err(ConfigError("KFIN_OIDC_ISSUER and KFIN_OIDC_CLIENT_ID go together".into())),
        };
        let parsed = url::Url::parse(&issuer)
            .map_err(|_| ConfigError(format!("KFIN_OIDC_ISSUER must be a URL, got {issuer:?}")))?;
        let secure = parsed.scheme() == "https";
        let local = parsed.scheme() == "http" && mode == Mode::Local && is_loopback_url(&issuer);
        if !(secure || local) || parsed.query().is_some() || parsed.fragment().is_some() {
            return Err(ConfigError(format!(
                "KFIN_OIDC_ISSUER must be an https URL without query or fragment (http only for a provider on this \
                 machine, locally), got {issuer:?}"
            )));
        }
        let secret = match (env("KFIN_OIDC_SECRET_ID"), env("KFIN_OIDC_CLIENT_SECRET_FILE")) {
            (Some(_), Some(_)) => {
                return Err(ConfigError("set KFIN_OIDC_SECRET_ID or KFIN_OIDC_CLIENT_SECRET_FILE, not both".into()))
            }
            (Some(secret_id), None) => OidcSecret::SecretsManager { secret_id },
            (None, Some(_)) if mode == Mode::Lambda => {
                return Err(ConfigError(
                    "KFIN_OIDC_CLIENT_SECRET_FILE is for local use; in Lambda the secret is KFIN_OIDC_SECRET_ID's"
                        .into(),
                ))
            }
            (None, Some(path)) => OidcSecret::File(PathBuf::from(path)),
            (None, None) => OidcSecret::None,
        };
        Ok(Some(OidcConfig { issuer, client_id, secret, secret_ttl }))
    }
}

impl OAuthConfig {
    fn from_env(mode: Mode, secret_ttl: Duration) -> Result<OAuthConfig, ConfigError> {
        let dev_client_metadata = env("KFIN_OAUTH_DEV_CLIENT_METADATA").is_some_and(|v| v != "0");
        let dev_ca = env("KFIN_OAUTH_DEV_CA").map(PathBuf::from);
        let dev_login_public = env("KFIN_OAUTH_DEV_LOGIN_PUBLIC").is_some_and(|v| v != "0");
        if mode == Mode::Lambda && (dev_client_metadata || dev_ca.is_some() || dev_login_public) {
            return Err(ConfigError(
                "KFIN_OAUTH_DEV_CLIENT_METADATA, KFIN_OAUTH_DEV_CA and KFIN_OAUTH_DEV_LOGIN_PUBLIC are for local \
                 development and tests, never Lambda"
                    .into(),
            ));
        }
        if dev_ca.is_some() && !dev_client_metadata {
            return Err(ConfigError("KFIN_OAUTH_DEV_CA goes with KFIN_OAUTH_DEV_CLIENT_METADATA=1".into()));
        }
        Ok(OAuthConfig { dev_client_metadata, dev_ca, dev_login_public, oidc: OidcConfig::from_env(mode, secret_ttl)? })
    }
}

pub const DEFAULT_PUBLIC_URL: &str = "http://127.0.0.1:8080";
pub const DEFAULT_DATA_DIR: &str = ".data";

/// Errors in configuration are reported to the operator, who fixes the environment.
#[derive(Debug)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

fn env_number<T: std::str::FromStr>(name: &str, default: T) -> Result<T, ConfigError> {
    match env(name) {
        None => Ok(default),
        Some(v) => v.parse().map_err(|_| ConfigError(format!("{name} must be a whole number, got {v:?}"))),
    }
}

fn normalize_url(name: &str, url: &str) -> Result<String, ConfigError> {
    let url = url.trim().trim_end_matches('/');
    if !(url.starts_with("http://") || url.starts_with("https://")) || url.contains('#') {
        return Err(ConfigError(format!("{name} must be an http(s) URL without a fragment, got {url:?}")));
    }
    Ok(url.to_string())
}

impl Config {
    /// Reads the environment; `database_url` (from `--database-url`) overrides
    /// `KFIN_DATABASE_URL`.
    pub fn from_env(database_url: Option<String>) -> Result<Config, ConfigError> {
        Config::from_env_with(database_url, None)
    }

    /// As [`Config::from_env`], with a fallback for `KFIN_PUBLIC_URL` (the address
    /// `serve` listens on).
    pub fn from_env_with(
        database_url: Option<String>,
        public_url_fallback: Option<String>,
    ) -> Result<Config, ConfigError> {
        let mode = if env("AWS_LAMBDA_RUNTIME_API").is_some() { Mode::Lambda } else { Mode::Local };
        let data_dir = PathBuf::from(env("KFIN_DATA_DIR").unwrap_or_else(|| DEFAULT_DATA_DIR.into()));
        let secret_ttl = Duration::from_secs(env_number("KFIN_SECRET_TTL_SECONDS", 300u64)?);
        // A --database-url flag wins over the environment, the secret included.
        let database_secret = match (&database_url, env("KFIN_DATABASE_SECRET_ID")) {
            (None, Some(secret_id)) => {
                if env("KFIN_DATABASE_URL").is_some() {
                    return Err(ConfigError(
                        "set KFIN_DATABASE_URL or KFIN_DATABASE_SECRET_ID, not both (the secret supplies the credentials; \
                         KFIN_DATABASE_HOST and KFIN_DATABASE_NAME override its host and database)"
                            .into(),
                    ));
                }
                let ssl_mode = env("KFIN_DATABASE_SSL_MODE").unwrap_or_else(|| "verify-full".into());
                if !SSL_MODES.contains(&ssl_mode.as_str()) {
                    return Err(ConfigError(format!(
                        "KFIN_DATABASE_SSL_MODE must be one of {}, got {ssl_mode:?}",
                        SSL_MODES.join(", ")
                    )));
                }
                Some(DatabaseSecretConfig {
                    secret_id,
                    host: env("KFIN_DATABASE_HOST"),
                    dbname: env("KFIN_DATABASE_NAME"),
                    ssl_mode,
                    ssl_root_cert: env("KFIN_DATABASE_SSL_ROOT_CERT").map(PathBuf::from),
                    ttl: secret_ttl,
                })
            }
            _ => None,
        };
        let database_url = match (&database_secret, database_url.or_else(|| env("KFIN_DATABASE_URL"))) {
            (Some(secret), _) => format!("postgres://(credentials from Secrets Manager: {})", secret.secret_id),
            (None, Some(url)) => url,
            (None, None) if mode == Mode::Lambda => {
                return Err(ConfigError("KFIN_DATABASE_SECRET_ID (or KFIN_DATABASE_URL) is required in Lambda".into()))
            }
            (None, None) => format!("sqlite:{}", data_dir.join("kobana-finance.db").display()),
        };
        let public_url = normalize_url(
            "KFIN_PUBLIC_URL",
            &env("KFIN_PUBLIC_URL").or(public_url_fallback).unwrap_or_else(|| DEFAULT_PUBLIC_URL.into()),
        )?;
        let api_base_url = match env("KFIN_API_BASE_URL") {
            Some(u) => normalize_url("KFIN_API_BASE_URL", &u)?,
            None => public_url.clone(),
        };
        let auth_server = match env("KFIN_AUTH_SERVER") {
            Some(u) => normalize_url("KFIN_AUTH_SERVER", &u)?,
            None => public_url.clone(),
        };
        let allowed_origins = env("KFIN_ALLOWED_ORIGINS")
            .map(|v| {
                v.split(',').map(|o| o.trim().trim_end_matches('/').to_string()).filter(|o| !o.is_empty()).collect()
            })
            .unwrap_or_default();
        let keys = if let Some(secret_id) = env("KFIN_SECRET_ID") {
            KeySourceConfig::SecretsManager { secret_id, ttl: secret_ttl }
        } else if let Some(jwt_secret) = env("KFIN_JWT_SECRET") {
            KeySourceConfig::Static { jwt_secret, state_key: env("KFIN_STATE_KEY") }
        } else if mode == Mode::Lambda {
            return Err(ConfigError("KFIN_SECRET_ID (or KFIN_JWT_SECRET) is required in Lambda".into()));
        } else {
            KeySourceConfig::DevFile { path: dev_secret_path(&database_url, &data_dir) }
        };
        let rate_limits = RateLimits {
            reads: env_number("KFIN_RATE_LIMIT_READS", 3_600)?,
            writes: env_number("KFIN_RATE_LIMIT_WRITES", 1_200)?,
            window_seconds: env_number("KFIN_RATE_LIMIT_WINDOW_SECONDS", 3_600)?,
        };
        if rate_limits.window_seconds <= 0 {
            return Err(ConfigError("KFIN_RATE_LIMIT_WINDOW_SECONDS must be positive".into()));
        }
        // PostgreSQL's pool (SQLite always uses one connection: `storage::lite`). A
        // Lambda instance serves one request at a time.
        let default_connections = if mode == Mode::Lambda { 2 } else { 8 };
        Ok(Config {
            mode,
            database_url,
            database_secret,
            db_max_connections: env_number("KFIN_DB_MAX_CONNECTIONS", default_connections)?,
            public_url,
            api_base_url,
            auth_server,
            allowed_origins,
            keys,
            rate_limits,
            blob_url: env("KFIN_BLOB_URL"),
            gateway: GatewayConfig::from_env(mode)?,
            oauth: OAuthConfig::from_env(mode, secret_ttl)?,
        })
    }

    /// Whether this process is the authorization server of its tokens (SPEC §6): the
    /// default, unless `KFIN_AUTH_SERVER` names another.
    pub fn serves_authorization(&self) -> bool {
        self.auth_server == self.public_url
    }

    /// Whether the development login may sign people in: only locally, only while the
    /// server runs on its generated development secret (never with a configured secret,
    /// never on Lambda), and only on a loopback public URL unless
    /// `KFIN_OAUTH_DEV_LOGIN_PUBLIC` says the wider reach is meant; never beside the
    /// company's OpenID provider.
    pub fn development_login(&self) -> bool {
        self.mode == Mode::Local
            && self.oauth.oidc.is_none()
            && matches!(self.keys, KeySourceConfig::DevFile { .. })
            && (self.oauth.dev_login_public || is_loopback_url(&self.public_url))
    }

    /// The resources a token may be issued for (RFC 8707): this server's MCP audiences
    /// and its REST API's.
    pub fn resources(&self) -> Vec<String> {
        let mut resources = self.mcp_audiences().to_vec();
        resources.push(self.api_audience());
        resources
    }

    /// The audiences an MCP token may carry: the public URL, or it + `/mcp`.
    pub fn mcp_audiences(&self) -> [String; 2] {
        [self.public_url.clone(), format!("{}/mcp", self.public_url)]
    }

    /// The audience of REST API tokens.
    pub fn api_audience(&self) -> String {
        format!("{}/v1", self.api_base_url)
    }
}

/// Whether `url`'s host is this machine: `localhost`, a 127/8 or `::1` address.
fn is_loopback_url(url: &str) -> bool {
    let Ok(parsed) = url::Url::parse(url) else { return false };
    match parsed.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// The development secret lives beside the SQLite file, so `serve` and `token` that
/// point at the same database sign and verify with the same key.
fn dev_secret_path(database_url: &str, data_dir: &std::path::Path) -> PathBuf {
    if let Some(path) = crate::storage::sqlite_file_path(database_url) {
        let file = PathBuf::from(path);
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        return file.with_file_name(format!("{name}.dev-secret"));
    }
    data_dir.join("dev-secret")
}
