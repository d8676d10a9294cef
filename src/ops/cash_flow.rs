//! `GET /v1/cash-flow` (scope `finance.cash_flow`): how the money of the workspace's
//! accounts — or of one company's, or of one account — moved and is expected to move,
//! period by period.
//!
//! * The range `from..=to` is cut into periods of the `granularity` (day, ISO week,
//!   month — the default — or year), the first and last clipped to the range. A range
//!   holds at most the granularity's cap of periods — by day 366 days (`to` at most 365
//!   days after `from`, as every ranged route), 261 weeks, 120 months or 20 years — and a
//!   longer one is refused (400 `out_of_range` naming `to`, [`Period::within`]), so
//!   `truncated` is false (kept for the clients that read it).
//! * A period's `income` and `expenses` are the posted (not pending) transactions
//!   dated in it, credits and debits. A transfer between two accounts both counted is
//!   the money staying home: neither leg counts; a transfer to an account outside the
//!   scope is money leaving it.
//! * `projected_income` and `projected_expenses` are what is expected and not yet
//!   posted, from today on: pending receivables and payables by due date, and pending
//!   (forecast) transactions by date. What is pending and already late (dated before
//!   today) is folded into today's period, and its totals are `retroactive_overdue`.
//!   A pending bill counts for an account when that account is its settlement or, if
//!   it names none, its forecast account.
//! * `net` is income − expenses + projected income − projected expenses, and each
//!   period's `closing_balance` is its `opening_balance` plus its `net`; the next
//!   period opens with it. The first opening balance is the accounts' balance at
//!   `from` (their opening balances and every posted transaction before it), plus, for
//!   a range starting after today, what is expected before `from`.
//! * `current_balance` is the accounts' balance today (posted transactions up to
//!   today); "today" is the date in `tz` (default `America/Sao_Paulo`).
//!
//! Read from the running totals the database keeps by day (migration 0024,
//! `cash_flow_days`, as the reports read theirs): two statements — the accounts'
//! opening balances, then the scope's totals day by day up to the range's end (or
//! today) — folded into periods here in one pass.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::machinery::period::{canonical, zone_of, Period};
use super::machinery::refs;
use super::machinery::resource::{reply, Call, Declaration, Op, Running};
use super::machinery::validate::{parse_query, schema_of};
use super::OpContext;
use crate::domain::buckets::{periods, Granularity};
use crate::domain::dates::{Date, Zone};
use crate::domain::money::Cents;
use crate::domain::roles::{Access, Resource};
use crate::error::ApiError;
use crate::storage::identity::Membership;
use crate::storage::{sql, Conn};

/// A cash-flow query, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CashFlowQuery {
    pub from: Date,
    pub to: Date,
    pub granularity: Granularity,
    pub company_id: Option<String>,
    pub account_id: Option<String>,
    pub zone: Zone,
}

/// `GET /v1/cash-flow`'s query string, as sent (the tool's arguments): the real
/// document's names.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CashFlowParams {
    #[serde(default)]
    #[schemars(with = "String", extend("format" = "uuid"))]
    pub workspace_id: Option<String>,
    /// First day (inclusive)
    pub from: Date,
    /// Last day (inclusive); by day at most from+365 days
    pub to: Date,
    /// Default month
    #[serde(default)]
    #[schemars(with = "String", extend("enum" = ["day", "week", "month", "year"]))]
    pub granularity: Option<String>,
    #[serde(default)]
    #[schemars(with = "String", extend("format" = "uuid"))]
    pub company_id: Option<String>,
    #[serde(default)]
    #[schemars(with = "String", extend("format" = "uuid"))]
    pub account_id: Option<String>,
    /// Whose today: a Brazilian IANA zone or UTC (default America/Sao_Paulo)
    #[serde(default)]
    #[schemars(with = "String")]
    pub tz: Option<String>,
}

