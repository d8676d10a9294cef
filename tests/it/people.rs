//! `/v1/people`: documents (CPF/CNPJ check digits, inferred type and kind, one live
//! document per company), the company reference, partial updates, soft delete, the id
//! sweep, pagination and filters, isolation, scope and role checks, idempotency,
//! provenance and audit — on SQLite and PostgreSQL.

use crate::common;

use crate::records::table::new_person;
use common::*;
use http::Method;
use serde_json::{json, Value};

async fn create(h: &Harness, token: &str, body: Value) -> Value {
    create_at(h, "/v1/people", token, body).await
}

#[tokio::test]
async fn document_check_digits_are_validated() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    for bad in ["529.982.247-24", "11.222.333/0001-82", "11111111111", "123456789012", "12ABC34501DE35", "5299822472X"]
    {
        let mut body = new_person();
        body["document_number"] = json!(bad);
        let reply = h.send(rest(Method::POST, "/v1/people", &token, Some(body)).build()).await;
        assert_eq!(reply.status, 422, "{bad}");
        assert_eq!(reply.json()["error"]["code"], "unprocessable_entity");
        assert_eq!(details(&reply), pair("document_number", "invalid_document"), "{bad}");
        assert!(!reply.json().to_string().contains(bad), "the input is not echoed");
    }
    assert_eq!(count(&h, "SELECT COUNT(*) FROM people WHERE workspace_id = $1", DEMO_WORKSPACE_ACME).await, 0);
}

#[tokio::test]
async fn document_type_and_kind_are_inferred_from_the_document() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let company = create(
        &h,
        &token,
        json!({"company_id": ACME_COMPANY, "name": "Fornecedor S.A.", "document_number": "45.023.118/0001-73"}),
    )
    .await;
    assert_eq!(
        (company["document_number"].as_str(), company["document_type"].as_str(), company["kind"].as_str()),
        (Some("45023118000173"), Some("cnpj"), Some("juridical"))
    );
    // An explicit kind is kept (e.g. a sole proprietor); a matching type is accepted.
    let mei = create(&h, &token, json!({"company_id": ACME_COMPANY, "name": "João MEI", "document_number": "11444777000161", "document_type": "cnpj", "kind": "natural"})).await;
    assert_eq!((mei["document_type"].as_str(), mei["kind"].as_str()), (Some("cnpj"), Some("natural")));
}

#[tokio::test]
async fn document_type_contradicting_the_length_is_refused() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    for body in [
        json!({"company_id": ACME_COMPANY, "name": "X", "document_number": "52998224725", "document_type": "cnpj"}),
        json!({"company_id": ACME_COMPANY, "name": "X", "document_number": "11222333000181", "document_type": "cpf"}),
        json!({"company_id": ACME_COMPANY, "name": "X", "document_type": "cpf"}),
    ] {
        let reply = h.send(rest(Method::POST, "/v1/people", &token, Some(body.clone())).build()).await;
        assert_eq!(reply.status, 422, "{body}");
        assert_eq!(details(&reply), pair("document_type", "document_type_mismatch"), "{body}");
    }
}

#[tokio::test]
async fn one_live_person_per_document_in_a_company() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    create(&h, &token, new_person()).await;
    let mut again = new_person();
    again["document_number"] = json!("52998224725");
    again["name"] = json!("Outra Maria");
    let reply = h.send(rest(Method::POST, "/v1/people", &token, Some(again.clone())).build()).await;
    assert_eq!(reply.status, 409);
    assert_eq!(reply.json()["error"]["code"], "conflict");
    assert_eq!(details(&reply), pair("document_number", "duplicate"));
    // Another company of the workspace may have the same person.
    again["company_id"] = json!(ACME_SERVICES);
    create(&h, &token, again).await;
    // A person changed to a document already used in the company conflicts too.
    let other =
        create(&h, &token, json!({"company_id": ACME_COMPANY, "name": "Pedro", "document_number": "12345678909"}))
            .await;
    let path = format!("/v1/people/{}", other["id"].as_str().unwrap());
    let reply =
        h.send(rest(Method::PATCH, &path, &token, Some(json!({"document_number": "529.982.247-25"}))).build()).await;
    assert_eq!(reply.status, 409);
    assert_eq!(reply.json()["error"]["code"], "conflict");
    let unchanged = h.send(rest(Method::GET, &path, &token, None).build()).await.json();
    assert_eq!(unchanged["document_number"], "12345678909");
}

