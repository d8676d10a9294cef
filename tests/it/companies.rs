//! `/v1/companies`: CNPJ check digits and uniqueness, idempotency on both doors and
//! under a race, pagination, filters, the workspace hint, partial updates, the `in_use`
//! delete and the router's own refusals — on SQLite and PostgreSQL. What every plain
//! resource shares (create, isolation, scope and role, validation, delete, OpenAPI) is
//! swept by `records`.

use crate::common;

use crate::records::table::new_company;
use common::*;
use http::Method;
use serde_json::{json, Value};

#[tokio::test]
async fn cnpj_check_digits_are_validated() {
    let h = Harness::new().await;
    let mut body = new_company();
    body["cnpj"] = json!("11.222.333/0001-82");
    let reply = h.send(rest(Method::POST, "/v1/companies", &h.api_token(DEMO_OWNER), Some(body)).build()).await;
    assert_eq!(reply.status, 422);
    assert_eq!(reply.json()["error"]["code"], "unprocessable_entity");
    assert_eq!(reply.json()["error"]["details"], json!({"field": "cnpj", "reason": "invalid_document"}));
}

#[tokio::test]
async fn one_active_company_per_cnpj() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let duplicate = json!({"name": "Acme de novo", "cnpj": "11222333000181"});
    let reply = h.send(rest(Method::POST, "/v1/companies", &token, Some(duplicate.clone())).build()).await;
    assert_eq!(reply.status, 409);
    assert_eq!(reply.json()["error"]["code"], "conflict");
    // After deactivating the first, the CNPJ may be used again.
    let off = h
        .send(
            rest(Method::PATCH, &format!("/v1/companies/{ACME_COMPANY}"), &token, Some(json!({"active": false})))
                .build(),
        )
        .await;
    assert_eq!(off.status, 200);
    assert_eq!(h.send(rest(Method::POST, "/v1/companies", &token, Some(duplicate)).build()).await.status, 201);
    // The same CNPJ in another workspace is another company.
    let beta = h.api_token(DEMO_BETA_OWNER);
    let reply = h
        .send(
            rest(Method::POST, "/v1/companies", &beta, Some(json!({"name": "Acme em Beta", "cnpj": "11222333000181"})))
                .build(),
        )
        .await;
    assert_eq!(reply.status, 201);
}

#[tokio::test]
async fn an_idempotency_key_covers_the_request_not_its_spelling_on_both_doors() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let spelled = |body: String| {
        Mcp::raw(body)
            .method(Method::POST)
            .path("/v1/companies")
            .bearer(&token)
            .header("content-type", "application/json")
            .header("x-idempotency-key", "spelled")
    };
    let first = h.send(spelled(new_company().to_string()).build()).await;
    assert_eq!(first.status, 201);
    // The same request with other whitespace and key order is the same request.
    let members: Vec<String> = new_company()
        .as_object()
        .unwrap()
        .iter()
        .rev()
        .map(|(k, v)| format!("\n  {} : {v}", Value::from(k.as_str())))
        .collect();
    let respelled = format!("{{{}\n}}", members.join(","));
    let again = h.send(spelled(respelled).build()).await;
    assert_eq!(again.status, 201, "{}", String::from_utf8_lossy(&again.bytes));
    assert_eq!(again.header("x-idempotency-replayed"), Some("true"));
    assert_eq!(again.json(), first.json());

    // A key first used by the tool replays on `POST /v1/companies` for the same request.
    let mcp = h.token(DEMO_OWNER);
    let args = json!({"name": "Porta Dupla Ltda", "cnpj": "11444777000242", "idempotency_key": "both-doors"});
    let call =
        Mcp::modern("tools/call", json!({"name": "finance_companies_create", "arguments": args})).bearer(&mcp).build();
    let tool = h.send(call).await.result();
    assert_eq!(tool.get("isError"), None, "{tool}");
    let body = "{ \"cnpj\": \"11444777000242\",\n  \"name\": \"Porta Dupla Ltda\" }".to_string();
    let rest = h
        .send(
            Mcp::raw(body)
                .method(Method::POST)
                .path("/v1/companies")
                .bearer(&token)
                .header("content-type", "application/json")
                .header("idempotency-key", "both-doors")
                .build(),
        )
        .await;
    assert_eq!(rest.status, 201, "{}", String::from_utf8_lossy(&rest.bytes));
    assert_eq!(rest.header("x-idempotency-replayed"), Some("true"));
    assert_eq!(rest.json()["id"], tool["structuredContent"]["id"]);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM companies WHERE cnpj = $1", "11444777000242").await, 1);
}