impl CashFlowQuery {
    /// Reads the query pairs against [`CashFlowParams`] (400 naming the parameter: an
    /// unknown or repeated one, a missing `from` or `to`, a date that is not a real
    /// day, a granularity it does not know, a malformed id), then the range
    /// ([`Period::within`]: `to` not before `from`, at most the granularity's cap) and
    /// the zone.
    pub fn parse(query: &[(String, String)]) -> Result<CashFlowQuery, ApiError> {
        let params = parse_query::<CashFlowParams>(query)?;
        let granularity = params.granularity.as_deref().and_then(Granularity::parse).unwrap_or(Granularity::Month);
        let (from, to) = Period::within(params.from, params.to, granularity)?;
        Ok(CashFlowQuery {
            from,
            to,
            granularity,
            company_id: params.company_id.as_deref().map(canonical),
            account_id: params.account_id.as_deref().map(canonical),
            zone: zone_of("tz", params.tz.as_deref())?,
        })
    }
}

/// Pending and late flow: what was due before today and is still pending.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Overdue {
    #[schemars(with = "String")]
    pub income: Cents,
    #[schemars(with = "String")]
    pub expenses: Cents,
}

/// One period of the cash flow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Bucket {
    /// `2026-07-04`, `2026-W27`, `2026-07` or `2026`.
    pub bucket: String,
    #[schemars(with = "String")]
    pub income: Cents,
    #[schemars(with = "String")]
    pub expenses: Cents,
    /// income − expenses + projected income − projected expenses.
    #[schemars(with = "String")]
    pub net: Cents,
    #[schemars(with = "String")]
    pub projected_income: Cents,
    #[schemars(with = "String")]
    pub projected_expenses: Cents,
    #[schemars(with = "String")]
    pub opening_balance: Cents,
    /// opening_balance + net.
    #[schemars(with = "String")]
    pub closing_balance: Cents,
    /// Whether the period starts after today.
    pub is_future: bool,
}

/// `GET /v1/cash-flow`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CashFlow {
    #[schemars(extend("enum" = ["day", "week", "month", "year"]))]
    pub granularity: &'static str,
    #[schemars(with = "String")]
    pub current_balance: Cents,
    /// The name of today's period.
    pub today_bucket: String,
    /// Whether the range went past the granularity's cap (366 days, 261 weeks, 120
    /// months, 20 years) and was cut off.
    pub truncated: bool,
    pub retroactive_overdue: Overdue,
    pub buckets: Vec<Bucket>,
}

/// What a query counts, as SQL with its binds after `$1` (the workspace): the accounts
/// (alias `a`) and the running totals (alias `d`, migration 0024) of the workspace, of
/// one company, or of one account.
struct Scope {
    accounts: String,
    days: String,
    binds: Vec<String>,
}

impl Scope {
    fn of(query: &CashFlowQuery) -> Scope {
        let mut accounts = vec!["a.workspace_id = $1".to_string()];
        let mut binds = Vec::new();
        // The movements of the counted accounts but for a transfer leg whose pair is
        // counted too, and the bills owed: every transfer of the workspace is money
        // staying home, a company's transfers between its own accounts too (`internal`),
        // never one of a single account (a transfer's legs are in two).
        let mut days = "d.workspace_id = $1 AND d.reach IN ('own', 'bill')".to_string();
        let mut company_at = None;
        if let Some(company) = &query.company_id {
            binds.push(company.clone());
            let at = binds.len() + 1;
            accounts.push(format!("a.company_id = ${at}"));
            days = format!("d.workspace_id = $1 AND d.company_id = ${at} AND d.reach <> 'internal'");
            company_at = Some(at);
        }
        if let Some(account) = &query.account_id {
            binds.push(account.clone());
            let at = binds.len() + 1;
            accounts.push(format!("a.id = ${at}"));
            // Its movements whatever their company; its bills of the company asked for.
            days = match company_at {
                Some(company) => format!(
                    "d.workspace_id = $1 AND d.account_key = ${at} AND (d.reach <> 'bill' OR d.company_id = ${company})"
                ),
                None => format!("d.workspace_id = $1 AND d.account_key = ${at}"),
            };
        }
        Scope { accounts: accounts.join(" AND "), days, binds }
    }