#[tokio::test]
async fn company_must_exist_in_the_workspace() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    for company in [BETA_COMPANY, MISSING] {
        let mut body = new_person();
        body["company_id"] = json!(company);
        let reply = h.send(rest(Method::POST, "/v1/people", &token, Some(body)).build()).await;
        assert_eq!(reply.status, 422, "{company}");
        assert_eq!(reply.json()["error"]["code"], "unprocessable_entity");
        assert_eq!(details(&reply), pair("company_id", "invalid_reference"));
        assert_eq!(reply.json()["error"]["message"], "Company not found in this workspace");
    }
    let mut body = new_person();
    body["company_id"] = json!("not-a-uuid");
    let reply = h.send(rest(Method::POST, "/v1/people", &token, Some(body)).build()).await;
    assert_eq!(reply.status, 422);
    assert_eq!(details(&reply), pair("company_id", "invalid_uuid"));
}

#[tokio::test]
async fn update_is_partial_null_text_is_a_no_op_and_empty_clears() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let mut body = new_person();
    body["legal_name"] = json!("Maria da Silva");
    body["nickname"] = json!("Mari");
    let person = create(&h, &token, body).await;
    let path = format!("/v1/people/{}", person["id"].as_str().unwrap());
    let patch = json!({"legal_name": null, "nickname": "", "notes": null, "kind": null, "is_customer": true, "name": "  Maria F.  "});
    let reply = h.send(rest(Method::PATCH, &path, &token, Some(patch)).build()).await;
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.bytes));
    let updated = reply.json();
    assert_eq!(updated["legal_name"], "Maria da Silva", "null on a text field changes nothing");
    assert_eq!(updated["notes"], "Paga no dia 10");
    assert_eq!(updated["nickname"], Value::Null, "an empty string clears");
    assert_eq!(updated["kind"], Value::Null, "null clears the kind");
    assert_eq!(updated["is_customer"], true);
    assert_eq!(updated["is_supplier"], true, "fields not sent are kept");
    assert_eq!(updated["name"], "Maria F.");
    assert_eq!(updated["document_number"], "52998224725");
    assert_eq!(updated["updated_via"], "api");
    assert_eq!(updated["created_at"], person["created_at"]);
    assert_eq!(
        count(
            &h,
            "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = 'people.update'",
            person["id"].as_str().unwrap()
        )
        .await,
        1
    );
    for (patch, field, reason) in [
        (json!({"email_list": ["a@b.com"]}), "email_list", "unknown_field"),
        (json!({"name": ""}), "name", "too_short"),
        (json!({"active": "no"}), "active", "wrong_type"),
    ] {
        let reply = h.send(rest(Method::PATCH, &path, &token, Some(patch.clone())).build()).await;
        assert_eq!(reply.status, 422, "{patch}");
        assert_eq!(details(&reply), pair(field, reason), "{patch}");
    }
}

