use super::*;

pub async fn aggregates_count_overdue_pending(k: K) {
    let h = ungated().await;
    let account = account(&h, ACME_COMPANY).await;
    create(&h, k, with(body(), json!({"amount": "100.00", "due_date": "2020-01-10"}))).await; // pending, overdue
    create(&h, k, with(body(), json!({"amount": "200.00", "due_date": "2999-01-10"}))).await; // pending, not overdue
    let paid = create(
        &h,
        k,
        with(body(), json!({"amount": "300.00", "due_date": "2020-01-15", "financial_account_id": account})),
    )
    .await;
    let cancelled = create(&h, k, with(body(), json!({"amount": "400.00", "due_date": "2020-01-20"}))).await;
    create(&h, k, with(body(), json!({"amount": "50.00", "due_date": "2020-01-05", "company_id": ACME_SERVICES})))
        .await;
    assert_eq!(
        post(
            &h,
            &format!("{}/{}/settle", k.path, paid["id"].as_str().unwrap()),
            Some(json!({"payment_date": "2020-01-15"}))
        )
        .await
        .status,
        200
    );
    assert_eq!(post(&h, &format!("{}/{}/cancel", k.path, cancelled["id"].as_str().unwrap()), None).await.status, 200);
    let all = get(&h, &format!("{}/aggregates?company_id={ACME_COMPANY}", k.path)).await;
    assert_eq!(all.status, 200, "{}", String::from_utf8_lossy(&all.bytes));
    let expected = json!({"count": 4, "total": "600.00", "pending": "300.00", k.settled: "300.00", "overdue_count": 1});
    assert_eq!(all.json(), expected);
    let everything = get(&h, &format!("{}/aggregates", k.path)).await.json();
    assert_eq!((everything["count"].as_i64(), everything["overdue_count"].as_i64()), (Some(5), Some(2)));
    let january = get(&h, &format!("{}/aggregates?month=1&year=2020", k.path)).await.json();
    assert_eq!(january["count"], 4);
    let range = get(&h, &format!("{}/aggregates?start_date=2999-01-01&end_date=2999-12-31", k.path)).await.json();
    assert_eq!((range["count"].as_i64(), range["pending"].as_str()), (Some(1), Some("200.00")));
    // The one period parser of every aggregates route (`ops/machinery/period.rs`).
    for (bad, field, reason) in AGGREGATES_REFUSALS {
        let reply = get(&h, &format!("{}/aggregates?{bad}", k.path)).await;
        assert_eq!(reply.status, 400, "{bad}");
        assert_eq!(details(&reply), pair(field, reason), "{bad}");
    }
    // The overdue filter of the list.
    let overdue = get(&h, &format!("{}?status=pending&due_date[lt]=2026-01-01", k.path)).await.json();
    assert_eq!(overdue["data"].as_array().unwrap().len(), 2);
}

pub async fn nominal_amount_is_amount_plus_interest_minus_discount(k: K) {
    let h = ungated().await;
    let account = account(&h, ACME_COMPANY).await;
    let b = create(&h, k, with(body(), json!({"amount": "2000.00"}))).await;
    let id = b["id"].as_str().unwrap();
    let settled = post(&h, &format!("{}/{id}/settle", k.path), Some(json!({"payment_date": "2026-03-12", "financial_account_id": account, "interest_amount": "25.00", "discount_amount": "0.50", "ticket_amount": "2024.20"}))).await;
    assert_eq!(settled.status, 200, "{}", String::from_utf8_lossy(&settled.bytes));
    let s = settled.json();
    assert_eq!(s["amount"], "2000.00");
    assert_eq!(s["interest_amount"], "25.00");
    assert_eq!(s["discount_amount"], "0.50");
    assert_eq!(s["nominal_amount"], "2024.50");
    assert_eq!(s["ticket_amount"], "2024.20");
    let rows = settled_transactions(&h, id).await;
    assert_eq!(rows[0].try_get::<i64, _>("amount_cents").unwrap(), 202_420, "the ticket amount moved");
    let listed = get(&h, &format!("{}?id={id}", k.path)).await.json();
    assert_eq!(listed["data"][0]["nominal_amount"], "2024.50");
    let b2 = create(&h, k, with(body(), json!({"amount": "10.00"}))).await;
    let all_discount = post(
        &h,
        &format!("{}/{}/settle", k.path, b2["id"].as_str().unwrap()),
        Some(json!({"payment_date": "2026-03-12", "financial_account_id": account, "discount_amount": "10.00"})),
    )
    .await;
    expect(&all_discount, 422, "invalid_amount");
}

