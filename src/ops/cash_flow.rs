//! `GET /v1/cash-flow` (scope `finance.cash_flow`): how the money of the workspace's
//! accounts — or of one company's, or of one account — moved and is expected to move,
//! period by period.
//!
//! * The range `from..=to` is cut into periods of the `granularity` (day, ISO week,
//!   month — the default — or year), the first and last clipped to the range; past the
//!   granularity's cap the range is cut off and `truncated` is true.
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
//! Computed by three aggregate statements — the accounts' opening balances, the ledger
//! day by day (posted and pending apart), the pending bills day by day — which read
//! covering indexes (migration 0009) and are grouped by day, and folded into periods
//! here: one pass over the ledger up to the range's end (or today).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{json, Value};

use super::common::invalid;
use super::period::{date_of, query_id, range_of, zone_of};
use super::resource::{reply, Call, Declaration, Op, Running};
use super::validate::schema_of;
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

impl CashFlowQuery {
    /// The query's parameters as a schema (the tool's arguments), the workspace beside
    /// them.
    pub fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "workspace_id": { "type": "string", "format": "uuid" },
                "from": { "type": "string", "format": "date", "description": "First day (inclusive)" },
                "to": { "type": "string", "format": "date", "description": "Last day (inclusive)" },
                "granularity": { "type": "string", "enum": Granularity::NAMES, "description": "Default month" },
                "company_id": { "type": "string", "format": "uuid" },
                "account_id": { "type": "string", "format": "uuid" },
                "tz": { "type": "string", "description": "Whose today: a Brazilian IANA zone or UTC (default America/Sao_Paulo)" },
            },
            "required": ["from", "to"],
            "additionalProperties": false,
        })
    }

    /// Reads the query pairs (`workspace_id` is the door's). 400 for an unknown or
    /// repeated parameter, a missing `from` or `to`, a date that is not a real day, `to`
    /// before `from`, a granularity or zone it does not know, a malformed id.
    pub fn parse(query: &[(String, String)]) -> Result<CashFlowQuery, ApiError> {
        let (mut from, mut to, mut granularity, mut company_id, mut account_id, mut zone) =
            (None, None, None, None, None, None);
        for (key, value) in query {
            let key = key.as_str();
            let repeated =
                match key {
                    "workspace_id" => false,
                    "from" => from.replace(date_of(key, value)?).is_some(),
                    "to" => to.replace(date_of(key, value)?).is_some(),
                    "granularity" => granularity
                        .replace(Granularity::parse(value).ok_or_else(|| {
                            invalid(key, "invalid_value", "granularity must be day, week, month or year")
                        })?)
                        .is_some(),
                    "company_id" => company_id.replace(query_id(key, value)?).is_some(),
                    "account_id" => account_id.replace(query_id(key, value)?).is_some(),
                    "tz" => zone.replace(zone_of(key, value)?).is_some(),
                    _ => return Err(invalid(key, "unknown_filter", "Unknown parameter")),
                };
            if repeated {
                return Err(invalid(key, "invalid_value", "A parameter appears twice"));
            }
        }
        let (from, to) = range_of(from, to)?;
        Ok(CashFlowQuery {
            from,
            to,
            granularity: granularity.unwrap_or(Granularity::Month),
            company_id,
            account_id,
            zone: zone.unwrap_or(Zone::SaoPaulo),
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

/// The accounts a query counts, as SQL on the alias `a` with its binds after `$1` (the
/// workspace): the workspace's, one company's, or one account.
struct Scope {
    accounts: String,
    bills: String,
    transactions: String,
    binds: Vec<String>,
}

impl Scope {
    fn of(query: &CashFlowQuery) -> Scope {
        let mut accounts = vec!["a.workspace_id = $1".to_string()];
        let mut bills = vec!["b.workspace_id = $1".to_string(), crate::ops::bills::approval::owed("b")];
        let mut binds = Vec::new();
        // The transactions (alias `t`) of the counted accounts, but for a transfer leg
        // whose other leg is counted too: every transfer of the workspace, a company's
        // transfers between its own accounts, never one of a single account (a
        // transfer's legs are in two).
        let mut transactions = "t.workspace_id = $1 AND t.transfer_id IS NULL".to_string();
        if let Some(company) = &query.company_id {
            binds.push(company.clone());
            let at = binds.len() + 1;
            accounts.push(format!("a.company_id = ${at}"));
            bills.push(format!("b.company_id = ${at}"));
            transactions = format!(
                "t.workspace_id = $1 AND t.company_id = ${at} AND NOT (t.transfer_id IS NOT NULL AND EXISTS \
                 (SELECT 1 FROM financial_transactions o WHERE o.workspace_id = $1 AND o.transfer_id = t.transfer_id \
                  AND o.id <> t.id AND o.company_id = ${at}))"
            );
        }
        if let Some(account) = &query.account_id {
            binds.push(account.clone());
            let at = binds.len() + 1;
            accounts.push(format!("a.id = ${at}"));
            bills.push(format!("COALESCE(b.financial_account_id, b.expected_account_id) = ${at}"));
            transactions = format!("t.workspace_id = $1 AND t.financial_account_id = ${at}");
        }
        Scope { accounts: accounts.join(" AND "), bills: bills.join(" AND "), transactions, binds }
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

/// The workspace's company or account a query names exists there (404 otherwise, as
/// for an id of another workspace).
async fn check_scope(conn: &mut Conn, ws: &Membership, query: &CashFlowQuery) -> Result<(), ApiError> {
    if let Some(company) = &query.company_id {
        let found = sql::query("SELECT 1 FROM companies WHERE workspace_id = $1 AND id = $2")
            .bind(&ws.workspace_id)
            .bind(company)
            .fetch_optional(&mut *conn)
            .await?;
        if found.is_none() {
            return Err(ApiError::not_found("Company"));
        }
    }
    if let Some(account) = &query.account_id {
        let found = sql::query("SELECT company_id FROM financial_accounts WHERE workspace_id = $1 AND id = $2")
            .bind(&ws.workspace_id)
            .bind(account)
            .fetch_optional(&mut *conn)
            .await?;
        let company: Option<String> = found.map(|row| row.try_get(0)).transpose()?;
        match company {
            Some(company) if query.company_id.as_ref().is_none_or(|c| *c == company) => {}
            _ => return Err(ApiError::not_found("Financial account")),
        }
    }
    Ok(())
}

/// Income and expenses of one day.
#[derive(Debug, Default, Clone, Copy)]
struct Flow {
    income: i64,
    expenses: i64,
}

/// `(day, income, expenses)` rows into a map by day.
fn by_day(rows: Vec<crate::storage::OwnedRow>) -> Result<BTreeMap<Date, Flow>, ApiError> {
    let mut out: BTreeMap<Date, Flow> = BTreeMap::new();
    for row in rows {
        let day: Date = row.try_get(0)?;
        let flow = out.entry(day).or_default();
        flow.income += row.try_get::<i64, _>(1)?;
        flow.expenses += row.try_get::<i64, _>(2)?;
    }
    Ok(out)
}

pub async fn get(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    query: &[(String, String)],
) -> Result<CashFlow, ApiError> {
    ctx.authorize(ws, Resource::CashFlow, Access::Read)?;
    let query = CashFlowQuery::parse(query)?;
    check_scope(conn, ws, &query).await?;
    let today = Date::today_in(query.zone);
    let (periods, truncated) = periods(query.granularity, query.from, query.to);
    let to = periods.last().map_or(query.to, |p| p.last);
    let scope = Scope::of(&query);
    let n = scope.binds.len() + 1;

    // The accounts' opening balances, then the ledger day by day up to the later of
    // `to` and today, posted and pending apart: one pass over the ledger gives the
    // balance at `from`, the balance today, each period's flow and the forecasts.
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
    let ledger = scope
        .query(
            ws,
            format!(
                "SELECT t.occurred_at,
                        CAST(SUM(CASE WHEN t.is_pending = 0 AND t.transaction_type = 'credit' THEN t.amount_cents ELSE 0 END) AS BIGINT),
                        CAST(SUM(CASE WHEN t.is_pending = 0 AND t.transaction_type = 'debit' THEN t.amount_cents ELSE 0 END) AS BIGINT),
                        CAST(SUM(CASE WHEN t.is_pending = 1 AND t.transaction_type = 'credit' THEN t.amount_cents ELSE 0 END) AS BIGINT),
                        CAST(SUM(CASE WHEN t.is_pending = 1 AND t.transaction_type = 'debit' THEN t.amount_cents ELSE 0 END) AS BIGINT)
                   FROM financial_transactions t
                  WHERE t.occurred_at <= ${last} AND {transactions}
                  GROUP BY t.occurred_at",
                last = n + 1,
                transactions = scope.transactions,
            ),
            &[last_day.to_string()],
        )
        .fetch_all(&mut *conn)
        .await?;
    let mut posted: BTreeMap<Date, Flow> = BTreeMap::new();
    let mut expected: BTreeMap<Date, Flow> = BTreeMap::new();
    for row in ledger {
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

    // What else is expected, day by day up to the range's end: pending bills by due date.
    let bills = scope
        .query(
            ws,
            format!(
                "SELECT b.due_date,
                        CAST(SUM(CASE WHEN b.kind = 'receivable' THEN b.amount_cents ELSE 0 END) AS BIGINT),
                        CAST(SUM(CASE WHEN b.kind = 'payable' THEN b.amount_cents ELSE 0 END) AS BIGINT)
                   FROM billings b
                  WHERE b.status = 'pending' AND b.due_date <= ${to} AND {bills}
                  GROUP BY b.due_date",
                to = n + 1,
                bills = scope.bills,
            ),
            &[to.to_string()],
        )
        .fetch_all(&mut *conn)
        .await?;
    for (day, flow) in by_day(bills)? {
        let at = expected.entry(day).or_default();
        at.income += flow.income;
        at.expenses += flow.expenses;
    }

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
        .queries(CashFlowQuery::schema)
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
        CashFlowQuery::parse(&crate::ops::period::pairs(query))
    }

    fn refused(query: &str) -> (u16, String, String) {
        let err = parse(query).expect_err(query);
        let details = err.details.clone().unwrap_or_default();
        (
            err.status().as_u16(),
            details["field"].as_str().unwrap_or("").to_string(),
            details["reason"].as_str().unwrap_or("").to_string(),
        )
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
        ] {
            assert_eq!(refused(bad), (400, field.to_string(), reason.to_string()), "{bad}");
        }
    }
}
