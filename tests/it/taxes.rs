//! `/v1/taxes`: the workspace catalogue of withholding taxes — rates as basis points
//! (never floats), unique names, the `in_use` refusal of a delete, partial updates,
//! pagination and filters, isolation, scope and role checks, idempotency, provenance
//! and audit — on SQLite and PostgreSQL.

use crate::common;

use common::*;
use http::Method;
use serde_json::{json, Value};

async fn scalar(h: &Harness, sql: &str, bind: &str) -> Option<i64> {
    sql::query(sql.to_string()).bind(bind).fetch_one(&h.state.db).await.unwrap().try_get(0).unwrap()
}

async fn count(h: &Harness, sql: &str, bind: &str) -> i64 {
    scalar(h, sql, bind).await.unwrap_or(0)
}

async fn create(h: &Harness, token: &str, body: Value) -> Value {
    create_at(h, "/v1/taxes", token, body).await
}

/// A billing of `kind` in the Acme workspace that charges `tax_id`.
async fn charge(h: &Harness, kind: &str, tax_id: &str) -> String {
    let id = uuid::Uuid::new_v4().to_string();
    exec(
        h,
        "INSERT INTO billings (id, workspace_id, company_id, kind, description, amount_cents, due_date, competence_date,
                               billing_type, status, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, $4, 'Serviço', 100000, '2026-05-10', '2026-05-01', 'normal', 'pending',
                 '2026-05-01T00:00:00Z', '2026-05-01T00:00:00Z', 'system', 'system')",
        &[&id, DEMO_WORKSPACE_ACME, ACME_COMPANY, kind],
    )
    .await;
    exec(
        h,
        "INSERT INTO billing_tax_charges (billing_id, workspace_id, tax_id, amount_cents, withholding) VALUES ($1, $2, $3, 1500, 1)",
        &[&id, DEMO_WORKSPACE_ACME, tax_id],
    )
    .await;
    id
}

#[tokio::test]
async fn default_rate_is_parsed_digit_by_digit_within_0_and_100() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    for (i, (rate, bp, shown)) in [
        ("0.00", 0, "0.00"),
        ("100.00", 10_000, "100.00"),
        ("12.34", 1234, "12.34"),
        ("0.01", 1, "0.01"),
        ("4.8", 480, "4.80"),
    ]
    .iter()
    .enumerate()
    {
        let tax = create(&h, &token, json!({"name": format!("T{i}"), "default_rate": rate})).await;
        assert_eq!(tax["default_rate"], *shown, "{rate}");
        assert_eq!(
            scalar(&h, "SELECT default_rate_bp FROM taxes WHERE id = $1", tax["id"].as_str().unwrap()).await,
            Some(*bp),
            "{rate}"
        );
    }
    for rate in ["100.01", "101.00", "999.99"] {
        let reply = h
            .send(rest(Method::POST, "/v1/taxes", &token, Some(json!({"name": "X", "default_rate": rate}))).build())
            .await;
        assert_eq!(reply.status, 422, "{rate}");
        assert_eq!(reply.json()["error"]["code"], "unprocessable_entity");
        assert_eq!(details(&reply), pair("default_rate", "out_of_range"), "{rate}");
    }
    // Off the schema's pattern (`^\d{1,3}\.\d{1,2}$`): refused by the request check.
    for rate in ["1", "1.234", "1,50", "1e2", "", " 1.50", "abc", "-1.00", "1000.00", "9999999999999.99"] {
        let reply = h
            .send(rest(Method::POST, "/v1/taxes", &token, Some(json!({"name": "X", "default_rate": rate}))).build())
            .await;
        assert_eq!(reply.status, 422, "{rate}");
        assert_eq!(details(&reply), pair("default_rate", "invalid_format"), "{rate}");
    }
    let reply =
        h.send(rest(Method::POST, "/v1/taxes", &token, Some(json!({"name": "X", "default_rate": 1.5}))).build()).await;
    assert_eq!(reply.status, 422);
    assert_eq!(details(&reply), pair("default_rate", "wrong_type"), "a JSON number is not a rate");
    assert_eq!(count(&h, "SELECT COUNT(*) FROM taxes WHERE name = $1", "X").await, 0);
}

