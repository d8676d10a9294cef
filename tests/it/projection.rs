//! `fields` on both doors: `/v1`'s `fields=a,b` on a list and a get, a tool's `fields`
//! argument. Only the fields named come back; a name the record does not have is
//! refused as an unknown filter is (the same code), naming it — never dropped silently.

use crate::common;

use common::*;
use http::Method;
use serde_json::{json, Value};

async fn v1(h: &Harness, path: &str) -> Reply {
    send(h, Method::GET, path, &h.api_token(DEMO_OWNER), None).await
}

fn keys(record: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = record.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    keys
}

/// The error of a tool result (text content only).
fn tool_error(result: &Value) -> Value {
    assert_eq!(result["isError"], true, "{result}");
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    text["error"].clone()
}

#[tokio::test]
async fn fields_answer_only_those_fields_on_both_doors() {
    let h = Harness::with_demo().await;
    let page = v1(&h, "/v1/payables?fields=id,status&limit=3").await;
    assert_eq!(page.status, 200, "{}", text(&page));
    let rows = page.json()["data"].as_array().unwrap().clone();
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| keys(r) == ["id", "status"]), "{rows:?}");
    let one = v1(&h, &format!("/v1/payables/{ACME_RENT_DECEMBER}?fields=amount,barcode")).await;
    assert_eq!(one.status, 200, "{}", text(&one));
    assert_eq!(keys(&one.json()), ["amount", "barcode"]);
    let attachments = v1(&h, "/v1/attachments?fields=id").await;
    assert_eq!(attachments.status, 200, "{}", text(&attachments));
    // Without fields: the whole record, as before.
    let whole = v1(&h, &format!("/v1/payables/{ACME_RENT_DECEMBER}")).await.json();
    assert!(whole.as_object().unwrap().len() > 20);
    // The tool: the same projection.
    let token = h.token(DEMO_OWNER);
    let arguments = json!({"id": ACME_RENT_DECEMBER, "fields": ["amount", "barcode"]});
    let tool = h.send(call("finance_payables_get", arguments).bearer(&token).build()).await.result();
    assert_eq!(tool["structuredContent"], one.json());
}

#[tokio::test]
async fn an_unknown_name_in_fields_is_refused_like_an_unknown_filter_on_both_doors() {
    let h = Harness::with_demo().await;
    let unknown_filter = v1(&h, "/v1/payables?colour=red").await;
    assert_eq!(unknown_filter.status, 400);
    let code = unknown_filter.json()["error"]["code"].clone();
    let refused = |reply: &Reply, name: &str| {
        assert_eq!(reply.status, 400, "{}", text(reply));
        let error = reply.json()["error"].clone();
        assert_eq!(error["code"], code, "{error}");
        assert_eq!(error["details"]["field"], "fields", "{error}");
        assert_eq!(error["details"]["reason"], "unknown_field", "{error}");
        assert_eq!(error["details"]["value"], name, "{error}");
        assert!(error["message"].as_str().unwrap().contains(name), "{error}");
    };
    refused(&v1(&h, "/v1/payables?fields=id,colour").await, "colour");
    // A list row has the counts of its parts, not the payment coordinates a record has.
    let list = v1(&h, "/v1/payables?fields=barcode").await;
    refused(&list, "barcode");
    let known = list.json()["error"]["details"]["known"].clone();
    assert!(known.as_array().unwrap().iter().any(|k| k == "due_date"), "{known}");
    refused(&v1(&h, &format!("/v1/payables/{ACME_RENT_DECEMBER}?fields=nope")).await, "nope");
    refused(&v1(&h, "/v1/receivables?fields=nope").await, "nope");
    refused(&v1(&h, "/v1/financial-transactions?fields=nope").await, "nope");
    refused(&v1(&h, "/v1/attachments?fields=nope").await, "nope");
    refused(&v1(&h, "/v1/companies?fields=name,nope").await, "nope");
    let sweep = v1(&h, "/v1/payables/ids?fields=id").await;
    assert_eq!(sweep.status, 400, "{}", text(&sweep));
    // The tools: the code they answer for an unknown filter, naming the name.
    let token = h.token(DEMO_OWNER);
    let tool = |name: &str, arguments: Value| h.send(call(name, arguments).bearer(&token).build());
    let filter = tool_error(&tool("finance_payables_list", json!({"filters": {"colour": "red"}})).await.result());
    for (name, arguments, unknown) in [
        ("finance_payables_list", json!({"fields": ["id", "colour"]}), "colour"),
        ("finance_payables_list", json!({"fields": ["barcode"]}), "barcode"),
        ("finance_payables_get", json!({"id": ACME_RENT_DECEMBER, "fields": ["nope"]}), "nope"),
        ("finance_companies_list", json!({"fields": ["nope"]}), "nope"),
        ("finance_attachments_list", json!({"fields": ["nope"]}), "nope"),
        ("finance_reconciliations_get", json!({"id": ACME_RENT_DECEMBER, "fields": ["nope"]}), "nope"),
        ("finance_transfers_get", json!({"id": ACME_RENT_DECEMBER, "fields": ["nope"]}), "nope"),
    ] {
        let error = tool_error(&tool(name, arguments).await.result());
        assert_eq!(error["code"], filter["code"], "{name}: {error}");
        assert_eq!(error["details"]["field"], "fields", "{name}: {error}");
        assert_eq!(error["details"]["value"], unknown, "{name}: {error}");
    }
}
