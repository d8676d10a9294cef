//! Pages: where every list and every id sweep cuts the rows its statement fetched to a
//! page and writes the cursor that continues after it.
//!
//! A compiled statement ([`Compiled`]) asks for one row more than the page's limit: the
//! rows up to the limit are the page, the one past it only says that another page
//! follows. The cursor is read from the page's last row as it is stored — its sort
//! column and its id — so it names exactly where the next page starts, whatever the
//! record makes of those values. Typed pages ([`fetch`]), pages written as JSON straight
//! from their rows ([`Cut`]) and id sweeps ([`ids`]) all cut here.

use serde_json::{json, Value};

use super::list::{bind_all, encode_cursor, Compiled, ListRequest, ListSpec};
use super::refs;
use super::resource::Records;
use crate::domain::roles::Access;
use crate::error::ApiError;
use crate::ops::{IdPage, IdPageMeta, OpContext, Page};
use crate::storage::identity::Membership;
use crate::storage::{sql, Conn, Row};

/// A stored value as a cursor keeps it: text, else an integer.
fn stored(row: &Row<'_>, column: &str) -> Value {
    let (name, nullable) = crate::ops::machinery::list::sorted_column(column);
    match row.try_get::<Option<String>, _>(name) {
        Ok(Some(text)) => json!(text),
        Ok(None) if nullable => json!(""),
        _ => row.try_get::<i64, _>(name).map(|n| json!(n)).unwrap_or(Value::Null),
    }
}

/// The rows of a page, counted as they are read: which of them are on the page, and the
/// sort value and id of its last one, for the cursor.
pub struct Cut<'c> {
    compiled: &'c Compiled,
    limit: usize,
    seen: usize,
    last: Option<(Value, String)>,
}

