//! The one way SQL is run, on either backend: a statement with its bound values
//! ([`query`]), run on the database ([`Db`]: a connection is taken and given back) or on
//! a connection a caller holds ([`Conn`], or a transaction, [`Tx`]), its rows read by
//! column name or position ([`Row::try_get`]).
//!
//! Why not a driver's own API: the two backends are reached differently on purpose.
//! PostgreSQL is a network round trip, so its statements go through sqlx's asynchronous
//! driver. SQLite is a library call of a few microseconds on a local file, so its
//! statements run right here, on the calling task, through rusqlite — no worker thread
//! to hand each statement and each row to and back, no copy of every value on the way
//! (the cost a request paid when both went through sqlx's `Any` driver). What both
//! share is this module's surface: SQL with `$n` placeholders (PostgreSQL's own;
//! SQLite reads `$n` as a named parameter, bound here by its number), the same Rust
//! types in and out, and one error type that says whether the database could not serve.
//!
//! SQLite in a server: one connection behind an asynchronous lock ([`super::lite`]), so
//! a request waits for another's statement or transaction without blocking a thread.

use std::borrow::Cow;
use std::fmt;

use rusqlite::types::ValueRef;
use sqlx::postgres::{PgArguments, Postgres};

pub use super::row::{ColumnIndex, Decode, OwnedRow, Row};

use super::lite::{Lite, LiteConn};
use super::pool::PgConn;
use super::rate_limit::Counting;
use super::Db;
use crate::domain::dates::{Date, Timestamp};

// ---------------------------------------------------------------------------------------
// Values in
// ---------------------------------------------------------------------------------------

/// A bound value. Nulls carry their type: PostgreSQL types every parameter.
#[derive(Debug, Clone)]
pub enum Arg<'q> {
    Null(NullOf),
    Int(i64),
    Int4(i32),
    Bool(bool),
    Real(f64),
    Text(Cow<'q, str>),
    Blob(Cow<'q, [u8]>),
}

/// The type of a null value.
#[derive(Debug, Clone, Copy)]
pub enum NullOf {
    Int,
    Int4,
    Bool,
    Real,
    Text,
    Blob,
}

/// A Rust value that can be bound to a statement.
pub trait Encode<'q> {
    fn encode(self) -> Arg<'q>;
}

/// The null of a bindable type (for `Option<T>`).
pub trait Nullable {
    const NULL: NullOf;
}

/// Implements [`Encode`] and [`Nullable`] for each bindable type: its argument and its
/// null. A macro because every type needs its own pair of trait implementations, which
/// a function cannot write; the table below is the list of what binds.
macro_rules! encode {
    ($($t:ty => $null:ident, |$v:ident| $arg:expr;)*) => {$(
        impl<'q> Encode<'q> for $t {
            fn encode(self) -> Arg<'q> {
                let $v = self;
                $arg
            }
        }
        impl<'q> Nullable for $t {
            const NULL: NullOf = NullOf::$null;
        }
    )*};
}

encode! {
    i64 => Int, |v| Arg::Int(v);
    &'q i64 => Int, |v| Arg::Int(*v);
    i32 => Int4, |v| Arg::Int4(v);
    bool => Bool, |v| Arg::Bool(v);
    f64 => Real, |v| Arg::Real(v);
    String => Text, |v| Arg::Text(Cow::Owned(v));
    &'q String => Text, |v| Arg::Text(Cow::Borrowed(v.as_str()));
    &'q str => Text, |v| Arg::Text(Cow::Borrowed(v));
    Vec<u8> => Blob, |v| Arg::Blob(Cow::Owned(v));
    &'q [u8] => Blob, |v| Arg::Blob(Cow::Borrowed(v));
    &'q Vec<u8> => Blob, |v| Arg::Blob(Cow::Borrowed(v.as_slice()));
    Date => Text, |v| Arg::Text(Cow::Owned(v.to_string()));
    &'q Date => Text, |v| Arg::Text(Cow::Owned(v.to_string()));
    Timestamp => Text, |v| Arg::Text(Cow::Owned(v.to_string()));
    &'q Timestamp => Text, |v| Arg::Text(Cow::Owned(v.to_string()));
}