#[tokio::test]
async fn document_is_revalidated_only_when_changed() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let person = create(&h, &token, new_person()).await;
    let id = person["id"].as_str().unwrap().to_string();
    let path = format!("/v1/people/{id}");
    // A record imported with a document that fails the check digits stays editable.
    exec(&h, "UPDATE people SET document_number = '52998224724' WHERE id = $1", &[&id]).await;
    let reply = h
        .send(
            rest(Method::PATCH, &path, &token, Some(json!({"document_number": "529.982.247-24", "name": "Maria"})))
                .build(),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.bytes));
    assert_eq!(reply.json()["document_number"], "52998224724");
    // A new document is validated.
    let reply =
        h.send(rest(Method::PATCH, &path, &token, Some(json!({"document_number": "12345678900"}))).build()).await;
    assert_eq!(reply.status, 422);
    assert_eq!(details(&reply), pair("document_number", "invalid_document"));
    // A CNPJ replaces the CPF: the type follows; the kind is left as it is.
    let reply = h
        .send(rest(Method::PATCH, &path, &token, Some(json!({"document_number": "11.444.777/0001-61"}))).build())
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(
        (reply.json()["document_number"].as_str(), reply.json()["document_type"].as_str()),
        (Some("11444777000161"), Some("cnpj"))
    );
    // document_type alone contradicting the digit count.
    let reply = h.send(rest(Method::PATCH, &path, &token, Some(json!({"document_type": "cpf"}))).build()).await;
    assert_eq!(reply.status, 422);
    assert_eq!(details(&reply), pair("document_type", "document_type_mismatch"));
    let reply = h.send(rest(Method::PATCH, &path, &token, Some(json!({"document_type": "cnpj"}))).build()).await;
    assert_eq!(reply.status, 200);
    // null keeps the document; an empty string removes it (and its type).
    let reply = h.send(rest(Method::PATCH, &path, &token, Some(json!({"document_number": null}))).build()).await;
    assert_eq!(reply.json()["document_number"], "11444777000161");
    let reply = h.send(rest(Method::PATCH, &path, &token, Some(json!({"document_number": ""}))).build()).await;
    assert_eq!(reply.status, 200);
    assert_eq!(
        (reply.json()["document_number"].clone(), reply.json()["document_type"].clone()),
        (Value::Null, Value::Null)
    );
}

#[tokio::test]
async fn emails_and_phones_are_read_only_arrays() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let person = create(&h, &token, new_person()).await;
    let id = person["id"].as_str().unwrap().to_string();
    exec(&h, r#"UPDATE people SET emails = '["maria@example.com"]', phones = NULL WHERE id = $1"#, &[&id]).await;
    let got = h.send(rest(Method::GET, &format!("/v1/people/{id}"), &token, None).build()).await.json();
    assert_eq!(got["emails"], json!(["maria@example.com"]));
    assert_eq!(got["phones"], json!([]), "absent reads as an empty array");
}

#[tokio::test]
async fn delete_is_a_soft_delete() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let person = create(&h, &token, new_person()).await;
    let id = person["id"].as_str().unwrap().to_string();
    let path = format!("/v1/people/{id}");
    assert_eq!(h.send(rest(Method::DELETE, &path, &token, None).build()).await.status, 204);
    assert_eq!(h.send(rest(Method::DELETE, &path, &token, None).build()).await.status, 404);
    assert_eq!(h.send(rest(Method::GET, &path, &token, None).build()).await.status, 404);
    assert_eq!(h.send(rest(Method::PATCH, &path, &token, Some(json!({"name": "Back"}))).build()).await.status, 404);
    let list = h.send(rest(Method::GET, "/v1/people", &token, None).build()).await.json();
    assert!(!list.to_string().contains(&id), "gone from lists");
    let ids = h.send(rest(Method::GET, "/v1/people/ids", &token, None).build()).await.json();
    assert!(!ids["data"].as_array().unwrap().contains(&json!(id)), "gone from the id sweep");
    // The row is kept, marked deleted.
    assert_eq!(count(&h, "SELECT COUNT(*) FROM people WHERE id = $1 AND deleted_at IS NOT NULL", &id).await, 1);
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = 'people.delete'", &id).await,
        1
    );
    // Its document may be used again.
    let again = create(&h, &token, new_person()).await;
    assert_ne!(again["id"], json!(id));
}

