//! `GET /v1/reports/income-statement` (tool `finance_reports_income_statement`): the
//! result of a period (the DRE), revenue and expenses by the chart of accounts.
//!
//! * `from`..=`to` (inclusive, at most [`MAX_DAYS`] days: a year, leap or not).
//! * `basis=competence` (the default) counts what the period earned and incurred, by
//!   competence date: the bills (payables and receivables) not cancelled — pending or
//!   settled, for their `amount` — that are owed (a payable waiting for approval is, a
//!   rejected one is not: `approval::OWED`), and the posted
//!   transactions that no bill stands for (by `competence_date`, or by date when it has
//!   none). A bill's settlement transaction, a transaction linked to a bill, or one a
//!   reconciliation matched with bills is the bill's payment: the bill counts, the
//!   payment does not, so nothing is counted twice. Forecast (pending) transactions are
//!   not facts yet: they do not count.
//! * `basis=cash` counts what moved: the posted transactions by date, settlements
//!   included. Its `net_result` plus `transfers_net` is the `net` of
//!   `GET /v1/financial-transactions/aggregates` for the same period and company.
//! * Revenue is what comes in (receivables, credits), expenses what goes out
//!   (payables, debits). Each side lists the categories that have an amount in the
//!   period (or the previous one) with their ancestors, in the tree's order (parents
//!   first, siblings by name): `amount` is the category's own, `total` includes its
//!   descendants (three levels at most). What has no category is `uncategorised`, a line
//!   of its own; a side's `total` is its categories' roots plus the uncategorised.
//! * `net_result` = revenue − expenses. A transfer is neither: money moving between the
//!   workspace's accounts is `transfers_net` (received − sent), zero for the whole
//!   workspace, and for one company what it moved from and to its other companies.
//! * `compare=previous_period` adds the period just before: the same months when the
//!   range is whole calendar months (March → February, a quarter → the quarter before,
//!   a year → the year before), else as many days. Every figure then also has its
//!   `previous_*` and the `change` (current − previous).
//!
//! One aggregate statement — the period and the previous one side by side, grouped by
//! side and category, over the running totals by day that the database's triggers keep
//! (`report_bill_competence`, `report_ledger_competence`, `report_ledger_cash`,
//! migration 0014) — and the workspace's chart of accounts to place the categories; the
//! subtotals are the grouped sums added up the tree.

use std::collections::{BTreeMap, HashMap};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::statement;
use crate::domain::dates::Date;
use crate::domain::money::Cents;
use crate::domain::roles::{Access, Resource};
use crate::error::ApiError;
use crate::ops::machinery::common::invalid;
use crate::ops::machinery::period::canonical;
use crate::ops::machinery::refs;
use crate::ops::machinery::validate::parse_query;
use crate::ops::OpContext;
use crate::storage::identity::Membership;
use crate::storage::Conn;

/// The longest period a statement covers, in days counted with both ends: every ranged
/// route's.
pub use crate::ops::machinery::period::MAX_DAYS;

/// Which facts a statement counts, and by which date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basis {
    /// Bills and the transactions no bill stands for, by competence date.
    Competence,
    /// Posted transactions, by the day they happened.
    Cash,
}

impl Basis {
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::Competence => "competence",
            Basis::Cash => "cash",
        }
    }
}

/// An income-statement query, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatementQuery {
    pub from: Date,
    pub to: Date,
    pub basis: Basis,
    pub company_id: Option<String>,
    /// The period compared with, when asked.
    pub previous: Option<(Date, Date)>,
}

/// `GET /v1/reports/income-statement`'s query string, as sent (the tool's arguments).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatementParams {
    #[serde(default)]
    #[schemars(with = "String", extend("format" = "uuid"))]
    pub workspace_id: Option<String>,
    /// First day (inclusive)
    pub from: Date,
    /// Last day (inclusive), at most 365 days after from
    pub to: Date,
    /// Default competence
    #[serde(default)]
    #[schemars(with = "String", extend("enum" = ["competence", "cash"]))]
    pub basis: Option<String>,
    #[serde(default)]
    #[schemars(with = "String", extend("format" = "uuid"))]
    pub company_id: Option<String>,
    /// Also the period before and the change
    #[serde(default)]
    #[schemars(with = "String", extend("enum" = ["previous_period"]))]
    pub compare: Option<String>,
}

