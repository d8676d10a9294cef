//! Listing: the filter grammar, sorting and cursor pagination shared by every list
//! operation (`/v1` query strings and the MCP list tools' `filters` object both end up
//! here), compiled to one SQL statement confined to the caller's workspace.
//!
//! Pagination is keyset-based on (sort column, id): a page starts strictly after the
//! last row of the previous one, so rows inserted meanwhile never cause a skip or a
//! duplicate. Cursors are opaque, signed with the state key and bound to their sort.

use aws_lc_rs::hmac;
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::domain::dates::{Date, Timestamp};
use crate::error::ApiError;

pub const DEFAULT_LIMIT: i64 = 25;
pub const MAX_LIMIT: i64 = 100;
/// Page size of the id sweeps (`GET …/ids`): default and maximum.
pub const IDS_DEFAULT_LIMIT: i64 = 1000;
pub const IDS_MAX_LIMIT: i64 = 10_000;

/// The type of a filterable or sortable field, which decides how values are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Uuid,
    Text,
    Bool,
    Date,
    Timestamp,
    Integer,
    Enum(&'static [&'static str]),
    /// An amount: a 2-decimal string on the wire (`"1500.00"`, signed allowed),
    /// compared as integer cents against a `*_cents` column.
    Money,
}

impl Kind {
    /// What a value of this kind is written as, for the message that refuses one.
    pub fn expects(self) -> String {
        match self {
            Kind::Uuid => "a UUID".to_string(),
            Kind::Text => "text".to_string(),
            Kind::Bool => "true or false".to_string(),
            Kind::Date => "a date YYYY-MM-DD (or an RFC 3339 date-time)".to_string(),
            Kind::Timestamp => "an RFC 3339 date-time (e.g. 2026-12-01T09:30:00Z) or a date YYYY-MM-DD".to_string(),
            Kind::Integer => "a whole number".to_string(),
            Kind::Enum(allowed) => format!("one of {}", allowed.join(", ")),
            Kind::Money => "an amount with 1-2 decimals, e.g. 1500.00".to_string(),
        }
    }
}

/// 400 for a value of filter `name` that is not `kind`'s form, naming it: reason
/// `invalid_uuid` for a malformed id (as a query string's and a body's), else
/// `invalid_value`.
pub fn invalid_filter_value(name: &str, kind: Kind) -> ApiError {
    let reason = if kind == Kind::Uuid { "invalid_uuid" } else { "invalid_value" };
    bad(
        format!("Invalid value for filter {name}: it takes {}", kind.expects()),
        json!({"field": name, "reason": reason}),
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    In,
    Gte,
    Lte,
    Gt,
    Lt,
}

impl Op {
    fn parse(s: &str) -> Option<Op> {
        Some(match s {
            "in" => Op::In,
            "gte" => Op::Gte,
            "lte" => Op::Lte,
            "gt" => Op::Gt,
            "lt" => Op::Lt,
            "eq" => Op::Eq,
            _ => return None,
        })
    }

    fn sql(self) -> &'static str {
        match self {
            Op::Eq | Op::In => "=",
            Op::Gte => ">=",
            Op::Lte => "<=",
            Op::Gt => ">",
            Op::Lt => "<",
        }
    }
}

/// Ranges make sense for these kinds only.
fn ranged(kind: Kind) -> bool {
    matches!(kind, Kind::Date | Kind::Timestamp | Kind::Integer | Kind::Money)
}

/// One filterable field of a resource.
#[derive(Debug)]
pub struct Field {
    pub name: &'static str,
    pub column: &'static str,
    pub kind: Kind,
    /// Why the filter is this product's and not the real API's (`@ "why"` in
    /// [`list_spec!`]; its OpenAPI `x-kobana-extension`).
    pub extension: Option<&'static str>,
}

