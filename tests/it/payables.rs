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
