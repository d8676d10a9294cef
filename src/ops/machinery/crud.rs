//! The read side every plain resource shares — list a page, find one record, get it,
//! sweep the ids — written once, generic over the resource's [`Table`]: its list
//! (filters, sorts, live rows), its columns and how a row becomes its wire type. A
//! resource module keeps only what is its own: its types, its rules and its writes.
//!
//! A page is cut, and its cursor written, by [`page`]: the sortable fields are named
//! once, in the resource's [`ListSpec`](super::list::ListSpec).

use crate::ops::machinery::stamps::Stamp;
use crate::storage::{sql, Conn, Row};

use super::common::{audit_write, path_id};
use super::list::ListRequest;
use super::page;
use super::resource::{reply, Call, Records, Running};
use crate::domain::roles::Access;
use crate::error::ApiError;
use crate::ops::{IdPage, OpContext, Page};
use crate::storage::identity::Membership;

/// How a resource's records are stored: its list ([`Records::LIST`]: the table, the
/// filters and sorts, which rows are live), its columns and its rows.
pub trait Table: Records {
    /// What a missing record is called in a 404 ("Company").
    const WHAT: &'static str;
    /// The audit log's name of a record (`company`); its actions are named after the
    /// table (`companies.create`).
    const AUDITED: &'static str;
    /// The `SELECT` list of a record, qualified by the table.
    const COLUMNS: &'static str;
    fn from_row(row: &Row<'_>) -> Result<Self::Row, crate::storage::Error>;
}

/// Declares how a record is read from its table, naming each column once: `COLUMNS`,
/// the `SELECT` list (qualified by the table), and `from_row`, which reads each plain
/// field from the column of its name ([`Decode`](crate::storage::row::Decode)), computes
/// each `field = expr` from `row` (reading the columns named after `reads`, and the
/// values `selects` names, each `name = "SQL expression"`, read as `name`), and ends
/// with the six [`Stamps`](crate::ops::machinery::stamps::Stamps). With `impl Table for T as
/// "What", audited as "what";` first, it also implements [`Table`] with them.
///
/// ```text
/// record_table!(impl Table for Taxes as "Tax", audited as "tax"; taxes => Tax |row| {
///     id, name, default_withholding, active;
///     default_rate = row.try_get::<Option<i64>, _>("default_rate_bp")?.map(|bp| Cents(bp).to_string());
///     reads default_rate_bp
/// });
/// ```
///
/// A macro because it reads each field name as a struct member, a column name and a
/// part of the `'static` `SELECT` list at once, which no function can.
macro_rules! record_table {
    // The six stamp columns of the table, qualified, as a `SELECT` list ends with them
    // ([`Stamps`](crate::ops::machinery::stamps::Stamps)).
    (@stamps $table:ident) => {
        concat!(
            stringify!($table), ".created_at, ", stringify!($table), ".updated_at, ",
            stringify!($table), ".created_via, ", stringify!($table), ".updated_via, ",
            stringify!($table), ".created_by, ", stringify!($table), ".updated_by"
        )
    };
    (impl Table for $ty:ident as $what:literal, audited as $audited:literal; $($rest:tt)*) => {
        $crate::ops::machinery::crud::record_table!($($rest)*);

        impl $crate::ops::machinery::crud::Table for $ty {
            const WHAT: &'static str = $what;
            const AUDITED: &'static str = $audited;
            const COLUMNS: &'static str = COLUMNS;
            fn from_row(row: &$crate::storage::Row<'_>) -> Result<Self::Row, $crate::storage::Error> {
                from_row(row)
            }
        }
    };
    ($table:ident => $record:ident |$row:ident| {
        $($field:ident),* $(,)?
        $(; $($computed:ident = $value:expr),+ $(,)?
          $(; reads $($read:ident),+)?
          $(; selects $($alias:ident = $select:literal),+)?)?
    }) => {
        /// The `SELECT` list of a record, qualified by the table.
        const COLUMNS: &str = concat!(
            $(stringify!($table), ".", stringify!($field), ", ",)*
            $($($(stringify!($table), ".", stringify!($read), ", ",)+)?)?
            $($($($select, " AS ", stringify!($alias), ", ",)+)?)?
            $crate::ops::machinery::crud::record_table!(@stamps $table)
        );

        /// A record from a row of [`COLUMNS`].
        fn from_row($row: &$crate::storage::Row<'_>) -> Result<$record, $crate::storage::Error> {
            Ok($record {
                $($field: $row.try_get(stringify!($field))?,)*
                $($($computed: $value,)+)?
                stamps: $crate::ops::machinery::stamps::Stamps::from_row($row)?,
            })
        }
    };
}
pub(crate) use record_table;

/// `GET /v1/{collection}`: a page of the live records that match the request.
pub async fn list<T: Table>(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    request: &ListRequest,
) -> Result<Page<T::Row>, ApiError> {
    page::list::<T, _>(ctx, conn, ws, request, T::COLUMNS, T::from_row).await
}

/// `GET /v1/{collection}/ids`: every live id, ascending (see [`page::ids`]).
pub async fn ids<T: Table>(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    request: &ListRequest,
) -> Result<IdPage, ApiError> {
    page::ids::<T>(ctx, conn, ws, request).await
}

/// The id sweep of `T` as an own row runs it (`GET {collection}/ids`).
pub fn run_ids<T: Table>(c: Call<'_>) -> Running<'_> {
    Box::pin(async move { reply(ids::<T>(c.ctx, c.conn, c.ws, &ListRequest::from_query(c.query)?).await?) })
}

/// The live record `id` (already a canonical UUID) of the workspace, if any.
pub async fn fetch<T: Table>(conn: &mut Conn, ws: &Membership, id: &str) -> Result<Option<T::Row>, ApiError> {
    let spec = T::LIST;
    let live = spec.scope.map(|s| format!(" AND {s}")).unwrap_or_default();
    let sql = format!(
        "SELECT {} FROM {table} WHERE {table}.workspace_id = $1 AND {table}.id = $2{live}",
        T::COLUMNS,
        table = spec.table
    );
    Ok(sql::query(sql).bind(&ws.workspace_id).bind(id).map_optional(&mut *conn, T::from_row).await?)
}

/// The live record of a path `{id}`: 404 when there is none, also for a malformed id.
pub async fn find<T: Table>(conn: &mut Conn, ws: &Membership, id: &str) -> Result<T::Row, ApiError> {
    let id = path_id(id, T::WHAT)?;
    fetch::<T>(conn, ws, &id).await?.ok_or_else(|| ApiError::not_found(T::WHAT))
}

/// `GET /v1/{collection}/{id}`
pub async fn get<T: Table>(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
) -> Result<T::Row, ApiError> {
    ctx.authorize(ws, T::RESOURCE, Access::Read)?;
    find::<T>(conn, ws, id).await
}

/// An `UPDATE` statement of a record, its changed fields bound.
pub type Update<'q> = sql::Query<'q>;

/// Records `verb` (`create`, `update`, `delete`) of the record `id` in the audit log,
/// in the write's transaction: the action `{table}.{verb}` on the target `T::AUDITED`.
pub async fn audit<T: Table>(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    verb: &str,
    id: &str,
) -> Result<(), ApiError> {
    audit_write(ctx, conn, ws, &format!("{}.{verb}", T::LIST.table), T::AUDITED, id).await
}

/// The end every plain create shares: the audit line, then the record as stored.
pub async fn created<T: Table>(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
) -> Result<T::Row, ApiError> {
    audit::<T>(ctx, conn, ws, "create", id).await?;
    find::<T>(conn, ws, id).await
}

/// The end every plain hard delete shares: deletes the record `id` of the workspace
/// (the statement's error mapped by `failed`) and records it in the audit log, in the
/// same transaction.
pub async fn deleted<T: Table>(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    id: &str,
    failed: fn(crate::storage::Error) -> ApiError,
) -> Result<(), ApiError> {
    sql::query(format!("DELETE FROM {} WHERE workspace_id = $1 AND id = $2", T::LIST.table))
        .bind(&ws.workspace_id)
        .bind(id)
        .execute(&mut *conn)
        .await
        .map_err(failed)?;
    audit::<T>(ctx, conn, ws, "delete", id).await
}

/// The end every plain update shares: binds the stamp (`updated_at`, `updated_via`,
/// `updated_by`) and then the key (`workspace_id`, `id`) after the changed fields, runs
/// the statement (its error mapped by `failed`) and records the write in the audit log,
/// in the same transaction.
pub async fn stamped_update<'q, T: Table>(
    ctx: &'q OpContext<'_>,
    conn: &mut Conn,
    ws: &'q Membership,
    update: Update<'q>,
    id: &'q str,
    failed: fn(crate::storage::Error) -> ApiError,
) -> Result<(), ApiError> {
    update.stamp_now(ctx).bind(&ws.workspace_id).bind(id).execute(&mut *conn).await.map_err(failed)?;
    audit::<T>(ctx, conn, ws, "update", id).await
}
