//! `/v1/automatic-rules` and its tools: a company's rules, in position order, fill the
//! empty fields of every freshly created transaction and bill — from REST, from MCP and
//! on every record of an installment series — the first active match winning, a field
//! the request set never overwritten; the complete set reorders them.
//! (The record shapes — create, read, update, delete, isolation, scopes, schema
//! violations — are swept with the other plain resources in `records/`.)

use http::Method;
use serde_json::{json, Value};

use crate::common::*;

const COMMERCIAL_CENTER: &str = "cc000000-0001-4000-8000-000000000002";
const PROJECTS_CENTER: &str = "cc000000-0001-4000-8000-000000000003";

async fn rule(h: &Harness, body: Value) -> Value {
    let reply = send(h, Method::POST, "/v1/automatic-rules", &h.api_token(DEMO_OWNER), Some(body.clone())).await;
    assert_eq!(reply.status, 201, "{body}: {}", text(&reply));
    reply.json()
}

async fn get(h: &Harness, path: &str) -> Value {
    let reply = send(h, Method::GET, path, &h.api_token(DEMO_OWNER), None).await;
    assert_eq!(reply.status, 200, "{path}: {}", text(&reply));
    reply.json()
}

fn transaction(description: &str, kind: &str, extra: Value) -> Value {
    let mut body = json!({"company_id": ACME_COMPANY, "financial_account_id": ACME_CHECKING_ACCOUNT,
                          "description": description, "amount": "42.90", "occurred_at": "2026-11-20", "type": kind});
    body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    body
}

/// Acme without its demo rules: the positions below start at 1.
async fn without_demo_rules(h: &Harness) {
    exec(h, "DELETE FROM automatic_rules WHERE workspace_id = $1", &[DEMO_WORKSPACE_ACME]).await;
}

async fn create(h: &Harness, path: &str, body: Value) -> Value {
    create_at(h, path, &h.api_token(DEMO_OWNER), body).await
}

/// The center ids a record's apportionment names.
fn centers(record: &Value) -> Vec<String> {
    let items = record["classification_center_allocations"].as_array().cloned().unwrap_or_default();
    items.iter().map(|c| c["classification_center_id"].as_str().unwrap_or_default().to_string()).collect()
}