/// A list row says how many parts a record has (what the real list answers, and what
/// keeps a page small for an agent); the record holds the parts. The fields later
/// operations bring are there with their defaults.
pub async fn a_list_row_counts_the_parts_the_record_holds(k: K) {
    let h = ungated().await;
    let c1 = center(&h, ACME_COMPANY, k.center).await;
    let c2 = center(&h, ACME_COMPANY, "both").await;
    let tax = tax(&h, DEMO_WORKSPACE_ACME, "IRRF").await;
    let split = json!([{"classification_center_id": c1, "percentage": "60.00"}, {"classification_center_id": c2, "percentage": "40.00"}]);
    let b = create(&h, k, with(body(), json!({"classification_centers": split, "ir_relevant": true, "tax_charges": [{"tax_id": tax, "amount": "15.00"}]}))).await;
    let id = b["id"].as_str().unwrap();
    exec(&h, "INSERT INTO attachments (id, workspace_id, file_name, mime_type, file_size, sha256, uploaded_by, uploaded_at, created_via) VALUES ('a0000000-0000-4000-8000-000000000001', $1, 'nf.pdf', 'application/pdf', 1, 'x', 'u', $2, 'system')", &[DEMO_WORKSPACE_ACME, NOW]).await;
    let kind = &k.path[4..k.path.len() - 1];
    exec(&h, "INSERT INTO attachment_links (attachment_id, workspace_id, target_type, target_id, created_at, created_via) VALUES ('a0000000-0000-4000-8000-000000000001', $1, $2, $3, $4, 'system')", &[DEMO_WORKSPACE_ACME, kind, id, NOW]).await;
    create(&h, k, body()).await;

    let record = get(&h, &format!("{}/{id}", k.path)).await.json();
    let counts = |v: &Value| {
        (
            v["classification_center_allocations_count"].as_i64(),
            v["tax_charges_count"].as_i64(),
            v["attachments_count"].as_i64(),
        )
    };
    assert_eq!(counts(&record), (Some(2), Some(1), Some(1)));
    assert_eq!(record["classification_center_allocations"].as_array().map(Vec::len), Some(2));
    assert_eq!(record["tax_charges"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        (record["ir_relevant"].clone(), record["is_reconciled"].clone(), record["reconciliation"].clone()),
        (json!(true), json!(false), Value::Null)
    );
    assert_eq!(record["classification_center_id"], json!(c1), "the first center");
    // Each kind's own fields, null until the approval gate and the banking gateway.
    let (own_row, own_record, others) = if k.settled == "paid" {
        (
            ["operation_kind", "payment_approval"],
            ["kobana_payment_uid", "approved_at"],
            ["charge_state", "kobana_charge_kind"],
        )
    } else {
        (
            ["charge_state", "kobana_charge_kind"],
            ["kobana_pix_qrcode", "kobana_charge_url"],
            ["payment_approval", "operation_kind"],
        )
    };
    for field in own_row.iter().chain(&own_record) {
        assert_eq!(record.get(*field), Some(&Value::Null), "{field}");
    }
    for field in others {
        assert!(record.get(field).is_none(), "{field} is the other kind's");
    }

    let page = get(&h, &format!("{}?ir_relevant=true", k.path)).await.json();
    let rows = page["data"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{page}");
    let row = &rows[0];
    assert_eq!(counts(row), counts(&record));
    for part in ["classification_center_allocations", "tax_charges", "reconciliation", own_record[0]] {
        assert!(row.get(part).is_none(), "a row never carries {part}");
    }
    assert_eq!(row.get(own_row[1]), Some(&Value::Null));
    for (field, value) in row.as_object().unwrap() {
        assert_eq!(&record[field], value, "{field}: the row says what the record says");
    }
    // A filter on a kind's own field finds nothing while no bill has that state; the
    // other kind's is unknown.
    let (own_filter, other_filter) = if k.settled == "paid" {
        ("payment_approval=creation_approved", "kobana_charge_kind=pix")
    } else {
        ("kobana_charge_kind=pix", "payment_approval=creation_approved")
    };
    let none = get(&h, &format!("{}?{own_filter}", k.path)).await;
    assert_eq!(none.json()["data"].as_array().map(Vec::len), Some(0), "{own_filter}");
    expect(&get(&h, &format!("{}?{other_filter}", k.path)).await, 400, "unknown_filter");
    let others = get(&h, &format!("{}?ir_relevant=false", k.path)).await.json();
    assert_eq!(others["data"].as_array().map(Vec::len), Some(0), "unset is neither true nor false");
    let cleared = patch(&h, &format!("{}/{id}", k.path), json!({"ir_relevant": false})).await.json();
    assert_eq!(cleared["ir_relevant"], false);
    assert_eq!(
        get(&h, &format!("{}?ir_relevant=false", k.path)).await.json()["data"].as_array().map(Vec::len),
        Some(1)
    );
}

pub async fn delete_removes_the_settlement_allocations_taxes_and_links(k: K) {
    let h = ungated().await;
    let account = account(&h, ACME_COMPANY).await;
    let c1 = center(&h, ACME_COMPANY, k.center).await;
    let tax = tax(&h, DEMO_WORKSPACE_ACME, "IRRF").await;
    let b = create(&h, k, with(body(), json!({"financial_account_id": account, "classification_center_id": c1, "tax_charges": [{"tax_id": tax, "amount": "15.00", "withholding": false}]}))).await;
    assert_eq!(b["tax_charges"], json!([{"tax_id": tax, "tax_name": "IRRF", "amount": "15.00", "withholding": false}]));
    let id = b["id"].as_str().unwrap();
    let path = format!("{}/{id}", k.path);
    assert_eq!(post(&h, &format!("{path}/settle"), Some(json!({"payment_date": "2026-03-12"}))).await.status, 200);
    let tx = get(&h, &path).await.json()["transaction_id"].as_str().unwrap().to_string();
    exec(&h, "INSERT INTO attachments (id, workspace_id, file_name, mime_type, file_size, sha256, uploaded_by, uploaded_at, created_via) VALUES ('a0000000-0000-4000-8000-000000000001', $1, 'nf.pdf', 'application/pdf', 1, 'x', 'u', $2, 'system')", &[DEMO_WORKSPACE_ACME, NOW]).await;
    let kind = &k.path[4..k.path.len() - 1];
    exec(&h, "INSERT INTO attachment_links (attachment_id, workspace_id, target_type, target_id, created_at, created_via) VALUES ('a0000000-0000-4000-8000-000000000001', $1, $2, $3, $4, 'system')", &[DEMO_WORKSPACE_ACME, kind, id, NOW]).await;
    exec(&h, "INSERT INTO attachment_links (attachment_id, workspace_id, target_type, target_id, created_at, created_via) VALUES ('a0000000-0000-4000-8000-000000000001', $1, 'transaction', $2, $3, 'system')", &[DEMO_WORKSPACE_ACME, &tx, NOW]).await;
    assert_eq!(delete(&h, &path).await.status, 204);
    assert_eq!(delete(&h, &path).await.status, 404);
    assert_eq!(get(&h, &path).await.status, 404);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM financial_transactions WHERE id = $1", &tx).await, 0);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM allocations WHERE owner_id = $1", id).await, 0);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM billing_tax_charges WHERE billing_id = $1", id).await, 0);
    assert_eq!(
        count(
            &h,
            "SELECT COUNT(*) FROM attachment_links WHERE attachment_id = $1",
            "a0000000-0000-4000-8000-000000000001"
        )
        .await,
        0
    );
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM attachments WHERE id = $1", "a0000000-0000-4000-8000-000000000001").await,
        1,
        "the file itself stays"
    );
    let action = format!("{}.delete", &k.path[4..]);
    assert_eq!(
        count(&h, &format!("SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = '{action}'"), id).await,
        1
    );
}