impl<'q, T: Encode<'q> + Nullable> Encode<'q> for Option<T> {
    fn encode(self) -> Arg<'q> {
        match self {
            Some(v) => v.encode(),
            None => Arg::Null(T::NULL),
        }
    }
}

impl<'q, T> Encode<'q> for &'q Option<T>
where
    &'q T: Encode<'q> + Nullable,
{
    fn encode(self) -> Arg<'q> {
        match self {
            Some(v) => v.encode(),
            None => Arg::Null(<&'q T as Nullable>::NULL),
        }
    }
}

impl<'q> Encode<'q> for Arg<'q> {
    fn encode(self) -> Arg<'q> {
        self
    }
}

impl rusqlite::ToSql for Arg<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::ToSqlOutput::Borrowed;
        Ok(match self {
            Arg::Null(_) => Borrowed(ValueRef::Null),
            Arg::Int(v) => Borrowed(ValueRef::Integer(*v)),
            Arg::Int4(v) => Borrowed(ValueRef::Integer(i64::from(*v))),
            Arg::Bool(v) => Borrowed(ValueRef::Integer(i64::from(*v))),
            Arg::Real(v) => Borrowed(ValueRef::Real(*v)),
            Arg::Text(v) => Borrowed(ValueRef::Text(v.as_bytes())),
            Arg::Blob(v) => Borrowed(ValueRef::Blob(v)),
        })
    }
}

// ---------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------

/// A statement and its values. SQL uses `$1`, `$2`, … (a number may repeat).
#[must_use = "a query does nothing until it is run"]
pub struct Query<'q> {
    sql: Cow<'static, str>,
    args: Vec<Arg<'q>>,
}

/// A statement to bind and run.
pub fn query<'q>(sql: impl Into<Cow<'static, str>>) -> Query<'q> {
    Query { sql: sql.into(), args: Vec::new() }
}

/// Where a statement runs: on the database (a connection is taken for it) or on a
/// connection the caller holds (a transaction's, for one).
pub enum Target<'c> {
    Db(&'c Db),
    Conn(&'c mut Conn),
}

impl<'c> From<&'c Db> for Target<'c> {
    fn from(db: &'c Db) -> Self {
        Target::Db(db)
    }
}

impl<'c, 'd: 'c> From<&'c &'d Db> for Target<'c> {
    fn from(db: &'c &'d Db) -> Self {
        Target::Db(db)
    }
}

impl<'c> From<&'c mut Conn> for Target<'c> {
    fn from(conn: &'c mut Conn) -> Self {
        Target::Conn(conn)
    }
}

impl<'c> From<&'c mut Tx> for Target<'c> {
    fn from(tx: &'c mut Tx) -> Self {
        Target::Conn(&mut tx.conn)
    }
}

impl<'q> Query<'q> {
    pub fn bind(mut self, value: impl Encode<'q>) -> Self {
        self.args.push(value.encode());
        self
    }

    /// Binds each of `values` in turn.
    pub fn bind_all(mut self, values: impl IntoIterator<Item = Arg<'q>>) -> Self {
        self.args.extend(values);
        self
    }

