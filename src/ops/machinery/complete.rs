//! Completion of record ids (`completion/complete` on a record template's `{id}`): the
//! live records of a resource, in the workspaces the caller may read it in, whose label
//! or id starts with what was typed.

use super::list::ListSpec;
use crate::error::ApiError;
use crate::storage::identity::Membership;
use crate::storage::sql;
use crate::storage::Db;

/// The most ids one completion suggests.
const MAX_IDS: usize = 100;

/// `LIKE` pattern matching values that start with `prefix` literally (`%`, `_` and the
/// escape character itself are escaped).
fn starts_with_pattern(prefix: &str) -> String {
    format!("{}%", prefix.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_"))
}

/// Ids of the live records of `list` in `workspaces` whose label (any of `labels`,
/// case-insensitively; the first orders them) or id starts with `prefix`: at most 100,
/// and whether there are more. No workspace: nothing.
pub async fn ids_starting_with(
    db: &Db,
    list: &ListSpec,
    labels: &[&str],
    prefix: &str,
    workspaces: &[&Membership],
) -> Result<(Vec<String>, bool), ApiError> {
    if workspaces.is_empty() {
        return Ok((Vec::new(), false));
    }
    // $1: the prefix lowercased (PostgreSQL's LIKE is case-sensitive, SQLite's LOWER
    // only folds ASCII), $2: as typed (so non-ASCII capitals still match on SQLite).
    let table = list.table;
    let mut matches: Vec<String> = labels
        .iter()
        .map(|label| format!("LOWER({table}.{label}) LIKE $1 ESCAPE '\\' OR {table}.{label} LIKE $2 ESCAPE '\\'"))
        .collect();
    matches.push(format!("{table}.id LIKE $1 ESCAPE '\\'"));
    let placeholders: Vec<String> = (0..workspaces.len()).map(|i| format!("${}", i + 3)).collect();
    let live = list.scope.map(|s| format!(" AND {s}")).unwrap_or_default();
    let sql = format!(
        "SELECT {table}.id FROM {table} WHERE {table}.workspace_id IN ({ws}){live} AND ({matches})
         ORDER BY {table}.{order}, {table}.id LIMIT {limit}",
        ws = placeholders.join(", "),
        matches = matches.join(" OR "),
        order = labels[0],
        limit = MAX_IDS + 1,
    );
    let mut query = sql::query(sql).bind(starts_with_pattern(&prefix.to_lowercase())).bind(starts_with_pattern(prefix));
    for ws in workspaces {
        query = query.bind(ws.workspace_id.as_str());
    }
    let mut ids = query.map_all(db, |r| r.try_get::<String, _>(0)).await?;
    let more = ids.len() > MAX_IDS;
    ids.truncate(MAX_IDS);
    Ok((ids, more))
}
