//! SQLite connections for a server process: a few reader connections, taken per
//! statement (or held by a [`LiteConn`]) and given back, and one writer behind an
//! asynchronous lock, which a transaction holds from `BEGIN IMMEDIATE` to its end.
//!
//! Statements run on the calling task: a SQLite statement on a local file takes
//! microseconds, less than handing it to another thread would. Nothing waits on a lock
//! while holding a thread: in WAL mode readers never wait for the writer, and writers
//! queue on the asynchronous lock, not in SQLite's busy handler (which only another
//! process writing the same file can still reach).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use tokio::sync::{OwnedMutexGuard, OwnedSemaphorePermit, Semaphore};

use super::sql::{Arg, Error, Row, Want};

/// How long a statement waits for a connection before the database counts as
/// unavailable (503).
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);
/// Prepared statements kept per connection (the server runs fewer distinct ones).
const STATEMENT_CACHE: usize = 256;

/// The connections of one SQLite database.
pub struct Lite {
    /// What each connection opens: a file path, or a shared in-memory URI.
    target: String,
    readers: Mutex<Vec<Connection>>,
    permits: Arc<Semaphore>,
    writer: Arc<tokio::sync::Mutex<Connection>>,
    closed: AtomicBool,
}

impl std::fmt::Debug for Lite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lite").field("target", &self.target).finish_non_exhaustive()
    }
}

/// Opens a connection with the server's settings: WAL (readers proceed during a write),
/// `synchronous = NORMAL` (durable in WAL mode except on power loss), foreign keys on
/// (SQLite's default is off), and a busy timeout for another process's write.
fn open(target: &str) -> Result<Connection, Error> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(target, flags)?;
    conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;")?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    Ok(conn)
}

impl Lite {
    /// The database at `path` (created when missing), or a private in-memory database
    /// for `None`, with up to `readers` reader connections. The writer and one reader
    /// are opened now, so a failure to open shows at start and the first request opens
    /// nothing.
    pub fn open(path: Option<&str>, readers: u32) -> Result<Arc<Lite>, Error> {
        let target = match path {
            Some(path) => path.to_string(),
            // One database shared by this pool's connections, and by nothing else.
            None => format!("file:kfin-{}?mode=memory&cache=shared", uuid::Uuid::new_v4()),
        };
        let writer = open(&target)?;
        let reader = open(&target)?;
        Ok(Arc::new(Lite {
            target,
            readers: Mutex::new(vec![reader]),
            permits: Arc::new(Semaphore::new(readers.max(1) as usize)),
            writer: Arc::new(tokio::sync::Mutex::new(writer)),
            closed: AtomicBool::new(false),
        }))
    }

