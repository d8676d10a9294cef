//! Storage: one data-access layer over SQLite (embedded, local) and PostgreSQL
//! (production). Every statement is written once, with `$n` placeholders, and run
//! through [`sql`]: on SQLite in-process through rusqlite ([`lite`]), on PostgreSQL
//! through sqlx. The tables that are not a resource's (identity, audit, rate limits,
//! confirmation nonces, …) are read and written by the modules here; the resources' own
//! queries are `ops`'s.
//!
//! Failures are mapped once, here: a dependency that is down (I/O, pool exhausted,
//! database locked) becomes 503 `service_unavailable`; anything else is an internal
//! error. Neither leaks SQL or connection details to the caller.

pub mod audit;
pub mod banks;
pub mod blob;
pub mod confirmations;
pub mod credentials;
pub mod housekeeping;
pub mod identity;
pub mod lite;
pub mod migrate;
pub mod oauth;
pub mod people;
pub mod pool;
pub mod rate_limit;
pub mod row;
pub mod seed;
pub mod sql;

use sqlx::postgres::PgConnectOptions;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Instant;

use self::credentials::DatabaseCredentials;
use self::lite::Lite;
use self::pool::{PgPool, CHECK_ALL_AFTER_LOSS};

pub use self::sql::{query, Conn, Error, Held, Lent, OwnedRow, Row, Tx};

use crate::error::ApiError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The database handle shared by every request (cheap to clone).
#[derive(Clone, Debug)]
pub struct Db {
    pool: Pool,
    pub backend: Backend,
    /// Where the credentials come from when a secret supplies them (refreshed on a TTL).
    pub credentials: Option<Arc<DatabaseCredentials>>,
    /// The memberships this process last read of each user (PostgreSQL).
    pub recent_memberships: Arc<identity::Recent>,
    /// The numbers of the shared rate-limit counters this process reserved (PostgreSQL).
    pub reserved_hits: Arc<rate_limit::Reserved>,
}

#[derive(Clone, Debug)]
enum Pool {
    Lite(Arc<Lite>),
    Pg(PgPool),
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
    /// Whether the database answers a statement now (the health check). A failure is
    /// logged as any other is.
    pub async fn answers(&self) -> bool {
        match query("SELECT 1").fetch_optional(self).await {
            Ok(_) => true,
            Err(e) => {
                let _ = db_error(e);
                false
            }
        }
    }

    /// Connects to `url` (`sqlite:PATH` or `postgres://…`). A SQLite file and its
    /// directory are created when missing.
    pub async fn connect(url: &str, max_connections: u32) -> Result<Db, Error> {
        if url.starts_with("sqlite:") {
            let path = sqlite_file_path(url);
            if let Some(dir) = path.and_then(|p| std::path::Path::new(p).parent()) {
                if !dir.as_os_str().is_empty() {
                    std::fs::create_dir_all(dir).map_err(Error::Io)?;
                }
            }
            let lite = Lite::open(path)?;
            Ok(Db {
                pool: Pool::Lite(lite),
                backend: Backend::Sqlite,
                credentials: None,
                recent_memberships: Arc::default(),
                reserved_hits: Arc::default(),
            })
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let options = PgConnectOptions::from_str(url).map_err(Error::Pg)?;
            let pool = PgPool::new(options, max_connections)?;
            // Connects now: a wrong URL or a database that is down fails the start.
            drop(pool.get().await?);
            Ok(Db {
                pool: Pool::Pg(pool),
                backend: Backend::Postgres,
                credentials: None,
                recent_memberships: Arc::default(),
                reserved_hits: Arc::default(),
            })
        } else {
            Err(Error::Pg(sqlx::Error::Configuration(
                "KFIN_DATABASE_URL must start with sqlite: or postgres://".into(),
            )))
        }
    }

    /// A PostgreSQL pool with the credentials of a Secrets Manager secret (fetched now;
    /// refreshed later by [`Db::refresh_credentials_if_due`]). The pool connects on
    /// first use: a cold start while the database is down serves 503 + `Retry-After`
    /// instead of failing the function's initialisation (which API Gateway would turn
    /// into a bare 5xx), and the first request after it comes back is served.
    pub async fn connect_with_secret(
        credentials: Arc<DatabaseCredentials>,
        max_connections: u32,
    ) -> Result<Db, String> {
        let options = credentials.fetch().await?;
        let pool = PgPool::new(options, max_connections).map_err(|e| e.to_string())?;
        Ok(Db {
            pool: Pool::Pg(pool),
            backend: Backend::Postgres,
            credentials: Some(credentials),
            recent_memberships: Arc::default(),
            reserved_hits: Arc::default(),
        })
    }

    /// Starts a refresh of the secret's credentials on its own task when one is due
    /// (the TTL passed, or the server refused the password); returns at once.
    pub fn refresh_credentials_if_due(&self) {
        if let Some(credentials) = &self.credentials {
            if let (true, Pool::Pg(pool)) = (credentials.claim(), &self.pool) {
                let credentials = Arc::clone(credentials);
                let pool = pool.clone();
                tokio::spawn(async move { credentials.refresh(&pool).await });
            }
        }
    }
}

/// When a connection was last found gone: milliseconds since [`EPOCH`], plus one (0:
/// never). Process-wide, as the server has one pool (a test process's several pools
/// only check a little more).
static LOST_AT_MS: AtomicU64 = AtomicU64::new(0);
static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);

fn millis_since_epoch() -> u64 {
    u64::try_from(EPOCH.elapsed().as_millis()).unwrap_or(u64::MAX - 1) + 1
}

/// Called when a connection was found gone: the pool checks the connections it hands
/// out for the next [`CHECK_ALL_AFTER_LOSS`] ([`pool`]).
pub(crate) fn note_lost() {
    LOST_AT_MS.store(millis_since_epoch(), Ordering::Relaxed);
}