/// What a resource's list accepts.
#[derive(Debug)]
pub struct ListSpec {
    pub table: &'static str,
    pub filters: &'static [Field],
    /// More filters, of one kind of the table's rows (a payable's, a receivable's).
    pub own: &'static [Field],
    /// Sortable fields (name, column); a nullable column sorts as `COALESCE(column, '')`
    /// ([`sorted_column`]).
    pub sorts: &'static [(&'static str, &'static str)],
    /// The default sort field and whether it is descending.
    pub default_sort: (&'static str, bool),
    /// Extra fixed condition (e.g. `deleted_at IS NULL`).
    pub scope: Option<&'static str>,
    /// Rows a list leaves out unless it asks for them by a filter ([`Shown`]): the
    /// payables at the approval gate.
    pub unless_filtered: Option<Shown>,
    /// Whether the table's rows are a workspace's (`workspace_id`, bind `$1`), or
    /// everyone's (the bank list: [`ListSpec::global`]).
    pub per_workspace: bool,
}

/// Declares a [`ListSpec`], each fact once: a filter or sort reads the column of its own
/// name in the table unless it names another column (`type = category_type`) or an SQL
/// expression (`center_id = "(SELECT …)"`).
///
/// ```text
/// list_spec!(people where "people.deleted_at IS NULL";
///     filters: company_id: Uuid, kind: Enum(&["natural", "juridical"]), name: Text;
///     sorts: name, created_at;
///     default: name)
/// ```
///
/// `default: created_at desc` sorts newest first; `name: Text @ "why"` marks a filter the
/// real API does not have (OpenAPI `x-kobana-extension`). A macro because the qualified columns
/// are `'static` text made at compile time (`concat!`), which no `const fn` can join.
impl ListSpec {
    /// The same list over a table every workspace shares: no `workspace_id` condition.
    pub const fn global(self) -> ListSpec {
        ListSpec { per_workspace: false, ..self }
    }

    /// Every filter: the list's, then its kind's own.
    pub fn fields(&self) -> impl Iterator<Item = &'static Field> {
        self.filters.iter().chain(self.own)
    }
}

/// The column a sort reads its value from in a page's rows, and whether that column
/// may be null: a nullable column is sorted as `COALESCE(table.column, '')` (the keyset
/// cursor compares values that are never null), its null read as `''`.
pub fn sorted_column(sort_column: &str) -> (&str, bool) {
    let (inner, nullable) = match sort_column.strip_prefix("COALESCE(").and_then(|rest| rest.split_once(',')) {
        Some((inner, _)) => (inner, true),
        None => (sort_column, false),
    };
    (inner.rsplit('.').next().unwrap_or(inner), nullable)
}

macro_rules! list_spec {
    ($table:ident $(where $scope:expr)?;
     filters: $($filter:ident $(= $column:tt)? : $kind:ident $(($($arg:tt)*))? $(@ $extension:literal)?),* $(,)?;
     sorts: $($sort:ident $(= $sort_column:tt)?),* $(,)?;
     default: $default:ident $($desc:ident)? $(;)?) => {
        $crate::ops::machinery::list::ListSpec {
            table: stringify!($table),
            filters: const { &[$($crate::ops::machinery::list::Field {
                name: stringify!($filter),
                column: $crate::ops::machinery::list::list_spec!(@column $table, $filter $(, $column)?),
                kind: $crate::ops::machinery::list::Kind::$kind $(($($arg)*))?,
                extension: $crate::ops::machinery::list::list_spec!(@extension $($extension)?),
            }),*] },
            own: &[],
            sorts: const { &[$((stringify!($sort), $crate::ops::machinery::list::list_spec!(@column $table, $sort $(, $sort_column)?))),*] },
            default_sort: (stringify!($default), $crate::ops::machinery::list::list_spec!(@descending $($desc)?)),
            scope: $crate::ops::machinery::list::list_spec!(@scope $($scope)?),
            unless_filtered: None,
            per_workspace: true,
        }
    };
    // The pieces: a field's column, the default direction, the scope.
    (@column $table:ident, $name:ident) => {
        concat!(stringify!($table), ".", stringify!($name))
    };
    (@column $table:ident, $name:ident, $column:ident) => {
        concat!(stringify!($table), ".", stringify!($column))
    };
    (@column $table:ident, $name:ident, $sql:literal) => {
        $sql
    };
    (@descending) => {
        false
    };
    (@extension) => {
        None
    };
    (@extension $why:literal) => {
        Some($why)
    };
    (@descending desc) => {
        true
    };
    (@scope) => {
        None
    };
    (@scope $scope:expr) => {
        Some($scope)
    };
}
pub(crate) use list_spec;

