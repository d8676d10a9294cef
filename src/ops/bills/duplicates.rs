//! Likely duplicate payables (`GET /v1/payables/duplicates`, tool
//! `finance_payables_duplicates`; this product's, `x-kobana-extension`): the open
//! payables of the workspace (pending, not rejected at the approval gate: those waiting
//! for approval count, a duplicate is best caught before it is approved) that look like
//! the same bill recorded twice, in groups, each with why it matched, for the person to
//! say which to cancel. It reads and changes nothing else.
//!
//! Two payables match when they have
//! * the same boleto (its barcode, or its typed line: compared by the slip's key),
//! * the same Pix copia-e-cola code,
//! * the same vendor and the same document number (an invoice recorded twice), or
//! * the same vendor and the same amount, due at most `within_days` apart (7 unless
//!   asked; 0–31).
//!
//! The vendor is the bill's person, else the beneficiary's document of its payment
//! coordinates; both within one company. Matches chain into groups (A like B, B like C:
//! one group of three), so a group is every payable one could be confused with another
//! of it. Groups come by their first due date; each lists its payables by due date.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::approval;
use crate::domain::coordinates::barcode_key;
use crate::domain::dates::{Date, Timestamp};
use crate::domain::money::Cents;
use crate::domain::roles::{Access, Resource};
use crate::domain::text::quoted;
use crate::error::ApiError;
use crate::ops::machinery::refs;
use crate::ops::OpContext;
use crate::storage::identity::Membership;
use crate::storage::{sql, Conn, Row};

/// How far apart, in days, two due dates of the same vendor and amount may be unless the
/// query says.
pub const WITHIN_DAYS: i64 = 7;

/// `GET /v1/payables/duplicates`'s query (a tool's arguments).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DuplicatesQuery {
    #[serde(default)]
    #[schemars(with = "String", extend("format" = "uuid"))]
    pub workspace_id: Option<String>,
    /// Only this company's payables.
    #[serde(default)]
    #[schemars(with = "String", extend("format" = "uuid"))]
    pub company_id: Option<String>,
    /// Days apart two due dates of one vendor and amount may be (default 7).
    #[serde(default)]
    #[schemars(with = "i64", range(min = 0, max = 31))]
    pub within_days: Option<i64>,
}

/// Why two payables of a group look like one bill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    SameBarcode,
    SamePixCopiaECola,
    SameDocumentNumber,
    SameVendorAndAmount,
}

/// A reason a group matched: the rule, and what it found in words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Reason {
    pub rule: Rule,
    pub text: String,
}

/// A payable of a group: what tells it apart from the others.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Candidate {
    pub id: String,
    pub company_id: String,
    pub description: String,
    pub person_id: Option<String>,
    pub person_name: Option<String>,
    #[schemars(with = "String")]
    pub amount: Cents,
    pub due_date: Date,
    pub document_number: Option<String>,
    /// `pending_approval` while it waits at the approval gate; null for an official bill.
    pub payment_approval: Option<String>,
    pub created_at: Timestamp,
}

/// Payables that look like one bill recorded more than once.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Group {
    /// Why they matched (each rule once).
    pub reasons: Vec<Reason>,
    /// By due date, then creation.
    pub payables: Vec<Candidate>,
}

/// The answer: the groups, by their first due date.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Duplicates {
    pub data: Vec<Group>,
}

/// An open payable as the matching reads it.
struct Open {
    shown: Candidate,
    vendor: Option<String>,
    barcode: Option<String>,
    pix: Option<String>,
}

/// The groups of likely duplicates among the workspace's open payables (the payables'
/// read permission; a company named is the workspace's own and live).
pub async fn duplicates(
    ctx: &OpContext<'_>,
    conn: &mut Conn,
    ws: &Membership,
    query: &DuplicatesQuery,
) -> Result<Duplicates, ApiError> {
    ctx.authorize(ws, Resource::Payables, Access::Read)?;
    refs::named(conn, ws, query.company_id.as_deref(), None).await?;
    let open = candidates(conn, ws, query.company_id.as_deref()).await?;
    Ok(Duplicates { data: grouped(open, query.within_days.unwrap_or(WITHIN_DAYS)) })
}

