//! `GET /v1/reconciliations/suggestions` (scope `finance.reconciliations`, read only;
//! this product's, beyond the real API): for the unreconciled transactions of one
//! account in a period, the pending bills that could be what each paid — the step an
//! agent takes before `POST /v1/reconciliations`. Nothing changes.
//!
//! * A transaction is a candidate when it is posted, entered by the user (not a
//!   settlement's own), not a transfer leg, and in no reconciliation; `from`..=`to` on
//!   its date, at most [`MAX_DAYS`] days.
//! * A bill matches it when it is pending, in no reconciliation, of the account's
//!   company, of the transaction's polarity (a debit pays a payable, a credit a
//!   receivable), of the same amount to the cent, and due within [`WINDOW_DAYS`] days of
//!   the transaction's date.
//! * Each match has a score (0–100) and the reasons for it: `same_amount` (50),
//!   `due_date_close` (up to 30, 3 less per day apart), `same_person` (15: the
//!   transaction names the bill's person) and `document_in_transaction` (15: the bill's
//!   document or number appears in the transaction's description, bank description or
//!   document). A transaction's matches come best first (then by due date and id), five
//!   at most; every transaction looked at comes, by date and id, with `matches: []`
//!   when nothing matches it ("checked, nothing matches" is not "not checked"), and
//!   the answer counts them: `examined`, `matched`, `unmatched`.
//!
//! One statement after the account's check: the period's candidate transactions
//! (bounded by `limit`) and the pending bills of their amounts in the widened period.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::machinery::period::{canonical, Period};
use super::machinery::refs;
use super::machinery::validate::parse_query;
use super::OpContext;
use crate::domain::dates::Date;
use crate::domain::money::Cents;
use crate::domain::roles::{Access, Resource};
use crate::error::ApiError;
use crate::storage::identity::Membership;
use crate::storage::{sql, Conn};

/// The longest period asked for, in days counted with both ends: every ranged route's.
pub use super::machinery::period::MAX_DAYS;
/// How far from a transaction's date a bill may be due.
pub const WINDOW_DAYS: i64 = 10;
/// The most matches of one transaction.
const MAX_MATCHES: usize = 5;

/// `GET /v1/reconciliations/suggestions`'s query string, as sent (the tool's arguments).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuggestParams {
    #[serde(default)]
    #[schemars(with = "String", extend("format" = "uuid"))]
    pub workspace_id: Option<String>,
    /// The bank account whose statement is matched
    #[schemars(extend("format" = "uuid"))]
    pub account_id: String,
    pub from: Date,
    /// At most 365 days after from
    pub to: Date,
    /// Transactions looked at, oldest first (default 100)
    #[serde(default)]
    #[schemars(with = "i64", range(min = 1, max = 200))]
    pub limit: Option<i64>,
}

/// A suggestions query, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuggestQuery {
    pub account_id: String,
    pub from: Date,
    pub to: Date,
    /// How many transactions are looked at (1–200, default 100), oldest first.
    pub limit: i64,
}

impl SuggestQuery {
    /// Reads the query pairs against [`SuggestParams`] (400 naming the parameter), then
    /// the range: `to` not before `from`, at most [`MAX_DAYS`] days
    /// ([`Period::capped`]).
    pub fn parse(query: &[(String, String)]) -> Result<SuggestQuery, ApiError> {
        let params = parse_query::<SuggestParams>(query)?;
        let (from, to) = Period::capped(params.from, params.to)?;
        Ok(SuggestQuery { account_id: canonical(&params.account_id), from, to, limit: params.limit.unwrap_or(100) })
    }
}

/// A pending bill that could be what a transaction paid.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Match {
    #[schemars(extend("enum" = ["payable", "receivable"]))]
    pub kind: String,
    pub billing_id: String,
    pub description: String,
    #[schemars(with = "String")]
    pub amount: Cents,
    pub due_date: Date,
    pub person_name: Option<String>,
    /// 0–100: how likely the match is.
    pub score: u8,
    /// same_amount, due_date_close, same_person, document_in_transaction.
    pub reasons: Vec<&'static str>,
}

/// An unreconciled transaction and its matches.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Suggestion {
    pub transaction_id: String,
    pub description: String,
    #[schemars(with = "String")]
    pub amount: Cents,
    pub occurred_at: Date,
    #[schemars(extend("enum" = ["debit", "credit"]))]
    pub transaction_type: String,
    pub matches: Vec<Match>,
}