/// The rows a list shows unless it filters by one of `asked_by` (those meeting
/// `shown`), and the rows its id sweep covers (`swept`): a payable waiting at the
/// approval gate is listed when asked for by `payment_approval` or by `id`, and swept
/// until a person rejects it.
#[derive(Debug, Clone, Copy)]
pub struct Shown {
    pub asked_by: &'static [&'static str],
    pub shown: &'static str,
    pub swept: &'static str,
}

/// A parsed list request, before it is checked against a [`ListSpec`].
#[derive(Debug, Default, Clone)]
pub struct ListRequest {
    pub filters: Vec<(String, Op, Vec<String>)>,
    pub sort: Option<String>,
    pub limit: Option<String>,
    pub cursor: Option<String>,
    /// The only fields of each row the caller will read (an MCP list tool's `fields`);
    /// `None`: all of them. A list may skip reading what nobody will see.
    pub fields: Option<Vec<String>>,
}

/// A value bound to a statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Bind {
    Text(String),
    Int(i64),
}

/// A list statement ready to run: `SELECT {columns} FROM … {sql}` with its binds.
#[derive(Debug)]
pub struct Compiled {
    /// `WHERE … ORDER BY … LIMIT …` (the workspace is bind `$1`).
    pub sql: String,
    pub binds: Vec<Bind>,
    pub limit: i64,
    pub sort_field: &'static str,
    pub sort_column: &'static str,
    pub descending: bool,
}

fn bad(message: impl Into<String>, details: Value) -> ApiError {
    ApiError::bad_request(message).with_details(details)
}

impl ListRequest {
    /// Whether the caller will read `field` of each row.
    pub fn wants(&self, field: &str) -> bool {
        self.fields.as_ref().is_none_or(|fields| fields.iter().any(|f| f == field))
    }

    /// From `/v1` query pairs: `field=v`, `field[op]=v` (`in` takes a comma list),
    /// `sort`, `limit`, `cursor`.
    pub fn from_query(pairs: &[(String, String)]) -> Result<ListRequest, ApiError> {
        let mut request = ListRequest::default();
        for (key, value) in pairs {
            match key.as_str() {
                "sort" => request.sort = Some(value.clone()),
                "limit" => request.limit = Some(value.clone()),
                "cursor" => request.cursor = Some(value.clone()),
                "fields" => request.fields = Some(super::pick::from_query(value)),
                "workspace_id" => {}
                _ => {
                    let (field, op) = match key.split_once('[') {
                        Some((field, rest)) => {
                            let op = rest.strip_suffix(']').and_then(Op::parse).filter(|op| *op != Op::Eq).ok_or_else(
                                || {
                                    bad(
                                        format!("Unknown operator in {key}: use [in], [gte], [lte], [gt] or [lt]"),
                                        json!({"field": field, "reason": "unknown_operator"}),
                                    )
                                },
                            )?;
                            (field.to_string(), op)
                        }
                        None => (key.clone(), Op::Eq),
                    };
                    let values =
                        if op == Op::In { value.split(',').map(str::to_string).collect() } else { vec![value.clone()] };
                    request.filters.push((field, op, values));
                }
            }
        }
        Ok(request)
    }