#[tokio::test]
async fn id_sweep_walks_live_ids_ascending_with_a_cursor() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let mut expected = Vec::new();
    for (i, doc) in ["52998224725", "12345678909", "98765432100", "11144477735", "39053344705"].iter().enumerate() {
        let p = create(&h, &token, json!({"company_id": if i % 2 == 0 { ACME_COMPANY } else { ACME_SERVICES }, "name": format!("P{i}"), "document_number": doc})).await;
        expected.push(p["id"].as_str().unwrap().to_string());
    }
    let beta = create(&h, &h.api_token(DEMO_BETA_OWNER), json!({"company_id": BETA_COMPANY, "name": "Beta P"})).await;
    expected.sort();
    let all = h.send(rest(Method::GET, "/v1/people/ids", &token, None).build()).await;
    assert_eq!(all.status, 200, "{}", String::from_utf8_lossy(&all.bytes));
    let all = all.json();
    assert_eq!(all["data"], json!(expected));
    assert_eq!(all["meta"]["next_cursor"], Value::Null);
    assert!(!all.to_string().contains(beta["id"].as_str().unwrap()));
    let mut seen: Vec<String> = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let path = match &cursor {
            Some(c) => format!("/v1/people/ids?limit=2&cursor={c}"),
            None => "/v1/people/ids?limit=2".into(),
        };
        let reply = h.send(rest(Method::GET, &path, &token, None).build()).await;
        assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.bytes));
        let page = reply.json();
        seen.extend(page["data"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()));
        pages += 1;
        match page["meta"]["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    assert_eq!(seen, expected, "ascending, none skipped or repeated");
    assert_eq!(pages, 3);
    assert_eq!(h.send(rest(Method::GET, "/v1/people/ids?limit=10000", &token, None).build()).await.status, 200);
    // A list cursor is not a sweep cursor.
    let list = h.send(rest(Method::GET, "/v1/people?limit=1", &token, None).build()).await.json();
    let list_cursor = list["meta"]["next_cursor"].as_str().unwrap().to_string();
    for (bad, field) in [
        ("/v1/people/ids?active=true".to_string(), "active"),
        ("/v1/people/ids?company_id[in]=c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a11".to_string(), "company_id"),
        ("/v1/people/ids?sort=id".to_string(), "sort"),
        ("/v1/people/ids?sort=-name".to_string(), "sort"),
        ("/v1/people/ids?limit=10001".to_string(), "limit"),
        ("/v1/people/ids?limit=0".to_string(), "limit"),
        ("/v1/people/ids?limit=ten".to_string(), "limit"),
        ("/v1/people/ids?cursor=garbage".to_string(), "cursor"),
        (format!("/v1/people/ids?cursor={list_cursor}"), "cursor"),
    ] {
        let reply = h.send(rest(Method::GET, &bad, &token, None).build()).await;
        assert_eq!(reply.status, 400, "{bad}");
        assert_eq!(reply.json()["error"]["code"], "bad_request", "{bad}");
        assert_eq!(reply.json()["error"]["details"]["field"], field, "{bad}");
    }
}

#[tokio::test]
async fn list_filters_sorts_and_bad_queries() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let maria = create(&h, &token, new_person()).await;
    let acme = create(&h, &token, json!({"company_id": ACME_SERVICES, "name": "Cliente S.A.", "document_number": "45023118000173", "is_customer": true})).await;
    let inactive = create(&h, &token, json!({"company_id": ACME_COMPANY, "name": "Antigo", "active": false})).await;
    let get = |path: &str| rest(Method::GET, path, &token, None).build();
    let names = |page: &Value| {
        page["data"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap().to_string()).collect::<Vec<_>>()
    };
    let all = h.send(get("/v1/people")).await.json();
    assert_eq!(names(&all), ["Antigo", "Cliente S.A.", "Maria Fornecedora"], "sorted by name by default");
    assert_eq!(names(&h.send(get(&format!("/v1/people?company_id={ACME_SERVICES}"))).await.json()), ["Cliente S.A."]);
    assert_eq!(
        names(&h.send(get(&format!("/v1/people?company_id[in]={ACME_COMPANY},{ACME_SERVICES}"))).await.json()).len(),
        3
    );
    assert_eq!(names(&h.send(get("/v1/people?kind[in]=juridical")).await.json()), ["Cliente S.A."]);
    assert_eq!(names(&h.send(get("/v1/people?kind=natural")).await.json()), ["Maria Fornecedora"]);
    assert_eq!(names(&h.send(get("/v1/people?is_customer=true")).await.json()), ["Cliente S.A."]);
    assert_eq!(names(&h.send(get("/v1/people?is_supplier=true")).await.json()), ["Maria Fornecedora"]);
    assert_eq!(names(&h.send(get("/v1/people?active=false")).await.json()), ["Antigo"]);
    assert_eq!(
        names(&h.send(get("/v1/people?document_number[in]=52998224725,45023118000173")).await.json()),
        ["Cliente S.A.", "Maria Fornecedora"]
    );
    assert_eq!(names(&h.send(get("/v1/people?name[in]=Antigo,Nobody")).await.json()), ["Antigo"]);
    assert_eq!(
        names(&h.send(get("/v1/people?updated_at[gte]=2000-01-01&updated_at[lt]=2999-01-01")).await.json()).len(),
        3
    );
    assert_eq!(names(&h.send(get("/v1/people?updated_at[gt]=2999-01-01T00:00:00Z")).await.json()).len(), 0);
    // Incremental sync: the most recently updated first.
    exec(&h, "UPDATE people SET updated_at = '2030-01-01T00:00:00Z' WHERE id = $1", &[maria["id"].as_str().unwrap()])
        .await;
    exec(
        &h,
        "UPDATE people SET updated_at = '2029-01-01T00:00:00Z' WHERE id = $1",
        &[inactive["id"].as_str().unwrap()],
    )
    .await;
    let recent = h.send(get("/v1/people?sort=-updated_at")).await.json();
    assert_eq!(names(&recent), ["Maria Fornecedora", "Antigo", "Cliente S.A."]);
    assert_eq!(names(&h.send(get("/v1/people?updated_at[gte]=2029-06-01")).await.json()), ["Maria Fornecedora"]);
    assert_eq!(h.send(get("/v1/people?sort=created_at")).await.status, 200);
    let _ = acme;
    for bad in [
        "/v1/people?colour=red",
        "/v1/people?kind=robot",
        "/v1/people?is_customer=maybe",
        "/v1/people?name[gte]=A",
        "/v1/people?updated_at[gte]=yesterday",
        "/v1/people?company_id=nope",
        "/v1/people?sort=document_number",
        "/v1/people?limit=101",
        "/v1/people?cursor=nope",
        "/v1/people?emails=a",
    ] {
        let reply = h.send(get(bad)).await;
        assert_eq!(reply.status, 400, "{bad}");
        assert_eq!(reply.json()["error"]["code"], "bad_request", "{bad}");
    }
}