/// `GET /v1/reconciliations/suggestions`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Suggestions {
    /// Every transaction looked at, each with its matches (`[]` when none).
    pub data: Vec<Suggestion>,
    /// How many transactions were looked at, and whether the period holds more.
    pub examined: i64,
    /// How many of them have a match, and how many none.
    pub matched: i64,
    pub unmatched: i64,
    pub more: bool,
}

/// A transaction looked at.
struct Candidate {
    suggestion: Suggestion,
    person_id: Option<String>,
    text: String,
}

/// The reasons and score of `bill` for `candidate` (the amount already equal).
fn score(
    candidate: &Candidate,
    days_apart: i64,
    person_id: Option<&str>,
    documents: &[String],
) -> (u8, Vec<&'static str>) {
    let mut reasons = vec!["same_amount"];
    let mut score: i64 = 50;
    let close = 30 - 3 * days_apart.abs();
    if close > 0 {
        reasons.push("due_date_close");
        score += close;
    }
    if person_id.is_some() && candidate.person_id.as_deref() == person_id {
        reasons.push("same_person");
        score += 15;
    }
    if documents.iter().any(|d| d.len() >= 3 && candidate.text.contains(&d.to_lowercase())) {
        reasons.push("document_in_transaction");
        score += 15;
    }
    (score.min(100) as u8, reasons)
}