    /// From an MCP list tool's arguments: `filters` is an object whose values are a
    /// plain value (equality) or `{"in": [...], "gte": …}`.
    pub fn from_arguments(
        filters: Option<&Value>,
        sort: Option<&Value>,
        limit: Option<&Value>,
        cursor: Option<&Value>,
    ) -> Result<ListRequest, ApiError> {
        let scalar = |v: &Value| match v {
            Value::String(s) => Some(s.clone()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        };
        let mut request = ListRequest::default();
        match filters {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                for (field, condition) in map {
                    let wrong = || {
                        bad(
                            format!(
                                "Filter {field} has an invalid value: it takes a value, a list of values or \
                                 {{\"gte\": value}} (operators eq, in, gte, lte, gt, lt)"
                            ),
                            json!({"field": field, "reason": "invalid_value"}),
                        )
                    };
                    match condition {
                        Value::Object(ops) => {
                            for (op_name, value) in ops {
                                let op = Op::parse(op_name).ok_or_else(|| {
                                    bad(
                                        format!(
                                            "Unknown operator {op_name} on {field}: use eq, in, gte, lte, gt or lt"
                                        ),
                                        json!({"field": field, "reason": "unknown_operator"}),
                                    )
                                })?;
                                let values = match (op, value) {
                                    (Op::In, Value::Array(items)) => {
                                        items.iter().map(|i| scalar(i).ok_or_else(wrong)).collect::<Result<_, _>>()?
                                    }
                                    (Op::In, _) => return Err(wrong()),
                                    (_, v) => vec![scalar(v).ok_or_else(wrong)?],
                                };
                                request.filters.push((field.clone(), op, values));
                            }
                        }
                        Value::Array(items) => {
                            let values = items.iter().map(|i| scalar(i).ok_or_else(wrong)).collect::<Result<_, _>>()?;
                            request.filters.push((field.clone(), Op::In, values));
                        }
                        v => request.filters.push((field.clone(), Op::Eq, vec![scalar(v).ok_or_else(wrong)?])),
                    }
                }
            }
            Some(_) => {
                return Err(bad("filters must be an object", json!({"field": "filters", "reason": "wrong_type"})))
            }
        }
        request.sort = sort.and_then(scalar);
        request.limit = limit.and_then(scalar);
        request.cursor = cursor.and_then(Value::as_str).map(str::to_string);
        Ok(request)
    }
}

fn check_value(field: &Field, value: &str) -> Result<Bind, ApiError> {
    let invalid = || invalid_filter_value(field.name, field.kind);
    match field.kind {
        Kind::Uuid => uuid::Uuid::parse_str(value).map(|u| Bind::Text(u.to_string())).map_err(|_| invalid()),
        Kind::Text => Ok(Bind::Text(value.to_string())),
        Kind::Bool => match value {
            "true" => Ok(Bind::Int(1)),
            "false" => Ok(Bind::Int(0)),
            _ => Err(invalid()),
        },
        // A date or a date-time, compared as text in the stored form.
        Kind::Date => Date::parse(value).map(|date| Bind::Text(date.to_string())).ok_or_else(invalid),
        Kind::Timestamp => Timestamp::parse_input(value).map(|at| Bind::Text(at.to_string())).ok_or_else(invalid),
        Kind::Integer => value.parse::<i64>().map(Bind::Int).map_err(|_| invalid()),
        Kind::Money => crate::domain::money::Cents::parse(value, true).map(|c| Bind::Int(c.0)).map_err(|_| invalid()),
        Kind::Enum(allowed) => allowed.contains(&value).then(|| Bind::Text(value.to_string())).ok_or_else(invalid),
    }
}

#[derive(Serialize, Deserialize)]
struct CursorBody {
    /// Sort field and direction the cursor belongs to.
    s: String,
    d: bool,
    /// The last row's sort value and id.
    v: Value,
    id: String,
}

fn cursor_mac(key: &[u8], payload: &[u8]) -> Vec<u8> {
    let key = hmac::Key::new(hmac::HMAC_SHA256, key);
    hmac::sign(&key, payload).as_ref()[..16].to_vec()
}

/// Encodes the cursor that continues after a row with `sort_value` and `id`.
pub fn encode_cursor(key: &[u8], compiled: &Compiled, sort_value: Value, id: &str) -> String {
    let body = serde_json::to_vec(&CursorBody {
        s: compiled.sort_field.to_string(),
        d: compiled.descending,
        v: sort_value,
        id: id.to_string(),
    })
    .unwrap_or_default();
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    format!("{}.{}", b64.encode(&body), b64.encode(cursor_mac(key, &body)))
}

fn decode_cursor(key: &[u8], cursor: &str) -> Option<CursorBody> {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let (body, mac) = cursor.split_once('.')?;
    let body = b64.decode(body).ok()?;
    let mac = b64.decode(mac).ok()?;
    let expected = cursor_mac(key, &body);
    aws_lc_rs::constant_time::verify_slices_are_equal(&expected, &mac).ok()?;
    serde_json::from_slice(&body).ok()
}

