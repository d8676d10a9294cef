//! `/v1/payables`: the status machine, settlement, series, apportionment, closed
//! periods, isolation, scopes and roles — on SQLite and PostgreSQL. The same scenarios
//! run for receivables (tests/receivables.rs).

use crate::billings;
use crate::common;

use billings::PAYABLES;

billing_tests!(PAYABLES);

#[tokio::test]
async fn payment_methods_of_payables_include_utility_and_tribute() {
    let h = common::Harness::new().await;
    let created = billings::create(
        &h,
        PAYABLES,
        billings::with(billings::body(), serde_json::json!({"payment_method_kind": "tribute"})),
    )
    .await;
    assert_eq!(created["payment_method_kind"], "tribute");
}

/// A slip is on one open payable at a time: a pending payable whose barcode (in either
/// form: line or barcode) or Pix copy-and-paste code another open payable of the
/// workspace already has is refused, 409 naming the other — on create and on an update
/// of the barcode, through both doors; once the other is paid or cancelled, or in
/// another workspace, it is accepted.
#[tokio::test]
async fn a_slip_another_open_payable_already_has_is_refused_naming_it() {
    use common::*;
    use http::Method;
    use serde_json::{json, Value};
    let h = Harness::with_demo().await;
    let api = h.api_token(DEMO_OWNER);
    // The demo's December rent is pending with this boleto (its digitable line).
    let line = "34191090080000000000000000000018316560000450000";
    let barcode = "34193165600004500001090000000000000000000001";
    let bill = |description: &str, extra: Value| {
        let mut body = json!({"company_id": ACME_COMPANY, "description": description, "amount": "4500.00",
                              "due_date": "2026-12-10", "person_name": "Imobiliária"});
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        body
    };
    let refused = |reply: &Reply, field: &str, other: &str| {
        assert_eq!(reply.status, 409, "{}", text(reply));
        let error = reply.json()["error"].clone();
        assert_eq!(error["code"], "conflict", "{error}");
        assert_eq!(error["details"]["reason"], "duplicate_bill", "{error}");
        assert_eq!(error["details"]["field"], field, "{error}");
        assert_eq!(error["details"]["payable_id"], other, "{error}");
        assert!(error["message"].as_str().unwrap().contains(other), "{error}");
    };
    let before = count(&h, "SELECT COUNT(*) FROM billings WHERE workspace_id = $1", DEMO_WORKSPACE_ACME).await;
    for code in [line, barcode] {
        let reply =
            send(&h, Method::POST, "/v1/payables", &api, Some(bill("Aluguel de novo", json!({"barcode": code})))).await;
        refused(&reply, "barcode", ACME_RENT_DECEMBER);
    }
    // The tool: the same refusal.
    let made = h
        .send(
            call("finance_payables_create", bill("Aluguel de novo", json!({"barcode": barcode})))
                .bearer(&h.token(DEMO_OWNER))
                .build(),
        )
        .await
        .result();
    assert_eq!(made["isError"], true, "{made}");
    let error: Value = serde_json::from_str(made["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(error["error"]["details"]["payable_id"], ACME_RENT_DECEMBER, "{made}");
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM billings WHERE workspace_id = $1", DEMO_WORKSPACE_ACME).await,
        before,
        "nothing written"
    );
    // A Pix code: the second payable with it is refused, then an update that sets it.
    let pix = "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de \
               Tal6008BRASILIA62070503***63041D3D";
    let first = create_at(&h, "/v1/payables", &api, bill("Pix 1", json!({"pix_copia_e_cola": pix}))).await;
    let reply =
        send(&h, Method::POST, "/v1/payables", &api, Some(bill("Pix 2", json!({"pix_copia_e_cola": pix})))).await;
    refused(&reply, "pix_copia_e_cola", &id(&first));
    let plain = create_at(&h, "/v1/payables", &api, bill("Outra", json!({}))).await;
    let path = format!("/v1/payables/{}", id(&plain));
    refused(
        &send(&h, Method::PATCH, &path, &api, Some(json!({"pix_copia_e_cola": pix}))).await,
        "pix_copia_e_cola",
        &id(&first),
    );
    refused(&send(&h, Method::PATCH, &path, &api, Some(json!({"barcode": line}))).await, "barcode", ACME_RENT_DECEMBER);
    let tool = call("finance_payables_update", json!({"id": id(&plain), "barcode": barcode}));
    let updated = h.send(tool.bearer(&h.token(DEMO_OWNER)).build()).await.result();
    assert_eq!(updated["isError"], true, "{updated}");
    // The payable keeps its own slip on an update of anything else.
    let own =
        send(&h, Method::PATCH, &format!("/v1/payables/{}", id(&first)), &api, Some(json!({"notes": "ok"}))).await;
    assert_eq!(own.status, 200, "{}", text(&own));
    // Once the other is no longer open, the slip is free.
    let cancelled = send(&h, Method::POST, &format!("/v1/payables/{}/cancel", id(&first)), &api, None).await;
    assert_eq!(cancelled.status, 200, "{}", text(&cancelled));
    let again = send(&h, Method::PATCH, &path, &api, Some(json!({"pix_copia_e_cola": pix}))).await;
    assert_eq!(again.status, 200, "{}", text(&again));
}

/// The groups `/v1/payables/duplicates` answers, each as its sorted payable ids and its
/// rules.
fn duplicate_groups(answer: &serde_json::Value) -> Vec<(Vec<String>, Vec<String>)> {
    let mut groups: Vec<(Vec<String>, Vec<String>)> = answer["data"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"))
        .iter()
        .map(|group| {
            let mut ids: Vec<String> =
                group["payables"].as_array().unwrap().iter().map(|p| p["id"].as_str().unwrap().to_string()).collect();
            ids.sort();
            let rules = group["reasons"].as_array().unwrap().iter().map(|r| r["rule"].as_str().unwrap().to_string());
            (ids, rules.collect())
        })
        .collect();
    groups.sort();
    groups
}

/// Likely duplicates on the demo workspace: the planted pairs are found — the same vendor
/// and amount three days apart, the same vendor and invoice number, the same boleto
/// written before the rule refused it — each with why, and none of the near-misses (the
/// same amount to another vendor, the same vendor and amount a month later, the demo's
/// own bills); the window narrows the first rule; the tool answers the same to a viewer.
#[tokio::test]
async fn likely_duplicates_are_grouped_with_why_and_near_misses_are_not() {
    use common::*;
    use http::Method;
    use serde_json::{json, Value};
    let h = Harness::with_demo().await;
    let api = h.api_token(DEMO_OWNER);
    let duplicates = |query: &str| {
        let h = &h;
        let api = api.clone();
        let path = format!("/v1/payables/duplicates{query}");
        async move {
            let reply = send(h, Method::GET, &path, &api, None).await;
            assert_eq!(reply.status, 200, "{}", text(&reply));
            reply.json()
        }
    };
    assert_eq!(duplicates("").await["data"], json!([]), "the demo alone has no duplicates");

    let bill = |description: &str, person: &str, amount: &str, due: &str, extra: Value| {
        let mut body = json!({"company_id": ACME_COMPANY, "description": description, "amount": amount,
                              "due_date": due, "person_name": person});
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        body
    };
    let mut made = Vec::new();
    for (description, person, amount, due, extra) in [
        ("Internet dezembro", "Provedor Net Rápida", "199.90", "2026-12-10", json!({})),
        ("Internet dezembro (de novo)", "Provedor Net Rápida", "199.90", "2026-12-13", json!({})),
        ("Impressos", "Gráfica Pontual", "320.00", "2026-12-05", json!({"document_number": "NF 4521"})),
        ("Impressos NF 4521", "Gráfica Pontual", "330.00", "2026-12-20", json!({"document_number": "NF 4521"})),
        // Near-misses: the same amount to another vendor; the same vendor a month later.
        ("Telefone", "Telefonia Sul", "199.90", "2026-12-11", json!({})),
        ("Internet janeiro", "Provedor Net Rápida", "199.90", "2027-01-10", json!({})),
        ("Aluguel lançado de novo", "Imobiliária Central", "4500.00", "2027-02-10", json!({})),
    ] {
        made.push(id(&create_at(&h, "/v1/payables", &api, bill(description, person, amount, due, extra)).await));
    }
    // A slip twice, as data written before the rule refused it.
    exec(
        &h,
        "INSERT INTO payment_coordinates (billing_id, workspace_id, barcode) VALUES ($1, $2, $3)",
        &[&made[6], DEMO_WORKSPACE_ACME, "34193165600004500001090000000000000000000001"],
    )
    .await;

    let sorted = |mut ids: Vec<&str>| {
        ids.sort();
        ids.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let answer = duplicates("").await;
    let mut expected = vec![
        (sorted(vec![&made[0], &made[1]]), vec!["same_vendor_and_amount".to_string()]),
        (sorted(vec![&made[2], &made[3]]), vec!["same_document_number".to_string()]),
        (sorted(vec![ACME_RENT_DECEMBER, &made[6]]), vec!["same_barcode".to_string()]),
    ];
    expected.sort();
    assert_eq!(duplicate_groups(&answer), expected, "{answer}");
    let texts = answer.to_string();
    for near in [&made[4], &made[5]] {
        assert!(!texts.contains(near.as_str()), "a near-miss is not a duplicate: {answer}");
    }
    assert!(texts.contains("due 3 day(s) apart"), "{answer}");
    assert!(texts.contains("NF 4521"), "{answer}");
    // Groups come by their first due date; a group's payables too.
    let firsts: Vec<&str> =
        answer["data"].as_array().unwrap().iter().map(|g| g["payables"][0]["due_date"].as_str().unwrap()).collect();
    assert_eq!(firsts, vec!["2026-12-05", "2026-12-10", "2026-12-10"], "{answer}");

    // A window of two days: the internet bills three days apart no longer match.
    let narrow = duplicate_groups(&duplicates("?within_days=2").await);
    assert_eq!(narrow.len(), 2, "{narrow:?}");
    assert!(narrow.iter().all(|(_, rules)| rules[0] != "same_vendor_and_amount"), "{narrow:?}");
    // One company's: the same groups (the demo's payables are all Acme's). Bad parameters:
    // 400 naming them.
    let acme = send(&h, Method::GET, &format!("/v1/payables/duplicates?company_id={ACME_COMPANY}"), &api, None).await;
    assert_eq!(duplicate_groups(&acme.json()), expected);
    for (query, field, reason) in [
        ("?within_days=32", "within_days", "out_of_range"),
        ("?within_days=soon", "within_days", "wrong_type"),
        ("?company_id=nope", "company_id", "invalid_uuid"),
        ("?vendor=x", "vendor", "unknown_filter"),
    ] {
        let reply = send(&h, Method::GET, &format!("/v1/payables/duplicates{query}"), &api, None).await;
        assert_eq!(reply.status, 400, "{query}: {}", text(&reply));
        let error = reply.json()["error"].clone();
        assert_eq!(
            (error["details"]["field"].as_str(), error["details"]["reason"].as_str()),
            (Some(field), Some(reason)),
            "{query}: {error}"
        );
    }

    // The tool, read-only: a viewer gets the same groups.
    let tool =
        h.send(call("finance_payables_duplicates", json!({})).bearer(&h.token(DEMO_VIEWER)).build()).await.result();
    assert_ne!(tool["isError"], true, "{tool}");
    assert_eq!(duplicate_groups(&tool["structuredContent"]), expected, "{tool}");
}

/// A cancelled payable is not reopened while another open payable has its slip: 409
/// `duplicate_bill` naming the other, and it stays cancelled.
#[tokio::test]
async fn a_reopen_that_would_make_a_slip_twice_open_is_refused() {
    use common::*;
    use http::Method;
    use serde_json::json;
    let h = Harness::with_demo().await;
    let api = h.api_token(DEMO_OWNER);
    let rent = format!("/v1/payables/{ACME_RENT_DECEMBER}");
    let cancelled = send(&h, Method::POST, &format!("{rent}/cancel"), &api, None).await;
    assert_eq!(cancelled.status, 200, "{}", text(&cancelled));
    let again = create_at(
        &h,
        "/v1/payables",
        &api,
        json!({"company_id": ACME_COMPANY, "description": "Aluguel dezembro", "amount": "4500.00",
               "due_date": "2026-12-10", "person_name": "Imobiliária Central",
               "barcode": "34193165600004500001090000000000000000000001"}),
    )
    .await;
    let reply = send(&h, Method::POST, &format!("{rent}/reopen"), &api, None).await;
    assert_eq!(reply.status, 409, "{}", text(&reply));
    let error = reply.json()["error"].clone();
    assert_eq!(error["details"]["reason"], "duplicate_bill", "{error}");
    assert_eq!(error["details"]["payable_id"], id(&again), "{error}");
    let read = send(&h, Method::GET, &rent, &api, None).await.json();
    assert_eq!(read["status"], "cancelled", "{read}");
}

/// The duplicates are the payables' to read: a token without the payables' scope is
/// refused on `/v1` (403 `insufficient_scope`) and the tool is not its to call; a company
/// the workspace does not have is the one answer a query's reference gets.
#[tokio::test]
async fn the_duplicates_need_the_payables_read_scope() {
    use common::*;
    use http::Method;
    use serde_json::json;
    let h = Harness::with_demo().await;
    let receivables_only = v1_token(&h, DEMO_OWNER, "finance.receivables");
    let reply = send(&h, Method::GET, "/v1/payables/duplicates", &receivables_only, None).await;
    assert_eq!(reply.status, 403, "{}", text(&reply));
    assert_eq!(reply.json()["error"]["code"], "insufficient_scope", "{}", text(&reply));
    let payables = v1_token(&h, DEMO_OWNER, "finance.payables");
    assert_eq!(send(&h, Method::GET, "/v1/payables/duplicates", &payables, None).await.status, 200);
    let mcp = h.token_with(DEMO_OWNER, Some("finance.receivables"), |_| {});
    let called = h.send(call("finance_payables_duplicates", json!({})).bearer(&mcp).build()).await.result();
    assert_eq!(called["isError"], true, "{called}");
    let other = format!("/v1/payables/duplicates?company_id={}", uuid::Uuid::new_v4());
    let reply = send(&h, Method::GET, &other, &payables, None).await;
    assert_eq!(
        (reply.status.as_u16(), details(&reply).1.as_deref()),
        (422, Some("invalid_reference")),
        "{}",
        text(&reply)
    );
}