#[tokio::test]
async fn idempotency_key_is_race_safe() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let request =
        || rest(Method::POST, "/v1/companies", &token, Some(new_company())).header("x-idempotency-key", "race").build();
    let (a, b, c) = tokio::join!(h.send(request()), h.send(request()), h.send(request()));
    let statuses = [a.status.as_u16(), b.status.as_u16(), c.status.as_u16()];
    assert!(statuses.iter().all(|s| *s == 201 || *s == 409), "{statuses:?}");
    let ids: std::collections::HashSet<_> =
        [a, b, c].iter().filter(|r| r.status == 201).map(|r| r.json()["id"].clone()).collect();
    assert_eq!(ids.len(), 1, "every successful answer names the same record");
    assert_eq!(count(&h, "SELECT COUNT(*) FROM companies WHERE cnpj = $1", "12ABC34501DE35").await, 1);
}

#[tokio::test]
async fn pagination_walks_every_row_once_under_concurrent_inserts() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let cnpjs = ["11444777000242", "11444777000323", "11444777000404", "11444777000595", "11444777000676"];
    for (i, cnpj) in cnpjs.iter().enumerate() {
        let body = json!({"name": format!("Filial {i}"), "cnpj": cnpj});
        let reply = h.send(rest(Method::POST, "/v1/companies", &token, Some(body)).build()).await;
        assert_eq!(reply.status, 201, "{}", String::from_utf8_lossy(&reply.bytes));
    }
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let path = match &cursor {
            Some(c) => format!("/v1/companies?limit=2&sort=name&cursor={c}"),
            None => "/v1/companies?limit=2&sort=name".into(),
        };
        let reply = h.send(rest(Method::GET, &path, &token, None).build()).await;
        assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.bytes));
        let page = reply.json();
        seen.extend(page["data"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_string()));
        pages += 1;
        if pages == 1 {
            // Inserted while paging: sorts before the cursor, so it is not seen; nothing shifts.
            let body = json!({"name": "AAA Inserida", "cnpj": "11444777000757"});
            assert_eq!(h.send(rest(Method::POST, "/v1/companies", &token, Some(body)).build()).await.status, 201);
        }
        match page["meta"]["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    let mut expected: Vec<String> = vec!["Acme Comércio Ltda".into(), "Acme Serviços Ltda".into()];
    expected.extend((0..5).map(|i| format!("Filial {i}")));
    expected.sort();
    assert_eq!(seen, expected, "no row skipped, none repeated");
    assert_eq!(pages, 4);
}

#[tokio::test]
async fn list_filters_and_bad_queries() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let get = |path: &str| rest(Method::GET, path, &token, None).build();
    let all = h.send(get("/v1/companies")).await.json();
    assert_eq!(all["data"].as_array().unwrap().len(), 2);
    assert_eq!(all["meta"]["next_cursor"], Value::Null);
    let by_cnpj = h.send(get("/v1/companies?cnpj[in]=11444777000161,00000000000000")).await.json();
    assert_eq!(by_cnpj["data"][0]["name"], "Acme Serviços Ltda");
    assert_eq!(h.send(get("/v1/companies?active=false")).await.json()["data"], json!([]));
    for bad in [
        "/v1/companies?colour=red",
        "/v1/companies?active[gte]=true",
        "/v1/companies?limit=101",
        "/v1/companies?cursor=nope",
        "/v1/companies?sort=cnpj",
    ] {
        let reply = h.send(get(bad)).await;
        assert_eq!(reply.status, 400, "{bad}");
        assert_eq!(reply.json()["error"]["code"], "bad_request", "{bad}");
    }
}

/// `X-Workspace-Id` and `?workspace_id=` are read by one rule on both doors: empty is
/// no hint, and the query is form-decoded (`%2D` is `-`).
#[tokio::test]
async fn an_empty_workspace_hint_is_no_hint_and_the_query_is_decoded() {
    let h = Harness::new().await;
    let owner = h.api_token(DEMO_OWNER);
    let plain = h.send(rest(Method::GET, "/v1/companies", &owner, None).build()).await;
    assert_eq!(plain.status, 200);
    for hinted in [
        rest(Method::GET, "/v1/companies?workspace_id=", &owner, None),
        rest(Method::GET, "/v1/companies", &owner, None).header("x-workspace-id", " "),
    ] {
        let reply = h.send(hinted.build()).await;
        assert_eq!((reply.status.as_u16(), reply.json()), (200, plain.json()));
    }
    // An empty header does not disagree with the query (which is 400): the query names it.
    let beta = format!("/v1/companies?workspace_id={DEMO_WORKSPACE_BETA}");
    assert_eq!(h.send(rest(Method::GET, &beta, &owner, None).header("x-workspace-id", "").build()).await.status, 404);
    let encoded = format!("/v1/companies?workspace_id={}", DEMO_WORKSPACE_BETA.replace('-', "%2D"));
    assert_eq!(h.send(rest(Method::GET, &encoded, &owner, None).build()).await.status, 404);
    let encoded = format!("/v1/companies?workspace_id={}", DEMO_WORKSPACE_ACME.replace('-', "%2D"));
    assert_eq!(h.send(rest(Method::GET, &encoded, &owner, None).build()).await.json(), plain.json());
}

