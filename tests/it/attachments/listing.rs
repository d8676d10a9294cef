use super::*;

#[tokio::test]
async fn list_filters_sorts_and_link_conditions() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let finance = h.api_token(DEMO_FINANCE);
    let pdf = uploaded(&h, &token, "nota.pdf", "application/pdf", PDF).await;
    let csv = uploaded(&h, &token, "extrato.csv", "text/csv", b"a,b\n1,2\n").await;
    let reply = h
        .send(
            upload(&finance, "nfe.xml", "text/xml", b"<nfe/>", None)
                .header("x-workspace-id", DEMO_WORKSPACE_ACME)
                .build(),
        )
        .await;
    assert_eq!(reply.status, 201);
    assert_eq!(reply.json()["uploaded_by"], format!("api:{DEMO_FINANCE}"));
    let payable = insert_billing(&h, DEMO_WORKSPACE_ACME, ACME_COMPANY, "payable").await;
    let transaction = insert_transaction(&h, DEMO_WORKSPACE_ACME, ACME_COMPANY).await;
    let link = |id: &Value, kind: &str, target: &str| {
        rest(Method::POST, &links_path(id.as_str().unwrap()), &token, Some(json!({"type": kind, "id": target}))).build()
    };
    assert_eq!(h.send(link(&pdf["id"], "payable", &payable)).await.status, 201);
    assert_eq!(h.send(link(&csv["id"], "transaction", &transaction)).await.status, 201);

    let names = |page: &Value| -> Vec<String> {
        page["data"].as_array().unwrap().iter().map(|a| a["file_name"].as_str().unwrap().to_string()).collect()
    };
    let get = |query: String| rest(Method::GET, &format!("/v1/attachments{query}"), &token, None).build();
    let all = h.send(get(String::new())).await;
    assert_eq!(all.status, 200);
    assert_eq!(names(&all.json()).len(), 3);
    assert_eq!(all.json()["meta"]["next_cursor"], Value::Null);
    let cases = [
        ("?mime_type[in]=application/pdf,text/xml&sort=file_name".to_string(), vec!["nfe.xml", "nota.pdf"]),
        ("?file_name=extrato.csv".to_string(), vec!["extrato.csv"]),
        (format!("?uploaded_by[in]=api:{DEMO_FINANCE}"), vec!["nfe.xml"]),
        (format!("?linked_to_payable_id={payable}"), vec!["nota.pdf"]),
        (
            format!("?linked_to_transaction_id[in]={transaction},7f000000-0000-4000-8000-000000000000"),
            vec!["extrato.csv"],
        ),
        (format!("?linked_to_receivable_id={payable}"), vec![]),
        (format!("?linked_to_payable_id={payable}&mime_type=text/csv"), vec![]),
        (
            "?uploaded_at[gte]=2000-01-01&uploaded_at[lt]=2999-01-01&sort=-file_size".to_string(),
            vec!["nota.pdf", "extrato.csv", "nfe.xml"],
        ),
        ("?uploaded_at[lt]=2000-01-01".to_string(), vec![]),
    ];
    for (query, expected) in cases {
        let reply = h.send(get(query.clone())).await;
        assert_eq!(reply.status, 200, "{query}: {}", String::from_utf8_lossy(&reply.bytes));
        assert_eq!(names(&reply.json()), expected, "{query}");
    }
    for bad in [
        "?colour=red",
        "?linked_to_payable_id=nope",
        "?linked_to_payable_id[gte]=7f000000-0000-4000-8000-000000000000",
        "?sort=title",
        "?file_size=3",
        "?uploaded_at=yesterday",
        "?cursor=forged",
        "?limit=0",
    ] {
        let reply = h.send(get(bad.to_string())).await;
        assert_eq!(reply.status, 400, "{bad}");
        assert_eq!(reply.json()["error"]["code"], "bad_request", "{bad}");
    }
}