#[tokio::test]
async fn name_is_unique_in_the_workspace() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    create(&h, &token, json!({"name": "INSS"})).await;
    let reply = h.send(rest(Method::POST, "/v1/taxes", &token, Some(json!({"name": " INSS "}))).build()).await;
    assert_eq!(reply.status, 409);
    assert_eq!(reply.json()["error"]["code"], "conflict");
    assert_eq!(details(&reply), pair("name", "duplicate"));
    // Renaming onto an existing name conflicts too.
    let pis = create(&h, &token, json!({"name": "PIS"})).await;
    let path = format!("/v1/taxes/{}", pis["id"].as_str().unwrap());
    let reply = h.send(rest(Method::PATCH, &path, &token, Some(json!({"name": "INSS"}))).build()).await;
    assert_eq!(reply.status, 409);
    assert_eq!(h.send(rest(Method::GET, &path, &token, None).build()).await.json()["name"], "PIS");
    // Another workspace has its own catalogue.
    create(&h, &h.api_token(DEMO_BETA_OWNER), json!({"name": "INSS"})).await;
}

#[tokio::test]
async fn update_is_partial_and_null_clears_the_rate() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let tax = create(&h, &token, json!({"name": "CSLL", "default_rate": "1.00"})).await;
    let path = format!("/v1/taxes/{}", tax["id"].as_str().unwrap());
    let reply = h.send(rest(Method::PATCH, &path, &token, Some(json!({"default_withholding": false}))).build()).await;
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.bytes));
    let updated = reply.json();
    assert_eq!(updated["default_withholding"], false);
    assert_eq!(updated["default_rate"], "1.00", "fields not sent are kept");
    assert_eq!(updated["name"], "CSLL");
    assert_eq!(updated["created_at"], tax["created_at"]);
    let reply = h
        .send(
            rest(Method::PATCH, &path, &token, Some(json!({"default_rate": "4.65", "name": "CSRF", "active": false})))
                .build(),
        )
        .await;
    assert_eq!(
        (reply.json()["default_rate"].as_str(), reply.json()["name"].as_str(), reply.json()["active"].as_bool()),
        (Some("4.65"), Some("CSRF"), Some(false))
    );
    let reply = h.send(rest(Method::PATCH, &path, &token, Some(json!({"default_rate": null}))).build()).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["default_rate"], Value::Null);
    assert_eq!(scalar(&h, "SELECT default_rate_bp FROM taxes WHERE id = $1", tax["id"].as_str().unwrap()).await, None);
    assert_eq!(reply.json()["updated_via"], "api");
    assert_eq!(
        count(
            &h,
            "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = 'taxes.update'",
            tax["id"].as_str().unwrap()
        )
        .await,
        3
    );
    for (patch, status, field, reason) in [
        (json!({"default_rate": "100.50"}), 422, "default_rate", "out_of_range"),
        (json!({"default_rate": "1"}), 422, "default_rate", "invalid_format"),
        (json!({"name": ""}), 422, "name", "too_short"),
        (json!({"workspace_id": DEMO_WORKSPACE_BETA}), 422, "workspace_id", "unknown_field"),
    ] {
        let reply = h.send(rest(Method::PATCH, &path, &token, Some(patch.clone())).build()).await;
        assert_eq!(reply.status, status, "{patch}");
        assert_eq!(details(&reply), pair(field, reason), "{patch}");
    }
}

#[tokio::test]
async fn delete_of_a_charged_tax_is_in_use() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let tax = create(&h, &token, json!({"name": "IRRF", "default_rate": "1.50"})).await;
    let id = tax["id"].as_str().unwrap().to_string();
    let path = format!("/v1/taxes/{id}");
    let mut billings =
        vec![charge(&h, "payable", &id).await, charge(&h, "payable", &id).await, charge(&h, "receivable", &id).await];
    billings.sort();
    let reply = h.send(rest(Method::DELETE, &path, &token, None).build()).await;
    assert_eq!(reply.status, 422);
    let error = &reply.json()["error"];
    assert_eq!(error["code"], "unprocessable_entity");
    assert_eq!(error["details"]["reason"], "in_use");
    assert_eq!(error["details"]["usage"], json!({"payables": 2, "receivables": 1}));
    assert_eq!(error["details"]["billing_ids"], json!(billings));
    assert_eq!(h.send(rest(Method::GET, &path, &token, None).build()).await.status, 200, "nothing was deleted");
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = 'taxes.delete'", &id).await,
        0
    );
    // Once no billing charges it, the tax can go.
    exec(&h, "DELETE FROM billing_tax_charges WHERE tax_id = $1", &[&id]).await;
    assert_eq!(h.send(rest(Method::DELETE, &path, &token, None).build()).await.status, 204);
    assert_eq!(h.send(rest(Method::DELETE, &path, &token, None).build()).await.status, 404);
    assert_eq!(h.send(rest(Method::GET, &path, &token, None).build()).await.status, 404);
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = 'taxes.delete'", &id).await,
        1
    );
}