#[tokio::test]
async fn pagination_walks_every_row_once() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    for i in 0..5 {
        create(&h, &token, json!({"company_id": ACME_COMPANY, "name": format!("Pessoa {i}")})).await;
    }
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let path = match &cursor {
            Some(c) => format!("/v1/people?limit=2&sort=-name&cursor={c}"),
            None => "/v1/people?limit=2&sort=-name".into(),
        };
        let reply = h.send(rest(Method::GET, &path, &token, None).build()).await;
        assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.bytes));
        let page = reply.json();
        seen.extend(page["data"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap().to_string()));
        pages += 1;
        if pages == 1 {
            // Sorts before the cursor (descending): not seen, nothing shifts.
            create(&h, &token, json!({"company_id": ACME_COMPANY, "name": "Zz Inserida"})).await;
        }
        match page["meta"]["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    assert_eq!(seen, ["Pessoa 4", "Pessoa 3", "Pessoa 2", "Pessoa 1", "Pessoa 0"]);
    assert_eq!(pages, 3);
}

#[tokio::test]
async fn without_a_document_type_and_kind_stay_empty() {
    let h = Harness::new().await;
    let bare = create(&h, &h.api_token(DEMO_OWNER), json!({"company_id": ACME_COMPANY, "name": "Sem Documento"})).await;
    assert_eq!(
        (bare["document_number"].clone(), bare["document_type"].clone(), bare["kind"].clone()),
        (Value::Null, Value::Null, Value::Null)
    );
}

#[tokio::test]
async fn the_same_document_in_another_workspace_is_another_person() {
    let h = Harness::new().await;
    let beta = h.api_token(DEMO_BETA_OWNER);
    let body = json!({"company_id": BETA_COMPANY, "name": "Beta Cliente", "document_number": "52998224725"});
    let theirs = create(&h, &beta, body).await;
    create(&h, &h.api_token(DEMO_OWNER), new_person()).await;
    let path = format!("/v1/people/{}", theirs["id"].as_str().unwrap());
    let untouched = h.send(rest(Method::GET, &path, &beta, None).build()).await.json();
    assert_eq!(untouched["name"], "Beta Cliente");
}

#[tokio::test]
async fn openapi_keeps_emails_out_of_the_create() {
    let h = Harness::new().await;
    let doc = crate::records::openapi(&h).await;
    let create = crate::records::request_schema(&doc, "/v1/people", "post");
    assert!(create["properties"]["emails"].is_null(), "emails are not writable");
}