#[tokio::test]
async fn pagination_walks_every_row_once_newest_first_by_default() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let mut ids = Vec::new();
    for i in 0..5 {
        ids.push(
            uploaded(&h, &token, &format!("f{i}.csv"), "text/csv", "x\n".repeat(i + 1).as_bytes()).await["id"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    // Distinct upload times, so the default order is observable.
    for (i, id) in ids.iter().enumerate() {
        sql::query("UPDATE attachments SET uploaded_at = $1 WHERE id = $2")
            .bind(format!("2026-11-0{}T10:00:00Z", i + 1))
            .bind(id)
            .execute(&h.state.db)
            .await
            .unwrap();
    }
    for (sort, expected) in [
        ("", vec!["f4.csv", "f3.csv", "f2.csv", "f1.csv", "f0.csv"]),
        ("&sort=file_size", vec!["f0.csv", "f1.csv", "f2.csv", "f3.csv", "f4.csv"]),
    ] {
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        let mut pages = 0;
        loop {
            let path = match &cursor {
                Some(c) => format!("/v1/attachments?limit=2{sort}&cursor={c}"),
                None => format!("/v1/attachments?limit=2{sort}"),
            };
            let reply = h.send(rest(Method::GET, &path, &token, None).build()).await;
            assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.bytes));
            let page = reply.json();
            seen.extend(page["data"].as_array().unwrap().iter().map(|a| a["file_name"].as_str().unwrap().to_string()));
            pages += 1;
            match page["meta"]["next_cursor"].as_str() {
                Some(next) => cursor = Some(next.to_string()),
                None => break,
            }
        }
        assert_eq!(seen, expected, "sort {sort:?}");
        assert_eq!(pages, 3);
    }
}

#[tokio::test]
async fn another_workspace_is_indistinguishable_from_missing() {
    let h = Harness::new().await;
    let owner = h.api_token(DEMO_OWNER);
    let beta = h.api_token(DEMO_BETA_OWNER);
    let theirs = uploaded(&h, &beta, "beta.pdf", "application/pdf", PDF).await["id"].as_str().unwrap().to_string();
    let mine = uploaded(&h, &owner, "acme.pdf", "application/pdf", PDF).await["id"].as_str().unwrap().to_string();
    let beta_payable = insert_billing(&h, DEMO_WORKSPACE_BETA, BETA_COMPANY, "payable").await;
    assert_eq!(
        h.send(
            rest(Method::POST, &links_path(&theirs), &beta, Some(json!({"type": "payable", "id": beta_payable})))
                .build()
        )
        .await
        .status,
        201
    );
    let requests = [
        rest(Method::GET, &format!("/v1/attachments/{theirs}"), &owner, None),
        rest(Method::GET, &format!("/v1/attachments/{theirs}/download"), &owner, None),
        rest(Method::DELETE, &format!("/v1/attachments/{theirs}"), &owner, None),
        rest(Method::POST, &links_path(&theirs), &owner, Some(json!({"type": "payable", "id": beta_payable}))),
        rest(Method::DELETE, &links_path(&theirs), &owner, Some(json!({"type": "payable", "id": beta_payable}))),
        rest(Method::GET, "/v1/attachments/not-a-uuid", &owner, None),
    ];
    for request in requests {
        let reply = h.send(request.build()).await;
        assert_eq!(reply.status, 404, "{}", String::from_utf8_lossy(&reply.bytes));
        assert_eq!(reply.json()["error"]["code"], "not_found");
    }
    // Their payable is not a target for my attachment either.
    let reply = h
        .send(
            rest(Method::POST, &links_path(&mine), &owner, Some(json!({"type": "payable", "id": beta_payable})))
                .build(),
        )
        .await;
    assert_eq!(reply.status, 404);
    let list = h.send(rest(Method::GET, "/v1/attachments", &owner, None).build()).await.json();
    assert!(!list.to_string().contains(&theirs));
    let filtered = h
        .send(rest(Method::GET, &format!("/v1/attachments?linked_to_payable_id={beta_payable}"), &owner, None).build())
        .await
        .json();
    assert_eq!(filtered["data"], json!([]));
    let explicit = h
        .send(rest(Method::GET, &format!("/v1/attachments?workspace_id={DEMO_WORKSPACE_BETA}"), &owner, None).build())
        .await;
    assert_eq!(explicit.status, 404);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM attachments WHERE id = $1", &theirs).await, 1);
}