pub async fn another_workspace_is_indistinguishable_from_missing(k: K) {
    let h = ungated().await;
    let beta = h.api_token(DEMO_BETA_OWNER);
    let theirs = h
        .send(rest(Method::POST, k.path, &beta, Some(with(body(), json!({"company_id": BETA_COMPANY})))).build())
        .await;
    assert_eq!(theirs.status, 201, "{}", String::from_utf8_lossy(&theirs.bytes));
    let id = theirs.json()["id"].as_str().unwrap().to_string();
    let path = format!("{}/{id}", k.path);
    for reply in [
        get(&h, &path).await,
        get(&h, &format!("{}/7f000000-0000-4000-8000-000000000000", k.path)).await,
        get(&h, &format!("{}/not-a-uuid", k.path)).await,
        patch(&h, &path, json!({"description": "mine"})).await,
        delete(&h, &path).await,
        post(&h, &format!("{path}/cancel"), None).await,
        post(&h, &format!("{path}/reopen"), None).await,
        post(&h, &format!("{path}/settle"), Some(json!({"payment_date": "2026-03-12"}))).await,
    ] {
        assert_eq!(reply.status, 404);
        assert_eq!(reply.json()["error"]["code"], "not_found");
    }
    let list = get(&h, k.path).await.json();
    assert!(!list.to_string().contains(&id));
    assert!(!get(&h, &format!("{}/ids", k.path)).await.json().to_string().contains(&id));
    assert_eq!(get(&h, &format!("{}/aggregates", k.path)).await.json()["count"], 0);
    // Their references are not ours either.
    let their_account = account(&h, BETA_COMPANY).await;
    expect(
        &post(&h, k.path, Some(with(body(), json!({"financial_account_id": their_account})))).await,
        422,
        "invalid_reference",
    );
}

