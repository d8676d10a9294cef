//! Every resource, once, in the catalogue's order (SPEC §5: `tools/list` after the
//! workspace list): the money flow — reports, cash flow, payables, receivables,
//! reconciliations, transactions and transfers, accounts, receipts, attachments — then
//! the registers — companies, people, categories, cost centers, taxes, automatic rules,
//! banks — and who has access. The router, the tool catalogue, the OpenAPI document and
//! the views' toolsets are each a [`Registrar`] walked over this list; a new resource is
//! its module, its line here, its `Resource` (the scope's name, a domain rule), its
//! migration and its tests.

use serde_json::Value;

use super::bills::declared::{Payables, Receivables, PAYABLES, RECEIVABLES};
use super::machinery::openapi;
use super::machinery::resource::{Registrar, Written};
use super::transactions::declared::{Transactions, TRANSACTIONS, TRANSFERS};
use super::{access, accounts, attachments, automatic_rules, banks, cash_flow, categories, companies};
use super::{cost_centers, people, receipts, reconciliations, reports, taxes};
use crate::domain::roles::Resource;

static ATTACHMENTS: Written = Written {
    resource: Resource::Attachments,
    operations: attachments::DOCS,
    extension: None,
    toolset: Some("attachments"),
};
static ACCESS: Written = Written {
    resource: Resource::Access,
    operations: access::DOCS,
    extension: Some("who has access: members, invitations, connected apps"),
    toolset: None,
};

/// Walks `to` over every resource, in order; each line names the toolset of its tools
/// (SPEC §5.4: `/mcp/x/{toolsets}`).
pub fn register(to: &mut impl Registrar) {
    to.own("reports", &reports::OPERATIONS);
    to.own("cash_flow", &cash_flow::OPERATIONS);
    to.records::<Payables>("payables", &PAYABLES);
    to.records::<Receivables>("receivables", &RECEIVABLES);
    to.own("reconciliations", &reconciliations::OPERATIONS);
    to.records::<Transactions>("transactions", &TRANSACTIONS);
    to.own("transfers", &TRANSFERS);
    to.records::<accounts::Accounts>("accounts", &accounts::OPERATIONS);
    to.read_only::<receipts::Receipts>("receipts", &receipts::OPERATIONS);
    to.written(&ATTACHMENTS);
    to.records::<companies::Companies>("companies", &companies::OPERATIONS);
    to.records::<people::People>("people", &people::OPERATIONS);
    to.records::<categories::Categories>("categories", &categories::OPERATIONS);
    to.records::<cost_centers::CostCenters>("cost_centers", &cost_centers::OPERATIONS);
    to.records::<taxes::Taxes>("taxes", &taxes::OPERATIONS);
    to.records::<automatic_rules::AutomaticRules>("automatic_rules", &automatic_rules::OPERATIONS);
    to.read_only::<banks::Banks>("banks", &banks::OPERATIONS);
    to.written(&ACCESS);
}

/// `GET /v1/openapi.json`: the OpenAPI 3.1 description of every registered operation.
pub fn document(api_base_url: &str) -> Value {
    let mut document = openapi::Document::default();
    register(&mut document);
    document.into_json(api_base_url)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::machinery::validate;

    /// Every request body of `/v1` is checked against its schema (`validate::parse`):
    /// the check enforces every keyword the schema states.
    #[test]
    fn every_request_schema_is_enforced_by_the_check() {
        let mut document = openapi::Document::default();
        register(&mut document);
        let refused: Vec<String> = document
            .requests()
            .flat_map(|(id, request)| validate::unenforced(&request()).into_iter().map(move |k| format!("{id}: {k}")))
            .collect();
        assert!(refused.is_empty(), "keywords the request check does not enforce:\n{}", refused.join("\n"));
    }
}