    /// A statement with the workspace, the scope's binds, then `more`.
    fn query(&self, ws: &Membership, text: String, more: &[String]) -> sql::Query<'static> {
        let mut statement = sql::query(text).bind(ws.workspace_id.clone());
        for bind in self.binds.iter().chain(more) {
            statement = statement.bind(bind.clone());
        }
        statement
    }
}

/// Income and expenses of one day.
#[derive(Debug, Default, Clone, Copy)]
struct Flow {
    income: i64,
    expenses: i64,
}

pub async fn get(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    query: &[(String, String)],
) -> Result<CashFlow, ApiError> {
    ctx.authorize(ws, Resource::CashFlow, Access::Read)?;
    let query = CashFlowQuery::parse(query)?;
    refs::named(conn, ws, query.company_id.as_deref(), query.account_id.as_deref().map(|id| ("account_id", id)))
        .await?;
    let today = Date::today_in(query.zone);
    let (periods, truncated) = periods(query.granularity, query.from, query.to);
    let to = periods.last().map_or(query.to, |p| p.last);
    let scope = Scope::of(&query);
    let n = scope.binds.len() + 1;

    // The accounts' opening balances, then the totals day by day up to the later of
    // `to` and today, posted and expected apart: one pass gives the balance at `from`,
    // the balance today, each period's flow and the forecasts (pending movements by
    // date, pending bills by due date, up to the range's end).
    let seeds: i64 = scope
        .query(
            ws,
            format!(
                "SELECT CAST(COALESCE(SUM(a.opening_balance_cents), 0) AS BIGINT) FROM financial_accounts a WHERE {}",
                scope.accounts
            ),
            &[],
        )
        .fetch_one(&mut *conn)
        .await?
        .try_get(0)?;
    let last_day = to.max(today);
    let days = scope
        .query(
            ws,
            format!(
                "SELECT d.day, CAST(SUM(d.posted_in) AS BIGINT), CAST(SUM(d.posted_out) AS BIGINT),
                        CAST(SUM(d.pending_in) AS BIGINT), CAST(SUM(d.pending_out) AS BIGINT)
                   FROM cash_flow_days d
                  WHERE d.day <= ${last} AND {days}
                  GROUP BY d.day",
                last = n + 1,
                days = scope.days,
            ),
            &[last_day.to_string()],
        )
        .fetch_all(&mut *conn)
        .await?;
    let mut posted: BTreeMap<Date, Flow> = BTreeMap::new();
    let mut expected: BTreeMap<Date, Flow> = BTreeMap::new();
    for row in days {
        let day: Date = row.try_get(0)?;
        let flow = |income: usize, expenses: usize| -> Result<Flow, ApiError> {
            Ok(Flow { income: row.try_get(income)?, expenses: row.try_get(expenses)? })
        };
        posted.insert(day, flow(1, 2)?);
        let pending = flow(3, 4)?;
        if day <= to && (pending.income != 0 || pending.expenses != 0) {
            expected.insert(day, pending);
        }
    }
    let net_of =
        |days: std::ops::RangeTo<Date>| -> i64 { posted.range(days).map(|(_, f)| f.income - f.expenses).sum() };
    let mut opening = seeds + net_of(..query.from);
    let current_balance = Cents(seeds + net_of(..today.add_days(1).unwrap_or(today)));

    // Late flow goes to today; before a range that starts after today, into the opening.
    let mut overdue = Flow::default();
    let mut projected: BTreeMap<Date, Flow> = BTreeMap::new();
    for (day, flow) in expected {
        if day < today {
            overdue.income += flow.income;
            overdue.expenses += flow.expenses;
        } else if day < query.from {
            opening += flow.income - flow.expenses;
        } else {
            projected.insert(day, flow);
        }
    }
    if today < query.from {
        // A range after today opens with the late flow expected by then.
        opening += overdue.income - overdue.expenses;
    } else if today <= to {
        // A range holding today expects the late flow today.
        let at_today = projected.entry(today).or_default();
        at_today.income += overdue.income;
        at_today.expenses += overdue.expenses;
    }

    let sum = |days: &BTreeMap<Date, Flow>, first: Date, last: Date| {
        days.range(first..=last).fold(Flow::default(), |total, (_, flow)| Flow {
            income: total.income + flow.income,
            expenses: total.expenses + flow.expenses,
        })
    };
    let buckets = periods
        .iter()
        .map(|period| {
            let moved = sum(&posted, period.first, period.last);
            let expected = sum(&projected, period.first, period.last);
            let net = moved.income - moved.expenses + expected.income - expected.expenses;
            let bucket = Bucket {
                bucket: period.key.clone(),
                income: Cents(moved.income),
                expenses: Cents(moved.expenses),
                net: Cents(net),
                projected_income: Cents(expected.income),
                projected_expenses: Cents(expected.expenses),
                opening_balance: Cents(opening),
                closing_balance: Cents(opening + net),
                is_future: query.granularity.start(period.first) > today,
            };
            opening += net;
            bucket
        })
        .collect();
    Ok(CashFlow {
        granularity: query.granularity.as_str(),
        current_balance,
        today_bucket: query.granularity.key(query.granularity.start(today)),
        truncated,
        retroactive_overdue: Overdue { income: Cents(overdue.income), expenses: Cents(overdue.expenses) },
        buckets,
    })
}

