//! PostgreSQL's connection pool: deadpool over sqlx's connections.
//!
//! Why not sqlx's own pool: it sends a round trip to the server (a `Sync`) with every
//! connection that comes back to it, to flush what a dropped transaction left queued
//! and to find a broken connection — one round trip in three of a read. Here a
//! connection comes back as it is, and the cases that round trip was for are handled
//! where they happen ([`PgConn`]'s drop):
//! * a transaction dropped without commit is rolled back on its own task, and its
//!   connection comes back once the `ROLLBACK` answered (the rows it locked are free at
//!   once, not when the connection is next used);
//! * a connection whose statement was cut short (the request's future dropped: its
//!   client went away) is drained on its own task — its answer read, its transaction
//!   rolled back — and comes back once it is ready; when that takes longer than
//!   [`DRAIN_WITHIN`] (a long statement) it is closed instead, freeing its place;
//! * a connection whose statement failed other than by the server's refusal (I/O,
//!   protocol) is closed, never reused.
//!
//! A connection leaving the pool is checked with a round trip only when it was last
//! handed out [`CHECK_WHEN_IDLE_FOR`] ago or more, or when a connection was found gone
//! in the last [`CHECK_ALL_AFTER_LOSS`] ([`super::note_lost`]); one older than
//! [`MAX_LIFETIME`] is replaced, and those unused for [`IDLE_TIMEOUT`] are closed. One
//! handed out unchecked that turns out gone fails its first statement; the admission
//! step and `BEGIN`, the first statements of every request, are then sent again on a
//! checked connection ([`super::retry_if_lost`]), so the caller does not see it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use deadpool::managed::{self, Metrics, PoolError, QueueMode, RecycleError, RecycleResult};
use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::{ConnectOptions, Connection, Executor};

use super::sql::Error;
use super::{lost_recently, millis_since_epoch, note_lost};

/// How long a pooled connection may go unused and still be handed out unchecked.
pub const CHECK_WHEN_IDLE_FOR: Duration = Duration::from_secs(1);

/// How long after a connection was found gone every pooled connection is checked before
/// use (a restart or a failover ends them all at once). Past it, a connection handed out
/// unchecked has served since: as it is no longer than [`CHECK_WHEN_IDLE_FOR`], none
/// that the same event ended is.
pub const CHECK_ALL_AFTER_LOSS: Duration = Duration::from_secs(2);

/// A connection is replaced once this old (a failover's new address, the server's
/// memory per session, credentials rotated since it opened).
pub const MAX_LIFETIME: Duration = Duration::from_secs(30 * 60);

/// A connection unused this long is closed (a quiet server holds none of the
/// database's connection slots).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// How long a request waits for a connection, and for one to open, before it is told
/// the database is unavailable (503).
const WAIT: Duration = Duration::from_secs(5);

/// The longest pause between two tries to open a connection the server refused.
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// How long a connection whose statement was cut short may take to be ready again
/// before it is closed instead.
pub const DRAIN_WITHIN: Duration = Duration::from_secs(1);

/// The pool (cheap to clone).
#[derive(Clone)]
pub struct PgPool {
    pool: managed::Pool<Connector>,
    /// When idle connections were last looked over for [`IDLE_TIMEOUT`]
    /// ([`millis_since_epoch`]).
    trimmed_at: Arc<AtomicU64>,
}

impl std::fmt::Debug for PgPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgPool").field("status", &self.pool.status()).finish()
    }
}

/// Opens connections with the options in force (a credentials refresh replaces them).
struct Connector {
    options: RwLock<PgConnectOptions>,
}

impl managed::Manager for Connector {
    type Type = PgConnection;
    type Error = sqlx::Error;

