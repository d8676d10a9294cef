//! The read side every plain resource shares — list a page, find one record, get it,
//! sweep the ids — written once, generic over the resource's [`Table`]: its list
//! (filters, sorts, live rows), its columns and how a row becomes its wire type. A
//! resource module keeps only what is its own: its types, its rules and its writes.
//!
//! A page's cursor is read from the stored value of the sort column of its last row,
//! so the sortable fields are named once, in the resource's [`ListSpec`].

use serde_json::{json, Value};
use sqlx::any::AnyRow;
use sqlx::{AnyConnection, Row};

use super::common::{audit_write, page, path_id};
use super::list::{bind_all, Compiled, ListRequest, ListSpec};
use super::resource::Records;
use super::{OpContext, Page};
use crate::domain::roles::Access;
use crate::error::ApiError;
use crate::storage::db_error;
use crate::storage::identity::Membership;

/// How a resource's records are stored: its list ([`Records::LIST`]: the table, the
/// filters and sorts, which rows are live), its columns and its rows.
pub trait Table: Records {
    /// What a missing record is called in a 404 ("Company").
    const WHAT: &'static str;
    /// The `SELECT` list of a record, qualified by the table.
    const COLUMNS: &'static str;
    fn from_row(row: &AnyRow) -> Result<Self::Row, sqlx::Error>;
}

/// A stored value as a cursor keeps it: text, else an integer.
fn stored(row: &AnyRow, column: &str) -> Value {
    let name = column.rsplit('.').next().unwrap_or(column);
    match row.try_get::<String, _>(name) {
        Ok(text) => json!(text),
        Err(_) => row.try_get::<i64, _>(name).map(|n| json!(n)).unwrap_or(Value::Null),
    }
}

/// Runs a compiled list statement over `SELECT {columns} FROM {table}` and cuts the
/// rows to a page, the cursor after its last row.
async fn run(conn: &mut AnyConnection, spec: &ListSpec, columns: &str, compiled: &Compiled, state_key: &[u8]) -> Result<Page<AnyRow>, ApiError> {
    let sql = format!("SELECT {columns} FROM {} {}", spec.table, compiled.sql);
    let rows = bind_all(sqlx::query(sqlx::AssertSqlSafe(sql)), &compiled.binds).fetch_all(&mut *conn).await.map_err(db_error)?;
    Ok(page(rows, compiled, state_key, |row, _| stored(row, compiled.sort_column), |row| row.try_get::<String, _>("id").unwrap_or_default()))
}

/// `GET /v1/{collection}`: a page of the live records that match the request.
pub async fn list<T: Table>(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, request: &ListRequest) -> Result<Page<T::Row>, ApiError> {
    ctx.authorize(ws, T::RESOURCE, Access::Read)?;
    let keys = ctx.state.keys.current().await?;
    let compiled = T::LIST.compile(request, &ws.workspace_id, &keys.state)?;
    let rows = run(conn, T::LIST, T::COLUMNS, &compiled, &keys.state).await?;
    let data = rows.data.iter().map(T::from_row).collect::<Result<Vec<_>, _>>().map_err(db_error)?;
    Ok(Page::new(data, rows.meta.next_cursor))
}

/// `GET /v1/{collection}/ids`: every live id, ascending (see [`ListSpec::compile_ids`]).
pub async fn ids<T: Table>(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, request: &ListRequest) -> Result<Page<String>, ApiError> {
    ctx.authorize(ws, T::RESOURCE, Access::Read)?;
    let keys = ctx.state.keys.current().await?;
    let compiled = T::LIST.compile_ids(request, &ws.workspace_id, &keys.state)?;
    let column = format!("{}.id", T::LIST.table);
    let rows = run(conn, T::LIST, &column, &compiled, &keys.state).await?;
    let data = rows.data.iter().map(|r| r.try_get::<String, _>(0)).collect::<Result<Vec<_>, _>>().map_err(db_error)?;
    Ok(Page::new(data, rows.meta.next_cursor))
}

/// The live record `id` (already a canonical UUID) of the workspace, if any.
pub async fn fetch<T: Table>(conn: &mut AnyConnection, ws: &Membership, id: &str) -> Result<Option<T::Row>, ApiError> {
    let spec = T::LIST;
    let live = spec.scope.map(|s| format!(" AND {s}")).unwrap_or_default();
    let sql = format!("SELECT {} FROM {table} WHERE {table}.workspace_id = $1 AND {table}.id = $2{live}", T::COLUMNS, table = spec.table);
    let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(&ws.workspace_id).bind(id).fetch_optional(&mut *conn).await.map_err(db_error)?;
    row.as_ref().map(T::from_row).transpose().map_err(db_error)
}

/// The live record of a path `{id}`: 404 when there is none, also for a malformed id.
pub async fn find<T: Table>(conn: &mut AnyConnection, ws: &Membership, id: &str) -> Result<T::Row, ApiError> {
    let id = path_id(id, T::WHAT)?;
    fetch::<T>(conn, ws, &id).await?.ok_or_else(|| ApiError::not_found(T::WHAT))
}

/// `GET /v1/{collection}/{id}`
pub async fn get<T: Table>(ctx: &OpContext<'_>, conn: &mut AnyConnection, ws: &Membership, id: &str) -> Result<T::Row, ApiError> {
    ctx.authorize(ws, T::RESOURCE, Access::Read)?;
    find::<T>(conn, ws, id).await
}

/// An `UPDATE` statement of a record, its changed fields bound.
pub type Update<'q> = sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>;

/// The end every plain update shares: binds the stamp (`updated_at`, `updated_via`,
/// `updated_by`) and then the key (`workspace_id`, `id`) after the changed fields, runs
/// the statement (its error mapped by `failed`) and records the write in the audit log,
/// in the same transaction.
pub async fn stamped_update<'q>(
    ctx: &'q OpContext<'_>,
    conn: &mut AnyConnection,
    ws: &'q Membership,
    update: Update<'q>,
    id: &'q str,
    (action, target): (&str, &str),
    failed: fn(sqlx::Error) -> ApiError,
) -> Result<(), ApiError> {
    update
        .bind(crate::clock::now_rfc3339())
        .bind(ctx.channel.as_str())
        .bind(&ctx.identity.user_id)
        .bind(&ws.workspace_id)
        .bind(id)
        .execute(&mut *conn)
        .await
        .map_err(failed)?;
    audit_write(ctx, conn, ws, action, target, id).await
}