    /// Runs the statement; the rows it changed.
    pub async fn execute<'c>(self, on: impl Into<Target<'c>>) -> Result<u64, Error> {
        let mut changed = 0;
        self.run(on.into(), Want::Changes(&mut changed), &mut |_| Ok(true)).await?;
        Ok(changed)
    }

    /// Every row, each made a `T` by `map` as it is read (nothing is copied on SQLite).
    pub async fn map_all<'c, T: Send>(
        self,
        on: impl Into<Target<'c>>,
        mut map: impl FnMut(&Row<'_>) -> Result<T, Error> + Send,
    ) -> Result<Vec<T>, Error> {
        let mut out = Vec::new();
        self.run(on.into(), Want::Rows, &mut |row| {
            out.push(map(row)?);
            Ok(true)
        })
        .await?;
        Ok(out)
    }

    /// The first row, if any, made a `T` by `map`.
    pub async fn map_optional<'c, T: Send>(
        self,
        on: impl Into<Target<'c>>,
        map: impl FnOnce(&Row<'_>) -> Result<T, Error> + Send,
    ) -> Result<Option<T>, Error> {
        let mut map = Some(map);
        let mut out = None;
        self.run(on.into(), Want::First, &mut |row| {
            if let Some(map) = map.take() {
                out = Some(map(row)?);
            }
            Ok(false)
        })
        .await?;
        Ok(out)
    }

    /// The first row made a `T` by `map`; [`Error::RowNotFound`] when there is none.
    pub async fn map_one<'c, T: Send>(
        self,
        on: impl Into<Target<'c>>,
        map: impl FnOnce(&Row<'_>) -> Result<T, Error> + Send,
    ) -> Result<T, Error> {
        self.map_optional(on, map).await?.ok_or(Error::RowNotFound)
    }

    /// Every row, kept.
    pub async fn fetch_all<'c>(self, on: impl Into<Target<'c>>) -> Result<Vec<OwnedRow>, Error> {
        let mut rows = Vec::new();
        self.run(on.into(), Want::Owned(&mut rows, usize::MAX), &mut |_| Ok(true)).await?;
        Ok(rows)
    }

    /// The first row, if any, kept.
    pub async fn fetch_optional<'c>(self, on: impl Into<Target<'c>>) -> Result<Option<OwnedRow>, Error> {
        let mut rows = Vec::with_capacity(1);
        self.run(on.into(), Want::Owned(&mut rows, 1), &mut |_| Ok(true)).await?;
        Ok(rows.pop())
    }

    /// The first row, kept; [`Error::RowNotFound`] when there is none.
    pub async fn fetch_one<'c>(self, on: impl Into<Target<'c>>) -> Result<OwnedRow, Error> {
        self.fetch_optional(on).await?.ok_or(Error::RowNotFound)
    }

    /// The first column of the first row.
    pub async fn scalar<'c, T: Decode + Send>(self, on: impl Into<Target<'c>>) -> Result<T, Error> {
        self.map_one(on, |row| row.try_get(0)).await
    }

    /// Runs the statement, handing each row to `sink` until it answers `false`.
    async fn run(
        &self,
        on: Target<'_>,
        want: Want<'_>,
        sink: &mut (dyn FnMut(&Row<'_>) -> Result<bool, Error> + Send),
    ) -> Result<(), Error> {
        tracing::trace!(target: "kobana_finance_mcp::sql", statement = %summary(&self.sql));
        match on {
            Target::Db(db) => match &db.pool {
                super::Pool::Lite(lite) => lite.run(&self.sql, &self.args, want, sink).await,
                super::Pool::Pg(pool) => pg_run(self.pg(), &mut pool.get().await?, want, sink).await,
            },
            Target::Conn(conn) => match conn {
                Conn::Lite(lite) => lite.run(&self.sql, &self.args, want, sink).await,
                Conn::Pg(c) | Conn::PgTx(c) => pg_run(self.pg(), c, want, sink).await,
                Conn::PgCounting(c, counting) => match counting.take() {
                    Some(counting) => self.run_counted(c, &counting, want, sink).await,
                    None => pg_run(self.pg(), c, want, sink).await,
                },
            },
        }
    }

    /// Runs the statement as the first of a connection whose request's count rides on it
    /// ([`Counting`]): a `SELECT` in one statement with the count, anything else after
    /// the count was sent alone. Its rows are let through only when the count admits them.
    async fn run_counted(
        &self,
        conn: &mut PgConn,
        counting: &Counting,
        want: Want<'_>,
        sink: &mut (dyn FnMut(&Row<'_>) -> Result<bool, Error> + Send),
    ) -> Result<(), Error> {
        let read = is_read(&self.sql);
        let (sql, count_args) = counting.statement(read.then_some((&*self.sql, self.args.len())));
        let args = if read { &self.args[..] } else { &[] };
        let q = args.iter().chain(&count_args).fold(sqlx::query(sqlx::AssertSqlSafe(sql.as_str())), bind);
        let mut rows = Vec::new();
        if let Err(e) = pg_run(q, conn, Want::Owned(&mut rows, usize::MAX), &mut |_| Ok(true)).await {
            if e.is_connection_lost() {
                counting.lost();
            }
            return Err(e);
        }
        let found = counting.settle(rows)?;
        if !read {
            return pg_run(self.pg(), conn, want, sink).await;
        }
        match want {
            Want::Changes(changed) => *changed = found.len() as u64,
            Want::Owned(out, at_most) => out.extend(found.into_iter().take(at_most)),
            Want::First => {
                if let Some(row) = found.first() {
                    sink(&row.row())?;
                }
            }
            Want::Rows => {
                for row in &found {
                    if !sink(&row.row())? {
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    fn pg(&self) -> sqlx::query::Query<'_, Postgres, PgArguments> {
        let sql = match &self.sql {
            Cow::Borrowed(s) => sqlx::query(*s),
            Cow::Owned(s) => sqlx::query(sqlx::AssertSqlSafe(s.as_str())),
        };
        self.args.iter().fold(sql, bind)
    }
}

/// Whether a statement only reads (a `SELECT`), so that it can be sent with a request's
/// count ([`Counting`]).
fn is_read(sql: &str) -> bool {
    sql.trim_start().get(..7).is_some_and(|start| start.eq_ignore_ascii_case("SELECT "))
}

/// Binds `arg` to a PostgreSQL statement.
fn bind<'q>(
    q: sqlx::query::Query<'q, Postgres, PgArguments>,
    arg: &'q Arg<'q>,
) -> sqlx::query::Query<'q, Postgres, PgArguments> {
    match arg {
        Arg::Null(NullOf::Int) => q.bind(None::<i64>),
        Arg::Null(NullOf::Int4) => q.bind(None::<i32>),
        Arg::Null(NullOf::Bool) => q.bind(None::<bool>),
        Arg::Null(NullOf::Real) => q.bind(None::<f64>),
        Arg::Null(NullOf::Text) => q.bind(None::<&str>),
        Arg::Null(NullOf::Blob) => q.bind(None::<&[u8]>),
        Arg::Int(v) => q.bind(*v),
        Arg::Int4(v) => q.bind(*v),
        Arg::Bool(v) => q.bind(*v),
        Arg::Real(v) => q.bind(*v),
        Arg::Text(v) => q.bind(v.as_ref()),
        Arg::Blob(v) => q.bind(v.as_ref()),
    }
}

/// What a run gives back: each row to the sink (or only the first), the rows kept (at
/// most so many), or the count of rows changed.
pub(super) enum Want<'a> {
    Rows,
    First,
    Owned(&'a mut Vec<OwnedRow>, usize),
    Changes(&'a mut u64),
}

/// A statement on one line, for the trace of statements run (values are never in it:
/// they are bound).
fn summary(sql: &str) -> String {
    sql.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Runs a statement on a pooled connection ([`PgConn::run`] records how it ended).
async fn pg_run(
    q: sqlx::query::Query<'_, Postgres, PgArguments>,
    conn: &mut PgConn,
    want: Want<'_>,
    sink: &mut (dyn FnMut(&Row<'_>) -> Result<bool, Error> + Send),
) -> Result<(), Error> {
    conn.run(async |on| {
        match want {
            Want::Changes(changed) => {
                *changed = q.execute(on).await.map_err(Error::Pg)?.rows_affected();
            }
            Want::Owned(out, 1) => out.extend(q.fetch_optional(on).await.map_err(Error::Pg)?.map(OwnedRow::pg)),
            Want::Owned(out, at_most) => {
                let rows = q.fetch_all(on).await.map_err(Error::Pg)?;
                out.extend(rows.into_iter().take(at_most).map(OwnedRow::pg));
            }
            Want::First => {
                if let Some(row) = q.fetch_optional(on).await.map_err(Error::Pg)? {
                    sink(&Row::pg(&row))?;
                }
            }
            Want::Rows => {
                for row in q.fetch_all(on).await.map_err(Error::Pg)? {
                    if !sink(&Row::pg(&row))? {
                        break;
                    }
                }
            }
        }
        Ok(())
    })
    .await
}

// ---------------------------------------------------------------------------------------
// Connections and transactions
// ---------------------------------------------------------------------------------------

/// A connection a caller holds for several statements: given back when dropped.
pub enum Conn {
    Lite(LiteConn),
    Pg(PgConn),
    /// In a transaction: rolled back when dropped before [`Tx::commit`].
    PgTx(PgConn),
    /// A request's connection whose count rides on its first statement, until that
    /// statement is sent ([`Conn::counting`]).
    PgCounting(PgConn, Option<Box<Counting>>),
}

impl Conn {
    /// Whether the connection still carries its request's count: no statement sent it.
    fn carries_count(&self) -> bool {
        matches!(self, Conn::PgCounting(_, Some(_)))
    }

    /// Sends the count the connection carries, alone, if no statement has carried it
    /// (a request that did not read on its connection); nothing otherwise.
    pub async fn send_count(&mut self) -> Result<(), Error> {
        let Conn::PgCounting(c, carried) = self else { return Ok(()) };
        let Some(counting) = carried.take() else { return Ok(()) };
        query(Counting::NOTHING).run_counted(c, &counting, Want::Changes(&mut 0), &mut |_| Ok(true)).await
    }

    /// The connection, with the request's count to be sent with its first statement:
    /// PostgreSQL's outside a transaction. Any other is given back as it is, and the
    /// count left to the request ([`Counting`]'s slot stays empty).
    pub fn counting(self, counting: Counting) -> Conn {
        match self {
            Conn::Pg(c) => Conn::PgCounting(c, Some(Box::new(counting))),
            other => other,
        }
    }
}

/// A transaction: committed by [`Tx::commit`], rolled back when dropped without it.
pub struct Tx {
    conn: Conn,
}

impl std::ops::Deref for Tx {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        &self.conn
    }
}

impl std::ops::DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut Conn {
        &mut self.conn
    }
}

impl Tx {
    pub(super) fn new(conn: Conn) -> Tx {
        Tx { conn }
    }

    pub async fn commit(self) -> Result<(), Error> {
        match self.conn {
            Conn::Lite(mut lite) => lite.commit(),
            Conn::PgTx(mut c) => c.commit().await,
            Conn::Pg(_) | Conn::PgCounting(..) => Ok(()),
        }
    }

    /// Runs a script of several statements (a migration) in the transaction.
    pub async fn execute_script(&mut self, sql: &str) -> Result<(), Error> {
        match &mut self.conn {
            Conn::Lite(lite) => lite.execute_script(sql).await,
            Conn::PgTx(c) | Conn::Pg(c) | Conn::PgCounting(c, _) => c.script(sql).await,
        }
    }
}

/// A request's connection: the one its admission step (the rate-limit count, on
/// PostgreSQL) took from the pool, kept for the read that follows (or carrying the count
/// to that read: [`Conn::counting`]), so that a request
/// takes one connection from the pool, not two (each hand-over costs the pool's
/// bookkeeping, and a round trip to the server when the next connection was unused for
/// a second: `storage::pool`). Taken at most once; given back to the pool when the
/// request ends or [`Held::release`]s it, which a request does before it asks the pool
/// for any other connection (a request holding one while it waits for another could
/// wait on itself when the pool is small).
#[derive(Default)]
pub struct Held(std::sync::Mutex<Option<Conn>>);

impl Held {
    pub fn new(conn: Option<Conn>) -> Held {
        Held(std::sync::Mutex::new(conn))
    }

    /// The held connection, if it has not been taken.
    pub fn take(&self) -> Option<Conn> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// The held connection, else one from the pool: lent ([`Lent`]).
    pub async fn acquire(&self, db: &Db) -> Result<Lent<'_>, Error> {
        let conn = match self.take() {
            Some(conn) => conn,
            None => db.acquire().await?,
        };
        Ok(Lent { conn: Some(conn), home: self })
    }

    /// Gives the held connection back to the pool, if there is one.
    pub fn release(&self) {
        drop(self.take());
    }
}

/// A connection lent by a [`Held`], used as a [`Conn`]. Dropped, it goes back to the
/// pool — unless it still carries its request's count (no statement was sent on it,
/// [`Conn::counting`]): then back to the `Held`, where the request sends that count on
/// it, whatever the operation that borrowed it did.
pub struct Lent<'a> {
    /// Present until dropped.
    conn: Option<Conn>,
    home: &'a Held,
}

impl std::ops::Deref for Lent<'_> {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        self.conn.as_ref().expect("a lent connection is present until dropped")
    }
}

impl std::ops::DerefMut for Lent<'_> {
    fn deref_mut(&mut self) -> &mut Conn {
        self.conn.as_mut().expect("a lent connection is present until dropped")
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        let Some(conn) = self.conn.take().filter(Conn::carries_count) else { return };
        let mut slot = self.home.0.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(conn);
        }
    }
}

impl Db {
    /// A connection for several statements outside a transaction (on SQLite a handle:
    /// each statement takes the one connection in turn).
    pub async fn acquire(&self) -> Result<Conn, Error> {
        match &self.pool {
            super::Pool::Lite(lite) => Ok(Conn::Lite(Lite::handle(lite))),
            super::Pool::Pg(pool) => Ok(Conn::Pg(pool.get().await?)),
        }
    }

    /// A transaction (on SQLite: the connection, held from `BEGIN IMMEDIATE` on).
    pub async fn begin(&self) -> Result<Tx, Error> {
        self.begin_as("BEGIN").await
    }

    /// A transaction whose every read sees the database as it was at its first statement,
    /// and whose write of a row another transaction changed since fails as a
    /// serialization failure ([`Error::is_serialization_failure`]) instead of writing over
    /// it: what a confirmed action needs, so that it acts on exactly the values it checked
    /// (PostgreSQL's `REPEATABLE READ`; on SQLite every transaction is serialised already).
    pub async fn begin_consistent(&self) -> Result<Tx, Error> {
        self.begin_as("BEGIN ISOLATION LEVEL REPEATABLE READ").await
    }

    async fn begin_as(&self, statement: &'static str) -> Result<Tx, Error> {
        match &self.pool {
            super::Pool::Lite(lite) => Ok(Tx::new(Conn::Lite(Lite::begin(lite).await?))),
            super::Pool::Pg(pool) => {
                let begin = || async {
                    let mut conn = pool.get().await?;
                    conn.begin(statement).await?;
                    Ok(conn)
                };
                // `BEGIN` changes nothing: on a connection found gone it is sent again,
                // on one the pool checks first (`storage::retry_if_lost`).
                Ok(Tx::new(Conn::PgTx(super::retry_if_lost(begin).await?)))
            }
        }
    }

    /// Runs a script of several statements outside a transaction.
    pub async fn execute_script(&self, sql: &str) -> Result<(), Error> {
        match &self.pool {
            super::Pool::Lite(lite) => lite.execute_script(sql).await,
            super::Pool::Pg(pool) => pool.get().await?.script(sql).await,
        }
    }

    /// Closes the database: connections are closed as they come back, and every later
    /// statement fails as unavailable.
    pub async fn close(&self) {
        match &self.pool {
            super::Pool::Lite(lite) => lite.close(),
            super::Pool::Pg(pool) => pool.close().await,
        }
    }
}

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

/// A failure of the database, or of reading what it answered.
#[derive(Debug)]
pub enum Error {
    Sqlite(rusqlite::Error),
    Pg(sqlx::Error),
    /// `map_one`/`fetch_one`/`scalar` found no row.
    RowNotFound,
    /// A column was missing or held another type.
    Decode {
        column: String,
        message: String,
    },
    /// No connection could be had in time.
    PoolTimedOut,
    /// The database was closed ([`Db::close`]).
    Closed,
    /// A rule a row broke on its way out (an unknown stored status, …).
    Corrupt(String),
    /// The database file or its directory could not be reached.
    Io(std::io::Error),
    /// The request's count, sent with this statement, does not let its rows through
    /// (revoked, over the limit, or the caller's memberships changed): the request
    /// answers from the count ([`Counting`]).
    NotAdmitted,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Sqlite(e) => write!(f, "sqlite: {e}"),
            Error::Pg(e) => write!(f, "postgres: {e}"),
            Error::RowNotFound => f.write_str("no row"),
            Error::Decode { column, message } => write!(f, "column {column}: {message}"),
            Error::PoolTimedOut => f.write_str("timed out waiting for a database connection"),
            Error::Closed => f.write_str("the database is closed"),
            Error::Corrupt(message) => f.write_str(message),
            Error::Io(e) => write!(f, "i/o: {e}"),
            Error::NotAdmitted => f.write_str("the request's count did not admit this read"),
        }
    }
}

