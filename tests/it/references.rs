//! One answer per situation: a reference to a company, an account, a person, a category
//! or a center that the workspace does not have — unknown, deleted or another
//! workspace's — answers alike wherever it is named (a body, a query, a list filter, on
//! both doors); a malformed id answers one reason.

use http::Method;
use serde_json::{json, Value};

use crate::common::*;

/// A company of ACME's, created and then deleted: its id names a deleted company.
async fn deleted_company(h: &Harness, token: &str) -> String {
    let company = create_at(h, "/v1/companies", token, json!({"name": "Encerrada", "cnpj": "11444777000242"})).await;
    let id = id(&company);
    let reply = send(h, Method::DELETE, &format!("/v1/companies/{id}"), token, None).await;
    assert_eq!(reply.status, 204, "{}", text(&reply));
    id
}

/// A person of ACME's company, created and then deleted.
async fn deleted_person(h: &Harness, token: &str) -> String {
    let person = create_at(h, "/v1/people", token, json!({"company_id": ACME_COMPANY, "name": "Ex-fornecedor"})).await;
    let id = id(&person);
    let reply = send(h, Method::DELETE, &format!("/v1/people/{id}"), token, None).await;
    assert_eq!(reply.status, 204, "{}", text(&reply));
    id
}

/// A new cash account of `company`: its id.
async fn cash_account(h: &Harness, token: &str, company: &str) -> String {
    let account = json!({"company_id": company, "name": "Caixa", "type": "cash"});
    id(&create_at(h, "/v1/financial-accounts", token, account).await)
}

/// `(status, code, field, reason)` of an answer.
fn answer(reply: &Reply) -> (u16, Value, Option<String>, Option<String>) {
    let (field, reason) = details(reply);
    (reply.status.as_u16(), reply.json()["error"]["code"].clone(), field, reason)
}

/// A live record of ACME's company (the demo's) for a body, query or filter field of
/// this name that names one: what a request names beside the reference under test.
pub fn live_id(name: &str) -> Option<&'static str> {
    Some(match name {
        "company_id" => ACME_COMPANY,
        "to_account_id" => ACME_CASH_ACCOUNT,
        n if n.ends_with("account_id") => ACME_CHECKING_ACCOUNT,
        n if n.ends_with("person_id") => ACME_LANDLORD,
        n if n.ends_with("category_id") || n == "parent_id" => ACME_RENT_CATEGORY,
        n if n.ends_with("classification_center_id") => ACME_ADMIN_COST_CENTER,
        _ => return None,
    })
}

/// A list filter naming a record the workspace does not have is what a query's or a
/// body's reference is: 422 `invalid_reference` naming the filter (every value of an
/// `[in]`), and a record of another company than the one filtered is a mismatch, on
/// both doors; a malformed id is 400 `invalid_uuid`, as in a query and a body.
#[tokio::test]
async fn a_list_filter_names_its_reference_as_a_body_does() {
    let h = Harness::with_demo().await;
    let token = h.api_token(DEMO_OWNER);
    let (company, person) = (deleted_company(&h, &token).await, deleted_person(&h, &token).await);
    let services_account = cash_account(&h, &token, ACME_SERVICES).await;
    let unknown =
        |field: &str| (422, json!("unprocessable_entity"), Some(field.into()), Some("invalid_reference".into()));
    for (path, field) in [
        (format!("/v1/payables?company_id={MISSING}"), "company_id"),
        (format!("/v1/payables?company_id={company}"), "company_id"),
        (format!("/v1/receivables?company_id={BETA_COMPANY}"), "company_id"),
        (format!("/v1/people?company_id[in]={ACME_COMPANY},{BETA_COMPANY}"), "company_id"),
        (format!("/v1/financial-accounts?company_id={company}"), "company_id"),
        (format!("/v1/financial-transactions?financial_account_id={MISSING}"), "financial_account_id"),
        (format!("/v1/financial-transactions?financial_account_id={BETA_ACCOUNT}"), "financial_account_id"),
        (format!("/v1/payables?person_id={person}"), "person_id"),
        (format!("/v1/payables?person_id={BETA_PERSON}"), "person_id"),
        (format!("/v1/financial-transactions?category_id={BETA_CATEGORY}"), "category_id"),
        (format!("/v1/receivables?classification_center_id={BETA_COST_CENTER}"), "classification_center_id"),
        (format!("/v1/categories?parent_id={MISSING}"), "parent_id"),
    ] {
        let reply = send(&h, Method::GET, &path, &token, None).await;
        assert_eq!(answer(&reply), unknown(field), "{path}: {}", text(&reply));
    }
    // A record of another company than the one filtered.
    let path = format!("/v1/financial-transactions?company_id={ACME_COMPANY}&financial_account_id={services_account}");
    let reply = send(&h, Method::GET, &path, &token, None).await;
    assert_eq!(
        answer(&reply),
        (
            422,
            json!("unprocessable_entity"),
            Some("financial_account_id".into()),
            Some("account_company_mismatch".into())
        )
    );
    // The workspace's own records list as before.
    let path = format!("/v1/payables?company_id={ACME_COMPANY}&person_id={ACME_LANDLORD}");
    let reply = send(&h, Method::GET, &path, &token, None).await;
    assert_eq!(reply.status, 200, "{}", text(&reply));
    assert!(!reply.json()["data"].as_array().unwrap().is_empty());
    // A malformed id: one reason, whichever filter and however given.
    for path in ["/v1/payables?company_id=nope", &format!("/v1/people?company_id[in]={ACME_COMPANY},nope")] {
        let reply = send(&h, Method::GET, path, &token, None).await;
        assert_eq!(answer(&reply), (400, json!("bad_request"), Some("company_id".into()), Some("invalid_uuid".into())));
    }
    // The MCP door answers the same.
    for (filters, status_code, reason) in [
        (json!({"company_id": BETA_COMPANY}), "unprocessable_entity", "invalid_reference"),
        (json!({"person_id": {"in": [person]}}), "unprocessable_entity", "invalid_reference"),
        (json!({"company_id": "nope"}), "bad_request", "invalid_uuid"),
    ] {
        let call = call("finance_payables_list", json!({"filters": filters}));
        let error = tool_error(&h.send(call.bearer(&h.token(DEMO_OWNER)).build()).await.result());
        assert_eq!((&error["code"], &error["details"]["reason"]), (&json!(status_code), &json!(reason)), "{error}");
    }
}