/// The cursor `cursor` of a page sorted by `sort_field` in that direction (400
/// `invalid_cursor` for a cursor of another sort, or one this server did not sign).
fn continued(state_key: &[u8], cursor: &str, sort_field: &str, descending: bool) -> Result<CursorBody, ApiError> {
    decode_cursor(state_key, cursor).filter(|b| b.s == sort_field && b.d == descending).ok_or_else(invalid_cursor)
}

fn invalid_cursor() -> ApiError {
    bad("Invalid cursor", json!({"field": "cursor", "reason": "invalid_cursor"}))
}

/// A page size: `default` when absent, else a whole number from 1 to `max` (400
/// `out_of_range` naming `limit`).
fn page_limit(limit: Option<&str>, default: i64, max: i64) -> Result<i64, ApiError> {
    match limit {
        None => Ok(default),
        Some(text) => text.parse::<i64>().ok().filter(|l| (1..=max).contains(l)).ok_or_else(|| {
            bad(format!("limit must be between 1 and {max}"), json!({"field": "limit", "reason": "out_of_range"}))
        }),
    }
}

impl ListSpec {
    /// The conditions every statement of this list starts with: the workspace (bind
    /// `$1`) where the rows are a workspace's, and the list's fixed scope.
    fn confined(&self, workspace_id: &str) -> (Vec<Bind>, Vec<String>) {
        let (mut binds, mut clauses) = (Vec::new(), Vec::new());
        if self.per_workspace {
            binds.push(Bind::Text(workspace_id.to_string()));
            clauses.push(format!("{}.workspace_id = $1", self.table));
        }
        clauses.extend(self.scope.map(str::to_string));
        if clauses.is_empty() {
            clauses.push("1 = 1".to_string());
        }
        (binds, clauses)
    }

    /// Checks `request` against this resource and compiles the statement's tail.
    /// Bind `$1` is the workspace id; every other value is bound, never interpolated.
    pub fn compile(
        &'static self,
        request: &ListRequest,
        workspace_id: &str,
        state_key: &[u8],
    ) -> Result<Compiled, ApiError> {
        let (mut binds, mut clauses) = self.confined(workspace_id);
        if let Some(shown) = self.unless_filtered {
            if !request.filters.iter().any(|(name, _, _)| shown.asked_by.contains(&name.as_str())) {
                clauses.push(shown.shown.to_string());
            }
        }
        for (name, op, values) in &request.filters {
            let field = self.fields().find(|f| f.name == name).ok_or_else(|| {
                bad(format!("Unknown filter: {name}"), json!({"field": name, "reason": "unknown_filter"}))
            })?;
            if matches!(op, Op::Gte | Op::Lte | Op::Gt | Op::Lt) && !ranged(field.kind) {
                return Err(bad(
                    format!("Filter {name} does not take ranges"),
                    json!({"field": name, "reason": "unknown_operator"}),
                ));
            }
            if values.is_empty() || values.len() > 100 {
                return Err(bad(
                    format!("Filter {name} takes 1 to 100 values"),
                    json!({"field": name, "reason": "invalid_value"}),
                ));
            }
            let mut placeholders = Vec::with_capacity(values.len());
            for value in values {
                binds.push(check_value(field, value)?);
                placeholders.push(format!("${}", binds.len()));
            }
            clauses.push(match op {
                Op::In => format!("{} IN ({})", field.column, placeholders.join(", ")),
                _ => format!("{} {} {}", field.column, op.sql(), placeholders[0]),
            });
        }
        let (sort_field, descending) = match request.sort.as_deref() {
            None => self.default_sort,
            Some(s) => {
                let (name, desc) = match s.strip_prefix('-') {
                    Some(n) => (n, true),
                    None => (s, false),
                };
                let known = self.sorts.iter().find(|(n, _)| *n == name).ok_or_else(|| {
                    bad(format!("Unknown sort field: {name}"), json!({"field": "sort", "reason": "unknown_sort"}))
                })?;
                (known.0, desc)
            }
        };
        let sort_column = self.sorts.iter().find(|(n, _)| *n == sort_field).map(|(_, c)| *c).unwrap_or("created_at");
        let limit = page_limit(request.limit.as_deref(), DEFAULT_LIMIT, MAX_LIMIT)?;
        if let Some(cursor) = &request.cursor {
            let body = continued(state_key, cursor, sort_field, descending)?;
            let value = match body.v {
                Value::String(s) => Some(Bind::Text(s)),
                Value::Number(n) => n.as_i64().map(Bind::Int),
                _ => None,
            };
            binds.push(value.ok_or_else(invalid_cursor)?);
            let v = binds.len();
            binds.push(Bind::Text(body.id));
            let id = binds.len();
            let cmp = if descending { "<" } else { ">" };
            // A row-value comparison, not `a > x OR (a = x AND id > y)`: PostgreSQL (and
            // SQLite) turn it into a range on the (…, sort column, id) index, so a deep page
            // costs what the first one does instead of scanning every earlier row.
            clauses.push(format!("({sort_column}, {table}.id) {cmp} (${v}, ${id})", table = self.table));
        }
        let direction = if descending { "DESC" } else { "ASC" };
        let sql = format!(
            "WHERE {} ORDER BY {sort_column} {direction}, {table}.id {direction} LIMIT {}",
            clauses.join(" AND "),
            limit + 1,
            table = self.table
        );
        Ok(Compiled { sql, binds, limit, sort_field, sort_column, descending })
    }