impl StatementQuery {
    /// Reads the query pairs against [`StatementParams`] (400 naming the parameter for
    /// an unknown or repeated one, a missing `from` or `to`, a date that is not a real
    /// day, a basis or comparison it does not know, a malformed id), then the range: `to`
    /// not before `from` and at most [`MAX_DAYS`] days ([`crate::ops::machinery::period::Period`]).
    pub fn parse(query: &[(String, String)]) -> Result<StatementQuery, ApiError> {
        let params = parse_query::<StatementParams>(query)?;
        let (from, to) = crate::ops::machinery::period::Period::capped(params.from, params.to)?;
        let previous = match params.compare {
            Some(_) => {
                Some(previous_period(from, to).ok_or_else(|| invalid("from", "invalid_value", "from is too early"))?)
            }
            None => None,
        };
        let basis = if params.basis.as_deref() == Some("cash") { Basis::Cash } else { Basis::Competence };
        Ok(StatementQuery { from, to, basis, company_id: params.company_id.as_deref().map(canonical), previous })
    }
}

/// The period just before `from..=to`: the same number of calendar months when the
/// range is whole months, else the same number of days.
pub fn previous_period(from: Date, to: Date) -> Option<(Date, Date)> {
    let last = from.add_days(-1)?;
    let whole_months = from.day() == 1 && to.add_days(1)?.day() == 1;
    let first = if whole_months {
        let months = (i64::from(to.year()) * 12 + i64::from(to.month()))
            - (i64::from(from.year()) * 12 + i64::from(from.month()))
            + 1;
        from.add_months(-months)?
    } else {
        from.add_days(-(from.days_until(to) + 1))?
    };
    Some((first, last))
}

/// A period's bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Period {
    pub from: Date,
    pub to: Date,
}

/// An amount of the period, and with `compare` the previous period's and the change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Figure {
    #[schemars(with = "String")]
    pub amount: Cents,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub previous_amount: Option<Cents>,
    /// amount − previous_amount.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub change: Option<Cents>,
}

impl Figure {
    fn of(current: i64, previous: i64, compare: bool) -> Figure {
        Figure {
            amount: Cents(current),
            previous_amount: compare.then_some(Cents(previous)),
            change: compare.then_some(Cents(current - previous)),
        }
    }
}

/// One category of the chart on one side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Line {
    pub category_id: String,
    pub parent_id: Option<String>,
    pub name: String,
    /// 1 (a root) to 3.
    pub level: i64,
    /// The category's own records.
    pub amount: Figure,
    /// Its own and its descendants'.
    pub total: Figure,
}

/// Revenue or expenses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Side {
    pub total: Figure,
    /// Parents before their children, siblings by name.
    pub categories: Vec<Line>,
    pub uncategorised: Figure,
}

/// `GET /v1/reports/income-statement`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct IncomeStatement {
    #[schemars(extend("enum" = ["competence", "cash"]))]
    pub basis: &'static str,
    pub from: Date,
    pub to: Date,
    pub company_id: Option<String>,
    /// With `compare=previous_period`: the period compared with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous: Option<Period>,
    pub revenue: Side,
    pub expenses: Side,
    /// revenue − expenses.
    pub net_result: Figure,
    /// Transfers received − sent: zero for the workspace; for one company, what moved
    /// between it and its other companies.
    pub transfers_net: Figure,
}

/// A category of the chart.
struct Category {
    parent_id: Option<String>,
    name: String,
    level: i64,
}

/// The current and previous cents of one key.
type Sums = (i64, i64);