/// The open payables that could match another: those sharing a vendor and an amount or
/// a document number with another (counted by the database), and those with a slip.
async fn candidates(conn: &mut Conn, ws: &Membership, company: Option<&str>) -> Result<Vec<Open>, ApiError> {
    let company_filter = if company.is_some() { "AND b.company_id = $2" } else { "" };
    let statement = format!(
        "SELECT id, company_id, description, amount_cents, due_date, person_id, person_name, document_number,
                payment_approval, created_at, vendor, barcode, pix_copia_e_cola
         FROM (SELECT b.id, b.company_id, b.description, b.amount_cents, b.due_date, b.person_id,
                      p.name AS person_name, b.document_number, b.payment_approval, b.created_at,
                      COALESCE(b.person_id, c.beneficiary_document) AS vendor, c.barcode, c.pix_copia_e_cola,
                      COUNT(*) OVER (PARTITION BY b.company_id, COALESCE(b.person_id, c.beneficiary_document),
                                     b.amount_cents) AS alike,
                      COUNT(*) OVER (PARTITION BY b.company_id, COALESCE(b.person_id, c.beneficiary_document),
                                     b.document_number) AS same_document
               FROM billings b
               LEFT JOIN payment_coordinates c ON c.workspace_id = b.workspace_id AND c.billing_id = b.id
               LEFT JOIN people p ON p.workspace_id = b.workspace_id AND p.id = b.person_id
               WHERE b.workspace_id = $1 AND b.kind = 'payable' AND b.status = 'pending' AND {owed} {company_filter}) o
         WHERE (vendor IS NOT NULL AND (alike > 1 OR (document_number IS NOT NULL AND same_document > 1)))
            OR barcode IS NOT NULL OR pix_copia_e_cola IS NOT NULL
         ORDER BY due_date, created_at, id",
        owed = approval::owed("b"),
    );
    let mut query = sql::query(statement).bind(&ws.workspace_id);
    if let Some(company) = company {
        query = query.bind(company);
    }
    Ok(query.map_all(&mut *conn, open_of).await?)
}

fn open_of(row: &Row<'_>) -> Result<Open, crate::storage::Error> {
    Ok(Open {
        shown: Candidate {
            id: row.try_get("id")?,
            company_id: row.try_get("company_id")?,
            description: row.try_get("description")?,
            person_id: row.try_get("person_id")?,
            person_name: row.try_get("person_name")?,
            amount: row.try_get("amount_cents")?,
            due_date: row.try_get("due_date")?,
            document_number: row.try_get("document_number")?,
            payment_approval: row.try_get("payment_approval")?,
            created_at: row.try_get("created_at")?,
        },
        vendor: row.try_get("vendor")?,
        barcode: row.try_get("barcode")?,
        pix: row.try_get("pix_copia_e_cola")?,
    })
}

/// Two payables of `open` (by their index) that match by a rule.
type Match = (usize, usize, Rule);

/// The groups among `open` (by due date), matches chained.
fn grouped(open: Vec<Open>, within_days: i64) -> Vec<Group> {
    let mut matches: Vec<Match> = Vec::new();
    fn by(key: Option<(Rule, String)>, i: usize, seen: &mut HashMap<(Rule, String), Vec<usize>>) {
        if let Some(key) = key {
            seen.entry(key).or_default().push(i);
        }
    }
    let mut buckets: HashMap<(Rule, String), Vec<usize>> = HashMap::new();
    for (i, bill) in open.iter().enumerate() {
        let vendor = bill.vendor.as_ref().map(|v| format!("{}\u{1f}{v}", bill.shown.company_id));
        by(bill.barcode.as_deref().map(|b| (Rule::SameBarcode, barcode_key(b))), i, &mut buckets);
        by(bill.pix.clone().map(|p| (Rule::SamePixCopiaECola, p)), i, &mut buckets);
        if let (Some(vendor), Some(number)) = (&vendor, &bill.shown.document_number) {
            by(Some((Rule::SameDocumentNumber, format!("{vendor}\u{1f}{number}"))), i, &mut buckets);
        }
        if let Some(vendor) = &vendor {
            by(Some((Rule::SameVendorAndAmount, format!("{vendor}\u{1f}{}", bill.shown.amount.0))), i, &mut buckets);
        }
    }
    for ((rule, _), members) in &buckets {
        for pair in members.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            // Members are in due-date order: a vendor's same amount matches the next one
            // due within the window.
            let apart = open[a].shown.due_date.days_until(open[b].shown.due_date).abs();
            if *rule != Rule::SameVendorAndAmount || apart <= within_days {
                matches.push((a, b, *rule));
            }
        }
    }
    let mut root: Vec<usize> = (0..open.len()).collect();
    fn find(root: &mut [usize], i: usize) -> usize {
        let mut at = i;
        while root[at] != at {
            root[at] = root[root[at]];
            at = root[at];
        }
        at
    }
    for &(a, b, _) in &matches {
        let (ra, rb) = (find(&mut root, a), find(&mut root, b));
        root[ra.max(rb)] = ra.min(rb);
    }
    let mut groups: std::collections::BTreeMap<usize, (Vec<usize>, Vec<Match>)> = Default::default();
    for &(a, b, rule) in &matches {
        let r = find(&mut root, a);
        groups.entry(r).or_default().1.push((a, b, rule));
    }
    for i in 0..open.len() {
        let r = find(&mut root, i);
        if let Some(group) = groups.get_mut(&r) {
            group.0.push(i);
        }
    }
    // The root is a group's first member in due-date order: the map's order is the
    // groups' order.
    groups
        .into_values()
        .map(|(members, found)| Group {
            reasons: reasons(&open, found),
            payables: members.into_iter().map(|i| open[i].shown.clone()).collect(),
        })
        .collect()
}