#[tokio::test]
async fn scope_and_role_are_checked_inside_the_operation() {
    let h = Harness::new().await;
    let api = |user: &str, scope: &str| {
        h.token_with(user, Some(scope), |c| {
            c.aud = kobana_finance_mcp::auth::jwt::Audience::One(format!("{PUBLIC_URL}/v1"))
        })
    };
    let owner = h.api_token(DEMO_OWNER);
    let id = uploaded(&h, &owner, "a.pdf", "application/pdf", PDF).await["id"].as_str().unwrap().to_string();
    let payable = insert_billing(&h, DEMO_WORKSPACE_ACME, ACME_COMPANY, "payable").await;

    let read_only = api(DEMO_OWNER, "finance.attachments");
    let reply = h.send(upload(&read_only, "b.pdf", "application/pdf", PDF, None).build()).await;
    assert_eq!(reply.status, 403);
    assert_eq!(reply.json()["error"]["code"], "insufficient_scope");
    assert_eq!(
        reply.json()["error"]["details"],
        json!({"required": "finance.attachments.write", "granted": ["finance.attachments"]})
    );
    for request in [
        rest(Method::DELETE, &format!("/v1/attachments/{id}"), &read_only, None),
        rest(Method::POST, &links_path(&id), &read_only, Some(json!({"type": "payable", "id": payable}))),
    ] {
        assert_eq!(h.send(request.build()).await.json()["error"]["code"], "insufficient_scope");
    }
    let write_only = api(DEMO_OWNER, "finance.attachments.write");
    for path in
        [format!("/v1/attachments/{id}"), format!("/v1/attachments/{id}/download"), "/v1/attachments".to_string()]
    {
        let reply = h.send(rest(Method::GET, &path, &write_only, None).build()).await;
        assert_eq!(reply.status, 403, "{path}");
        assert_eq!(reply.json()["error"]["details"]["required"], json!("finance.attachments"));
    }
    let other_scope = api(DEMO_OWNER, "finance.payables finance.payables.write");
    assert_eq!(
        h.send(rest(Method::GET, "/v1/attachments", &other_scope, None).build()).await.json()["error"]["code"],
        "insufficient_scope"
    );

    let viewer = h.api_token(DEMO_VIEWER);
    for request in [
        upload(&viewer, "b.pdf", "application/pdf", PDF, None),
        rest(Method::DELETE, &format!("/v1/attachments/{id}"), &viewer, None),
        rest(Method::POST, &links_path(&id), &viewer, Some(json!({"type": "payable", "id": payable}))),
        rest(Method::DELETE, &links_path(&id), &viewer, Some(json!({"type": "payable", "id": payable}))),
    ] {
        let reply = h.send(request.build()).await;
        assert_eq!(reply.status, 403);
        assert_eq!(reply.json()["error"]["code"], "forbidden");
    }
    assert_eq!(h.send(rest(Method::GET, "/v1/attachments", &viewer, None).build()).await.status, 200);
    assert_eq!(
        h.send(rest(Method::GET, &format!("/v1/attachments/{id}/download"), &viewer, None).build()).await.status,
        200
    );
    assert_eq!(count(&h, "SELECT COUNT(*) FROM attachments WHERE workspace_id = $1", DEMO_WORKSPACE_ACME).await, 1);

    // finance (a viewer in Beta) may link and delete attachments in Acme, nothing in Beta.
    let finance = h.api_token(DEMO_FINANCE);
    let in_acme = format!("?workspace_id={DEMO_WORKSPACE_ACME}");
    let reply = h
        .send(
            rest(
                Method::POST,
                &format!("{}{in_acme}", links_path(&id)),
                &finance,
                Some(json!({"type": "payable", "id": payable})),
            )
            .build(),
        )
        .await;
    assert_eq!(reply.status, 201);
    let reply = h
        .send(
            rest(
                Method::DELETE,
                &format!("{}{in_acme}", links_path(&id)),
                &finance,
                Some(json!({"type": "payable", "id": payable})),
            )
            .build(),
        )
        .await;
    assert_eq!(reply.status, 204);
    assert_eq!(
        h.send(rest(Method::DELETE, &format!("/v1/attachments/{id}{in_acme}"), &finance, None).build()).await.status,
        204
    );
    let reply = h
        .send(
            upload(&finance, "b.pdf", "application/pdf", PDF, None)
                .header("x-workspace-id", DEMO_WORKSPACE_BETA)
                .build(),
        )
        .await;
    assert_eq!(reply.status, 403);
    assert_eq!(reply.json()["error"]["code"], "forbidden");
    let reply = h.send(upload(&finance, "b.pdf", "application/pdf", PDF, None).build()).await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.json()["error"]["code"], "workspace_required");
}