pub async fn scope_and_role_are_checked_inside_the_operation(k: K) {
    let h = ungated().await;
    let aud = |c: &mut kobana_finance_mcp::auth::jwt::Claims| {
        c.aud = kobana_finance_mcp::auth::jwt::Audience::One(format!("{PUBLIC_URL}/v1"))
    };
    let b = create(&h, k, body()).await;
    let id = b["id"].as_str().unwrap();
    let read_only = h.token_with(DEMO_OWNER, Some(k.scope), aud);
    for (method, path, body) in [
        (Method::POST, k.path.to_string(), Some(body())),
        (Method::POST, format!("{}/{id}/cancel", k.path), None),
        (Method::POST, format!("{}/{id}/settle", k.path), Some(json!({"payment_date": "2026-03-12"}))),
        (Method::POST, format!("{}/{id}/reopen", k.path), None),
        (Method::DELETE, format!("{}/{id}", k.path), None),
        (Method::PATCH, format!("{}/{id}", k.path), Some(json!({"description": "x"}))),
        // The permission before the body: a body the schema refuses answers the same.
        (Method::POST, format!("{}/{id}/settle", k.path), Some(json!({"no_such_field": 1}))),
        (Method::POST, format!("{}/{id}/cancel", k.path), Some(json!({"no_such_field": 1}))),
        (Method::POST, k.path.to_string(), Some(json!({"no_such_field": 1}))),
    ] {
        let reply = h.send(rest(method, &path, &read_only, body).build()).await;
        assert_eq!(reply.status, 403, "{path}");
        assert_eq!(reply.json()["error"]["code"], "insufficient_scope");
        assert_eq!(reply.json()["error"]["details"]["required"], json!(format!("{}.write", k.scope)));
    }
    assert_eq!(h.send(rest(Method::GET, k.path, &read_only, None).build()).await.status, 200);
    let other_scope = h.token_with(
        DEMO_OWNER,
        Some(if k.scope == "finance.payables" {
            "finance.receivables finance.receivables.write"
        } else {
            "finance.payables finance.payables.write"
        }),
        aud,
    );
    let reply = h.send(rest(Method::GET, &format!("{}/{id}", k.path), &other_scope, None).build()).await;
    assert_eq!(reply.json()["error"]["code"], "insufficient_scope");
    let viewer = h.api_token(DEMO_VIEWER);
    for (method, path, body) in [
        (Method::POST, k.path.to_string(), Some(body())),
        (Method::POST, format!("{}/{id}/cancel", k.path), None),
        (Method::DELETE, format!("{}/{id}", k.path), None),
    ] {
        let reply = h.send(rest(method, &path, &viewer, body).build()).await;
        assert_eq!(reply.status, 403);
        assert_eq!(reply.json()["error"]["code"], "forbidden");
    }
    assert_eq!(h.send(rest(Method::GET, &format!("{}/{id}", k.path), &viewer, None).build()).await.status, 200);
    // The finance role may change and delete bills.
    let finance = h.api_token(DEMO_FINANCE);
    let ws = format!("workspace_id={DEMO_WORKSPACE_ACME}");
    let reply = h.send(rest(Method::POST, &format!("{}/{id}/cancel?{ws}", k.path), &finance, None).build()).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["updated_by"], DEMO_FINANCE);
    assert_eq!(
        h.send(rest(Method::DELETE, &format!("{}/{id}?{ws}", k.path), &finance, None).build()).await.status,
        204
    );
}

/// `operation_kind` is a payable's (a payment or a transfer), stored and cleared; a
/// receivable's schemas do not take it.
pub async fn operation_kind_is_a_payables_field(k: K) {
    let h = ungated().await;
    let sent = with(body(), json!({"operation_kind": "transfer"}));
    if k.settled != "paid" {
        let refused = post(&h, k.path, Some(sent)).await;
        assert_eq!(reason(&refused), (422, "unknown_field".into(), "operation_kind".into()));
        let b = create(&h, k, body()).await;
        assert!(b.get("operation_kind").is_none(), "{b}");
        return;
    }
    let b = create(&h, k, sent).await;
    assert_eq!(b["operation_kind"], "transfer");
    let path = format!("{}/{}", k.path, b["id"].as_str().unwrap());
    let listed = get(&h, &format!("{}?id={}", k.path, b["id"].as_str().unwrap())).await.json();
    assert_eq!(listed["data"][0]["operation_kind"], "transfer", "{listed}");
    assert_eq!(patch(&h, &path, json!({"notes": "x"})).await.json()["operation_kind"], "transfer", "kept");
    assert_eq!(patch(&h, &path, json!({"operation_kind": null})).await.json()["operation_kind"], Value::Null);
    assert_eq!(create(&h, k, body()).await["operation_kind"], Value::Null, "unset by default");
}

