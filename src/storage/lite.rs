//! The SQLite database of a server process: one connection, behind an asynchronous
//! lock. A statement takes the lock for as long as it runs; a transaction holds it from
//! `BEGIN IMMEDIATE` to its end, so no other request sees its writes before the commit.
//!
//! Why one connection and not a pool: every request writes (its rate-limit count), and
//! SQLite drops a connection's page cache whenever another connection has written
//! since its last read. With several connections every read would start from the
//! operating system's cache; with one, the pages a request reads stay where the last
//! request left them. Writes are serialised by SQLite anyway.
//!
//! Statements run on the calling task: a SQLite statement on a local file takes
//! microseconds, less than handing it to another thread would. Nothing waits on a lock
//! while holding a thread: requests queue on the asynchronous lock, never in SQLite's
//! busy handler (which only another process writing the same file can still reach).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use tokio::sync::{Mutex, OwnedMutexGuard};

use super::row::{Columns, Row};
use super::sql::{Arg, Error, Want};

/// How long a statement waits for the connection before the database counts as
/// unavailable (503).
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);
/// Prepared statements kept (the server runs fewer distinct ones).
const STATEMENT_CACHE: usize = 256;

/// One SQLite database.
pub struct Lite {
    target: String,
    conn: Arc<Mutex<Connection>>,
    closed: AtomicBool,
}

impl std::fmt::Debug for Lite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lite").field("target", &self.target).finish_non_exhaustive()
    }
}

/// Opens the connection with the server's settings: WAL (another process may read
/// during a write, e.g. `sqlite3` on the file), `synchronous = NORMAL` (durable in WAL
/// mode except on power loss), foreign keys on (SQLite's default is off), and a busy
/// timeout for another process's write.
fn open(target: &str) -> Result<Connection, Error> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(target, flags)?;
    conn.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;",
    )?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    Ok(conn)
}

impl Lite {
    /// The database at `path` (created when missing), or a private in-memory database
    /// for `None`. Opened now, so a failure shows at start.
    pub fn open(path: Option<&str>) -> Result<Arc<Lite>, Error> {
        let target = match path {
            Some(path) => path.to_string(),
            None => ":memory:".to_string(),
        };
        let conn = open(&target)?;
        Ok(Arc::new(Lite { target, conn: Arc::new(Mutex::new(conn)), closed: AtomicBool::new(false) }))
    }

    /// Closes the database: every later statement fails as unavailable.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
    }

    /// The connection, held until the guard is dropped.
    async fn lock(lite: &Arc<Lite>) -> Result<OwnedMutexGuard<Connection>, Error> {
        if lite.closed.load(Ordering::Acquire) {
            return Err(Error::Closed);
        }
        let guard = tokio::time::timeout(ACQUIRE_TIMEOUT, Arc::clone(&lite.conn).lock_owned())
            .await
            .map_err(|_| Error::PoolTimedOut)?;
        // A transaction whose holder went away mid-way (a panic) is ended first.
        if !guard.is_autocommit() {
            let _ = guard.execute_batch("ROLLBACK");
        }
        Ok(guard)
    }

    /// A handle for several statements; each takes the connection while it runs.
    pub fn handle(lite: &Arc<Lite>) -> LiteConn {
        LiteConn { lite: Arc::clone(lite), tx: None }
    }

    /// A transaction (`BEGIN IMMEDIATE`: the write lock is taken now, so it cannot fail
    /// later for want of it), holding the connection until it ends.
    pub async fn begin(lite: &Arc<Lite>) -> Result<LiteConn, Error> {
        let guard = Lite::lock(lite).await?;
        control(&guard, "BEGIN IMMEDIATE")?;
        Ok(LiteConn { lite: Arc::clone(lite), tx: Some(guard) })
    }

    /// One statement on the database.
    pub(super) async fn run(
        self: &Arc<Lite>,
        sql: &str,
        args: &[Arg<'_>],
        want: Want<'_>,
        sink: &mut (dyn FnMut(&Row<'_>) -> Result<bool, Error> + Send),
    ) -> Result<(), Error> {
        let conn = Lite::lock(self).await?;
        execute(&conn, sql, args, want, sink)
    }

    /// A script of several statements (a migration), outside a transaction.
    pub(super) async fn execute_script(self: &Arc<Lite>, sql: &str) -> Result<(), Error> {
        Ok(Lite::lock(self).await?.execute_batch(sql)?)
    }
}

/// A handle on the database a caller holds for several statements: a transaction
/// (holding the connection until it commits or is dropped, which rolls it back), or
/// not (each statement takes the connection in turn).
pub struct LiteConn {
    lite: Arc<Lite>,
    tx: Option<OwnedMutexGuard<Connection>>,
}

impl LiteConn {
    /// One statement.
    pub(super) async fn run(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
        want: Want<'_>,
        sink: &mut (dyn FnMut(&Row<'_>) -> Result<bool, Error> + Send),
    ) -> Result<(), Error> {
        match &self.tx {
            Some(conn) => execute(conn, sql, args, want, sink),
            None => self.lite.run(sql, args, want, sink).await,
        }
    }

    pub(super) fn commit(&mut self) -> Result<(), Error> {
        if let Some(conn) = self.tx.take() {
            // A commit that fails (another process holds the file) leaves nothing half-done.
            if let Err(e) = control(&conn, "COMMIT") {
                let _ = control(&conn, "ROLLBACK");
                return Err(e);
            }
        }
        Ok(())
    }

    pub(super) async fn execute_script(&mut self, sql: &str) -> Result<(), Error> {
        match &self.tx {
            Some(conn) => Ok(conn.execute_batch(sql)?),
            None => self.lite.execute_script(sql).await,
        }
    }
}

impl Drop for LiteConn {
    fn drop(&mut self) {
        if let Some(conn) = &self.tx {
            let _ = control(conn, "ROLLBACK");
        }
    }
}

/// A transaction's `BEGIN`, `COMMIT` or `ROLLBACK`, prepared once like any statement.
fn control(conn: &Connection, sql: &str) -> Result<(), Error> {
    conn.prepare_cached(sql)?.raw_execute()?;
    Ok(())
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
            let writes = !stmt.readonly();
            let columns = Columns::of(&stmt);
            let mut rows = stmt.raw_query();
            while out.len() < at_most {
                match rows.next()? {
                    Some(row) => out.push(Row::to_owned_lite(row, &columns)),
                    None => return Ok(()),
                }
            }
            finish(rows, writes)?;
        }
        Want::Rows | Want::First => {
            let writes = !stmt.readonly();
            let columns = Columns::of(&stmt);
            let mut rows = stmt.raw_query();
            while let Some(row) = rows.next()? {
                if !sink(&Row::lite(row, &columns))? {
                    return finish(rows, writes);
                }
            }
        }
    }
    Ok(())
}

/// A statement that writes (`… RETURNING`) is stepped to its end even when the caller
/// wanted fewer rows: SQLite runs its WAL hook — the automatic checkpoint — only when
/// a statement completes, so one reset early would let the WAL grow without bound
/// (and every later read search it).
fn finish(mut rows: rusqlite::Rows<'_>, writes: bool) -> Result<(), Error> {
    if writes {
        while rows.next()?.is_some() {}
    }
    Ok(())
}