#[tokio::test]
async fn the_first_active_matching_rule_fills_the_empty_fields_of_a_new_transaction() {
    let h = Harness::with_demo().await;
    without_demo_rules(&h).await;
    // An inactive rule first: it never fires.
    let paused = rule(
        &h,
        json!({"company_id": ACME_COMPANY, "scope": "transactions", "active": false, "description_contains": "uber",
               "set_category_id": "ca7e0000-0001-4000-8000-000000000005"}),
    )
    .await;
    let uber = rule(
        &h,
        json!({"company_id": ACME_COMPANY, "scope": "transactions", "description_contains": "UBER",
               "transaction_type": "debit", "account_id": ACME_CHECKING_ACCOUNT,
               "set_category_id": ACME_RENT_CATEGORY, "set_person_id": ACME_LANDLORD,
               "set_classification_center_id": ACME_ADMIN_COST_CENTER}),
    )
    .await;
    // Also matches Uber rows, but comes after: never reached for them.
    let wildcard = rule(
        &h,
        json!({"company_id": ACME_COMPANY, "scope": "transactions", "description_contains": "",
               "set_category_id": ACME_SALARIES_CATEGORY}),
    )
    .await;
    assert_eq!(
        [&paused, &uber, &wildcard].map(|r| r["position"].as_i64()),
        [Some(1), Some(2), Some(3)],
        "a create appends"
    );

    let filled =
        create(&h, "/v1/financial-transactions", transaction("Uber *trip São Paulo", "debit", json!({}))).await;
    assert_eq!(filled["category_id"], ACME_RENT_CATEGORY, "{filled}");
    assert_eq!(filled["person_id"], ACME_LANDLORD);
    assert_eq!(centers(&filled), [ACME_ADMIN_COST_CENTER]);
    assert_eq!(filled["description"], "Uber *trip São Paulo", "the request's description stays");
    assert_eq!(filled["created_via"], "api");

    // What the request set is never overwritten.
    let explicit = transaction(
        "UBER eats",
        "debit",
        json!({"category_id": ACME_SALARIES_CATEGORY, "classification_center_id": COMMERCIAL_CENTER}),
    );
    let kept = create(&h, "/v1/financial-transactions", explicit).await;
    assert_eq!(kept["category_id"], ACME_SALARIES_CATEGORY);
    assert_eq!(centers(&kept), [COMMERCIAL_CENTER]);
    assert_eq!(kept["person_id"], ACME_LANDLORD, "the empty field is still filled");

    // Another description: the wildcard rule. A credit: the wildcard's debit category
    // does not fit it, so that action is skipped and the create still succeeds.
    let other = create(&h, "/v1/financial-transactions", transaction("Tarifa bancária", "debit", json!({}))).await;
    assert_eq!((other["category_id"].as_str(), other["person_id"].as_str()), (Some(ACME_SALARIES_CATEGORY), None));
    let credit = create(&h, "/v1/financial-transactions", transaction("Uber reembolso", "credit", json!({}))).await;
    assert_eq!(credit["category_id"], Value::Null, "{credit}");

    // Through MCP, the same rules.
    let token = h.token(DEMO_OWNER);
    let body = transaction("uber *trip", "debit", json!({}));
    let reply = h.send(call("finance_transactions_create", body).bearer(&token).build()).await;
    let made = &reply.result()["structuredContent"];
    assert_eq!((made["category_id"].as_str(), made["created_via"].as_str()), (Some(ACME_RENT_CATEGORY), Some("mcp")));

    // Reordered, the wildcard comes first and wins.
    let ids = [&wildcard, &uber, &paused].map(|r| r["id"].as_str().unwrap().to_string());
    let order = json!({"company_id": ACME_COMPANY, "scope": "transactions", "ordered_ids": ids});
    let reply = send(&h, Method::POST, "/v1/automatic-rules/reorder", &h.api_token(DEMO_OWNER), Some(order)).await;
    assert_eq!((reply.status.as_u16(), reply.bytes.len()), (204, 0), "{}", text(&reply));
    let listed = get(&h, &format!("/v1/automatic-rules?company_id={ACME_COMPANY}&scope=transactions")).await;
    let listed: Vec<(&str, i64)> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["id"].as_str().unwrap(), r["position"].as_i64().unwrap()))
        .collect();
    assert_eq!(listed, [(ids[0].as_str(), 1), (ids[1].as_str(), 2), (ids[2].as_str(), 3)]);
    let now = create(&h, "/v1/financial-transactions", transaction("Uber *trip", "debit", json!({}))).await;
    assert_eq!((now["category_id"].as_str(), now["person_id"].as_str()), (Some(ACME_SALARIES_CATEGORY), None));
}