/// `sort=payment_date` as the real API takes it: the unsettled (no payment date) first,
/// then by the day the money moved; pages follow one another across the two.
pub async fn payment_date_sorts_the_unsettled_first(k: K) {
    let h = ungated().await;
    let account = account(&h, ACME_COMPANY).await;
    let mut expected = Vec::new();
    for (i, paid) in [Some("2026-03-20"), None, Some("2026-03-11"), None, Some("2026-03-15")].into_iter().enumerate() {
        let b =
            create(&h, k, with(body(), json!({"description": format!("Conta {i}"), "financial_account_id": account})))
                .await;
        let id = b["id"].as_str().unwrap().to_string();
        if let Some(date) = paid {
            let settled = post(&h, &format!("{}/{id}/settle", k.path), Some(json!({"payment_date": date}))).await;
            assert_eq!(settled.status, 200);
        }
        expected.push((paid.unwrap_or("").to_string(), id));
    }
    expected.sort();
    for (sort, order) in
        [("payment_date", expected.clone()), ("-payment_date", expected.iter().rev().cloned().collect())]
    {
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let after = cursor.as_ref().map(|c| format!("&cursor={c}")).unwrap_or_default();
            let page = get(&h, &format!("{}?sort={sort}&limit=2{after}", k.path)).await;
            assert_eq!(page.status, 200, "{}", String::from_utf8_lossy(&page.bytes));
            let page = page.json();
            for row in page["data"].as_array().unwrap() {
                seen.push((
                    row["payment_date"].as_str().unwrap_or("").to_string(),
                    row["id"].as_str().unwrap().to_string(),
                ));
            }
            match page["meta"]["next_cursor"].as_str() {
                Some(next) => cursor = Some(next.to_string()),
                None => break,
            }
        }
        assert_eq!(seen, order, "{sort}");
    }
}

/// The real document declares the dates as date-times: one is taken for its date in São
/// Paulo (midnight UTC, the real API's own form of a date, for that date), in bodies and
/// filters alike, and answered as the plain date.
pub async fn dates_may_be_sent_as_date_times(k: K) {
    let h = ungated().await;
    let sent = json!({"due_date": "2026-07-04 00:00:00 UTC", "competence_date": "2026-07-01T01:30:00Z"});
    let created = create(&h, k, with(body(), sent)).await;
    assert_eq!(
        (created["due_date"].as_str(), created["competence_date"].as_str()),
        (Some("2026-07-04"), Some("2026-06-30"))
    );
    let path = format!("{}/{}", k.path, created["id"].as_str().unwrap());
    let changed = patch(&h, &path, json!({"due_date": "2026-07-10T18:00:00-03:00"})).await;
    assert_eq!(changed.json()["due_date"], "2026-07-10");
    let found =
        get(&h, &format!("{}?due_date[gte]=2026-07-10T00:00:00Z&due_date[lte]=2026-07-10T23:59:59-03:00", k.path))
            .await;
    assert_eq!(found.status, 200, "{}", String::from_utf8_lossy(&found.bytes));
    assert_eq!(found.json()["data"].as_array().map(Vec::len), Some(1));
    expect(&patch(&h, &path, json!({"due_date": "2026-07-10T18:00:00"})).await, 422, "invalid_date");
}

pub async fn list_filters_sorts_and_pages(k: K) {
    let h = ungated().await;
    for (i, (amount, due)) in [
        ("10.00", "2026-03-05"),
        ("20.00", "2026-03-01"),
        ("30.00", "2026-03-03"),
        ("40.00", "2026-03-02"),
        ("50.00", "2026-03-04"),
    ]
    .iter()
    .enumerate()
    {
        create(&h, k, with(body(), json!({"amount": amount, "due_date": due, "description": format!("Conta {i}")})))
            .await;
    }
    let dues = |v: &Value| {
        v["data"].as_array().unwrap().iter().map(|b| b["due_date"].as_str().unwrap().to_string()).collect::<Vec<_>>()
    };
    let default = get(&h, k.path).await.json();
    assert_eq!(
        dues(&default),
        ["2026-03-01", "2026-03-02", "2026-03-03", "2026-03-04", "2026-03-05"],
        "due_date ascending by default"
    );
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("{}?sort=-amount&limit=2&cursor={c}", k.path),
            None => format!("{}?sort=-amount&limit=2", k.path),
        };
        let page = get(&h, &path).await.json();
        seen.extend(page["data"].as_array().unwrap().iter().map(|b| b["amount"].as_str().unwrap().to_string()));
        match page["meta"]["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    assert_eq!(seen, ["50.00", "40.00", "30.00", "20.00", "10.00"]);
    let ranged = get(&h, &format!("{}?amount[gte]=20.00&amount[lt]=40.00", k.path)).await.json();
    assert_eq!(ranged["data"].as_array().unwrap().len(), 2);
    let window = get(
        &h,
        &format!(
            "{}?due_date[gte]=2026-03-02&due_date[lte]=2026-03-03&status[in]=pending,cancelled&type=normal",
            k.path
        ),
    )
    .await
    .json();
    assert_eq!(dues(&window), ["2026-03-02", "2026-03-03"]);
    let synced = get(&h, &format!("{}?updated_at[gte]=2000-01-01&sort=updated_at", k.path)).await.json();
    assert_eq!(synced["data"].as_array().unwrap().len(), 5);
    for bad in [
        "colour=red",
        "amount[gte]=abc",
        &format!("status={}", if k.settled == "paid" { "received" } else { "paid" }),
        "sort=paid_at",
        "limit=101",
        "cursor=nope",
        "type[gte]=normal",
    ] {
        let reply = get(&h, &format!("{}?{bad}", k.path)).await;
        assert_eq!(reply.status, 400, "{bad}");
        assert_eq!(reply.json()["error"]["code"], "bad_request");
    }
}