    /// Closes the pooled readers; every later statement fails as unavailable.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.readers.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    fn open_or_closed(&self) -> Result<(), Error> {
        if self.closed.load(Ordering::Acquire) {
            Err(Error::Closed)
        } else {
            Ok(())
        }
    }

    /// A reader connection, held until the returned [`LiteConn`] is dropped.
    pub async fn reader(lite: &Arc<Lite>) -> Result<LiteConn, Error> {
        lite.open_or_closed()?;
        let permit = tokio::time::timeout(ACQUIRE_TIMEOUT, Arc::clone(&lite.permits).acquire_owned())
            .await
            .map_err(|_| Error::PoolTimedOut)?
            .map_err(|_| Error::PoolTimedOut)?;
        let pooled = lite.readers.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let conn = match pooled {
            Some(conn) => conn,
            None => open(&lite.target)?,
        };
        Ok(LiteConn { lite: Arc::clone(lite), slot: Slot::Reader(Some(conn), permit), in_tx: false })
    }

    /// The writer, held until the returned [`LiteConn`] is dropped.
    pub async fn writer(lite: &Arc<Lite>) -> Result<LiteConn, Error> {
        lite.open_or_closed()?;
        let guard = tokio::time::timeout(ACQUIRE_TIMEOUT, Arc::clone(&lite.writer).lock_owned()).await.map_err(|_| Error::PoolTimedOut)?;
        // A transaction whose holder went away mid-way (a panic) is ended first.
        if !guard.is_autocommit() {
            let _ = guard.execute_batch("ROLLBACK");
        }
        Ok(LiteConn { lite: Arc::clone(lite), slot: Slot::Writer(guard), in_tx: false })
    }

    /// The writer in a transaction (`BEGIN IMMEDIATE`: the write lock is taken now, so
    /// the transaction cannot fail later for want of it).
    pub async fn begin(lite: &Arc<Lite>) -> Result<LiteConn, Error> {
        let mut conn = Lite::writer(lite).await?;
        conn.connection().execute_batch("BEGIN IMMEDIATE")?;
        conn.in_tx = true;
        Ok(conn)
    }

    /// One statement on the database: on a reader when it only reads, else on the writer.
    pub(super) async fn run(
        self: &Arc<Lite>,
        sql: &str,
        args: &[Arg<'_>],
        want: Want<'_>,
        sink: &mut (dyn FnMut(&Row<'_>) -> Result<bool, Error> + Send),
    ) -> Result<(), Error> {
        Lite::reader(self).await?.run(sql, args, want, sink).await
    }
}

/// A connection taken from a [`Lite`] pool; given back when dropped (a transaction that
/// was not committed is rolled back then).
pub struct LiteConn {
    lite: Arc<Lite>,
    slot: Slot,
    in_tx: bool,
}

enum Slot {
    Reader(Option<Connection>, #[allow(dead_code)] OwnedSemaphorePermit),
    Writer(OwnedMutexGuard<Connection>),
}

impl LiteConn {
    fn connection(&self) -> &Connection {
        match &self.slot {
            Slot::Reader(Some(conn), _) => conn,
            Slot::Reader(None, _) => unreachable!("a reader is only emptied when dropped"),
            Slot::Writer(guard) => guard,
        }
    }

    /// One statement. On a reader, a statement that writes goes to the writer instead.
    pub(super) async fn run(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
        want: Want<'_>,
        sink: &mut (dyn FnMut(&Row<'_>) -> Result<bool, Error> + Send),
    ) -> Result<(), Error> {
        if matches!(self.slot, Slot::Reader(..)) && !read_only(self.connection(), sql)? {
            let writer = Lite::writer(&self.lite).await?;
            return execute(writer.connection(), sql, args, want, sink);
        }
        execute(self.connection(), sql, args, want, sink)
    }

    pub(super) fn commit(&mut self) -> Result<(), Error> {
        if self.in_tx {
            self.connection().execute_batch("COMMIT")?;
            self.in_tx = false;
        }
        Ok(())
    }

    pub(super) fn execute_script(&mut self, sql: &str) -> Result<(), Error> {
        Ok(self.connection().execute_batch(sql)?)
    }
}

impl Drop for LiteConn {
    fn drop(&mut self) {
        if self.in_tx {
            let _ = self.connection().execute_batch("ROLLBACK");
        }
        if let Slot::Reader(conn, _) = &mut self.slot {
            if let Some(conn) = conn.take().filter(|_| !self.lite.closed.load(Ordering::Acquire)) {
                self.lite.readers.lock().unwrap_or_else(|e| e.into_inner()).push(conn);
            }
        }
    }
}

/// Whether `sql` only reads (SQLite's own verdict on the prepared statement, cached with it).
fn read_only(conn: &Connection, sql: &str) -> Result<bool, Error> {
    Ok(conn.prepare_cached(sql)?.readonly())
}

/// Prepares (from the connection's cache), binds and runs one statement, handing each
/// row to `sink` while it answers `true`.
fn execute(
    conn: &Connection,
    sql: &str,
    args: &[Arg<'_>],
    want: Want<'_>,
    sink: &mut (dyn FnMut(&Row<'_>) -> Result<bool, Error> + Send),
) -> Result<(), Error> {
    let mut stmt = conn.prepare_cached(sql)?;
    // `$n` is a named parameter to SQLite, numbered by first appearance: bind each one
    // by the number in its name.
    for index in 1..=stmt.parameter_count() {
        let position = match stmt.parameter_name(index) {
            Some(name) => name.trim_start_matches(['$', '?']).parse::<usize>().ok(),
            None => Some(index),
        };
        let arg = position.and_then(|n| args.get(n.wrapping_sub(1))).ok_or_else(|| Error::Decode {
            column: format!("parameter {index}"),
            message: format!("no value bound ({} given)", args.len()),
        })?;
        stmt.raw_bind_parameter(index, arg)?;
    }
    match want {
        Want::Changes(changed) => {
            if stmt.column_count() == 0 {
                *changed = stmt.raw_execute()? as u64;
            } else {
                // `INSERT … RETURNING` run for its effect: step it to the end.
                let mut rows = stmt.raw_query();
                while rows.next()?.is_some() {}
                drop(rows);
                *changed = conn.changes();
            }
        }
        Want::Owned(out, at_most) => {
            let mut rows = stmt.raw_query();
            while out.len() < at_most {
                match rows.next()? {
                    Some(row) => out.push(Row::to_owned_lite(row)),
                    None => break,
                }
            }
        }
        Want::Rows => {
            let mut rows = stmt.raw_query();
            while let Some(row) = rows.next()? {
                if !sink(&Row::lite(row))? {
                    break;
                }
            }
        }
    }
    Ok(())
}