fn run_get(c: Call<'_>) -> Running<'_> {
    Box::pin(async move { reply(get(c.ctx, c.conn, c.ws, c.query).await?) })
}

/// The `/v1/cash-flow` operation.
pub static OPERATIONS: Declaration = Declaration {
    resource: Resource::CashFlow,
    collection: "/v1/cash-flow",
    operations: &[Op::read("", "get", "Cash flow by period: what moved, what is expected, the balances", run_get)
        .queries(schema_of::<CashFlowParams>)
        .answers(200, schema_of::<CashFlow>)
        .tool(
            "finance_cash_flow_get",
            "Cash flow",
            "Money in and out per day, week, month or year from `from` to `to`: posted income and expenses, projected ones \
(pending bills and forecasts; late ones counted today), opening and closing balances. For how cash looks ahead.",
        )],
};

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(query: &str) -> Result<CashFlowQuery, ApiError> {
        CashFlowQuery::parse(&crate::ops::machinery::period::pairs(query))
    }

    fn refused(query: &str) -> (u16, String, String) {
        crate::ops::machinery::period::refusal(parse(query))
    }

    #[test]
    fn the_query_has_its_defaults_and_refuses_what_it_cannot_read() {
        let query = parse("from=2026-01-01&to=2026-12-31").unwrap();
        assert_eq!((query.granularity, query.zone), (Granularity::Month, Zone::SaoPaulo));
        let query = parse("from=2026-01-01&to=2026-01-01&granularity=day&tz=America/Manaus").unwrap();
        assert_eq!((query.granularity, query.zone), (Granularity::Day, Zone::Fixed(-4)));
        for (bad, field, reason) in [
            ("to=2026-01-01", "from", "required"),
            ("from=2026-01-01", "to", "required"),
            ("from=2026-02-30&to=2026-03-01", "from", "invalid_date"),
            ("from=2026-03-01&to=2026-02-01", "to", "invalid_value"),
            ("from=2026-01-01&to=2026-02-01&granularity=quarter", "granularity", "invalid_value"),
            ("from=2026-01-01&to=2026-02-01&tz=Europe/Lisbon", "tz", "invalid_value"),
            ("from=2026-01-01&to=2026-02-01&account_id=x", "account_id", "invalid_uuid"),
            ("from=2026-01-01&to=2026-02-01&from=2026-01-02", "from", "invalid_value"),
            ("from=2026-01-01&to=2026-02-01&status=paid", "status", "unknown_filter"),
            ("from=2026-01-01&to=2027-01-02&granularity=day", "to", "out_of_range"),
            ("from=2026-01-01&to=2036-01-01", "to", "out_of_range"),
        ] {
            assert_eq!(refused(bad), (400, field.to_string(), reason.to_string()), "{bad}");
        }
    }
}
