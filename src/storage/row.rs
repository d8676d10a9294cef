//! Rows as the code reads them, on either backend: a [`Row`] read in place while its
//! statement runs, an [`OwnedRow`] kept beyond it, each column turned into a Rust value
//! by [`Decode`] — strict, as the schema is.

use std::cell::Cell;
use std::fmt;
use std::sync::Arc;

use rusqlite::types::{Value as LiteValue, ValueRef};
use sqlx::postgres::{PgRow, Postgres};
use sqlx::{Column as _, Row as _, TypeInfo as _};

use super::sql::Error;
use crate::domain::bills::BillStatus;
use crate::domain::dates::{Date, Timestamp};
use crate::domain::money::Cents;

/// A row of a result, read in place while its statement runs (see [`Query::map_all`])
/// or from an [`OwnedRow`].
pub struct Row<'r>(Inner<'r>);

enum Inner<'r> {
    Lite(&'r rusqlite::Row<'r>, &'r Columns),
    LiteOwned(Columns, &'r [LiteValue]),
    /// A PostgreSQL row, of which the first so many columns are shown (the rest carry
    /// what a statement sent with the read answered: `sql`'s counted reads).
    Pg(&'r PgRow, usize),
}

/// The column names of a SQLite result, read once per statement. A row is read by name
/// mostly in `SELECT` order, so each lookup starts after the column the last one found:
/// one comparison per read, not a scan of every name.
pub(super) struct Columns {
    names: Arc<[Box<str>]>,
    next: Cell<usize>,
}

impl Columns {
    pub(super) fn of(stmt: &rusqlite::Statement<'_>) -> Columns {
        let names = (0..stmt.column_count()).map(|i| Box::from(stmt.column_name(i).unwrap_or_default())).collect();
        Columns { names, next: Cell::new(0) }
    }

    fn shared(names: &Arc<[Box<str>]>) -> Columns {
        Columns { names: Arc::clone(names), next: Cell::new(0) }
    }

    fn position(&self, name: &str) -> Option<usize> {
        let count = self.names.len();
        let start = self.next.get();
        let found = (0..count).map(|k| (start + k) % count).find(|&i| self.names[i].eq_ignore_ascii_case(name))?;
        self.next.set(found + 1);
        Some(found)
    }
}

/// A row kept beyond its statement (what `fetch_*` answer).
pub struct OwnedRow(Owned);

enum Owned {
    Lite { names: Arc<[Box<str>]>, values: Vec<LiteValue> },
    Pg(PgRow, usize),
}

impl OwnedRow {
    pub(super) fn pg(row: PgRow) -> OwnedRow {
        let width = row.len();
        OwnedRow(Owned::Pg(row, width))
    }

    /// The row showing only its first `width` columns (fewer, never more).
    pub(super) fn first_columns(self, width: usize) -> OwnedRow {
        match self.0 {
            Owned::Pg(row, shown) => OwnedRow(Owned::Pg(row, width.min(shown))),
            lite => OwnedRow(lite),
        }
    }

    /// The row to read.
    pub fn row(&self) -> Row<'_> {
        Row(match &self.0 {
            Owned::Lite { names, values } => Inner::LiteOwned(Columns::shared(names), values),
            Owned::Pg(row, width) => Inner::Pg(row, *width),
        })
    }

    /// The value of column `index` (its name or position) as a `T`.
    pub fn try_get<T: Decode, I: ColumnIndex>(&self, index: I) -> Result<T, Error> {
        self.row().try_get(index)
    }
}

impl fmt::Debug for OwnedRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Row({} columns)", self.row().column_count())
    }
}