#[tokio::test]
async fn billing_rules_fill_every_record_of_a_series_and_may_supply_the_person() {
    let h = Harness::with_demo().await;
    rule(
        &h,
        json!({"company_id": ACME_COMPANY, "scope": "billings", "transaction_type": "debit",
               "notes_contains": "contrato 42", "set_person_id": ACME_LANDLORD, "set_category_id": ACME_RENT_CATEGORY,
               "set_expected_account_id": ACME_CHECKING_ACCOUNT, "set_classification_center_id": COMMERCIAL_CENTER}),
    )
    .await;
    // A receivable rule with a revenue center.
    rule(
        &h,
        json!({"company_id": ACME_COMPANY, "scope": "billings", "transaction_type": "credit",
               "match_person_id": ACME_CUSTOMER_MARIA, "set_classification_center_id": PROJECTS_CENTER,
               "set_category_id": ACME_SALES_CATEGORY}),
    )
    .await;
    // No person in the request: the rule gives it (else 422 person_required).
    let series = json!({"company_id": ACME_COMPANY, "description": "Aluguel galpão", "amount": "900.00",
                        "due_date": "2026-12-10", "notes": "Contrato 42 — galpão", "type": "installment",
                        "total_installments": 3});
    let created = create(&h, "/v1/payables", series).await;
    let ids = created["series"].as_array().unwrap().clone();
    assert_eq!(ids.len(), 3);
    for id in &ids {
        let bill = get(&h, &format!("/v1/payables/{}", id.as_str().unwrap())).await;
        assert_eq!(
            (bill["person_id"].as_str(), bill["category_id"].as_str(), bill["expected_account_id"].as_str()),
            (Some(ACME_LANDLORD), Some(ACME_RENT_CATEGORY), Some(ACME_CHECKING_ACCOUNT)),
            "{bill}"
        );
        assert_eq!(centers(&bill), [COMMERCIAL_CENTER], "{bill}");
    }
    // Without the notes the rule does not match, and the person is required as ever.
    let bare =
        json!({"company_id": ACME_COMPANY, "description": "Aluguel", "amount": "900.00", "due_date": "2026-12-10"});
    let reply = send(&h, Method::POST, "/v1/payables", &h.api_token(DEMO_OWNER), Some(bare)).await;
    assert_eq!((reply.status.as_u16(), details(&reply)), (422, pair("person_id", "person_required")));
    // A receivable of Maria: the credit rule, not the debit one.
    let sale = json!({"company_id": ACME_COMPANY, "description": "Projeto", "amount": "100.00",
                      "due_date": "2026-12-15", "person_id": ACME_CUSTOMER_MARIA, "notes": "contrato 42"});
    let sale = create(&h, "/v1/receivables", sale).await;
    let sale = get(&h, &format!("/v1/receivables/{}", sale["id"].as_str().unwrap())).await;
    assert_eq!((sale["category_id"].as_str(), sale["expected_account_id"].as_str()), (Some(ACME_SALES_CATEGORY), None));
    assert_eq!(centers(&sale), [PROJECTS_CENTER]);
}

