//! `/v1/classification_centers`: validation, company of the workspace, partial update
//! (null clears the description), type changes against existing apportionments,
//! delete `in_use` with the usage by record kind, idempotency, pagination and filters,
//! isolation, scope and role checks, provenance and audit — on SQLite and PostgreSQL.

use crate::common;

use common::*;
use http::Method;
use serde_json::{json, Value};

const COLLECTION: &str = "/v1/classification_centers";

async fn create(h: &Harness, token: &str, body: Value) -> Value {
    create_at(h, COLLECTION, token, body).await
}

fn path(id: &str) -> String {
    format!("{COLLECTION}/{id}")
}

const NOW: &str = "2026-11-30T12:00:00Z";

/// A debit or credit transaction of Acme Serviços apportioned to `center`.
async fn allocate_transaction(h: &Harness, center: &str, direction: &str) {
    let account = uuid::Uuid::new_v4().to_string();
    exec(
        h,
        "INSERT INTO financial_accounts (id, workspace_id, company_id, name, account_type, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, 'Caixa', 'cash', $4, $4, 'system', 'system')",
        &[&account, DEMO_WORKSPACE_ACME, ACME_SERVICES, NOW],
    )
    .await;
    let transaction = uuid::Uuid::new_v4().to_string();
    exec(
        h,
        "INSERT INTO financial_transactions (id, workspace_id, company_id, financial_account_id, description, amount_cents, occurred_at,
                                             transaction_type, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, $4, 'Movimento', 150000, '2026-11-05', $5, $6, $6, 'system', 'system')",
        &[&transaction, DEMO_WORKSPACE_ACME, ACME_SERVICES, &account, direction, NOW],
    )
    .await;
    allocate(h, "transaction", &transaction, center).await;
}

/// A payable or receivable of Acme Serviços apportioned to `center`.
async fn allocate_billing(h: &Harness, center: &str, kind: &str) {
    let billing = uuid::Uuid::new_v4().to_string();
    exec(
        h,
        "INSERT INTO billings (id, workspace_id, company_id, kind, description, amount_cents, due_date, competence_date, billing_type,
                               status, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, $4, 'Conta', 10000, '2026-12-10', '2026-12-01', 'normal', 'pending', $5, $5, 'system', 'system')",
        &[&billing, DEMO_WORKSPACE_ACME, ACME_SERVICES, kind, NOW],
    )
    .await;
    allocate(h, "billing", &billing, center).await;
}

async fn allocate(h: &Harness, owner_type: &str, owner: &str, center: &str) {
    exec(
        h,
        "INSERT INTO allocations (owner_type, owner_id, workspace_id, classification_center_id, position, percentage_bp)
         VALUES ($1, $2, $3, $4, 0, 10000)",
        &[owner_type, owner, DEMO_WORKSPACE_ACME, center],
    )
    .await;
}

/// A center may be created inactive, as the real API takes `active` on create.
#[tokio::test]
async fn a_center_may_be_created_inactive() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let body = json!({"company_id": ACME_COMPANY, "name": "Projeto encerrado", "type": "cost"});
    assert_eq!(create(&h, &token, body.clone()).await["active"], true, "active by default");
    let mut inactive = body;
    inactive["name"] = json!("Projeto arquivado");
    inactive["active"] = json!(false);
    assert_eq!(create(&h, &token, inactive).await["active"], false);
}

#[tokio::test]
async fn the_hyphenated_path_does_not_exist() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let center = id(&create(&h, &token, json!({"company_id": ACME_SERVICES, "name": "Geral", "type": "both"})).await);
    for p in [
        "/v1/classification-centers".to_string(),
        format!("/v1/classification-centers/{center}"),
        "/v1/cost_centers".to_string(),
    ] {
        let reply = h.send(rest(Method::GET, &p, &token, None).build()).await;
        assert_eq!(reply.status, 404, "{p}");
        assert_eq!(reply.json()["error"]["code"], "not_found");
    }
}

#[tokio::test]
async fn the_company_must_be_of_the_callers_workspace() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    for company in [BETA_COMPANY, MISSING] {
        let reply = h
            .send(
                rest(
                    Method::POST,
                    COLLECTION,
                    &token,
                    Some(json!({"company_id": company, "name": "X", "type": "cost"})),
                )
                .build(),
            )
            .await;
        assert_eq!(reply.status, 422, "{company}");
        assert_eq!(reply.json()["error"]["code"], "unprocessable_entity");
        assert_eq!(reply.json()["error"]["details"], json!({"field": "company_id", "reason": "invalid_reference"}));
        assert_eq!(reply.json()["error"]["message"], "Company not found in this workspace");
    }
}