    /// Compiles an id sweep (`GET …/ids`): every id of the resource in the workspace,
    /// ascending, `limit` 1 to [`IDS_MAX_LIMIT`] (default [`IDS_DEFAULT_LIMIT`]), with a
    /// signed cursor. Filters and sorts are refused (400): a sweep always covers
    /// everything, so an id missing from it was deleted.
    pub fn compile_ids(
        &'static self,
        request: &ListRequest,
        workspace_id: &str,
        state_key: &[u8],
    ) -> Result<Compiled, ApiError> {
        if let Some((name, _, _)) = request.filters.first() {
            return Err(bad("The id sweep takes no filters", json!({"field": name, "reason": "unknown_filter"})));
        }
        if request.sort.is_some() {
            return Err(bad("The id sweep takes no sort", json!({"field": "sort", "reason": "unknown_sort"})));
        }
        if request.fields.is_some() {
            return Err(bad("The id sweep takes no fields", json!({"field": "fields", "reason": "unknown_filter"})));
        }
        let limit = page_limit(request.limit.as_deref(), IDS_DEFAULT_LIMIT, IDS_MAX_LIMIT)?;
        let (mut binds, mut clauses) = self.confined(workspace_id);
        clauses.extend(self.unless_filtered.map(|shown| shown.swept.to_string()));
        if let Some(cursor) = &request.cursor {
            let body = continued(state_key, cursor, "id", false)?;
            binds.push(Bind::Text(body.id));
            clauses.push(format!("{}.id > ${}", self.table, binds.len()));
        }
        let sql =
            format!("WHERE {} ORDER BY {table}.id ASC LIMIT {}", clauses.join(" AND "), limit + 1, table = self.table);
        Ok(Compiled { sql, binds, limit, sort_field: "id", sort_column: "id", descending: false })
    }
}