#[tokio::test]
async fn a_reorder_needs_the_complete_set_and_a_delete_leaves_a_gap() {
    let h = Harness::with_demo().await;
    without_demo_rules(&h).await;
    let token = h.api_token(DEMO_OWNER);
    let body = |text: &str| json!({"company_id": ACME_COMPANY, "scope": "transactions", "description_contains": text, "set_description": text});
    let (a, b, c) = (rule(&h, body("a")).await, rule(&h, body("b")).await, rule(&h, body("c")).await);
    let other_scope = rule(
        &h,
        json!({"company_id": ACME_COMPANY, "scope": "billings", "notes_contains": "x", "set_description": "y"}),
    )
    .await;
    assert_eq!(other_scope["position"], 1, "positions count per scope");
    let id = |r: &Value| r["id"].as_str().unwrap().to_string();
    let reorder = |ids: Vec<String>| json!({"company_id": ACME_COMPANY, "scope": "transactions", "ordered_ids": ids});
    for (ids, field, reason) in [
        (vec![id(&a), id(&b)], "ordered_ids", "incomplete_set"),
        (vec![id(&a), id(&b), id(&c), id(&other_scope)], "ordered_ids", "incomplete_set"),
        (vec![id(&a), id(&b), id(&c), MISSING.to_string()], "ordered_ids", "incomplete_set"),
        (vec![id(&a), id(&b), id(&a)], "ordered_ids[2]", "duplicate"),
        (vec![id(&a), "nope".to_string(), id(&c)], "ordered_ids[1]", "invalid_uuid"),
    ] {
        let reply = send(&h, Method::POST, "/v1/automatic-rules/reorder", &token, Some(reorder(ids.clone()))).await;
        assert_eq!((reply.status.as_u16(), details(&reply)), (422, pair(field, reason)), "{ids:?}: {}", text(&reply));
    }
    let reply = send(&h, Method::POST, "/v1/automatic-rules/reorder", &token, Some(reorder(vec![id(&a)]))).await;
    let missing = reply.json()["error"]["details"]["missing"].clone();
    assert_eq!(
        missing,
        json!([id(&b), id(&c)].iter().collect::<std::collections::BTreeSet<_>>().into_iter().collect::<Vec<_>>())
    );
    assert_eq!(
        get(&h, &format!("/v1/automatic-rules/{}", id(&c))).await["position"],
        3,
        "a refused reorder changed nothing"
    );

    let reply = send(&h, Method::DELETE, &format!("/v1/automatic-rules/{}", id(&b)), &token, None).await;
    assert_eq!(reply.status, 204);
    assert_eq!(get(&h, &format!("/v1/automatic-rules/{}", id(&c))).await["position"], 3, "a delete leaves a gap");
    let d = rule(&h, body("d")).await;
    assert_eq!(d["position"], 4, "a create appends after the last");
    // The scope never changes: `/v1` drops it as any answer field a PATCH does not take
    // (a record read and sent back), the tool refuses it.
    let path = format!("/v1/automatic-rules/{}", id(&a));
    let reply = send(&h, Method::PATCH, &path, &token, Some(json!({"scope": "billings"}))).await;
    assert_eq!((reply.status.as_u16(), reply.json()["scope"].as_str()), (200, Some("transactions")));
    let tool = call("finance_automatic_rules_update", json!({"id": id(&a), "scope": "billings"}));
    let refused = h.send(tool.bearer(&h.token(DEMO_OWNER)).build()).await;
    let error = &tool_error(&refused.result());
    assert_eq!(
        (error["details"]["field"].as_str(), error["details"]["reason"].as_str()),
        (Some("scope"), Some("unknown_field"))
    );
    // An update keeps a criterion and an action.
    for (patch, field, reason) in [
        (json!({"description_contains": null}), "criteria", "criterion_required"),
        (json!({"set_description": null}), "actions", "action_required"),
        (json!({"set_expected_account_id": ACME_CHECKING_ACCOUNT}), "set_expected_account_id", "billings_only"),
        (
            json!({"set_category_id": ACME_SALES_CATEGORY, "transaction_type": "debit"}),
            "set_category_id",
            "type_mismatch",
        ),
    ] {
        let reply = send(&h, Method::PATCH, &path, &token, Some(patch.clone())).await;
        assert_eq!((reply.status.as_u16(), details(&reply)), (422, pair(field, reason)), "{patch}");
    }
    let changed = send(
        &h,
        Method::PATCH,
        &path,
        &token,
        Some(json!({"set_description": null, "set_category_id": ACME_RENT_CATEGORY})),
    )
    .await;
    assert_eq!(changed.status, 200, "{}", text(&changed));
    assert_eq!(
        (changed.json()["set_description"].clone(), changed.json()["set_category_id"].clone()),
        (Value::Null, json!(ACME_RENT_CATEGORY))
    );
}

#[tokio::test]
async fn the_rule_tools_list_create_and_reorder_through_mcp() {
    let h = Harness::with_demo().await;
    without_demo_rules(&h).await;
    let token = h.token(DEMO_OWNER);
    let create = json!({"company_id": ACME_COMPANY, "scope": "transactions", "description_contains": "ifood",
                        "set_category_id": ACME_SALARIES_CATEGORY, "idempotency_key": "rule-ifood-1"});
    let first = h.send(call("finance_automatic_rules_create", create.clone()).bearer(&token).build()).await;
    let made = first.result()["structuredContent"].clone();
    assert_eq!((made["position"].as_i64(), made["created_via"].as_str()), (Some(1), Some("mcp")), "{made}");
    let again = h.send(call("finance_automatic_rules_create", create).bearer(&token).build()).await;
    assert_eq!(again.result()["structuredContent"]["id"], made["id"], "the key replays the first create");
    let listed = h
        .send(
            call("finance_automatic_rules_list", json!({"filters": {"scope": "transactions"}})).bearer(&token).build(),
        )
        .await;
    assert_eq!(listed.result()["structuredContent"]["data"].as_array().map(Vec::len), Some(1));
    let order = json!({"company_id": ACME_COMPANY, "scope": "transactions", "ordered_ids": [made["id"]]});
    let reordered = h.send(call("finance_automatic_rules_reorder", order).bearer(&token).build()).await;
    assert_eq!(reordered.result()["structuredContent"]["ordered_ids"], json!([made["id"]]));
    // A viewer may read the rules but not write them.
    let viewer = h.token(DEMO_VIEWER);
    let refused = h
        .send(
            call(
                "finance_automatic_rules_create",
                json!({"company_id": ACME_COMPANY, "scope": "billings", "notes_contains": "x", "set_description": "y"}),
            )
            .bearer(&viewer)
            .build(),
        )
        .await;
    assert_eq!(refused.result()["isError"], true, "{}", refused.result());
}