/// One side's tree: the chart's categories with an amount, and their ancestors.
fn side(own: &HashMap<Option<String>, Sums>, chart: &HashMap<String, Category>, compare: bool) -> Side {
    // Each category's own sums go to it and up its ancestors; an id the chart does not
    // hold (none should) counts as uncategorised.
    let mut totals: HashMap<&str, Sums> = HashMap::new();
    let mut uncategorised = own.get(&None).copied().unwrap_or_default();
    for (id, sums) in own {
        let Some(id) = id else { continue };
        if !chart.contains_key(id) {
            uncategorised.0 += sums.0;
            uncategorised.1 += sums.1;
            continue;
        }
        let mut at = Some(id.as_str());
        let mut depth = 0;
        while let Some(node) = at.filter(|_| depth < 3) {
            let total = totals.entry(node).or_default();
            total.0 += sums.0;
            total.1 += sums.1;
            at = chart.get(node).and_then(|c| c.parent_id.as_deref()).filter(|p| chart.contains_key(*p));
            depth += 1;
        }
    }
    // Children by parent, siblings by name then id; then parents before their children.
    let mut children: BTreeMap<Option<&str>, Vec<(&str, &str)>> = BTreeMap::new();
    for id in totals.keys() {
        let category = &chart[*id];
        let parent = category.parent_id.as_deref().filter(|p| totals.contains_key(p));
        children.entry(parent).or_default().push((category.name.as_str(), id));
    }
    for siblings in children.values_mut() {
        siblings.sort();
    }
    let mut lines = Vec::with_capacity(totals.len());
    let mut stack: Vec<&str> =
        children.get(&None).map(|s| s.iter().rev().map(|(_, id)| *id).collect()).unwrap_or_default();
    let mut roots = (0, 0);
    while let Some(id) = stack.pop() {
        let category = &chart[id];
        let mine = own.get(&Some(id.to_string())).copied().unwrap_or_default();
        let total = totals[id];
        if category.parent_id.as_deref().is_none_or(|p| !totals.contains_key(p)) {
            roots.0 += total.0;
            roots.1 += total.1;
        }
        lines.push(Line {
            category_id: id.to_string(),
            parent_id: category.parent_id.clone(),
            name: category.name.clone(),
            level: category.level,
            amount: Figure::of(mine.0, mine.1, compare),
            total: Figure::of(total.0, total.1, compare),
        });
        if let Some(kids) = children.get(&Some(id)) {
            stack.extend(kids.iter().rev().map(|(_, id)| *id));
        }
    }
    Side {
        total: Figure::of(roots.0 + uncategorised.0, roots.1 + uncategorised.1, compare),
        categories: lines,
        uncategorised: Figure::of(uncategorised.0, uncategorised.1, compare),
    }
}