    /// Opens a connection; while the server refuses connections or is starting up (a
    /// restart, a failover), tries again after 10 ms, 20 ms, … up to [`MAX_BACKOFF`], so
    /// that a request waits out a short outage rather than fail ([`PgPool::get`] bounds
    /// the wait).
    async fn create(&self) -> Result<PgConnection, sqlx::Error> {
        let mut backoff = Duration::from_millis(10);
        loop {
            let options = self.options.read().unwrap_or_else(|p| p.into_inner()).clone();
            match options.connect().await {
                Err(sqlx::Error::Io(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {}
                Err(sqlx::Error::Database(e)) if e.is_transient_in_connect_phase() => {}
                outcome => return outcome,
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    async fn recycle(&self, conn: &mut PgConnection, metrics: &Metrics) -> RecycleResult<sqlx::Error> {
        if metrics.age() >= MAX_LIFETIME {
            return Err(RecycleError::message("past its lifetime"));
        }
        if metrics.last_used() >= CHECK_WHEN_IDLE_FOR || lost_recently() {
            conn.ping().await?;
        }
        Ok(())
    }
}

impl PgPool {
    /// A pool of at most `max_connections` connections, opened on first use.
    pub fn new(options: PgConnectOptions, max_connections: u32) -> Result<PgPool, Error> {
        let connector = Connector { options: RwLock::new(options) };
        let pool = managed::Pool::builder(connector)
            .max_size(max_connections.max(1) as usize)
            .queue_mode(QueueMode::Lifo)
            .build()
            .map_err(|e| Error::Pg(sqlx::Error::Configuration(e.to_string().into())))?;
        Ok(PgPool { pool, trimmed_at: Arc::new(AtomicU64::new(millis_since_epoch())) })
    }

    /// A connection: the one used last, checked first when [`Connector::recycle`] says
    /// so; a new one when none is idle. Within [`WAIT`] in all, whatever it waited for
    /// (a free connection, the checks of idle ones, a new one opening).
    pub async fn get(&self) -> Result<PgConn, Error> {
        self.close_idle_past_timeout();
        let Ok(got) = tokio::time::timeout(WAIT, self.pool.get()).await else {
            return Err(Error::PoolTimedOut);
        };
        match got {
            Ok(object) => Ok(PgConn { object: Some(object), under_way: false, broken: false, in_transaction: false }),
            Err(PoolError::Timeout(_)) => Err(Error::PoolTimedOut),
            Err(PoolError::Closed) => Err(Error::Closed),
            Err(PoolError::Backend(e)) => {
                let err = Error::Pg(e);
                if err.is_connection_lost() {
                    note_lost();
                }
                Err(err)
            }
            Err(e) => Err(Error::Pg(sqlx::Error::Configuration(e.to_string().into()))),
        }
    }

    /// The options connections open with from now on (those open stay as they are).
    pub fn set_connect_options(&self, options: PgConnectOptions) {
        *self.pool.manager().options.write().unwrap_or_else(|p| p.into_inner()) = options;
    }

    /// Closes the pool: idle connections are closed now, the others as they come back,
    /// and every later [`PgPool::get`] fails with [`Error::Closed`].
    pub async fn close(&self) {
        let idle = self.pool.retain(|_, _| false).removed;
        self.pool.close();
        for conn in idle {
            let _ = conn.close().await;
        }
    }

    /// Closes the idle connections unused for [`IDLE_TIMEOUT`], looking at most once a
    /// minute.
    fn close_idle_past_timeout(&self) {
        const EVERY_MS: u64 = 60_000;
        let now = millis_since_epoch();
        let last = self.trimmed_at.load(Ordering::Relaxed);
        if now.saturating_sub(last) < EVERY_MS
            || self.trimmed_at.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_err()
        {
            return;
        }
        let removed = self.pool.retain(|_, metrics| metrics.last_used() < IDLE_TIMEOUT).removed;
        if !removed.is_empty() {
            tokio::spawn(async move {
                for conn in removed {
                    let _ = conn.close().await;
                }
            });
        }
    }
}

/// A connection taken from the pool; back to it when dropped (see the module's notes
/// for when it is rolled back first or closed instead).
pub struct PgConn {
    object: Option<managed::Object<Connector>>,
    /// A statement was sent and its answer not all read ([`PgConn::run`]).
    under_way: bool,
    /// A statement failed in a way that leaves the connection unusable.
    broken: bool,
    /// A transaction may be open: from `BEGIN` sent to `COMMIT` answered.
    in_transaction: bool,
}

impl PgConn {
    /// Runs `statement` on the connection, recording how it ended: a server's refusal
    /// leaves the connection fit for the next one; an I/O or protocol failure does not,
    /// for good, whatever follows; a statement cut short (this future dropped) leaves
    /// it to be drained when it is dropped.
    pub(super) async fn run<T>(
        &mut self,
        statement: impl AsyncFnOnce(&mut PgConnection) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let Some(conn) = self.object.as_deref_mut() else { return Err(Error::Closed) };
        self.under_way = true;
        let outcome = statement(conn).await;
        self.under_way = false;
        if let Err(Error::Pg(e)) = &outcome {
            self.broken |= leaves_connection_unusable(e);
            if super::sql::is_lost_connection(e) {
                note_lost();
            }
        }
        outcome
    }

    /// Runs `sql`, one statement or several, without parameters.
    pub(super) async fn script(&mut self, sql: &str) -> Result<(), Error> {
        self.run(async |conn| {
            sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(conn).await.map(|_| ()).map_err(Error::Pg)
        })
        .await
    }

    /// `BEGIN`, or `begin` (`BEGIN ISOLATION LEVEL …`).
    pub(super) async fn begin(&mut self, begin: &str) -> Result<(), Error> {
        self.in_transaction = true;
        let outcome = self.script(begin).await;
        self.in_transaction = outcome.is_ok();
        outcome
    }

    /// `COMMIT` of the transaction [`PgConn::begin`] opened (a `COMMIT` the server
    /// refused ended it all the same).
    pub(super) async fn commit(&mut self) -> Result<(), Error> {
        let outcome = self.script("COMMIT").await;
        self.in_transaction = false;
        outcome
    }
}

/// Whether a failure leaves the connection in a state the next statement cannot trust
/// (anything but the server refusing the statement, or a value that did not decode).
fn leaves_connection_unusable(e: &sqlx::Error) -> bool {
    !matches!(
        e,
        sqlx::Error::Database(_)
            | sqlx::Error::RowNotFound
            | sqlx::Error::ColumnDecode { .. }
            | sqlx::Error::ColumnNotFound(_)
            | sqlx::Error::ColumnIndexOutOfBounds { .. }
            | sqlx::Error::TypeNotFound { .. }
            | sqlx::Error::Decode(_)
            | sqlx::Error::Encode(_)
    )
}

impl Drop for PgConn {
    fn drop(&mut self) {
        let Some(mut object) = self.object.take() else { return };
        if !self.broken && !self.under_way && !self.in_transaction {
            return; // back to the pool as it is
        }
        let runtime = match tokio::runtime::Handle::try_current() {
            Ok(runtime) if !self.broken => runtime,
            // Closed, which also ends a transaction: what a broken one was sending or
            // receiving is unknown, and without a runtime (the process is ending)
            // nothing can drain it.
            _ => {
                drop(managed::Object::take(object));
                return;
            }
        };
        let rollback = self.in_transaction;
        runtime.spawn(async move {
            let ready = async {
                if rollback {
                    object.execute("ROLLBACK").await.map(|_| ())
                } else {
                    object.ping().await
                }
            };
            match tokio::time::timeout(DRAIN_WITHIN, ready).await {
                Ok(Ok(())) => {}
                Ok(Err(error)) => {
                    tracing::warn!(%error, "a connection left mid-statement or mid-transaction could not be drained: closed");
                    drop(managed::Object::take(object));
                }
                Err(_) => drop(managed::Object::take(object)),
            }
        });
    }
}