#[tokio::test]
async fn in_use_names_at_most_100_billings() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let tax = create(&h, &token, json!({"name": "ISS"})).await;
    let id = tax["id"].as_str().unwrap().to_string();
    for _ in 0..101 {
        charge(&h, "receivable", &id).await;
    }
    let reply = h.send(rest(Method::DELETE, &format!("/v1/taxes/{id}"), &token, None).build()).await;
    assert_eq!(reply.status, 422);
    let details = &reply.json()["error"]["details"];
    assert_eq!(details["usage"], json!({"payables": 0, "receivables": 101}));
    assert_eq!(details["billing_ids"].as_array().unwrap().len(), 100);
}

#[tokio::test]
async fn list_filters_pagination_and_bad_queries() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    for (name, withholding, active) in
        [("IRRF", true, true), ("INSS", true, true), ("ISS", false, true), ("PIS", true, false), ("COFINS", true, true)]
    {
        create(&h, &token, json!({"name": name, "default_withholding": withholding, "active": active})).await;
    }
    let get = |path: &str| rest(Method::GET, path, &token, None).build();
    let names = |page: &Value| {
        page["data"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap().to_string()).collect::<Vec<_>>()
    };
    assert_eq!(names(&h.send(get("/v1/taxes")).await.json()), ["COFINS", "INSS", "IRRF", "ISS", "PIS"]);
    assert_eq!(names(&h.send(get("/v1/taxes?active=false")).await.json()), ["PIS"]);
    assert_eq!(names(&h.send(get("/v1/taxes?default_withholding=false")).await.json()), ["ISS"]);
    assert_eq!(names(&h.send(get("/v1/taxes?name[in]=ISS,IRRF,NOPE")).await.json()), ["IRRF", "ISS"]);
    assert_eq!(names(&h.send(get("/v1/taxes?created_at[gte]=2000-01-01")).await.json()).len(), 5);
    assert_eq!(names(&h.send(get("/v1/taxes?updated_at[gt]=2999-01-01")).await.json()).len(), 0);
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("/v1/taxes?limit=2&sort=-name&cursor={c}"),
            None => "/v1/taxes?limit=2&sort=-name".into(),
        };
        let page = h.send(get(&path)).await.json();
        seen.extend(names(&page));
        match page["meta"]["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    assert_eq!(seen, ["PIS", "ISS", "IRRF", "INSS", "COFINS"], "every row once");
    for bad in [
        "/v1/taxes?colour=red",
        "/v1/taxes?active=yes",
        "/v1/taxes?name[gte]=A",
        "/v1/taxes?sort=default_rate",
        "/v1/taxes?limit=0",
        "/v1/taxes?cursor=x",
        "/v1/taxes?company_id=c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a11",
    ] {
        let reply = h.send(get(bad)).await;
        assert_eq!(reply.status, 400, "{bad}");
        assert_eq!(reply.json()["error"]["code"], "bad_request", "{bad}");
    }
}

#[tokio::test]
async fn a_rate_is_stored_as_basis_points_and_may_be_left_out() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let tax = create(&h, &token, json!({"name": "IRRF", "default_rate": "1.5"})).await;
    let stored = scalar(&h, "SELECT default_rate_bp FROM taxes WHERE id = $1", tax["id"].as_str().unwrap()).await;
    assert_eq!(stored, Some(150), "stored as basis points");
    let informational =
        create(&h, &token, json!({"name": "ISS", "default_withholding": false, "default_rate": null})).await;
    assert_eq!(informational["default_withholding"], false);
    assert_eq!(informational["default_rate"], Value::Null);
}

#[tokio::test]
async fn openapi_shows_the_rate_not_its_stored_form() {
    let h = Harness::new().await;
    let doc = crate::records::openapi(&h).await;
    let tax = crate::records::response_schema(&doc, "/v1/taxes/{id}", "get", 200);
    assert!(tax["properties"]["default_rate"].is_object());
    assert!(tax["properties"]["rate_bp"].is_null(), "the stored form is not part of the contract");
}
