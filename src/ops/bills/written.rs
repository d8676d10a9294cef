//! A page of bills written as JSON straight from its rows: what an agent's list tool
//! with `fields` answers. Building a [`BillingRow`] for each row — some forty owned
//! strings — only to serialise six of its fields costs more than the query; when every
//! field asked for is read from the row's own columns (not the apportionment or the
//! tax charges), the row's values are written as they are read.
//!
//! The JSON is the same as the typed page's, member for member, in the record's order
//! (taken from [`BillingRow`]'s own serialisation); a test compares every field with the
//! whole record's.

use std::sync::LazyLock;

use serde::de::{IgnoredAny, MapAccess, Visitor};

use super::kind::BillKind;
use super::rows::{column_alias, select_for, wire_of, Wire};
use super::wire::BillingRow;
use crate::domain::money::Cents;
use crate::domain::roles::Access;
use crate::error::ApiError;
use crate::ops::machinery::list::{bind_all, ListRequest};
use crate::ops::machinery::page::{self, Cut};
use crate::ops::OpContext;
use crate::storage::identity::Membership;
use crate::storage::{sql, Conn, Row};

/// The members of a bill in the order [`BillingRow`] serialises them.
static ORDER: LazyLock<Vec<String>> = LazyLock::new(|| {
    struct Keys;
    impl<'de> Visitor<'de> for Keys {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a bill")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<String>, A::Error> {
            let mut keys = Vec::new();
            while let Some(key) = map.next_key::<String>()? {
                map.next_value::<IgnoredAny>()?;
                keys.push(key);
            }
            Ok(keys)
        }
    }
    let json = serde_json::to_string(&BillingRow::default()).unwrap_or_default();
    serde::Deserializer::deserialize_map(&mut serde_json::Deserializer::from_str(&json), Keys).unwrap_or_default()
});

/// The fields asked for, in the record's order, with how each is written; `None` when
/// one of them is not a column of the row (a kind's own field, a name the typed row
/// leaves out), which the typed row writes.
fn plan(fields: &[String]) -> Option<Vec<(&'static str, Wire)>> {
    if !fields.iter().all(|f| ORDER.contains(f)) {
        return None;
    }
    let mut plan = Vec::with_capacity(fields.len());
    for name in ORDER.iter().filter(|name| fields.contains(name)) {
        plan.push((name.as_str(), wire_of(name)?));
    }
    Some(plan)
}

/// Where each column a plan reads stands in the statement's rows (read on the first row).
struct Positions(Vec<(&'static str, usize)>);

impl Positions {
    fn of(row: &Row<'_>) -> Positions {
        Positions(
            (0..row.column_count())
                .filter_map(|at| column_alias(row.column_name(at)).map(|alias| (alias, at)))
                .collect(),
        )
    }

    fn at(&self, alias: &str) -> Result<usize, crate::storage::Error> {
        self.0
            .iter()
            .find(|(a, _)| *a == alias)
            .map(|(_, at)| *at)
            .ok_or_else(|| crate::storage::Error::Corrupt(format!("no column {alias}")))
    }

    /// The plan with each field's column positions resolved: what every row reuses.
    fn resolve(&self, plan: &[(&'static str, Wire)]) -> Result<Vec<(&'static str, Placed)>, crate::storage::Error> {
        plan.iter()
            .map(|(name, wire)| {
                Ok((
                    *name,
                    match *wire {
                        Wire::Text(alias) => Placed::Text(self.at(alias)?),
                        Wire::Bool(alias) => Placed::Bool(self.at(alias)?),
                        Wire::Integer(alias) => Placed::Integer(self.at(alias)?),
                        Wire::Money(alias) => Placed::Money(self.at(alias)?),
                        Wire::Nominal => Placed::Nominal(
                            self.at("amount_cents")?,
                            self.at("interest_cents")?,
                            self.at("discount_cents")?,
                        ),
                    },
                ))
            })
            .collect()
    }
}

/// A [`Wire`] with its columns' positions in the row.
#[derive(Clone, Copy)]
enum Placed {
    Text(usize),
    Bool(usize),
    Integer(usize),
    Money(usize),
    Nominal(usize, usize, usize),
}

fn money(out: &mut Vec<u8>, cents: Option<i64>) {
    match cents {
        Some(cents) => {
            out.push(b'"');
            out.extend_from_slice(Cents(cents).write_wire(&mut [0; 24]).as_bytes());
            out.push(b'"');
        }
        None => out.extend_from_slice(b"null"),
    }
}

/// Writes one row as the JSON object of `plan`.
fn write_row(out: &mut Vec<u8>, row: &Row<'_>, plan: &[(&'static str, Placed)]) -> Result<(), crate::storage::Error> {
    out.push(b'{');
    for (i, (name, placed)) in plan.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'"');
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\":");
        match *placed {
            Placed::Text(at) => match row.text(at)? {
                Some(text) => {
                    serde_json::to_writer(&mut *out, text).map_err(|e| crate::storage::Error::Corrupt(e.to_string()))?
                }
                None => out.extend_from_slice(b"null"),
            },
            Placed::Bool(at) => out.extend_from_slice(match row.try_get::<Option<bool>, _>(at)? {
                Some(true) => b"true",
                Some(false) => b"false",
                None => b"null",
            }),
            Placed::Integer(at) => match row.try_get::<Option<i64>, _>(at)? {
                Some(n) => {
                    use std::io::Write as _;
                    // Writing into a Vec cannot fail.
                    let _ = write!(out, "{n}");
                }
                None => out.extend_from_slice(b"null"),
            },
            Placed::Money(at) => money(out, row.try_get(at)?),
            Placed::Nominal(amount, interest, discount) => {
                let cents = |at: usize| row.try_get::<Option<i64>, _>(at).map(|c| c.map(Cents));
                money(out, Some(Cents::nominal(Cents(row.try_get(amount)?), cents(interest)?, cents(discount)?).0));
            }
        }
    }
    out.push(b'}');
    Ok(())
}