#[tokio::test]
async fn update_is_partial_and_null_clears() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let path = format!("/v1/companies/{ACME_COMPANY}");
    let reply = h
        .send(
            rest(Method::PATCH, &path, &token, Some(json!({"trade_name": null, "locked_until": "2026-03-31"}))).build(),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.bytes));
    let company = reply.json();
    assert_eq!(company["trade_name"], Value::Null);
    assert_eq!(company["locked_until"], "2026-03-31");
    assert_eq!(company["name"], "Acme Comércio Ltda", "fields not sent are kept");
    assert_eq!(company["updated_via"], "api");
    assert_eq!(company["created_via"], "system");
    // The CNPJ of the answer, sent back, is dropped: never rewritten.
    let immutable = h.send(rest(Method::PATCH, &path, &token, Some(json!({"cnpj": "11444777000161"}))).build()).await;
    assert_eq!(immutable.status, 200);
    assert_ne!(immutable.json()["cnpj"], "11444777000161");
}

#[tokio::test]
async fn deleting_a_company_in_use_is_refused_with_the_usage() {
    let h = Harness::with_demo().await;
    let token = h.api_token(DEMO_OWNER);
    // The demo's main company has accounts, bills, transactions and people.
    let reply = h.send(rest(Method::DELETE, &format!("/v1/companies/{ACME_COMPANY}"), &token, None).build()).await;
    assert_eq!(reply.status, 422);
    assert_eq!(
        reply.json()["error"]["details"],
        json!({"reason": "in_use", "usage": {"accounts": 2, "transactions": 3, "payables": 6, "receivables": 3, "people": 4}})
    );
    let now = "2026-11-30T00:00:00Z";
    let insert = |sql: &'static str| sql::query(sql).bind(DEMO_WORKSPACE_ACME).bind(ACME_SERVICES).bind(now);
    insert("INSERT INTO financial_accounts (id, workspace_id, company_id, name, account_type, created_at, updated_at, created_via, updated_via)
            VALUES ('a0000000-0000-4000-8000-000000000001', $1, $2, 'Caixa', 'cash', $3, $3, 'system', 'system')")
        .execute(&h.state.db).await.unwrap();
    insert("INSERT INTO categories (id, workspace_id, company_id, name, level, category_type, created_at, updated_at, created_via, updated_via)
            VALUES ('b0000000-0000-4000-8000-000000000001', $1, $2, 'Despesas', 1, 'debit', $3, $3, 'system', 'system')")
        .execute(&h.state.db).await.unwrap();
    let path = format!("/v1/companies/{ACME_SERVICES}");
    let reply = h.send(rest(Method::DELETE, &path, &token, None).build()).await;
    assert_eq!(reply.status, 422);
    assert_eq!(reply.json()["error"]["details"], json!({"reason": "in_use", "usage": {"accounts": 1}}));
    sql::query("DELETE FROM financial_accounts WHERE id = 'a0000000-0000-4000-8000-000000000001'")
        .execute(&h.state.db)
        .await
        .unwrap();
    assert_eq!(h.send(rest(Method::DELETE, &path, &token, None).build()).await.status, 204);
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM categories WHERE company_id = $1", ACME_SERVICES).await,
        0,
        "configuration goes with the company"
    );
}

/// What the router refuses itself (a method a route does not take, a body over the
/// limit, a path id that does not decode) answers with the REST envelope too.
#[tokio::test]
async fn router_rejections_answer_with_the_envelope() {
    let h = Harness::new().await;
    let api = h.api_token(DEMO_OWNER);
    let put = h
        .send(
            Mcp::raw("{}")
                .method(Method::PUT)
                .path("/v1/companies")
                .bearer(&api)
                .header("content-type", "application/json")
                .build(),
        )
        .await;
    assert_eq!(put.status, 405);
    assert_eq!(put.json()["error"]["code"], "method_not_allowed");
    assert!(put.header("allow").is_some_and(|a| a.contains("GET") && a.contains("POST")), "Allow is kept");

    let huge = format!("{{\"name\":\"{}\",\"cnpj\":\"11444777000242\"}}", "x".repeat(3 * 1024 * 1024));
    let big = h
        .send(
            Mcp::raw(huge)
                .method(Method::POST)
                .path("/v1/companies")
                .bearer(&api)
                .header("content-type", "application/json")
                .build(),
        )
        .await;
    assert_eq!(big.status, 413);
    assert_eq!(big.json()["error"]["details"]["reason"], "body_too_large");

    // A path id that does not decode names no record: 404 in the envelope.
    let id = h.send(Mcp::raw("").method(Method::GET).path("/v1/companies/9%FF%FE").bearer(&api).build()).await;
    assert_eq!(id.status, 404);
    assert_eq!(id.json()["error"]["code"], "not_found");
    // A query value that does not decode as UTF-8 is read lossily: it filters on a name
    // no company has.
    let query = h.send(Mcp::raw("").method(Method::GET).path("/v1/companies?name=%FF%FE").bearer(&api).build()).await;
    assert_eq!(query.status, 200);
    assert_eq!(query.json()["data"], serde_json::json!([]));
}