#[tokio::test]
async fn openapi_lists_the_attachment_operations() {
    let h = Harness::new().await;
    let reply = h.send(Mcp::raw("").method(Method::GET).path("/v1/openapi.json").build()).await;
    assert_eq!(reply.status, 200);
    let doc = reply.json();
    let paths = &doc["paths"];
    for (path, methods) in [
        ("/v1/attachments", &["get", "post"][..]),
        ("/v1/attachments/{id}", &["get", "delete"][..]),
        ("/v1/attachments/{id}/download", &["get"][..]),
        ("/v1/attachments/{id}/links", &["post", "delete"][..]),
    ] {
        for method in methods {
            assert!(paths[path][method].is_object(), "{method} {path}");
        }
    }
    let upload = &paths["/v1/attachments"]["post"];
    let form = &upload["requestBody"]["content"]["multipart/form-data"];
    assert_eq!(form["schema"]["required"], json!(["file"]));
    assert!(form["schema"]["properties"]["title"].is_object());
    assert!(upload["requestBody"]["content"]["application/json"].is_null());
    assert!(!upload.to_string().contains("X-Idempotency-Key"), "uploads are not idempotent");
    assert_eq!(upload["security"], json!([{"bearer": ["finance.attachments.write"]}]));
    assert!(
        upload["responses"]["201"]["content"]["application/json"]["schema"]["properties"]["download_url"].is_object()
    );
    let download = &paths["/v1/attachments/{id}/download"]["get"]["responses"]["200"]["content"];
    assert!(download["application/pdf"].is_object());
    assert!(download["application/json"].is_null());
    let link = &paths["/v1/attachments/{id}/links"]["post"];
    assert_eq!(link["requestBody"]["content"]["application/json"]["schema"]["required"], json!(["type", "id"]));
    assert!(link.to_string().contains("X-Idempotency-Key"));
    assert!(paths["/v1/attachments/{id}"]["delete"]["responses"]["204"].is_object());
}

/// A record's documents, on both doors: the list tool takes the link filters `/v1`
/// takes (`linked_to_payable_id`, `_receivable_id`, `_transaction_id`, a value or
/// `{in}`), answering what the route answers; its description says so.
#[tokio::test]
async fn the_list_tool_filters_by_linked_record_as_the_route_does() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let pdf = uploaded(&h, &token, "nota.pdf", "application/pdf", PDF).await;
    uploaded(&h, &token, "extrato.csv", "text/csv", b"a,b\n1,2\n").await;
    let payable = insert_billing(&h, DEMO_WORKSPACE_ACME, ACME_COMPANY, "payable").await;
    let transaction = insert_transaction(&h, DEMO_WORKSPACE_ACME, ACME_COMPANY).await;
    let path = links_path(pdf["id"].as_str().unwrap());
    let linked =
        h.send(rest(Method::POST, &path, &token, Some(json!({"type": "payable", "id": payable}))).build()).await;
    assert_eq!(linked.status, 201);
    let mcp = h.token(DEMO_OWNER);
    let tool = |filters: Value| call("finance_attachments_list", json!({"filters": filters})).bearer(&mcp).build();
    for (filters, query) in [
        (json!({"linked_to_payable_id": payable}), format!("linked_to_payable_id={payable}")),
        (json!({"linked_to_payable_id": {"in": [payable]}}), format!("linked_to_payable_id[in]={payable}")),
        (json!({"linked_to_transaction_id": transaction}), format!("linked_to_transaction_id={transaction}")),
        (json!({"linked_to_receivable_id": payable}), format!("linked_to_receivable_id={payable}")),
    ] {
        let answered = h.send(tool(filters.clone())).await.result();
        assert!(answered.get("isError").is_none(), "{filters}: {answered}");
        let route = h.send(rest(Method::GET, &format!("/v1/attachments?{query}"), &token, None).build()).await;
        assert_eq!(answered["structuredContent"], route.json(), "{filters}");
    }
    let mine = h.send(tool(json!({"linked_to_payable_id": payable}))).await.result();
    let ids: Vec<&Value> = mine["structuredContent"]["data"].as_array().unwrap().iter().map(|a| &a["id"]).collect();
    assert_eq!(ids, [&pdf["id"]]);
    let refused = h.send(tool(json!({"linked_to_payable_id": "nope"}))).await.result();
    assert_eq!(refused["isError"], true, "{refused}");
    let listed = h.send(Mcp::modern("tools/list", json!({})).bearer(&mcp).build()).await.result();
    let list = listed["tools"].as_array().unwrap().iter().find(|t| t["name"] == "finance_attachments_list").unwrap();
    assert!(list["description"].as_str().unwrap().contains("linked_to_payable_id"), "{list}");
}