/// `GET /v1/{payables|receivables}` with `fields`, written as JSON: `None` when a field
/// asked for is not in the row (the caller lists the typed records instead).
pub async fn list<B: BillKind>(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    request: &ListRequest,
) -> Result<Option<Vec<u8>>, ApiError> {
    let Some(plan) = request.fields.as_deref().and_then(plan) else { return Ok(None) };
    ctx.authorize(ws, B::RESOURCE, Access::Read)?;
    let keys = ctx.state.keys.current().await?;
    let compiled = page::compile(conn, ws, B::LIST, request, &keys.state).await?;
    let sql = format!("{} {}", select_for(request, compiled.sort_column), compiled.sql);
    let mut cut = Cut::new(&compiled);
    let mut out = Vec::with_capacity(64 + cut.limit() * (16 + plan.len() * 48));
    out.extend_from_slice(b"{\"data\":[");
    let mut placed = None::<Vec<(&'static str, Placed)>>;
    bind_all(sql::query(sql), &compiled.binds)
        .map_all(&mut *conn, |row| {
            if !cut.take(row)? {
                return Ok(());
            }
            if placed.is_some() {
                out.push(b',');
            } else {
                placed = Some(Positions::of(row).resolve(&plan)?);
            }
            write_row(&mut out, row, placed.as_deref().unwrap_or_default())
        })
        .await?;
    out.extend_from_slice(b"],\"meta\":{\"next_cursor\":");
    match cut.next_cursor(&keys.state) {
        Some(cursor) => serde_json::to_writer(&mut out, &cursor).map_err(|_| ApiError::internal())?,
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b"}}");
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every member of a bill is either written from its columns or left to the typed
    /// page, and the members come in the record's order.
    #[test]
    fn every_member_of_a_bill_has_a_way_to_be_written() {
        assert_eq!(ORDER.first().map(String::as_str), Some("id"));
        assert!(ORDER.len() >= 40, "{:?}", *ORDER);
        for name in ORDER.iter() {
            assert!(wire_of(name).is_some(), "{name}");
        }
        let plan = plan(&["status".to_string(), "id".into(), "amount".into()]).unwrap();
        assert_eq!(plan.iter().map(|(n, _)| *n).collect::<Vec<_>>(), ["id", "amount", "status"]);
        for typed in ["payment_approval", "charge_state", "nope"] {
            assert!(super::plan(&["id".to_string(), typed.into()]).is_none(), "{typed}");
        }
    }
}
