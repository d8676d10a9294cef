//! Storage: one data-access layer over SQLite (embedded, local) and PostgreSQL
//! (production), through sqlx's `Any` driver with runtime queries, so every query is
//! written once. SQL uses `$n` placeholders, which both backends accept. The tables
//! that are not a resource's (identity, audit, rate limits, confirmation nonces, …) are
//! read and written by the modules here; the resources' own queries are `ops`'s.
//!
//! Failures are mapped once, here: a dependency that is down (I/O, pool exhausted,
//! database locked) becomes 503 `service_unavailable`; anything else is an internal
//! error. Neither leaks SQL or connection details to the caller.

pub mod audit;
pub mod blob;
pub mod confirmations;
pub mod credentials;
pub mod housekeeping;
pub mod identity;
pub mod migrate;
pub mod rate_limit;
pub mod seed;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::{AnyPool, Executor};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use self::credentials::DatabaseCredentials;

use crate::error::ApiError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The database handle shared by every request (cheap to clone).
#[derive(Clone, Debug)]
pub struct Db {
    pub pool: AnyPool,
    pub backend: Backend,
    /// Where the credentials come from when a secret supplies them (refreshed on a TTL).
    pub credentials: Option<Arc<DatabaseCredentials>>,
}

/// The file path of a `sqlite:` URL (`sqlite:path`, `sqlite://path`), if it is one and
/// names a file rather than an in-memory database.
pub fn sqlite_file_path(url: &str) -> Option<&str> {
    let rest = url.strip_prefix("sqlite:")?;
    let rest = rest.strip_prefix("//").unwrap_or(rest);
    let path = rest.split('?').next().unwrap_or(rest);
    if path.is_empty() || path == ":memory:" {
        None
    } else {
        Some(path)
    }
}

impl Db {
    /// Connects to `url` (`sqlite:PATH` or `postgres://…`). A SQLite file and its
    /// directory are created when missing.
    pub async fn connect(url: &str, max_connections: u32) -> Result<Db, sqlx::Error> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Backend::Postgres
        } else {
            return Err(sqlx::Error::Configuration(
                "KFIN_DATABASE_URL must start with sqlite: or postgres://".into(),
            ));
        };
        let mut url = url.to_string();
        if backend == Backend::Sqlite {
            if let Some(path) = sqlite_file_path(&url) {
                if let Some(dir) = std::path::Path::new(path).parent() {
                    if !dir.as_os_str().is_empty() {
                        std::fs::create_dir_all(dir).map_err(sqlx::Error::Io)?;
                    }
                }
            }
            if !url.contains("mode=") {
                url.push_str(if url.contains('?') { "&mode=rwc" } else { "?mode=rwc" });
            }
        }
        let options = AnyConnectOptions::from_str(&url)?;
        let pool = pool_options(backend, max_connections).connect_with(options).await?;
        Ok(Db { pool, backend, credentials: None })
    }

    /// A PostgreSQL pool with the credentials of a Secrets Manager secret (fetched now;
    /// refreshed later by [`Db::refresh_credentials_if_due`]). The pool connects on
    /// first use: a cold start while the database is down serves 503 + `Retry-After`
    /// instead of failing the function's initialisation (which API Gateway would turn
    /// into a bare 5xx), and the first request after it comes back is served.
    pub async fn connect_with_secret(credentials: Arc<DatabaseCredentials>, max_connections: u32) -> Result<Db, String> {
        sqlx::any::install_default_drivers();
        let options = credentials.fetch().await?;
        let pool = pool_options(Backend::Postgres, max_connections).connect_lazy_with(options);
        Ok(Db { pool, backend: Backend::Postgres, credentials: Some(credentials) })
    }

    /// Starts a refresh of the secret's credentials on its own task when one is due
    /// (the TTL passed, or the server refused the password); returns at once.
    pub fn refresh_credentials_if_due(&self) {
        if let Some(credentials) = &self.credentials {
            if credentials.claim() {
                let credentials = Arc::clone(credentials);
                let pool = self.pool.clone();
                tokio::spawn(async move { credentials.refresh(&pool).await });
            }
        }
    }
}

fn pool_options(backend: Backend, max_connections: u32) -> AnyPoolOptions {
    AnyPoolOptions::new()
        .max_connections(max_connections.max(1))
        .acquire_timeout(Duration::from_secs(5))
        // A pinged idle connection costs a round trip per query. A SQLite file
        // cannot go away under us; a PostgreSQL connection can, so it is checked.
        .test_before_acquire(backend == Backend::Postgres)
        .after_connect(move |conn, _meta| {
            Box::pin(async move {
                if backend == Backend::Sqlite {
                    // WAL lets readers proceed during a write; NORMAL is durable in WAL
                    // mode except on power loss; foreign keys are off by default in SQLite.
                    conn.execute(
                        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \
                         PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;",
                    )
                    .await?;
                }
                Ok(())
            })
        })
}

/// PostgreSQL SQLSTATEs of a server that cannot serve now (SQLite's codes are numbers
/// and never look like these): class 08 (connection exception), 53300 (too many
/// connections), 57P01–57P03 (shut down, crashed, starting up), and a refused password
/// (28P01, 28000), which is what a rotation looks like until the credentials refresh.
fn is_unavailable_sqlstate(code: &str) -> bool {
    code.len() == 5
        && (code.starts_with("08") || code == "53300" || matches!(code, "57P01" | "57P02" | "57P03") || is_refused_credentials(code))
}

fn is_refused_credentials(code: &str) -> bool {
    matches!(code, "28P01" | "28000")
}

/// Maps a database failure to what the caller sees, logging the cause for operators.
pub fn db_error(err: sqlx::Error) -> ApiError {
    let unavailable = match &err {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(db) => {
            if db.code().is_some_and(|code| is_refused_credentials(&code)) {
                credentials::note_refused();
            }
            let msg = db.message().to_ascii_lowercase();
            db.code().is_some_and(|code| is_unavailable_sqlstate(&code))
                || msg.contains("database is locked")
                || msg.contains("busy")
                || msg.contains("terminating connection")
                || msg.contains("shutting down")
        }
        _ => false,
    };
    if unavailable {
        tracing::warn!(error = %err, "database unavailable");
        ApiError::unavailable("database")
    } else {
        tracing::error!(error = %err, "database error");
        ApiError::internal()
    }
}