pub async fn report(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    query: &[(String, String)],
) -> Result<IncomeStatement, ApiError> {
    ctx.authorize(ws, Resource::Reports, Access::Read)?;
    let query = StatementQuery::parse(query)?;
    refs::named(conn, ws, query.company_id.as_deref(), None).await?;
    let compare = query.previous.is_some();
    let first = query.previous.map_or(query.from, |(first, _)| first);

    // $1 workspace, $2..$3 the days read (the previous period's first to `to`), $4 the
    // period's first day (before it: the previous period), $5 the company.
    let mut binds = vec![ws.workspace_id.clone(), first.to_string(), query.to.to_string(), query.from.to_string()];
    let mut company = "";
    if let Some(id) = &query.company_id {
        binds.push(id.clone());
        company = " AND r.company_id = $5";
    }
    // The running totals by day (migration 0014, kept by the database's triggers): the
    // posted movements by date for the cash basis; for the competence basis the bills
    // and the movements no bill stands for, by competence day.
    let ledger = |table: &str| {
        format!(
            "SELECT r.side, NULLIF(r.category_key, '') AS category_id, r.day, r.amount_cents
               FROM {table} r
              WHERE r.workspace_id = $1 AND r.day >= $2 AND r.day <= $3{company}"
        )
    };
    let facts = match query.basis {
        Basis::Cash => ledger("report_ledger_cash"),
        Basis::Competence => format!(
            "SELECT CASE WHEN r.kind = 'receivable' THEN 'revenue' ELSE 'expense' END AS side,
                    NULLIF(r.category_key, '') AS category_id, r.day, r.amount_cents
               FROM report_bill_competence r
              WHERE r.workspace_id = $1 AND r.day >= $2 AND r.day <= $3{company}
             UNION ALL
             {}",
            ledger("report_ledger_competence")
        ),
    };
    let rows = statement(
        format!(
            "SELECT x.side, x.category_id,
                    CAST(COALESCE(SUM(CASE WHEN x.day >= $4 THEN x.amount_cents ELSE 0 END), 0) AS BIGINT),
                    CAST(COALESCE(SUM(CASE WHEN x.day < $4 THEN x.amount_cents ELSE 0 END), 0) AS BIGINT)
               FROM ({facts}) x
              GROUP BY x.side, x.category_id"
        ),
        &binds,
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut by_side: HashMap<String, HashMap<Option<String>, Sums>> = HashMap::new();
    for row in rows {
        let side: String = row.try_get(0)?;
        let category: Option<String> = row.try_get(1)?;
        by_side.entry(side).or_default().insert(category, (row.try_get(2)?, row.try_get(3)?));
    }

    // The chart of accounts, to place each category and its ancestors.
    let mut chart = HashMap::new();
    for row in
        statement("SELECT id, parent_id, name, level FROM categories WHERE workspace_id = $1".to_string(), &binds[..1])
            .fetch_all(&mut *conn)
            .await?
    {
        let level: i64 = row.try_get(3)?;
        chart.insert(
            row.try_get::<String, _>(0)?,
            Category { parent_id: row.try_get(1)?, name: row.try_get(2)?, level },
        );
    }

    let empty = HashMap::new();
    let revenue = side(by_side.get("revenue").unwrap_or(&empty), &chart, compare);
    let expenses = side(by_side.get("expense").unwrap_or(&empty), &chart, compare);
    let sum_of = |name: &str| -> Sums {
        by_side.get(name).map_or((0, 0), |sums| sums.values().fold((0, 0), |a, s| (a.0 + s.0, a.1 + s.1)))
    };
    let (received, sent) = (sum_of("transfer_in"), sum_of("transfer_out"));
    let net = |current: Figure, previous: Figure| {
        (
            current.amount.0 - previous.amount.0,
            current.previous_amount.unwrap_or_default().0 - previous.previous_amount.unwrap_or_default().0,
        )
    };
    let (net_now, net_before) = net(revenue.total, expenses.total);
    Ok(IncomeStatement {
        basis: query.basis.as_str(),
        from: query.from,
        to: query.to,
        company_id: query.company_id.clone(),
        previous: query.previous.map(|(from, to)| Period { from, to }),
        net_result: Figure::of(net_now, net_before, compare),
        transfers_net: Figure::of(received.0 - sent.0, received.1 - sent.1, compare),
        revenue,
        expenses,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::machinery::period::refusal;

    fn parse(query: &str) -> Result<StatementQuery, ApiError> {
        StatementQuery::parse(&crate::ops::machinery::period::pairs(query))
    }

    fn day(text: &str) -> Date {
        Date::parse(text).unwrap()
    }

    #[test]
    fn the_previous_period_is_the_same_months_or_the_same_days_before() {
        for (from, to, previous) in [
            ("2026-03-01", "2026-03-31", ("2026-02-01", "2026-02-28")),
            ("2026-04-01", "2026-06-30", ("2026-01-01", "2026-03-31")),
            ("2026-01-01", "2026-12-31", ("2025-01-01", "2025-12-31")),
            ("2026-03-01", "2026-03-01", ("2026-02-28", "2026-02-28")),
            ("2026-03-10", "2026-03-19", ("2026-02-28", "2026-03-09")),
            ("2026-02-01", "2026-02-28", ("2026-01-01", "2026-01-31")),
        ] {
            assert_eq!(previous_period(day(from), day(to)), Some((day(previous.0), day(previous.1))), "{from}..{to}");
        }
    }

    #[test]
    fn the_query_has_its_defaults_and_refuses_what_it_cannot_read() {
        let query = parse("from=2026-01-01&to=2026-12-31").unwrap();
        assert_eq!((query.basis, query.previous), (Basis::Competence, None));
        let query = parse("from=2024-01-01&to=2024-12-31&basis=cash&compare=previous_period").unwrap();
        assert_eq!((query.basis, query.previous), (Basis::Cash, Some((day("2023-01-01"), day("2023-12-31")))));
        for (bad, field, reason) in [
            ("to=2026-01-31", "from", "required"),
            ("from=2026-01-01", "to", "required"),
            ("from=2026-02-30&to=2026-03-01", "from", "invalid_date"),
            ("from=2026-03-01&to=2026-02-01", "to", "invalid_value"),
            ("from=2026-01-01&to=2027-01-02", "to", "out_of_range"),
            ("from=2026-01-01&to=2026-02-01&basis=accrual", "basis", "invalid_value"),
            ("from=2026-01-01&to=2026-02-01&compare=last_year", "compare", "invalid_value"),
            ("from=2026-01-01&to=2026-02-01&company_id=x", "company_id", "invalid_uuid"),
            ("from=2026-01-01&to=2026-02-01&to=2026-02-02", "to", "invalid_value"),
            ("from=2026-01-01&to=2026-02-01&status=paid", "status", "unknown_filter"),
        ] {
            assert_eq!(refusal(parse(bad)), (400, field.to_string(), reason.to_string()), "{bad}");
        }
    }
}