/// The demo's rules fire as `make run` shows them: a service-charge bill needs no
/// person, category or account; an Uber debit lands in operating expenses.
#[tokio::test]
async fn the_demo_rules_fill_a_service_charge_bill_and_an_uber_ride() {
    let h = Harness::with_demo().await;
    let bill = json!({"company_id": ACME_COMPANY, "description": "Condomínio dezembro", "amount": "850.00",
                      "due_date": "2026-12-20"});
    let bill = create(&h, "/v1/payables", bill).await;
    assert_eq!(
        (bill["person_id"].as_str(), bill["category_id"].as_str(), bill["expected_account_id"].as_str()),
        (Some(ACME_LANDLORD), Some(ACME_RENT_CATEGORY), Some(ACME_CHECKING_ACCOUNT)),
        "{bill}"
    );
    let ride =
        create(&h, "/v1/financial-transactions", transaction("UBER *TRIP HELP.UBER.COM", "debit", json!({}))).await;
    assert_eq!(ride["category_id"], "ca7e0000-0001-4000-8000-000000000001", "{ride}");
    assert_eq!(centers(&ride), [ACME_ADMIN_COST_CENTER]);
    let listed = get(&h, "/v1/automatic-rules?sort=created_at").await;
    let ids: Vec<&str> = listed["data"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 2, "Acme's two rules, not Beta's: {ids:?}");
    assert!(!ids.contains(&BETA_RULE));
}

/// A rule outlives a record it names: the action is skipped when the rule fires, and the
/// rule can still be changed or paused without naming that record again.
#[tokio::test]
async fn a_rule_whose_person_was_deleted_still_fires_its_other_actions_and_can_be_paused() {
    let h = Harness::with_demo().await;
    without_demo_rules(&h).await;
    let token = h.api_token(DEMO_OWNER);
    let person = create(&h, "/v1/people", json!({"company_id": ACME_COMPANY, "name": "Posto Avenida"})).await;
    let made = rule(
        &h,
        json!({"company_id": ACME_COMPANY, "scope": "transactions", "description_contains": "posto",
               "set_person_id": person["id"], "set_category_id": ACME_SALARIES_CATEGORY}),
    )
    .await;
    let gone = send(&h, Method::DELETE, &format!("/v1/people/{}", person["id"].as_str().unwrap()), &token, None).await;
    assert_eq!(gone.status, 204, "{}", text(&gone));
    let fuel = create(&h, "/v1/financial-transactions", transaction("POSTO AVENIDA 123", "debit", json!({}))).await;
    assert_eq!((fuel["category_id"].as_str(), fuel["person_id"].as_str()), (Some(ACME_SALARIES_CATEGORY), None));
    let path = format!("/v1/automatic-rules/{}", made["id"].as_str().unwrap());
    let paused = send(&h, Method::PATCH, &path, &token, Some(json!({"active": false}))).await;
    assert_eq!((paused.status.as_u16(), paused.json()["active"].as_bool()), (200, Some(false)), "{}", text(&paused));
    // Naming it again is refused, as any reference to a deleted person is.
    let again = send(&h, Method::PATCH, &path, &token, Some(json!({"set_person_id": person["id"]}))).await;
    assert_eq!((again.status.as_u16(), details(&again)), (422, pair("set_person_id", "invalid_reference")));
}

