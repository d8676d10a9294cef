//! `GET /v1/reports/aging` (tool `finance_reports_aging`): the payables or receivables
//! still pending, by how late they are as of a day.
//!
//! * `kind` (`payable` or `receivable`) is required; `as_of` is the day lateness is
//!   measured from, by default today in `tz` (default `America/Sao_Paulo`, as the cash
//!   flow's today).
//! * What counts is what `…/aggregates` sums as `pending`: the bills of the kind whose
//!   status is pending — never paid, received or cancelled ones — that are owed (a
//!   payable waiting for approval is; a rejected one is not: `approval::OWED`), each
//!   for its `amount` (interest and discount are known only when it is settled). So the
//!   report's `total` is the aggregates' `pending` for the same `company_id`, whatever
//!   the day. `as_of` moves only the day lateness is measured from: the bills are those
//!   pending now (one paid since a past `as_of` is not brought back), and a future
//!   `as_of` says what will be late by then if nothing is paid.
//! * Days late = `as_of` − due date. Buckets: `not_due` (due on `as_of` or after: 0 days
//!   or fewer), `1_30`, `31_60`, `61_90` (both ends inclusive) and `over_90`; each with
//!   its count and amount, and the `total`.
//! * `group_by=person`: the `limit` (1–50, default 10) people with the most pending,
//!   largest first (then by id), each with their buckets; the bills without a person are
//!   one more line (`person_id` null). `others` holds everyone else (how many people and
//!   their buckets), so the people listed plus `others` add up to the total.
//!
//! The bills are read from their running totals by day due and person
//! (`report_open_bills`, kept by the database's triggers as bills are written, migration
//! 0014): one aggregate statement for the buckets, one more grouped by person for
//! `group_by=person` — a few rows per day, however many bills.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::statement;
use crate::domain::dates::{Date, Zone};
use crate::domain::money::Cents;
use crate::domain::roles::{Access, Resource};
use crate::error::ApiError;
use crate::ops::machinery::common::invalid;
use crate::ops::machinery::period::{canonical, zone_of};
use crate::ops::machinery::refs;
use crate::ops::machinery::validate::parse_query;
use crate::ops::OpContext;
use crate::storage::identity::Membership;
use crate::storage::{Conn, OwnedRow};

/// The buckets, in order: a name and the fewest days late it holds (the first holds
/// everything not yet late, the last everything over 90 days).
const BUCKETS: [(&str, i64); 5] = [("not_due", i64::MIN), ("1_30", 1), ("31_60", 31), ("61_90", 61), ("over_90", 91)];

/// The most people `group_by=person` lists.
pub const MAX_PEOPLE: i64 = 50;

/// An aging query, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgingQuery {
    /// `payable` or `receivable`.
    pub kind: &'static str,
    pub as_of: Option<Date>,
    pub zone: Zone,
    pub company_id: Option<String>,
    pub by_person: bool,
    pub limit: i64,
}

/// `GET /v1/reports/aging`'s query string, as sent (the tool's arguments).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgingParams {
    #[serde(default)]
    #[schemars(with = "String", extend("format" = "uuid"))]
    pub workspace_id: Option<String>,
    /// What we owe or what we are owed
    #[schemars(with = "String", extend("enum" = ["payable", "receivable"]))]
    pub kind: String,
    /// The day lateness is measured from (default today)
    #[serde(default)]
    #[schemars(with = "Date")]
    pub as_of: Option<Date>,
    #[serde(default)]
    #[schemars(with = "String", extend("format" = "uuid"))]
    pub company_id: Option<String>,
    /// Also the top people, each with their buckets
    #[serde(default)]
    #[schemars(with = "String", extend("enum" = ["person"]))]
    pub group_by: Option<String>,
    /// People listed with group_by (default 10)
    #[serde(default)]
    #[schemars(with = "i64", range(min = 1, max = MAX_PEOPLE))]
    pub limit: Option<i64>,
    /// Whose today: a Brazilian IANA zone or UTC (default America/Sao_Paulo)
    #[serde(default)]
    #[schemars(with = "String")]
    pub tz: Option<String>,
}

impl AgingQuery {
    /// Reads the query pairs against [`AgingParams`]: 400 naming the parameter for an
    /// unknown or repeated one, a missing or unknown `kind`, a date that is not a real
    /// day, a `group_by`, `limit` or zone it does not take, a malformed id.
    pub fn parse(query: &[(String, String)]) -> Result<AgingQuery, ApiError> {
        let params = parse_query::<AgingParams>(query)?;
        Ok(AgingQuery {
            kind: if params.kind == "receivable" { "receivable" } else { "payable" },
            as_of: params.as_of,
            zone: zone_of("tz", params.tz.as_deref())?,
            company_id: params.company_id.as_deref().map(canonical),
            by_person: params.group_by.is_some(),
            limit: params.limit.unwrap_or(10),
        })
    }
}