pub async fn suggest(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    query: &[(String, String)],
) -> Result<Suggestions, ApiError> {
    ctx.authorize(ws, Resource::Reconciliations, Access::Read)?;
    let query = SuggestQuery::parse(query)?;
    let company = refs::named(conn, ws, None, Some(("account_id", &query.account_id)))
        .await?
        .map(|company| company.id)
        .ok_or_else(ApiError::internal)?;
    // One statement: the period's candidate transactions (`limit` + 1, to tell whether
    // the period holds more), then the pending bills of the first `limit`'s amounts in
    // the widened period, told apart by the first column.
    let widened =
        (query.from.add_days(-WINDOW_DAYS).unwrap_or(query.from), query.to.add_days(WINDOW_DAYS).unwrap_or(query.to));
    let rows = sql::query(format!(
        "WITH candidates AS (
             SELECT t.id, t.description, t.amount_cents, t.occurred_at, t.transaction_type, t.person_id,
                    COALESCE(t.bank_description, '') AS bank, COALESCE(t.document, '') AS document
               FROM financial_transactions t
              WHERE t.workspace_id = $1 AND t.financial_account_id = $2 AND t.occurred_at >= $3 AND t.occurred_at <= $4
                AND t.is_pending = 0 AND t.auto_created = 0 AND t.billing_id IS NULL AND t.transfer_id IS NULL
                AND NOT EXISTS (SELECT 1 FROM reconciliation_members m
                                 WHERE m.workspace_id = t.workspace_id AND m.member_type = 'transaction' AND m.member_id = t.id)
              ORDER BY t.occurred_at, t.id
              LIMIT $5
         )
         SELECT CAST(0 AS BIGINT), c.id, c.description, c.amount_cents, c.occurred_at, c.transaction_type, c.person_id, c.bank, c.document,
                CAST(NULL AS TEXT)
           FROM candidates c
         UNION ALL
         SELECT CAST(1 AS BIGINT), b.id, b.description, b.amount_cents, b.due_date, b.kind, b.person_id, COALESCE(b.document, ''),
                COALESCE(b.document_number, ''), p.name
           FROM billings b LEFT JOIN people p ON p.id = b.person_id
          WHERE b.workspace_id = $1 AND b.company_id = $6 AND b.status = 'pending' AND {official}
            AND b.due_date >= $7 AND b.due_date <= $8
            AND b.amount_cents IN (SELECT f.amount_cents FROM (SELECT c.amount_cents FROM candidates c
                                                                 ORDER BY c.occurred_at, c.id LIMIT $9) f)
            AND NOT EXISTS (SELECT 1 FROM reconciliation_members m
                             WHERE m.workspace_id = b.workspace_id AND m.member_type = 'billing' AND m.member_id = b.id)
          ORDER BY 1, 5, 2",
        official = crate::ops::bills::approval::official("b"),
    ))
    .bind(&ws.workspace_id)
    .bind(&query.account_id)
    .bind(query.from)
    .bind(query.to)
    .bind(query.limit + 1)
    .bind(&company)
    .bind(widened.0)
    .bind(widened.1)
    .bind(query.limit)
    .fetch_all(&mut *conn)
    .await?;
    let (mut transactions, mut bills) = (Vec::new(), Vec::new());
    for row in &rows {
        match row.try_get::<i64, _>(0)? {
            0 => transactions.push(row),
            _ => bills.push(row),
        }
    }
    let more = transactions.len() as i64 > query.limit;
    let mut candidates = Vec::with_capacity(transactions.len());
    for row in transactions.iter().take(query.limit as usize) {
        let description: String = row.try_get(2)?;
        let bank: String = row.try_get(7)?;
        let document: String = row.try_get(8)?;
        candidates.push(Candidate {
            text: format!("{description} {bank} {document}").to_lowercase(),
            person_id: row.try_get(6)?,
            suggestion: Suggestion {
                transaction_id: row.try_get(1)?,
                description,
                amount: row.try_get(3)?,
                occurred_at: row.try_get(4)?,
                transaction_type: row.try_get(5)?,
                matches: Vec::new(),
            },
        });
    }
    for bill in &bills {
        let kind: String = bill.try_get(5)?;
        let amount: Cents = bill.try_get(3)?;
        let due: Date = bill.try_get(4)?;
        let person_id: Option<String> = bill.try_get(6)?;
        let documents: Vec<String> = vec![bill.try_get(7)?, bill.try_get(8)?];
        let polarity = if kind == "payable" { "debit" } else { "credit" };
        for candidate in &mut candidates {
            let s = &candidate.suggestion;
            let days_apart = s.occurred_at.days_until(due);
            if s.amount != amount || s.transaction_type != polarity || days_apart.abs() > WINDOW_DAYS {
                continue;
            }
            let (score, reasons) = score(candidate, days_apart, person_id.as_deref(), &documents);
            candidate.suggestion.matches.push(Match {
                kind: kind.clone(),
                billing_id: bill.try_get(1)?,
                description: bill.try_get(2)?,
                amount,
                due_date: due,
                person_name: bill.try_get(9)?,
                score,
                reasons,
            });
        }
    }
    let data: Vec<Suggestion> = candidates
        .into_iter()
        .map(|mut c| {
            c.suggestion.matches.sort_by(|a, b| {
                b.score.cmp(&a.score).then(a.due_date.cmp(&b.due_date)).then(a.billing_id.cmp(&b.billing_id))
            });
            c.suggestion.matches.truncate(MAX_MATCHES);
            c.suggestion
        })
        .collect();
    let examined = data.len() as i64;
    let matched = data.iter().filter(|s| !s.matches.is_empty()).count() as i64;
    Ok(Suggestions { data, examined, matched, unmatched: examined - matched, more })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(query: &str) -> (String, String) {
        let err = SuggestQuery::parse(&crate::ops::machinery::period::pairs(query)).expect_err(query);
        let details = err.details.unwrap_or_default();
        (details["field"].as_str().unwrap_or("").into(), details["reason"].as_str().unwrap_or("").into())
    }

    #[test]
    fn the_query_needs_an_account_and_a_bounded_period() {
        let account = "a1b2c3d4-0001-4000-8000-000000000001";
        let query = SuggestQuery::parse(&crate::ops::machinery::period::pairs(&format!(
            "account_id={account}&from=2026-11-01&to=2026-11-30"
        )))
        .unwrap();
        assert_eq!(query.limit, 100);
        assert_eq!(refused("from=2026-11-01&to=2026-11-30"), ("account_id".into(), "required".into()));
        assert_eq!(
            refused(&format!("account_id={account}&from=2026-01-01&to=2027-01-02")),
            ("to".into(), "out_of_range".into())
        );
        assert!(SuggestQuery::parse(&crate::ops::machinery::period::pairs(&format!(
            "account_id={account}&from=2026-01-01&to=2027-01-01"
        )))
        .is_ok());
        assert_eq!(
            refused(&format!("account_id={account}&from=2026-01-01&to=2026-01-02&limit=0")),
            ("limit".into(), "out_of_range".into())
        );
        assert_eq!(refused("account_id=x&from=2026-01-01&to=2026-01-02"), ("account_id".into(), "invalid_uuid".into()));
    }
}