impl<'c> Cut<'c> {
    pub fn new(compiled: &'c Compiled) -> Cut<'c> {
        Cut { compiled, limit: usize::try_from(compiled.limit).unwrap_or(usize::MAX), seen: 0, last: None }
    }

    /// How many rows the page holds at most.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Counts a fetched row: `true` when it is on the page, `false` for the row past it
    /// (which only says that another page follows).
    pub fn take(&mut self, row: &Row<'_>) -> Result<bool, crate::storage::Error> {
        self.seen += 1;
        if self.seen == self.limit {
            self.last = Some((stored(row, self.compiled.sort_column), row.try_get::<String, _>("id")?));
        }
        Ok(self.seen <= self.limit)
    }

    /// The cursor after the page's last row; `None` when no row followed it.
    pub fn next_cursor(self, state_key: &[u8]) -> Option<String> {
        match self.last {
            Some((value, id)) if self.seen > self.limit => Some(encode_cursor(state_key, self.compiled, value, &id)),
            _ => None,
        }
    }
}

/// Runs `sql` (a `SELECT` ending with `compiled.sql`) with the compiled binds, each row
/// made a `T` by `map` as it is read, and cuts the rows to a page.
pub async fn fetch<T: Send>(
    conn: &mut Conn,
    sql: String,
    compiled: &Compiled,
    state_key: &[u8],
    map: impl Fn(&Row<'_>) -> Result<T, crate::storage::Error> + Send + Sync,
) -> Result<Page<T>, ApiError> {
    let mut cut = Cut::new(compiled);
    let mut data = bind_all(sql::query(sql), &compiled.binds)
        .map_all(&mut *conn, |row| {
            cut.take(row)?;
            map(row)
        })
        .await?;
    data.truncate(cut.limit());
    Ok(Page::new(data, cut.next_cursor(state_key)))
}

/// The statement of a list: `request` checked against `spec` and compiled
/// ([`ListSpec::compile`]), then the references its filters name checked as every
/// reference is ([`refs::filtered`]).
pub async fn compile(
    conn: &mut Conn,
    ws: &Membership,
    spec: &'static ListSpec,
    request: &ListRequest,
    state_key: &[u8],
) -> Result<Compiled, ApiError> {
    let compiled = spec.compile(request, &ws.workspace_id, state_key)?;
    refs::filtered(conn, ws, &request.filters).await?;
    Ok(compiled)
}

/// A list of `R` read as every plain one is: the caller's read permission on its
/// resource, the request compiled against its list, then `SELECT {columns} FROM {table}`
/// and its page, each row made a `T` by `map`.
pub async fn list<R: Records, T: Send>(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    request: &ListRequest,
    columns: &str,
    map: impl Fn(&Row<'_>) -> Result<T, crate::storage::Error> + Send + Sync,
) -> Result<Page<T>, ApiError> {
    ctx.authorize(ws, R::RESOURCE, Access::Read)?;
    let keys = ctx.state.keys.current().await?;
    let compiled = compile(conn, ws, R::LIST, request, &keys.state).await?;
    let sql = format!("SELECT {columns} FROM {} {}", R::LIST.table, compiled.sql);
    fetch(conn, sql, &compiled, &keys.state, map).await
}

/// `GET …/ids` of every resource: every id of the live records of `R`'s list in the
/// workspace, ascending, `limit` and `cursor` only (see
/// [`ListSpec::compile_ids`](super::list::ListSpec::compile_ids)).
pub async fn ids<R: Records>(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    request: &ListRequest,
) -> Result<IdPage, ApiError> {
    ctx.authorize(ws, R::RESOURCE, Access::Read)?;
    let keys = ctx.state.keys.current().await?;
    let compiled = R::LIST.compile_ids(request, &ws.workspace_id, &keys.state)?;
    let sql = format!("SELECT {table}.id FROM {table} {}", compiled.sql, table = R::LIST.table);
    let page = fetch(conn, sql, &compiled, &keys.state, |row| row.try_get::<String, _>(0)).await?;
    Ok(IdPage { data: page.data, meta: IdPageMeta { next_cursor: page.meta.next_cursor } })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::machinery::list::{list_spec, ListSpec};
    use crate::storage::Db;

    static THINGS: ListSpec =
        list_spec!(things; filters: name: Text; sorts: name, amount = amount_cents; default: name);
    const KEY: &[u8] = b"state-key";

    async fn things() -> Conn {
        let db = Db::connect("sqlite::memory:", 1).await.unwrap();
        db.execute_script(
            "CREATE TABLE things (id TEXT NOT NULL, workspace_id TEXT NOT NULL, name TEXT NOT NULL, amount_cents INTEGER NOT NULL);
             INSERT INTO things VALUES ('id-1', 'ws', 'Acme', 300), ('id-2', 'ws', 'Bravo', 100),
                                       ('id-3', 'ws', 'Cargo', 200), ('id-4', 'other', 'Delta', 50);",
        )
        .await
        .unwrap();
        db.acquire().await.unwrap()
    }

    fn request(pairs: &[(&str, &str)]) -> ListRequest {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        ListRequest::from_query(&pairs).unwrap()
    }

    /// Every page of `spec` in the workspace, `compile` compiling each request.
    async fn every_page(
        conn: &mut Conn,
        columns: &str,
        query: &[(&str, &str)],
        compile: impl Fn(&ListRequest) -> Result<Compiled, ApiError>,
    ) -> Vec<Vec<String>> {
        let (mut pages, mut cursor) = (Vec::new(), None::<String>);
        loop {
            let mut pairs = query.to_vec();
            if let Some(cursor) = &cursor {
                pairs.push(("cursor", cursor.as_str()));
            }
            let compiled = compile(&request(&pairs)).unwrap();
            let sql = format!("SELECT {columns} FROM things {}", compiled.sql);
            let page = fetch(conn, sql, &compiled, KEY, |row| row.try_get::<String, _>("id")).await.unwrap();
            assert!(page.data.len() <= compiled.limit as usize);
            pages.push(page.data);
            match page.meta.next_cursor {
                Some(next) => cursor = Some(next),
                None => return pages,
            }
        }
    }

    /// A page is the rows up to the limit; the row past it only says another page
    /// follows, and the cursor continues right after the page's last row, by text and by
    /// integer sort values alike.
    #[tokio::test]
    async fn a_page_ends_at_its_limit_and_its_cursor_continues_after_its_last_row() {
        let mut conn = things().await;
        let list = |r: &ListRequest| THINGS.compile(r, "ws", KEY);
        let by_name = every_page(&mut conn, "id, name", &[("limit", "2")], list).await;
        assert_eq!(by_name, [vec!["id-1", "id-2"], vec!["id-3"]]);
        let by_amount = every_page(&mut conn, "id, amount_cents", &[("limit", "1"), ("sort", "-amount")], list).await;
        assert_eq!(by_amount, [["id-1"], ["id-3"], ["id-2"]]);
        let exact = every_page(&mut conn, "id, name", &[("limit", "3")], list).await;
        assert_eq!(exact, [["id-1", "id-2", "id-3"]], "a full last page has no cursor");
        let sweep = |r: &ListRequest| THINGS.compile_ids(r, "ws", KEY);
        let ids = every_page(&mut conn, "things.id", &[("limit", "2")], sweep).await;
        assert_eq!(ids, [vec!["id-1", "id-2"], vec!["id-3"]]);
    }
}