/// Each rule a group matched by, once, in words: what the payables share.
fn reasons(open: &[Open], mut found: Vec<Match>) -> Vec<Reason> {
    found.sort_by_key(|&(a, b, rule)| (rule, a, b));
    found.dedup_by_key(|m| m.2);
    found
        .into_iter()
        .map(|(a, b, rule)| {
            let (a, b) = (&open[a].shown, &open[b].shown);
            let vendor = a.person_name.as_deref().map(quoted).unwrap_or_else(|| "the same beneficiary".into());
            let text = match rule {
                Rule::SameBarcode => "The same boleto (barcode or typed line)".to_string(),
                Rule::SamePixCopiaECola => "The same Pix copia-e-cola code".to_string(),
                Rule::SameDocumentNumber => format!(
                    "The same vendor {vendor} and document number {}",
                    quoted(a.document_number.as_deref().unwrap_or_default())
                ),
                Rule::SameVendorAndAmount => format!(
                    "The same vendor {vendor} and amount {}, due {} day(s) apart",
                    a.amount.brl(),
                    a.due_date.days_until(b.due_date).abs()
                ),
            };
            Reason { rule, text }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bill(id: &str, vendor: Option<&str>, cents: i64, due: &str) -> Open {
        Open {
            shown: Candidate {
                id: id.into(),
                company_id: "c".into(),
                description: id.into(),
                person_id: vendor.map(Into::into),
                person_name: vendor.map(Into::into),
                amount: Cents(cents),
                due_date: Date::parse(due).unwrap(),
                document_number: None,
                payment_approval: None,
                created_at: Timestamp::from_unix(0),
            },
            vendor: vendor.map(Into::into),
            barcode: None,
            pix: None,
        }
    }

    fn ids(groups: &[Group]) -> Vec<Vec<&str>> {
        groups.iter().map(|g| g.payables.iter().map(|p| p.id.as_str()).collect()).collect()
    }

    /// A vendor's same amount within the window groups, chained; beyond it, another
    /// vendor's or another amount does not.
    #[test]
    fn same_vendor_and_amount_within_the_window_chain_into_one_group() {
        let open = vec![
            bill("a", Some("v"), 100, "2026-12-01"),
            bill("b", Some("v"), 100, "2026-12-06"),
            bill("c", Some("v"), 100, "2026-12-12"),
            bill("d", Some("v"), 100, "2027-01-12"),
            bill("e", Some("w"), 100, "2026-12-01"),
            bill("f", Some("v"), 200, "2026-12-01"),
        ];
        let groups = grouped(open, 7);
        assert_eq!(ids(&groups), vec![vec!["a", "b", "c"]]);
        assert_eq!(groups[0].reasons.len(), 1);
        assert_eq!(groups[0].reasons[0].rule, Rule::SameVendorAndAmount);
        assert!(groups[0].reasons[0].text.contains("R$ 1,00"), "{:?}", groups[0].reasons);
        assert!(
            grouped(vec![bill("a", Some("v"), 1, "2026-12-01"), bill("b", Some("v"), 1, "2026-12-02")], 0).is_empty()
        );
    }

    /// A slip in its two forms is one slip; a Pix code joins bills of any vendor; both
    /// reasons are said once.
    #[test]
    fn a_slip_matches_in_either_form_and_reasons_are_said_once() {
        let line = "34191090080000000000000000000018316560000450000";
        let code = crate::domain::coordinates::barcode_key(line);
        let mut a = bill("a", None, 100, "2026-12-01");
        a.barcode = Some(line.into());
        let mut b = bill("b", None, 900, "2027-03-01");
        b.barcode = Some(code);
        let mut c = bill("c", Some("x"), 5, "2026-12-02");
        c.pix = Some("000201pix".into());
        let mut d = bill("d", Some("y"), 6, "2026-12-03");
        d.pix = Some("000201pix".into());
        let groups = grouped(vec![a, c, d, b], 7);
        assert_eq!(ids(&groups), vec![vec!["a", "b"], vec!["c", "d"]]);
        assert_eq!(groups[0].reasons.iter().map(|r| r.rule).collect::<Vec<_>>(), vec![Rule::SameBarcode]);
        assert_eq!(groups[1].reasons.iter().map(|r| r.rule).collect::<Vec<_>>(), vec![Rule::SamePixCopiaECola]);
    }
}