#[tokio::test]
async fn update_is_partial_and_null_clears_the_description() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let cid = id(&create(
        &h,
        &token,
        json!({"company_id": ACME_SERVICES, "name": "Marketing", "type": "cost", "description": "Campanhas"}),
    )
    .await);
    let finance = h.api_token(DEMO_FINANCE);
    let p = format!("{}?workspace_id={DEMO_WORKSPACE_ACME}", path(&cid));
    let reply =
        h.send(rest(Method::PATCH, &p, &finance, Some(json!({"description": null, "active": false}))).build()).await;
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.bytes));
    let center = reply.json();
    assert_eq!(center["description"], Value::Null);
    assert_eq!(center["active"], false);
    assert_eq!(center["name"], "Marketing", "fields not sent are kept");
    assert_eq!(center["type"], "cost");
    assert_eq!(center["updated_by"], DEMO_FINANCE);
    assert_eq!(center["updated_via"], "api");
    let reply = h
        .send(
            rest(
                Method::PATCH,
                &path(&cid),
                &token,
                Some(json!({"name": "Mkt", "type": "both", "description": "Tudo"})),
            )
            .build(),
        )
        .await;
    assert_eq!(reply.status, 200);
    let center = reply.json();
    assert_eq!(
        (center["name"].as_str(), center["type"].as_str(), center["description"].as_str(), center["active"].as_bool()),
        (Some("Mkt"), Some("both"), Some("Tudo"), Some(false))
    );
    assert_eq!(
        count(
            &h,
            "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = 'classification_centers.update'",
            &cid
        )
        .await,
        2
    );
    for (body, field, reason) in [
        (json!({"company": ACME_COMPANY}), "company", "unknown_field"),
        (json!({"type": "neither"}), "type", "invalid_value"),
        (json!({"active": "no"}), "active", "wrong_type"),
        (json!({"name": null}), "name", "wrong_type"),
        (json!({"type": null}), "type", "wrong_type"),
        (json!({"active": null}), "active", "wrong_type"),
        (json!({"description": "d".repeat(501)}), "description", "too_long"),
        (json!({"name": " "}), "name", "too_short"),
    ] {
        let reply = h.send(rest(Method::PATCH, &path(&cid), &token, Some(body.clone())).build()).await;
        assert_eq!(reply.status, 422, "{body}: {}", String::from_utf8_lossy(&reply.bytes));
        let details = &reply.json()["error"]["details"];
        assert_eq!((details["field"].as_str(), details["reason"].as_str()), (Some(field), Some(reason)), "{body}");
    }
}

#[tokio::test]
async fn a_type_change_is_refused_while_apportionments_of_the_other_direction_use_it() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let cid = id(&create(&h, &token, json!({"company_id": ACME_SERVICES, "name": "Comercial", "type": "both"})).await);
    allocate_billing(&h, &cid, "payable").await;
    allocate_transaction(&h, &cid, "debit").await;
    let reply = h
        .send(rest(Method::PATCH, &path(&cid), &token, Some(json!({"type": "revenue", "name": "Receita"}))).build())
        .await;
    assert_eq!(reply.status, 422, "{}", String::from_utf8_lossy(&reply.bytes));
    assert_eq!(
        reply.json()["error"]["details"],
        json!({"reason": "in_use", "usage": {"transactions": 1, "payables": 1, "receivables": 0}})
    );
    let got = h.send(rest(Method::GET, &path(&cid), &token, None).build()).await.json();
    assert_eq!((got["type"].as_str(), got["name"].as_str()), (Some("both"), Some("Comercial")));
    // The direction its records have is fine.
    let reply = h.send(rest(Method::PATCH, &path(&cid), &token, Some(json!({"type": "cost"}))).build()).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["type"], "cost");
}

#[tokio::test]
async fn delete_of_a_center_in_use_reports_the_usage_by_record_kind() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let cid = id(&create(&h, &token, json!({"company_id": ACME_SERVICES, "name": "Comercial", "type": "both"})).await);
    allocate_transaction(&h, &cid, "credit").await;
    allocate_billing(&h, &cid, "payable").await;
    allocate_billing(&h, &cid, "payable").await;
    allocate_billing(&h, &cid, "receivable").await;
    let reply = h.send(rest(Method::DELETE, &path(&cid), &token, None).build()).await;
    assert_eq!(reply.status, 422);
    assert_eq!(reply.json()["error"]["code"], "unprocessable_entity");
    assert_eq!(
        reply.json()["error"]["details"],
        json!({"reason": "in_use", "usage": {"transactions": 1, "payables": 2, "receivables": 1}})
    );
    assert_eq!(count(&h, "SELECT COUNT(*) FROM allocations WHERE classification_center_id = $1", &cid).await, 4);
    // Deactivating is the way to retire it.
    let off = h.send(rest(Method::PATCH, &path(&cid), &token, Some(json!({"active": false}))).build()).await;
    assert_eq!(off.status, 200);
    // Once nothing refers to it, it goes.
    exec(&h, "DELETE FROM allocations WHERE classification_center_id = $1", &[&cid]).await;
    assert_eq!(h.send(rest(Method::DELETE, &path(&cid), &token, None).build()).await.status, 204);
}

