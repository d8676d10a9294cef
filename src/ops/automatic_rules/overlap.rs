//! Which earlier rule already fires on the rows a new rule matches: the first active
//! match wins, so a rule created behind one whose criteria can hold on the same rows
//! fires only where that one does not (nowhere, when that one matches every row it
//! does). A create answers it ([`Overlap`]) so the person hears it before relying on
//! the new rule; reordering puts the new rule first.

use schemars::JsonSchema;
use serde::Serialize;

use super::AutomaticRule;

/// An earlier active rule of the same company and scope that matches rows the new rule
/// matches, and so fires on them first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Overlap {
    pub id: String,
    pub position: i64,
    /// Whether it matches every row the new rule matches (the new rule then never
    /// fires until it is moved before it).
    pub every_row: bool,
}

/// Whether `earlier` requires nothing `rule` does not: every row `rule` matches meets
/// `earlier`'s criteria too (the same record where it names one, a text `rule` looks
/// for contains the text it looks for).
fn covers(earlier: &AutomaticRule, rule: &AutomaticRule) -> bool {
    let same = |a: Option<&str>, b: Option<&str>| a.is_none() || a == b;
    let within = |a: &Option<String>, b: &Option<String>| match a.as_deref() {
        None | Some("") => true,
        Some(a) => b.as_deref().is_some_and(|b| b.to_lowercase().contains(&a.to_lowercase())),
    };
    same(earlier.account_id.as_deref(), rule.account_id.as_deref())
        && (earlier.transaction_type.is_none() || earlier.transaction_type == rule.transaction_type)
        && same(earlier.match_person_id.as_deref(), rule.match_person_id.as_deref())
        && within(&earlier.description_contains, &rule.description_contains)
        && within(&earlier.notes_contains, &rule.notes_contains)
}

/// Whether a row can meet the criteria of both: no record or type one names differs
/// from the other's (any two texts can be in one description).
fn meet(a: &AutomaticRule, b: &AutomaticRule) -> bool {
    let agree = |x: Option<&str>, y: Option<&str>| x.is_none() || y.is_none() || x == y;
    agree(a.account_id.as_deref(), b.account_id.as_deref())
        && (a.transaction_type.is_none() || b.transaction_type.is_none() || a.transaction_type == b.transaction_type)
        && agree(a.match_person_id.as_deref(), b.match_person_id.as_deref())
}

/// The first of `earlier` (active rules of the company and scope, in position order)
/// that fires before `rule` on rows `rule` matches.
pub fn first(earlier: &[AutomaticRule], rule: &AutomaticRule) -> Option<Overlap> {
    earlier
        .iter()
        .filter(|e| e.active && e.position < rule.position && e.id != rule.id)
        .find(|e| meet(e, rule))
        .map(|e| Overlap { id: e.id.clone(), position: e.position, every_row: covers(e, rule) })
}