/// Binds `binds` to `query` in order.
pub fn bind_all<'q>(query: crate::storage::sql::Query<'q>, binds: &'q [Bind]) -> crate::storage::sql::Query<'q> {
    query.bind_all(binds.iter().map(|bind| match bind {
        Bind::Text(s) => crate::storage::sql::Arg::Text(s.as_str().into()),
        Bind::Int(i) => crate::storage::sql::Arg::Int(*i),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    static SPEC: ListSpec = list_spec!(things;
        filters: company_id: Uuid, due_date: Date, status: Enum(&["pending", "paid"]), active: Bool;
        sorts: name, created_at;
        default: name);
    const KEY: &[u8] = b"state-key";

    /// The pairs of a query string (`a=1&b=2`).
    fn pairs(q: &str) -> Vec<(String, String)> {
        q.split('&')
            .filter(|p| !p.is_empty())
            .filter_map(|p| p.split_once('='))
            .map(|(k, v)| (k.into(), v.into()))
            .collect()
    }

    fn query(q: &str) -> Result<Compiled, ApiError> {
        SPEC.compile(&ListRequest::from_query(&pairs(q))?, "ws", KEY)
    }

    fn rejected(q: &str) -> Value {
        let err = query(q).unwrap_err();
        assert_eq!(err.code, ErrorCode::BadRequest, "{q}");
        err.details.unwrap()
    }

    #[test]
    fn filter_grammar_compiles_to_bound_sql() {
        let c =
            query("status[in]=pending,paid&due_date[gte]=2026-01-01&active=true&sort=-created_at&limit=10").unwrap();
        assert_eq!(
            c.sql,
            "WHERE things.workspace_id = $1 AND things.status IN ($2, $3) AND things.due_date >= $4 AND things.active = $5 \
             ORDER BY things.created_at DESC, things.id DESC LIMIT 11"
        );
        assert_eq!(
            c.binds[1..],
            [Bind::Text("pending".into()), Bind::Text("paid".into()), Bind::Text("2026-01-01".into()), Bind::Int(1)]
        );
        assert_eq!(c.limit, 10);
    }

    #[test]
    fn unknown_filters_operators_and_bad_values_are_bad_requests() {
        assert_eq!(rejected("colour=red")["reason"], "unknown_filter");
        assert_eq!(rejected("due_date[between]=x")["reason"], "unknown_operator");
        assert_eq!(rejected("status[gte]=paid")["reason"], "unknown_operator");
        assert_eq!(rejected("status=lost")["reason"], "invalid_value");
        // A malformed id is `invalid_uuid`, as in a query string and a body.
        assert_eq!(rejected("company_id=not-a-uuid")["reason"], "invalid_uuid");
        assert_eq!(rejected("company_id[in]=c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a11,x")["field"], "company_id");
        assert_eq!(rejected("company_id[in]=c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a11,x")["reason"], "invalid_uuid");
        assert_eq!(rejected("due_date[lt]=2026-02-30")["reason"], "invalid_value");
        assert_eq!(rejected("sort=-secret")["reason"], "unknown_sort");
        assert_eq!(rejected("limit=101")["reason"], "out_of_range");
        assert_eq!(rejected("limit=0")["reason"], "out_of_range");
    }

    #[test]
    fn cursors_are_signed_and_bound_to_their_sort() {
        let first = query("sort=name").unwrap();
        let cursor = encode_cursor(KEY, &first, json!("Acme"), "id-1");
        let next = query(&format!("sort=name&cursor={cursor}")).unwrap();
        assert!(next.sql.contains("(things.name, things.id) > ($2, $3)"), "{}", next.sql);
        assert_eq!(rejected(&format!("sort=-name&cursor={cursor}"))["reason"], "invalid_cursor");
        let (body, mac) = cursor.split_once('.').unwrap();
        let forged = format!(
            "{}.{mac}",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(br#"{"s":"name","d":false,"v":"Zzz","id":"x"}"#)
        );
        assert_eq!(rejected(&format!("cursor={forged}"))["reason"], "invalid_cursor");
        assert_eq!(rejected("cursor=garbage")["reason"], "invalid_cursor");
        let _ = body;
    }

    #[test]
    fn money_filters_compare_cents() {
        static MONEY: ListSpec =
            list_spec!(things; filters: amount = amount_cents: Money; sorts: amount = amount_cents; default: amount);
        let pairs =
            vec![("amount[gte]".to_string(), "10.5".to_string()), ("amount[lt]".to_string(), "1500.00".to_string())];
        let c = MONEY.compile(&ListRequest::from_query(&pairs).unwrap(), "ws", KEY).unwrap();
        assert_eq!(c.binds[1..], [Bind::Int(1050), Bind::Int(150_000)]);
        for bad in ["10", "1e3", "10.001", "abc"] {
            let pairs = vec![("amount".to_string(), bad.to_string())];
            let err = MONEY.compile(&ListRequest::from_query(&pairs).unwrap(), "ws", KEY).unwrap_err();
            assert_eq!(err.details.unwrap()["reason"], "invalid_value", "{bad}");
        }
    }

    #[test]
    fn a_declared_list_reads_the_column_of_each_name_unless_told_otherwise() {
        static PEOPLE: ListSpec = list_spec!(people where "people.deleted_at IS NULL";
            filters: company_id: Uuid, type = person_type: Enum(&["natural"]), first = "(SELECT 1)": Text;
            sorts: name, amount = amount_cents;
            default: created_at desc);
        let filters: Vec<_> = PEOPLE.filters.iter().map(|f| (f.name, f.column, f.kind)).collect();
        assert_eq!(
            filters,
            [
                ("company_id", "people.company_id", Kind::Uuid),
                ("type", "people.person_type", Kind::Enum(&["natural"])),
                ("first", "(SELECT 1)", Kind::Text),
            ]
        );
        assert_eq!(PEOPLE.sorts, [("name", "people.name"), ("amount", "people.amount_cents")]);
        assert_eq!(
            (PEOPLE.table, PEOPLE.default_sort, PEOPLE.scope),
            ("people", ("created_at", true), Some("people.deleted_at IS NULL"))
        );
        assert_eq!(SPEC.default_sort, ("name", false));
        assert_eq!(SPEC.scope, None);
    }

    #[test]
    fn id_sweeps_refuse_filters_and_sorts() {
        let sweep = |q: &str| SPEC.compile_ids(&ListRequest::from_query(&pairs(q))?, "ws", KEY);
        let c = sweep("").unwrap();
        assert_eq!(c.sql, "WHERE things.workspace_id = $1 ORDER BY things.id ASC LIMIT 1001");
        assert_eq!(sweep("limit=10000").unwrap().limit, 10_000);
        assert_eq!(sweep("limit=10001").unwrap_err().details.unwrap()["reason"], "out_of_range");
        assert_eq!(sweep("status=paid").unwrap_err().details.unwrap()["reason"], "unknown_filter");
        assert_eq!(sweep("sort=name").unwrap_err().details.unwrap()["reason"], "unknown_sort");
        let cursor = encode_cursor(KEY, &c, json!("id-9"), "id-9");
        let next = sweep(&format!("cursor={cursor}")).unwrap();
        assert!(next.sql.contains("things.id > $2"), "{}", next.sql);
        assert_eq!(next.binds[1], Bind::Text("id-9".into()));
        let page_cursor = encode_cursor(KEY, &query("sort=name").unwrap(), json!("Acme"), "id-1");
        assert_eq!(sweep(&format!("cursor={page_cursor}")).unwrap_err().details.unwrap()["reason"], "invalid_cursor");
    }

    /// Every page size is read by one rule: absent is the default, else 1 to the
    /// maximum, anything else a 400 naming `limit`.
    #[test]
    fn a_limit_is_a_whole_number_from_one_to_the_maximum() {
        assert_eq!(page_limit(None, 25, 100).unwrap(), 25);
        for (text, limit) in [("1", 1), ("100", 100), ("+7", 7)] {
            assert_eq!(page_limit(Some(text), 25, 100).unwrap(), limit, "{text}");
        }
        for text in ["0", "101", "-1", "ten", "", "2.0", " 5"] {
            let err = page_limit(Some(text), 25, 100).unwrap_err();
            assert_eq!(err.code, ErrorCode::BadRequest, "{text}");
            assert_eq!(err.message, "limit must be between 1 and 100", "{text}");
            assert_eq!(err.details.unwrap(), json!({"field": "limit", "reason": "out_of_range"}), "{text}");
        }
        assert_eq!(page_limit(Some("10000"), IDS_DEFAULT_LIMIT, IDS_MAX_LIMIT).unwrap(), 10_000);
        let err = page_limit(Some("10001"), IDS_DEFAULT_LIMIT, IDS_MAX_LIMIT).unwrap_err();
        assert_eq!(err.message, "limit must be between 1 and 10000");
    }

    #[test]
    fn tool_filters_take_plain_values_and_operator_objects() {
        let filters = json!({"status": {"in": ["pending"]}, "due_date": {"gte": "2026-01-01", "lte": "2026-01-31"}, "active": true});
        let request =
            ListRequest::from_arguments(Some(&filters), Some(&json!("-created_at")), Some(&json!(5)), None).unwrap();
        let c = SPEC.compile(&request, "ws", KEY).unwrap();
        assert_eq!(c.binds.len(), 5);
        assert_eq!(c.limit, 5);
        assert!(ListRequest::from_arguments(Some(&json!([1])), None, None, None).is_err());
    }
}