impl std::error::Error for Error {}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        Error::Sqlite(e)
    }
}

impl Error {
    fn lite_code(&self) -> Option<(rusqlite::ErrorCode, i32)> {
        match self {
            Error::Sqlite(rusqlite::Error::SqliteFailure(e, _)) => Some((e.code, e.extended_code)),
            _ => None,
        }
    }

    fn pg_database(&self) -> Option<&dyn sqlx::error::DatabaseError> {
        match self {
            Error::Pg(sqlx::Error::Database(db)) => Some(db.as_ref()),
            _ => None,
        }
    }

    /// A `UNIQUE` (or primary key) constraint refused the write.
    pub fn is_unique_violation(&self) -> bool {
        const UNIQUE: i32 = 2067;
        const PRIMARY_KEY: i32 = 1555;
        self.lite_code().is_some_and(|(_, ext)| ext == UNIQUE || ext == PRIMARY_KEY)
            || self.pg_database().is_some_and(|db| db.is_unique_violation())
    }

    /// The transaction met another's change of what it read (PostgreSQL's
    /// serialization failure or deadlock): nothing it did stays, and it may be run again
    /// from the start.
    pub fn is_serialization_failure(&self) -> bool {
        self.sqlstate().is_some_and(|code| code == "40001" || code == "40P01")
    }

