//! `/v1/reports/…` (scope `finance.reports`, read only; this product's, beyond the real
//! API): answers an owner asks in one question, computed in the database from the same
//! records the lists and totals read.
//!
//! * [`aging`]: what is owed to us or by us, still pending, by how late it is as of a
//!   date — in the buckets a collections desk uses — and who owes or is owed most.
//! * [`income_statement`]: the result of a period, revenue and expenses by the chart of
//!   accounts, on the competence or the cash basis, against the period before.
//!
//! A report is one bounded answer: it never pages. Its money is the 2-decimal strings of
//! every answer; its sums are SQL aggregates (`GROUP BY`, `CASE`), never rows added up
//! here. A `company_id` the workspace does not have (unknown, deleted, another
//! workspace's) is 422 `invalid_reference` naming it, as on every route
//! ([`super::machinery::refs::named`]).

pub mod aging;
pub mod income_statement;

use super::machinery::resource::{reply, Call, Declaration, Op, Running};
use super::machinery::validate::schema_of;
use crate::domain::roles::Resource;
use crate::storage::sql;

/// A statement with its binds, in order (`$1`, `$2`, …).
fn statement(text: String, binds: &[String]) -> sql::Query<'static> {
    binds.iter().fold(sql::query(text), |statement, bind| statement.bind(bind.clone()))
}

fn run_aging(c: Call<'_>) -> Running<'_> {
    Box::pin(async move { reply(aging::report(c.ctx, c.conn, c.ws, c.query).await?) })
}

fn run_income_statement(c: Call<'_>) -> Running<'_> {
    Box::pin(async move { reply(income_statement::report(c.ctx, c.conn, c.ws, c.query).await?) })
}

/// The `/v1/reports` operations.
pub static OPERATIONS: Declaration = Declaration {
    resource: Resource::Reports,
    collection: "/v1/reports",
    operations: &[
        Op::read("/aging", "aging", "Pending payables or receivables by how late they are", run_aging)
            .queries(schema_of::<aging::AgingParams>)
            .answers(200, schema_of::<aging::Aging>)
            .extension("reports: the aging of what is owed")
            .tool(
                "finance_reports_aging",
                "Aging report",
                "What we owe (payable) or are owed (receivable), still pending, as of a date: count and amount not yet due \
and 1–30, 31–60, 61–90, over 90 days late, the total; group_by=person for the top people. For \"what do we owe and how \
late is it\".",
            ),
        Op::read(
            "/income-statement",
            "income_statement",
            "Revenue, expenses and the result of a period by category",
            run_income_statement,
        )
        .queries(schema_of::<income_statement::StatementParams>)
        .answers(200, schema_of::<income_statement::IncomeStatement>)
        .extension("reports: the income statement (DRE)")
        .tool(
            "finance_reports_income_statement",
            "Income statement",
            "Revenue and expenses from `from` to `to` by the category tree (each category with its subtotal), \
uncategorised apart, and the net result; basis competence (bills and transactions by competence date, the default) or \
cash (posted transactions by date); compare=previous_period adds the period before and the change.",
        ),
    ],
};