#[tokio::test]
async fn list_filters_sorts_and_pages() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let mut made = Vec::new();
    for (name, kind) in [
        ("Eventos", "cost"),
        ("Consultoria", "revenue"),
        ("Diretoria", "cost"),
        ("Agência", "both"),
        ("Bolsa", "revenue"),
    ] {
        made.push((
            name,
            id(&create(&h, &token, json!({"company_id": ACME_SERVICES, "name": name, "type": kind})).await),
        ));
    }
    let elsewhere =
        id(&create(&h, &token, json!({"company_id": ACME_COMPANY, "name": "Fabrica", "type": "cost"})).await);
    let off = &made[2].1;
    assert_eq!(
        h.send(rest(Method::PATCH, &path(off), &token, Some(json!({"active": false}))).build()).await.status,
        200
    );
    let names = |page: &Value| -> Vec<String> {
        page["data"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_string()).collect()
    };
    let get =
        |q: &str| rest(Method::GET, &format!("{COLLECTION}?company_id={ACME_SERVICES}&{q}"), &token, None).build();
    let by = |q: &'static str| {
        let request = get(q);
        let h = &h;
        async move {
            let reply = h.send(request).await;
            assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.bytes));
            reply.json()
        }
    };
    assert_eq!(names(&by("").await), ["Agência", "Bolsa", "Consultoria", "Diretoria", "Eventos"]);
    assert_eq!(names(&by("active=false").await), ["Diretoria"]);
    assert_eq!(names(&by("active=true&type[in]=cost,both").await), ["Agência", "Eventos"]);
    assert_eq!(names(&by("type=revenue&sort=-name").await), ["Consultoria", "Bolsa"]);
    assert_eq!(names(&by("name[in]=Bolsa,Eventos,Fabrica").await), ["Bolsa", "Eventos"]);
    let both = h.send(rest(Method::GET, &format!("{COLLECTION}?company_id[in]={ACME_SERVICES},{ACME_COMPANY}&type=cost&active=true&name[in]=Eventos,Diretoria,Fabrica"), &token, None).build()).await.json();
    assert_eq!(names(&both), ["Eventos", "Fabrica"]);
    assert!(both.to_string().contains(&elsewhere));
    // Pagination by creation, two at a time: every row exactly once.
    let mut seen = Vec::new();
    let mut cursor = String::new();
    let mut pages = 0;
    loop {
        let reply = h.send(get(&format!("sort=created_at&limit=2{cursor}"))).await;
        assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.bytes));
        let page = reply.json();
        seen.extend(page["data"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().to_string()));
        pages += 1;
        assert!(pages < 10);
        match page["meta"]["next_cursor"].as_str() {
            Some(next) => cursor = format!("&cursor={next}"),
            None => break,
        }
    }
    let mut expected: Vec<String> = made.iter().map(|(_, i)| i.clone()).collect();
    let mut sorted_seen = seen.clone();
    sorted_seen.sort();
    expected.sort();
    assert_eq!(sorted_seen, expected, "every row exactly once");
    for bad in [
        "colour=red",
        "type=debit",
        "active=maybe",
        "active[gte]=true",
        "company_id=nope",
        "sort=type",
        "limit=101",
        "cursor=nope",
    ] {
        let reply = h.send(get(bad)).await;
        assert_eq!(reply.status, 400, "{bad}");
        assert_eq!(reply.json()["error"]["code"], "bad_request", "{bad}");
    }
}

#[tokio::test]
async fn a_center_created_without_a_description_has_none() {
    let h = Harness::new().await;
    let body = json!({"company_id": ACME_SERVICES, "name": "Geral", "type": "both"});
    assert_eq!(create(&h, &h.api_token(DEMO_OWNER), body).await["description"], Value::Null);
}

#[tokio::test]
async fn openapi_names_the_center_types_under_the_underscored_path() {
    let h = Harness::new().await;
    let doc = crate::records::openapi(&h).await;
    let create = crate::records::request_schema(&doc, COLLECTION, "post");
    assert_eq!(create["properties"]["type"]["enum"], json!(["cost", "revenue", "both"]));
    assert!(doc["paths"]["/v1/classification-centers"].is_null());
}