/// A count of bills and their amount.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Total {
    pub count: i64,
    #[schemars(with = "String")]
    pub amount: Cents,
}

/// One bucket of lateness.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Bucket {
    #[schemars(extend("enum" = ["not_due", "1_30", "31_60", "61_90", "over_90"]))]
    pub bucket: &'static str,
    pub count: i64,
    #[schemars(with = "String")]
    pub amount: Cents,
}

/// One person's pending bills by bucket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PersonAging {
    /// Null: the bills that name no person.
    pub person_id: Option<String>,
    pub person_name: Option<String>,
    pub buckets: Vec<Bucket>,
    pub total: Total,
}

/// Everyone `group_by=person` does not list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Others {
    /// How many people (the bills without one count as one).
    pub people: i64,
    pub buckets: Vec<Bucket>,
    pub total: Total,
}

/// `GET /v1/reports/aging`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Aging {
    #[schemars(extend("enum" = ["payable", "receivable"]))]
    pub kind: &'static str,
    pub as_of: Date,
    pub company_id: Option<String>,
    pub buckets: Vec<Bucket>,
    /// Equals the `pending` of `…/aggregates` for the same `company_id`.
    pub total: Total,
    /// With `group_by=person`: the people with the most pending, largest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub people: Option<Vec<PersonAging>>,
    /// With `group_by=person`: the rest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub others: Option<Others>,
}

/// Five (count, amount) pairs from `first` on, as buckets and their total.
fn buckets_of(row: &OwnedRow, first: usize) -> Result<(Vec<Bucket>, Total), ApiError> {
    let mut total = Total::default();
    let mut buckets = Vec::with_capacity(BUCKETS.len());
    for (i, (name, _)) in BUCKETS.iter().enumerate() {
        let count: i64 = row.try_get(first + 2 * i)?;
        let amount: i64 = row.try_get(first + 2 * i + 1)?;
        total.count += count;
        total.amount = Cents(total.amount.0 + amount);
        buckets.push(Bucket { bucket: name, count, amount: Cents(amount) });
    }
    Ok((buckets, total))
}