/// A list tool's `fields` reads only the columns those fields come from; each field
/// still shows exactly what the whole record shows, in every sort, with the same
/// cursor — for every field a record has (demo records in every status, with taxes,
/// apportionment, a settlement and an installment series).
pub async fn a_projected_list_shows_each_field_as_the_whole_record_does(k: K) {
    let h = ungate(Harness::with_demo().await).await;
    create(
        &h,
        k,
        with(body(), json!({"type": "installment", "total_installments": 3, "amount": "100.00", "ir_relevant": true})),
    )
    .await;
    let settled =
        create(&h, k, with(body(), json!({"amount": "2000.00", "due_date": "2026-02-10", "ir_relevant": false}))).await;
    let account = account(&h, ACME_COMPANY).await;
    let settle = json!({"payment_date": "2026-02-12", "financial_account_id": account, "interest_amount": "25.00", "discount_amount": "0.50", "ticket_amount": "2024.20"});
    assert_eq!(
        post(&h, &format!("{}/{}/settle", k.path, settled["id"].as_str().unwrap()), Some(settle)).await.status,
        200
    );
    let token = h.token(DEMO_OWNER);
    let tool = format!("finance_{}_list", k.path.trim_start_matches("/v1/"));
    let list = |arguments: Value| {
        let reply = h.send(call(&tool, arguments).bearer(&token).build());
        async move {
            let reply = reply.await;
            assert!(reply.result()["isError"].is_null(), "{:?}", reply.bytes);
            reply.result()["structuredContent"].clone()
        }
    };
    for sort in [None, Some("-amount"), Some("competence_date"), Some("-updated_at")] {
        let with_sort = |mut arguments: Value| {
            if let Some(sort) = sort {
                arguments["sort"] = json!(sort);
            }
            arguments
        };
        let whole = list(with_sort(json!({"limit": 100}))).await;
        let rows = whole["data"].as_array().unwrap();
        assert!(rows.len() >= 5, "{whole}");
        let first_page = list(with_sort(json!({"limit": 2}))).await;
        for field in rows[0].as_object().unwrap().keys() {
            let projected = list(with_sort(json!({"limit": 100, "fields": [field]}))).await;
            let picked = projected["data"].as_array().unwrap();
            assert_eq!(picked.len(), rows.len(), "{field}");
            for (row, one) in rows.iter().zip(picked) {
                assert_eq!(one, &json!({ field.as_str(): row[field] }), "{field}, sort {sort:?}");
            }
            let page = list(with_sort(json!({"limit": 2, "fields": [field]}))).await;
            assert_eq!(page["meta"], first_page["meta"], "{field}: the cursor is the whole list's");
        }
    }
}