/// The delete question names the rule once ("the automatic rule #2 of the transaction
/// rules"), never "rule rule".
#[tokio::test]
async fn the_delete_question_names_the_rule_once() {
    let h = Harness::with_demo().await;
    without_demo_rules(&h).await;
    rule(
        &h,
        json!({"company_id": ACME_COMPANY, "scope": "transactions", "description_contains": "uber",
                    "set_category_id": "ca7e0000-0001-4000-8000-000000000005"}),
    )
    .await;
    let second = rule(
        &h,
        json!({"company_id": ACME_COMPANY, "scope": "transactions", "description_contains": "ifood",
               "set_category_id": "ca7e0000-0001-4000-8000-000000000005"}),
    )
    .await;
    let request =
        crate::tools_catalogue::confirmable("finance_automatic_rules_delete", json!({"id": id(&second)}), json!({}));
    let result = h.send(request.bearer(&h.token(DEMO_OWNER)).build()).await.result();
    assert_eq!(result["resultType"], "input_required", "{result}");
    let message = result["inputRequests"]["confirm"]["params"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "Delete the automatic rule #2 of the transaction rules (description contains “ifood”) from the workspace"
        ),
        "{message}"
    );
    assert!(!message.contains("rule rule"), "{message}");
}

/// A rule created behind an earlier active rule of its company and scope that matches
/// the same rows says so: `overlapped_by` names the earlier rule (it fires first), with
/// `every_row` when it matches every row the new one does; none when nothing overlaps.
#[tokio::test]
async fn a_rule_created_behind_an_overlapping_one_names_the_rule_that_fires_first() {
    let h = Harness::with_demo().await;
    without_demo_rules(&h).await;
    let category = "ca7e0000-0001-4000-8000-000000000005";
    let uber = rule(
        &h,
        json!({"company_id": ACME_COMPANY, "scope": "transactions", "description_contains": "uber",
               "set_category_id": category}),
    )
    .await;
    assert!(uber["overlapped_by"].is_null(), "{uber}");
    // Every "uber eats" row is an "uber" row: the first rule always fires first.
    let eats = rule(
        &h,
        json!({"company_id": ACME_COMPANY, "scope": "transactions", "description_contains": "Uber Eats",
               "set_category_id": category}),
    )
    .await;
    assert_eq!(eats["overlapped_by"], json!({"id": id(&uber), "position": 1, "every_row": true}), "{eats}");
    // Some rows of a debit rule are "uber" rows: it fires first on those.
    let debits = rule(
        &h,
        json!({"company_id": ACME_COMPANY, "scope": "transactions", "transaction_type": "debit",
               "set_category_id": category}),
    )
    .await;
    assert_eq!(debits["overlapped_by"], json!({"id": id(&uber), "position": 1, "every_row": false}), "{debits}");
    // Another account than a rule that names one, another scope, a paused rule: no overlap.
    let paused = rule(
        &h,
        json!({"company_id": ACME_COMPANY, "scope": "billings", "active": false, "description_contains": "aluguel",
               "set_category_id": category}),
    )
    .await;
    assert!(paused["overlapped_by"].is_null(), "{paused}");
    let billing = rule(
        &h,
        json!({"company_id": ACME_COMPANY, "scope": "billings", "description_contains": "aluguel",
               "set_category_id": category}),
    )
    .await;
    assert!(billing["overlapped_by"].is_null(), "a paused rule fires on nothing: {billing}");
    // The tool answers the same.
    let arguments = json!({"company_id": ACME_COMPANY, "scope": "transactions", "description_contains": "uber pool",
                           "set_category_id": category});
    let made =
        h.send(call("finance_automatic_rules_create", arguments).bearer(&h.token(DEMO_OWNER)).build()).await.result();
    assert_eq!(made["structuredContent"]["overlapped_by"]["id"], id(&uber), "{made}");
    // The stored rule answers no overlap of its own (only the create does).
    assert!(get(&h, &format!("/v1/automatic-rules/{}", id(&eats))).await.get("overlapped_by").is_none());
}