fn lost_recently() -> bool {
    let at = LOST_AT_MS.load(Ordering::Relaxed);
    at != 0 && millis_since_epoch().saturating_sub(at) < CHECK_ALL_AFTER_LOSS.as_millis() as u64
}

/// Runs `attempt`, and once more when it failed because its connection was found gone
/// (after [`note_lost`], so the pool checks the connection it hands out then). Only for
/// statements that may run twice: `BEGIN`, and the rate-limit count (a count committed
/// just before its connection dropped is counted once more: one hit of the budget, never
/// a refused good request).
pub(crate) async fn retry_if_lost<T, Fut>(attempt: impl Fn() -> Fut) -> Result<T, Error>
where
    Fut: std::future::Future<Output = Result<T, Error>>,
{
    match attempt().await {
        Err(err) if err.is_connection_lost() => {
            tracing::info!(error = %err, "a pooled connection was gone: sent again on a checked one");
            note_lost();
            attempt().await
        }
        other => other,
    }
}

/// PostgreSQL SQLSTATEs of a server that cannot serve now (SQLite's codes are numbers
/// and never look like these): a lost connection ([`is_lost_connection_sqlstate`]),
/// 53300 (too many connections), and a refused password (28P01, 28000), which is what a
/// rotation looks like until the credentials refresh.
pub(crate) fn is_unavailable_sqlstate(code: &str) -> bool {
    code.len() == 5 && (is_lost_connection_sqlstate(code) || code == "53300" || is_refused_credentials(code))
}

/// SQLSTATEs of a connection the server ended or lost: class 08 (connection exception)
/// and 57P01–57P03 (shut down, crashed, starting up).
pub(crate) fn is_lost_connection_sqlstate(code: &str) -> bool {
    code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03")
}

fn is_refused_credentials(code: &str) -> bool {
    matches!(code, "28P01" | "28000")
}

/// A database failure becomes what the caller sees through `?` ([`db_error`]).
impl From<Error> for ApiError {
    fn from(err: Error) -> ApiError {
        db_error(err)
    }
}

/// Maps a database failure to what the caller sees, logging the cause for operators.
pub fn db_error(err: Error) -> ApiError {
    if err.sqlstate().is_some_and(|code| is_refused_credentials(&code)) {
        credentials::note_refused();
    }
    if err.is_connection_lost() {
        note_lost();
    }
    if matches!(err, Error::NotAdmitted) {
        // Not a failure: the request is answered from its count.
        return ApiError::internal();
    }
    if err.is_volume_exceeded() {
        return ApiError::new(
            crate::error::ErrorCode::UnprocessableEntity,
            "This would take the workspace's books past the most money they can hold (R$ 1.000.000.000.000.000,00 \
             in all amounts together)",
        )
        .with_details(serde_json::json!({ "field": "amount", "reason": "total_out_of_range" }));
    }
    if err.is_serialization_failure() {
        tracing::info!(error = %err, "a transaction met a concurrent change");
        return ApiError::changed_meanwhile();
    }
    if err.is_unavailable() {
        tracing::warn!(error = %err, "database unavailable");
        ApiError::unavailable("database")
    } else {
        tracing::error!(error = %err, "database error");
        ApiError::internal()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    fn lost() -> Error {
        Error::Pg(sqlx::Error::Io(std::io::ErrorKind::ConnectionReset.into()))
    }

    /// Runs `retry_if_lost` on an attempt that fails with `failures` in turn, then
    /// succeeds; returns the outcome and the attempts made.
    async fn attempts(failures: Vec<fn() -> Error>) -> (Result<u8, Error>, usize) {
        let tries = AtomicUsize::new(0);
        let attempt = || async {
            let n = tries.fetch_add(1, Ordering::SeqCst);
            failures.get(n).map_or(Ok(7), |failure| Err(failure()))
        };
        let outcome = retry_if_lost(attempt).await;
        (outcome, tries.load(Ordering::SeqCst))
    }

    #[tokio::test]
    async fn a_statement_whose_connection_was_gone_is_sent_once_more_on_a_checked_one() {
        let ended = || Error::Pg(sqlx::Error::Protocol("closed".into()));
        assert!(!ended().is_connection_lost(), "only I/O and the lost-connection SQLSTATEs count");

        let (outcome, tries) = attempts(vec![lost]).await;
        assert_eq!((outcome.unwrap(), tries), (7, 2));
        assert!(lost_recently(), "the pool checks its connections after a loss");

        let (outcome, tries) = attempts(vec![lost, lost]).await;
        assert!(outcome.unwrap_err().is_connection_lost(), "sent once more, not twice");
        assert_eq!(tries, 2);

        for refused in [(|| Error::RowNotFound) as fn() -> Error, || Error::PoolTimedOut, || Error::Closed] {
            let (outcome, tries) = attempts(vec![refused]).await;
            assert!(outcome.is_err());
            assert_eq!(tries, 1, "a failure other than a lost connection is not sent again");
        }
    }

    #[test]
    fn a_lost_connection_is_one_of_the_unavailable_sqlstates() {
        for code in ["08006", "08003", "57P01", "57P02", "57P03"] {
            assert!(is_lost_connection_sqlstate(code) && is_unavailable_sqlstate(code), "{code}");
        }
        for code in ["53300", "28P01", "28000"] {
            assert!(!is_lost_connection_sqlstate(code) && is_unavailable_sqlstate(code), "{code}");
        }
        for code in ["23505", "40001", "57014"] {
            assert!(!is_lost_connection_sqlstate(code) && !is_unavailable_sqlstate(code), "{code}");
        }
    }
}