pub async fn report(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    query: &[(String, String)],
) -> Result<Aging, ApiError> {
    ctx.authorize(ws, Resource::Reports, Access::Read)?;
    let query = AgingQuery::parse(query)?;
    refs::named(conn, ws, query.company_id.as_deref(), None).await?;
    let as_of = query.as_of.unwrap_or_else(|| Date::today_in(query.zone));

    // The bills counted, day by day (the running totals of `report_open_bills`), each day
    // with its bucket: due after `as_of` − 1 day is not due, after `as_of` − 31 days in
    // 1–30, after − 61 in 31–60, after − 91 in 61–90.
    let mut binds = vec![ws.workspace_id.clone(), query.kind.to_string()];
    let mut bucket = String::from("CASE");
    for (i, (_, days)) in BUCKETS.iter().enumerate().skip(1) {
        let threshold = as_of.add_days(-days).ok_or_else(|| invalid("as_of", "invalid_value", "as_of is too early"))?;
        binds.push(threshold.to_string());
        bucket.push_str(&format!(" WHEN r.due_date > ${} THEN {}", binds.len(), i - 1));
    }
    bucket.push_str(" ELSE 4 END");
    let mut scope = String::from("r.workspace_id = $1 AND r.kind = $2 AND r.bills <> 0");
    if let Some(company) = &query.company_id {
        binds.push(company.clone());
        scope.push_str(&format!(" AND r.company_id = ${}", binds.len()));
    }
    // Each bucket's count and amount, in the buckets' order.
    let sums: Vec<String> = (0..BUCKETS.len())
        .flat_map(|i| {
            [
                format!("CAST(COALESCE(SUM(CASE WHEN x.bucket = {i} THEN x.bills ELSE 0 END), 0) AS BIGINT)"),
                format!("CAST(COALESCE(SUM(CASE WHEN x.bucket = {i} THEN x.amount_cents ELSE 0 END), 0) AS BIGINT)"),
            ]
        })
        .collect();
    // Summed by person and bucket first: each day's bucket is worked out once, and what
    // the buckets' columns below add up is a few rows per person.
    let counted = format!(
        "SELECT r.person_key, {bucket} AS bucket, SUM(r.bills) AS bills, SUM(r.amount_cents) AS amount_cents
           FROM report_open_bills r WHERE {scope} GROUP BY 1, 2"
    );
    let mut answer = Aging {
        kind: query.kind,
        as_of,
        company_id: query.company_id.clone(),
        buckets: BUCKETS.iter().map(|(name, _)| Bucket { bucket: name, count: 0, amount: Cents(0) }).collect(),
        total: Total::default(),
        people: None,
        others: None,
    };
    if !query.by_person {
        let row =
            statement(format!("SELECT {} FROM ({counted}) x", sums.join(", ")), &binds).fetch_one(&mut *conn).await?;
        (answer.buckets, answer.total) = buckets_of(&row, 0)?;
        return Ok(answer);
    }

    // By person, in one pass: each person's buckets, and over every person (a window
    // over the groups, before the cut) the buckets of all and how many people; the
    // people with the most pending first (then by id), their names after the cut.
    let columns = |render: &dyn Fn(usize) -> String| (0..sums.len()).map(render).collect::<Vec<_>>().join(", ");
    let ranked = format!(
        "SELECT g.person_id, {mine}, g.total, g.people, {everyone}, p.name FROM (
             SELECT NULLIF(y.person_key, '') AS person_id, {mine}, y.total,
                    CAST(COUNT(*) OVER () AS BIGINT) AS people, {windows}
               FROM (SELECT x.person_key, {grouped}, CAST(SUM(x.amount_cents) AS BIGINT) AS total
                       FROM ({counted}) x GROUP BY x.person_key) y
              ORDER BY y.total DESC, y.person_key LIMIT {limit}) g
         LEFT JOIN people p ON p.workspace_id = $1 AND p.id = g.person_id
         ORDER BY g.total DESC, COALESCE(g.person_id, '')",
        mine = columns(&|i| format!("s{i}")),
        everyone = columns(&|i| format!("g.a{i}")),
        windows = columns(&|i| format!("CAST(SUM(s{i}) OVER () AS BIGINT) AS a{i}")),
        grouped = columns(&|i| format!("{} AS s{i}", sums[i])),
        limit = query.limit,
    );
    let rows = statement(ranked, &binds).fetch_all(&mut *conn).await?;
    // Columns: the person, their buckets (1..=10), their total, how many people, the
    // buckets of everyone (13..=22), the name.
    let everyone_at = 2 * BUCKETS.len() + 3;
    let people_total: i64 = match rows.first() {
        Some(row) => {
            (answer.buckets, answer.total) = buckets_of(row, everyone_at)?;
            row.try_get(2 * BUCKETS.len() + 2)?
        }
        None => 0,
    };
    let mut people = Vec::new();
    let mut others = (answer.total.count, answer.total.amount.0, [(0i64, 0i64); 5]);
    for (i, b) in answer.buckets.iter().enumerate() {
        others.2[i] = (b.count, b.amount.0);
    }
    for row in rows {
        let (buckets, total) = buckets_of(&row, 1)?;
        for (i, b) in buckets.iter().enumerate() {
            others.2[i].0 -= b.count;
            others.2[i].1 -= b.amount.0;
        }
        others.0 -= total.count;
        others.1 -= total.amount.0;
        people.push(PersonAging {
            person_id: row.try_get(0)?,
            person_name: row.try_get(everyone_at + 2 * BUCKETS.len())?,
            buckets,
            total,
        });
    }
    answer.others = Some(Others {
        people: people_total - people.len() as i64,
        buckets: BUCKETS
            .iter()
            .zip(others.2)
            .map(|((name, _), (count, amount))| Bucket { bucket: name, count, amount: Cents(amount) })
            .collect(),
        total: Total { count: others.0, amount: Cents(others.1) },
    });
    answer.people = Some(people);
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::machinery::period::refusal;

    fn parse(query: &str) -> Result<AgingQuery, ApiError> {
        AgingQuery::parse(&crate::ops::machinery::period::pairs(query))
    }

    #[test]
    fn the_query_has_its_defaults_and_refuses_what_it_cannot_read() {
        let query = parse("kind=payable").unwrap();
        assert_eq!((query.as_of, query.zone, query.by_person, query.limit), (None, Zone::SaoPaulo, false, 10));
        let query = parse("kind=receivable&as_of=2026-03-31&group_by=person&limit=50").unwrap();
        assert_eq!((query.kind, query.by_person, query.limit), ("receivable", true, 50));
        for (bad, field, reason) in [
            ("", "kind", "required"),
            ("kind=bill", "kind", "invalid_value"),
            ("kind=payable&as_of=2026-02-30", "as_of", "invalid_date"),
            ("kind=payable&group_by=category", "group_by", "invalid_value"),
            ("kind=payable&group_by=person&limit=51", "limit", "out_of_range"),
            ("kind=payable&limit=0", "limit", "out_of_range"),
            ("kind=payable&limit=ten", "limit", "wrong_type"),
            ("kind=payable&tz=Europe/Lisbon", "tz", "invalid_value"),
            ("kind=payable&company_id=x", "company_id", "invalid_uuid"),
            ("kind=payable&kind=receivable", "kind", "invalid_value"),
            ("kind=payable&status=pending", "status", "unknown_filter"),
        ] {
            assert_eq!(refusal(parse(bad)), (400, field.to_string(), reason.to_string()), "{bad}");
        }
    }
}
