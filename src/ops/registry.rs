//! Every resource, once, in the catalogue's order (SPEC §5: `tools/list` after the
//! workspace list): the money flow — reports, cash flow, payables, receivables,
//! reconciliations, transactions and transfers, accounts, receipts, attachments — then
//! the registers — companies, people, categories, cost centers, taxes, automatic rules,
//! banks — and who has access. The router, the tool catalogue and the OpenAPI document
//! are each a [`Registrar`] walked over this list; a new resource is its module, its line
//! here, its migration and its tests.

use serde_json::Value;

use super::bills::declared::{Payables, Receivables, PAYABLES, RECEIVABLES};
use super::machinery::openapi;
use super::machinery::resource::{Registrar, Written};
use super::transactions::declared::{Transactions, TRANSACTIONS, TRANSFERS};
use super::{access, accounts, attachments, automatic_rules, banks, cash_flow, categories, companies};
use super::{cost_centers, people, receipts, reconciliations, reports, taxes};
use crate::domain::roles::Resource;

static ATTACHMENTS: Written =
    Written { resource: Resource::Attachments, operations: attachments::DOCS, extension: None };
static ACCESS: Written = Written {
    resource: Resource::Access,
    operations: access::DOCS,
    extension: Some("who has access: members, invitations, connected apps"),
};

/// Walks `to` over every resource, in order.
pub fn register(to: &mut impl Registrar) {
    to.own(&reports::OPERATIONS);
    to.own(&cash_flow::OPERATIONS);
    to.records::<Payables>(&PAYABLES);
    to.records::<Receivables>(&RECEIVABLES);
    to.own(&reconciliations::OPERATIONS);
    to.records::<Transactions>(&TRANSACTIONS);
    to.own(&TRANSFERS);
    to.records::<accounts::Accounts>(&accounts::OPERATIONS);
    to.read_only::<receipts::Receipts>(&receipts::OPERATIONS);
    to.written(&ATTACHMENTS);
    to.records::<companies::Companies>(&companies::OPERATIONS);
    to.records::<people::People>(&people::OPERATIONS);
    to.records::<categories::Categories>(&categories::OPERATIONS);
    to.records::<cost_centers::CostCenters>(&cost_centers::OPERATIONS);
    to.records::<taxes::Taxes>(&taxes::OPERATIONS);
    to.records::<automatic_rules::AutomaticRules>(&automatic_rules::OPERATIONS);
    to.read_only::<banks::Banks>(&banks::OPERATIONS);
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