pub async fn ids_sweep_every_id_in_order(k: K) {
    let h = ungated().await;
    let created = create(&h, k, with(body(), json!({"type": "recurring", "recurrence_period": "monthly"}))).await;
    let mut expected: Vec<String> =
        created["series"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
    expected.sort();
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("{}/ids?limit=5&cursor={c}", k.path),
            None => format!("{}/ids?limit=5", k.path),
        };
        let page = get(&h, &path).await.json();
        seen.extend(page["data"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()));
        match page["meta"]["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    assert_eq!(seen, expected);
    assert_eq!(get(&h, &format!("{}/ids", k.path)).await.json()["data"].as_array().unwrap().len(), 12);
    // The sweep of every resource answers alike (the people sweep's table).
    for (bad, field) in [
        ("status=pending", "status"),
        ("status[in]=pending,paid", "status"),
        ("sort=id", "sort"),
        ("limit=10001", "limit"),
        ("limit=0", "limit"),
        ("limit=ten", "limit"),
        ("cursor=nope", "cursor"),
    ] {
        let reply = get(&h, &format!("{}/ids?{bad}", k.path)).await;
        assert_eq!(reply.status, 400, "{bad}");
        assert_eq!(reply.json()["error"]["code"], "bad_request", "{bad}");
        assert_eq!(reply.json()["error"]["details"]["field"], field, "{bad}");
    }
}

pub async fn openapi_lists_every_operation(k: K) {
    let h = ungated().await;
    let doc = h.send(Mcp::raw("").method(Method::GET).path("/v1/openapi.json").build()).await.json();
    let paths = &doc["paths"];
    for (path, method) in [
        (k.path.to_string(), "get"),
        (k.path.to_string(), "post"),
        (format!("{}/aggregates", k.path), "get"),
        (format!("{}/ids", k.path), "get"),
        (format!("{}/{{id}}", k.path), "get"),
        (format!("{}/{{id}}", k.path), "patch"),
        (format!("{}/{{id}}", k.path), "delete"),
        (format!("{}/{{id}}/settle", k.path), "post"),
        (format!("{}/{{id}}/cancel", k.path), "post"),
        (format!("{}/{{id}}/reopen", k.path), "post"),
    ] {
        assert!(paths[&path][method].is_object(), "{method} {path}");
    }
    let create = &paths[k.path]["post"]["requestBody"]["content"]["application/json"]["schema"];
    assert_eq!(create["required"], json!(["company_id", "description", "amount", "due_date"]));
    let update = &paths[format!("{}/{{id}}", k.path)]["patch"]["requestBody"]["content"]["application/json"]["schema"];
    // The PATCH moves the status, to the kind's own statuses only.
    let status = update["properties"]["status"].to_string();
    let other = if k.settled == "paid" { "received" } else { "paid" };
    assert!(status.contains(k.settled) && status.contains("cancelled") && !status.contains(other), "{status}");
    assert_eq!(
        paths[format!("{}/aggregates", k.path)]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
            ["required"][3],
        k.settled
    );
}

/// A Banco do Brasil boleto's digitable line, as printed, and its digits.
const BOLETO_LINE: &str = "00190.50095 40144.816069 06809.350314 3 37370000000100";
const BOLETO_DIGITS: &str = "00190500954014481606906809350314337370000000100";

/// A payable's payment coordinates: written on create and update in the form the bank
/// takes (digits, a canonical Pix key), each checked by its rule with a 422 naming it,
/// answered by the record and never by the list row; in a series the payee's go on
/// every record and the slip's on the first only; a receivable's schemas do not take
/// them.
pub async fn payment_coordinates_are_a_payables_checked_fields(k: K) {
    let h = ungated().await;
    let sent = with(
        body(),
        json!({
            "barcode": BOLETO_LINE, "pix_key": "(11) 98765-4321", "pix_key_type": "phone",
            "beneficiary_name": "Imobiliária Central", "beneficiary_document": "11.222.333/0001-81",
            "bank_code": "001", "bank_ispb": "00000000", "agency": "1234", "agency_digit": "X",
            "account_number": "56789", "account_digit": "0", "transfer_purpose": "Aluguel",
            "scheduled_to": "2026-03-09T09:00:00-03:00",
        }),
    );
    if k.settled != "paid" {
        for field in ["barcode", "pix_key", "tax_kind", "scheduled_to"] {
            let refused = post(&h, k.path, Some(with(body(), json!({ field: "x" })))).await;
            assert_eq!(reason(&refused), (422, "unknown_field".into(), field.to_string()));
        }
        let b = create(&h, k, body()).await;
        assert!(b.get("barcode").is_none() && b.get("pix_key").is_none(), "{b}");
        return;
    }
    let b = create(&h, k, sent.clone()).await;
    let expected = json!({
        "barcode": BOLETO_DIGITS, "pix_key": "+5511987654321", "pix_key_type": "phone",
        "beneficiary_name": "Imobiliária Central", "beneficiary_document": "11222333000181",
        "bank_code": "001", "bank_ispb": "00000000", "agency": "1234", "agency_digit": "X",
        "account_number": "56789", "account_digit": "0", "transfer_purpose": "Aluguel",
        "scheduled_to": "2026-03-09T12:00:00Z", "pix_copia_e_cola": null, "tax_kind": null, "tax_data": null,
    });
    for (field, value) in expected.as_object().unwrap() {
        assert_eq!(&b[field], value, "{field}: {b}");
    }
    let id = b["id"].as_str().unwrap();
    let path = format!("{}/{id}", k.path);
    let mut answered = b.clone();
    answered.as_object_mut().unwrap().remove("series");
    let mut read = get(&h, &path).await.json();
    // A get answers the record's files too (none yet); the create their count.
    assert_eq!(read.as_object_mut().unwrap().remove("attachments"), Some(json!([])));
    assert_eq!(read, answered, "the record reads as the create answered");
    let row = &get(&h, &format!("{}?id={id}", k.path)).await.json()["data"][0];
    assert!(row.get("barcode").is_none() && row.get("pix_key").is_none(), "a list row carries none: {row}");

    // An update changes what it sends, null clears, the rest is kept.
    let changed = patch(
        &h,
        &path,
        json!({"barcode": null, "tax_kind": "darf", "tax_data": {"tax_code": "0561", "total_amount": 1234.56}}),
    )
    .await;
    assert_eq!(changed.status, 200, "{}", String::from_utf8_lossy(&changed.bytes));
    let changed = changed.json();
    assert_eq!(changed["barcode"], Value::Null);
    assert_eq!(changed["tax_data"], json!({"tax_code": "0561", "total_amount": 1234.56}));
    assert_eq!(changed["pix_key"], "+5511987654321", "kept");
    // The record read back and sent whole changes nothing.
    let mut round_trip = get(&h, &path).await.json();
    round_trip["notes"] = json!("Contrato 2026");
    let sent_back = patch(&h, &path, round_trip).await;
    assert_eq!(sent_back.status, 200, "{}", String::from_utf8_lossy(&sent_back.bytes));
    assert_eq!(sent_back.json()["tax_data"], changed["tax_data"]);

    // Each rule names its field; nothing is written.
    for (extra, field, why) in [
        (
            json!({"barcode": "00190.50095 40144.816069 06809.350314 3 37370000000101"}),
            "barcode",
            "invalid_check_digit",
        ),
        (json!({"barcode": "123"}), "barcode", "invalid_format"),
        (json!({"pix_copia_e_cola": "000201pix6304ABCD"}), "pix_copia_e_cola", "invalid_check_digit"),
        (json!({"pix_key_type": "cpf"}), "pix_key", "invalid_pix_key"),
        (json!({"pix_key_type": null}), "pix_key_type", "required"),
        (json!({"beneficiary_document": "11.222.333/0001-82"}), "beneficiary_document", "invalid_document"),
        (json!({"bank_code": "1"}), "bank_code", "invalid_format"),
        (json!({"bank_ispb": "1234567a"}), "bank_ispb", "invalid_format"),
        (json!({"agency": "12-3"}), "agency", "invalid_format"),
        (json!({"tax_kind": null}), "tax_kind", "required"),
        (json!({"tax_kind": "ipva"}), "tax_kind", "invalid_value"),
        (json!({"tax_data": {"total_amount": -1}}), "tax_data.total_amount", "out_of_range"),
        (json!({"tax_data": {"amount": 1}}), "tax_data.amount", "unknown_field"),
        (json!({"scheduled_to": "amanhã"}), "scheduled_to", "invalid_date"),
    ] {
        let refused = patch(&h, &path, extra.clone()).await;
        assert_eq!(reason(&refused), (422, why.to_string(), field.to_string()), "{extra}");
    }
    let refused = post(&h, k.path, Some(with(body(), json!({"pix_key": "financeiro@acme.com.br"})))).await;
    assert_eq!(reason(&refused), (422, "required".into(), "pix_key_type".into()));
    assert_eq!(get(&h, &path).await.json()["tax_data"], changed["tax_data"], "unchanged by the refusals");

    // A series: the payee's coordinates on every record, the slip on the first only.
    let series = create(&h, k, with(sent, json!({"type": "installment", "total_installments": 3}))).await;
    let ids: Vec<&str> = series["series"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    for (i, id) in ids.iter().enumerate() {
        let record = get(&h, &format!("{}/{id}", k.path)).await.json();
        assert_eq!(record["pix_key"], "+5511987654321", "{i}");
        assert_eq!(record["beneficiary_document"], "11222333000181", "{i}");
        let first = i == 0;
        assert_eq!(record["barcode"].is_string(), first, "{i}: {record}");
        assert_eq!(record["scheduled_to"].is_string(), first, "{i}");
    }
    // Deleting a payable takes its coordinates with it.
    assert_eq!(delete(&h, &format!("{}/{}", k.path, ids[1])).await.status, 204);
    let left = sql::query("SELECT COUNT(*) FROM payment_coordinates WHERE billing_id = $1")
        .bind(ids[1])
        .fetch_one(&h.state.db)
        .await
        .unwrap();
    assert_eq!(left.try_get::<i64, _>(0).unwrap(), 0);
}