/// A record's files: a get of a payable, a receivable or a transaction answers them (id,
/// name, type, size; the oldest link first) on both doors; its list row keeps only the
/// count; an unlinked file leaves the record.
#[tokio::test]
async fn a_get_answers_the_records_files_and_a_list_their_count() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let pdf = uploaded(&h, &token, "nota.pdf", "application/pdf", PDF).await;
    let csv = uploaded(&h, &token, "extrato.csv", "text/csv", b"a,b\n1,2\n").await;
    let payable = insert_billing(&h, DEMO_WORKSPACE_ACME, ACME_COMPANY, "payable").await;
    let receivable = insert_billing(&h, DEMO_WORKSPACE_ACME, ACME_COMPANY, "receivable").await;
    let transaction = insert_transaction(&h, DEMO_WORKSPACE_ACME, ACME_COMPANY).await;
    let link = |id: &Value, kind: &str, target: &str| {
        rest(Method::POST, &links_path(id.as_str().unwrap()), &token, Some(json!({"type": kind, "id": target}))).build()
    };
    for (kind, target) in [("payable", &payable), ("receivable", &receivable), ("transaction", &transaction)] {
        assert_eq!(h.send(link(&pdf["id"], kind, target)).await.status, 201);
        assert_eq!(h.send(link(&csv["id"], kind, target)).await.status, 201);
    }
    let file = |a: &Value| json!({"id": a["id"], "file_name": a["file_name"], "mime_type": a["mime_type"], "file_size": a["file_size"]});
    // Linked within the same second: compared by id.
    let by_id = |files: &Value| {
        let mut files = files.as_array().cloned().unwrap_or_default();
        files.sort_by_key(|f| f["id"].as_str().map(String::from));
        Value::Array(files)
    };
    let both = by_id(&json!([file(&pdf), file(&csv)]));
    for (path, tool, id) in [
        ("/v1/payables", "finance_payables_get", &payable),
        ("/v1/receivables", "finance_receivables_get", &receivable),
        ("/v1/financial-transactions", "finance_transactions_get", &transaction),
    ] {
        let read = h.send(rest(Method::GET, &format!("{path}/{id}"), &token, None).build()).await.json();
        assert_eq!(by_id(&read["attachments"]), both, "{path}: {read}");
        let called = h.send(call(tool, json!({"id": id})).bearer(&h.token(DEMO_OWNER)).build()).await.result();
        assert_eq!(by_id(&called["structuredContent"]["attachments"]), both, "{tool}: {called}");
        let listed = h.send(rest(Method::GET, &format!("{path}?id={id}"), &token, None).build()).await.json();
        let row = &listed["data"][0];
        assert!(row.get("attachments").is_none(), "{path}: a list row keeps the count only: {row}");
        if path != "/v1/financial-transactions" {
            assert_eq!(row["attachments_count"], 2, "{path}: {row}");
        }
    }
    // Unlinked, the file leaves the record.
    let unlink = rest(
        Method::DELETE,
        &links_path(pdf["id"].as_str().unwrap()),
        &token,
        Some(json!({"type": "payable", "id": payable})),
    );
    assert!(h.send(unlink.build()).await.status.is_success());
    let read = h.send(rest(Method::GET, &format!("/v1/payables/{payable}"), &token, None).build()).await.json();
    assert_eq!(read["attachments"], json!([file(&csv)]), "{read}");
    assert_eq!(read["attachments_count"], 1, "{read}");
}