impl<'r> Row<'r> {
    pub(super) fn lite(row: &'r rusqlite::Row<'r>, columns: &'r Columns) -> Row<'r> {
        Row(Inner::Lite(row, columns))
    }

    pub(super) fn pg(row: &'r PgRow) -> Row<'r> {
        Row(Inner::Pg(row, row.len()))
    }

    /// The value of column `index` (its name or position) as a `T`.
    pub fn try_get<T: Decode, I: ColumnIndex>(&self, index: I) -> Result<T, Error> {
        let at = index.position(self)?;
        let decoded = match &self.0 {
            Inner::Lite(row, _) => T::lite(row.get_ref(at).map_err(Error::Sqlite)?),
            Inner::LiteOwned(_, values) => T::lite(ValueRef::from(&values[at])),
            Inner::Pg(row, _) => T::pg(row, at),
        };
        decoded.map_err(|message| Error::Decode { column: index.describe(), message })
    }

    /// The text at column `at`, borrowed from the row; `None` for NULL.
    pub fn text(&self, at: usize) -> Result<Option<&str>, Error> {
        let decode = |message: String| Error::Decode { column: at.to_string(), message };
        let at = at.position(self)?;
        match &self.0 {
            Inner::Lite(row, _) => match row.get_ref(at).map_err(Error::Sqlite)? {
                ValueRef::Null => Ok(None),
                ValueRef::Text(text) => {
                    std::str::from_utf8(text).map(Some).map_err(|_| decode("text is not UTF-8".into()))
                }
                other => Err(decode(unexpected(other, "text"))),
            },
            Inner::LiteOwned(_, values) => match &values[at] {
                LiteValue::Null => Ok(None),
                LiteValue::Text(text) => Ok(Some(text)),
                other => Err(decode(unexpected(ValueRef::from(other), "text"))),
            },
            Inner::Pg(row, _) => row.try_get::<Option<&str>, _>(at).map_err(|e| decode(e.to_string())),
        }
    }

    /// The name of the column at `at` (`""` past the last).
    pub fn column_name(&self, at: usize) -> &str {
        match &self.0 {
            Inner::Lite(_, columns) => columns.names.get(at).map_or("", |n| n),
            Inner::LiteOwned(columns, _) => columns.names.get(at).map_or("", |n| n),
            Inner::Pg(row, width) => row.columns()[..*width].get(at).map_or("", |c| c.name()),
        }
    }

    /// Whether the result has a column of this name.
    pub fn has(&self, name: &str) -> bool {
        self.position(name).is_some()
    }

    fn position(&self, name: &str) -> Option<usize> {
        match &self.0 {
            Inner::Lite(_, columns) => columns.position(name),
            Inner::LiteOwned(columns, _) => columns.position(name),
            Inner::Pg(row, width) => sqlx::ColumnIndex::<PgRow>::index(&name, *row).ok().filter(|at| at < width),
        }
    }

    /// How many columns the result has.
    pub fn column_count(&self) -> usize {
        match &self.0 {
            Inner::Lite(_, columns) => columns.names.len(),
            Inner::LiteOwned(_, values) => values.len(),
            Inner::Pg(_, width) => *width,
        }
    }

    /// A SQLite row copied out of its statement.
    pub(super) fn to_owned_lite(row: &rusqlite::Row<'_>, columns: &Columns) -> OwnedRow {
        let values = (0..columns.names.len()).map(|i| row.get_ref(i).map(owned).unwrap_or(LiteValue::Null)).collect();
        OwnedRow(Owned::Lite { names: Arc::clone(&columns.names), values })
    }
}

/// A SQLite value, copied out of its statement.
fn owned(value: ValueRef<'_>) -> LiteValue {
    match value {
        ValueRef::Null => LiteValue::Null,
        ValueRef::Integer(n) => LiteValue::Integer(n),
        ValueRef::Real(n) => LiteValue::Real(n),
        ValueRef::Text(text) => LiteValue::Text(String::from_utf8_lossy(text).into_owned()),
        ValueRef::Blob(bytes) => LiteValue::Blob(bytes.to_vec()),
    }
}

/// A column named by position or by name.
pub trait ColumnIndex: Copy {
    fn position(self, row: &Row<'_>) -> Result<usize, Error>;
    fn describe(self) -> String;
}

impl ColumnIndex for usize {
    fn position(self, row: &Row<'_>) -> Result<usize, Error> {
        if self < row.column_count() {
            Ok(self)
        } else {
            Err(Error::Decode { column: self.to_string(), message: "no such column".into() })
        }
    }
    fn describe(self) -> String {
        self.to_string()
    }
}

impl ColumnIndex for &str {
    fn position(self, row: &Row<'_>) -> Result<usize, Error> {
        row.position(self).ok_or_else(|| Error::Decode { column: self.to_string(), message: "no such column".into() })
    }
    fn describe(self) -> String {
        self.to_string()
    }
}

/// A Rust value read from a column. Strict, as the schema is: text is text, integers
/// are integers (SQLite's 0/1 flags read as `bool` too); `NULL` only into an `Option`.
pub trait Decode: Sized {
    fn lite(value: ValueRef<'_>) -> Result<Self, String>;
    fn pg(row: &PgRow, at: usize) -> Result<Self, String>;
}

fn unexpected(value: ValueRef<'_>, wanted: &str) -> String {
    match value {
        ValueRef::Null => format!("unexpected NULL (wanted {wanted})"),
        other => format!("wanted {wanted}, found {}", other.data_type()),
    }
}

fn pg_get<'r, T: sqlx::Decode<'r, Postgres> + sqlx::Type<Postgres>>(row: &'r PgRow, at: usize) -> Result<T, String> {
    row.try_get(at).map_err(|e| e.to_string())
}

impl Decode for String {
    fn lite(value: ValueRef<'_>) -> Result<Self, String> {
        match value {
            ValueRef::Text(text) => String::from_utf8(text.to_vec()).map_err(|_| "text is not UTF-8".to_string()),
            other => Err(unexpected(other, "text")),
        }
    }
    fn pg(row: &PgRow, at: usize) -> Result<Self, String> {
        pg_get(row, at)
    }
}

impl Decode for i64 {
    fn lite(value: ValueRef<'_>) -> Result<Self, String> {
        match value {
            ValueRef::Integer(n) => Ok(n),
            other => Err(unexpected(other, "an integer")),
        }
    }
    fn pg(row: &PgRow, at: usize) -> Result<Self, String> {
        // INTEGER columns are int4, counts and sums int8: both read as i64.
        match row.column(at).type_info().name() {
            "INT4" => pg_get::<i32>(row, at).map(i64::from),
            "INT2" => pg_get::<i16>(row, at).map(i64::from),
            _ => pg_get(row, at),
        }
    }
}

impl Decode for i32 {
    fn lite(value: ValueRef<'_>) -> Result<Self, String> {
        i64::lite(value)?.try_into().map_err(|_| "integer out of range".to_string())
    }
    fn pg(row: &PgRow, at: usize) -> Result<Self, String> {
        i64::pg(row, at)?.try_into().map_err(|_| "integer out of range".to_string())
    }
}

impl Decode for bool {
    fn lite(value: ValueRef<'_>) -> Result<Self, String> {
        i64::lite(value).map(|n| n != 0)
    }
    fn pg(row: &PgRow, at: usize) -> Result<Self, String> {
        match row.column(at).type_info().name() {
            "BOOL" => pg_get(row, at),
            _ => i64::pg(row, at).map(|n| n != 0),
        }
    }
}

impl Decode for f64 {
    fn lite(value: ValueRef<'_>) -> Result<Self, String> {
        match value {
            ValueRef::Real(n) => Ok(n),
            ValueRef::Integer(n) => Ok(n as f64),
            other => Err(unexpected(other, "a number")),
        }
    }
    fn pg(row: &PgRow, at: usize) -> Result<Self, String> {
        match row.column(at).type_info().name() {
            "FLOAT4" => pg_get::<f32>(row, at).map(f64::from),
            "FLOAT8" => pg_get(row, at),
            _ => i64::pg(row, at).map(|n| n as f64),
        }
    }
}

impl Decode for Vec<u8> {
    fn lite(value: ValueRef<'_>) -> Result<Self, String> {
        match value {
            ValueRef::Blob(bytes) | ValueRef::Text(bytes) => Ok(bytes.to_vec()),
            other => Err(unexpected(other, "bytes")),
        }
    }
    fn pg(row: &PgRow, at: usize) -> Result<Self, String> {
        pg_get(row, at)
    }
}

/// Implements [`Decode`] for a type stored as its text form and read back with
/// `$parse` (`fn(&str) -> Option<Self>`): text it does not know is a decode error, as a
/// value of the wrong type is. A macro because each type needs its own trait
/// implementation (both backends' readers), which a function cannot write.
macro_rules! decode_text {
    ($ty:ty, $parse:expr) => {
        impl $crate::storage::row::Decode for $ty {
            fn lite(value: rusqlite::types::ValueRef<'_>) -> Result<Self, String> {
                <String as $crate::storage::row::Decode>::lite(value)
                    .and_then(|text| $parse(&text).ok_or_else(|| format!("unknown {}: {text}", stringify!($ty))))
            }
            fn pg(row: &sqlx::postgres::PgRow, at: usize) -> Result<Self, String> {
                <String as $crate::storage::row::Decode>::pg(row, at)
                    .and_then(|text| $parse(&text).ok_or_else(|| format!("unknown {}: {text}", stringify!($ty))))
            }
        }
    };
}
pub(crate) use decode_text;

// Dates and timestamps are stored as the text the server writes them in, and read back
// only in that form.
decode_text!(Date, Date::parse);
decode_text!(Timestamp, Timestamp::parse);
// A bill's status is stored as its wire name.
decode_text!(BillStatus, BillStatus::parse);

/// Money is stored as integer cents.
impl Decode for Cents {
    fn lite(value: ValueRef<'_>) -> Result<Self, String> {
        i64::lite(value).map(Cents)
    }
    fn pg(row: &PgRow, at: usize) -> Result<Self, String> {
        i64::pg(row, at).map(Cents)
    }
}

impl<T: Decode> Decode for Option<T> {
    fn lite(value: ValueRef<'_>) -> Result<Self, String> {
        match value {
            ValueRef::Null => Ok(None),
            other => T::lite(other).map(Some),
        }
    }
    fn pg(row: &PgRow, at: usize) -> Result<Self, String> {
        let raw = row.try_get_raw(at).map_err(|e| e.to_string())?;
        if sqlx::ValueRef::is_null(&raw) {
            Ok(None)
        } else {
            T::pg(row, at).map(Some)
        }
    }
}