    /// The write would take its workspace's books past the most money they hold
    /// (migration 0018: `kfin:volume_exceeded`).
    pub fn is_volume_exceeded(&self) -> bool {
        const MARK: &str = "kfin:volume_exceeded";
        match self {
            Error::Sqlite(e) => e.to_string().contains(MARK),
            Error::Pg(_) => self.pg_database().is_some_and(|db| db.message().contains(MARK)),
            _ => false,
        }
    }

    /// A `FOREIGN KEY` constraint refused the write.
    pub fn is_foreign_key_violation(&self) -> bool {
        const FOREIGN_KEY: i32 = 787;
        self.lite_code().is_some_and(|(_, ext)| ext == FOREIGN_KEY)
            || self.pg_database().is_some_and(|db| db.is_foreign_key_violation())
    }

    /// The PostgreSQL SQLSTATE, if the server answered with one.
    pub fn sqlstate(&self) -> Option<String> {
        self.pg_database().and_then(|db| db.code()).map(|c| c.into_owned())
    }

    /// Whether the database could not serve now (down, busy, out of connections), as
    /// opposed to refusing this statement: the caller is told to retry (503).
    pub fn is_unavailable(&self) -> bool {
        use rusqlite::ErrorCode as C;
        match self {
            Error::PoolTimedOut | Error::Closed | Error::Io(_) => true,
            Error::Sqlite(_) => self.lite_code().is_some_and(|(code, _)| {
                matches!(
                    code,
                    C::DatabaseBusy
                        | C::DatabaseLocked
                        | C::SystemIoFailure
                        | C::CannotOpen
                        | C::DiskFull
                        | C::FileLockingProtocolFailed
                )
            }),
            Error::Pg(e) => match e {
                sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::Protocol(_) | sqlx::Error::WorkerCrashed => {
                    true
                }
                sqlx::Error::Database(db) => {
                    let msg = db.message().to_ascii_lowercase();
                    db.code().is_some_and(|code| super::is_unavailable_sqlstate(&code))
                        || msg.contains("terminating connection")
                        || msg.contains("shutting down")
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// Whether PostgreSQL's connection was found gone (the server ended it, restarted,
    /// or the network dropped it) rather than the statement refused: a statement that
    /// failed so was not committed, except that an I/O failure while its answer was on
    /// its way may follow a commit.
    pub fn is_connection_lost(&self) -> bool {
        match self {
            Error::Pg(e) => is_lost_connection(e),
            _ => false,
        }
    }
}

/// [`Error::is_connection_lost`] of a PostgreSQL failure.
pub(super) fn is_lost_connection(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_) => true,
        sqlx::Error::Database(db) => db.code().is_some_and(|code| super::is_lost_connection_sqlstate(&code)),
        _ => false,
    }
}
