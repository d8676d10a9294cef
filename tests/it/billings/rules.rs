use super::*;

pub async fn installments_split_to_the_cent_with_the_remainder_on_the_last(k: K) {
    let h = ungated().await;
    let c1 = center(&h, ACME_COMPANY, k.center).await;
    let c2 = center(&h, ACME_COMPANY, k.center).await;
    let tax = tax(&h, DEMO_WORKSPACE_ACME, "ISS").await;
    let created = create(
        &h,
        k,
        with(
            body(),
            json!({"amount": "100.00", "type": "installment", "total_installments": 3,
                   "classification_centers": [{"classification_center_id": c1, "percentage": "50"}, {"classification_center_id": c2, "amount": "50.00"}],
                   "tax_charges": [{"tax_id": tax, "amount": "2.00"}]}),
        ),
    )
    .await;
    let series: Vec<String> =
        created["series"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
    assert_eq!(series.len(), 3);
    assert_eq!(created["id"].as_str(), Some(series[0].as_str()), "the answer is the first installment");
    let mut amounts = Vec::new();
    let mut item_amounts = 0i64;
    for (i, id) in series.iter().enumerate() {
        let row = get(&h, &format!("{}/{id}", k.path)).await.json();
        amounts.push(row["amount"].as_str().unwrap().to_string());
        assert_eq!(row["installment_number"], json!(i + 1));
        assert_eq!(row["total_installments"], 3);
        assert_eq!(row["parcels_amount"], "100.00");
        assert_eq!(row["type"], "installment");
        let allocations = row["classification_center_allocations"].as_array().unwrap();
        assert_eq!(allocations.len(), 2, "the apportionment is spread to every installment");
        assert_eq!(allocations[0]["percentage"], "50.00");
        item_amounts += Cents::parse(allocations[1]["amount"].as_str().unwrap());
        assert_eq!(row["tax_charges"].as_array().unwrap().len(), if i == 0 { 1 } else { 0 }, "taxes on the first only");
    }
    assert_eq!(amounts, ["33.33", "33.33", "33.34"]);
    assert_eq!(item_amounts, 5000, "the amount item adds up over the series");
    let total = h
        .send(
            rest(
                Method::GET,
                &format!("{}?group_id={}", k.path, created["group_id"].as_str().unwrap()),
                &h.api_token(DEMO_OWNER),
                None,
            )
            .build(),
        )
        .await
        .json();
    assert_eq!(total["data"].as_array().unwrap().len(), 3);
    // The amount must cover one cent per installment.
    let reply =
        post(&h, k.path, Some(with(body(), json!({"amount": "0.02", "type": "installment", "total_installments": 3}))))
            .await;
    expect(&reply, 422, "amount_too_small");
}

/// Integer cents from a 2-decimal string (test helper).
pub struct Cents;
impl Cents {
    pub fn parse(s: &str) -> i64 {
        let (i, f) = s.split_once('.').unwrap();
        i.parse::<i64>().unwrap() * 100 + f.parse::<i64>().unwrap()
    }
}

pub async fn installments_are_one_month_apart_with_one_group_id(k: K) {
    let h = ungated().await;
    let created = create(&h, k, with(body(), json!({"due_date": "2026-01-31", "competence_date": "2026-01-15", "type": "installment", "total_installments": 4}))).await;
    let group = created["group_id"].as_str().unwrap().to_string();
    let mut dues = Vec::new();
    let mut competences = Vec::new();
    for id in created["series"].as_array().unwrap() {
        let row = get(&h, &format!("{}/{}", k.path, id.as_str().unwrap())).await.json();
        assert_eq!(row["group_id"].as_str(), Some(group.as_str()));
        dues.push(row["due_date"].as_str().unwrap().to_string());
        competences.push(row["competence_date"].as_str().unwrap().to_string());
    }
    assert_eq!(dues, ["2026-01-31", "2026-02-28", "2026-03-31", "2026-04-30"], "same day, clamped to the month's end");
    assert_eq!(competences, ["2026-01-15", "2026-02-15", "2026-03-15", "2026-04-15"]);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM billings WHERE group_id = $1", &group).await, 4);
    // Deleting one installment leaves the others.
    let first = created["id"].as_str().unwrap();
    assert_eq!(delete(&h, &format!("{}/{first}", k.path)).await.status, 204);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM billings WHERE group_id = $1", &group).await, 3);
}

pub async fn recurrence_creates_the_documented_horizon(k: K) {
    let h = ungated().await;
    let created = create(
        &h,
        k,
        with(body(), json!({"type": "recurring", "recurrence_period": "weekly", "due_date": "2026-12-25"})),
    )
    .await;
    let series = created["series"].as_array().unwrap();
    assert_eq!(series.len(), kobana_finance_mcp::domain::bills::RECURRENCE_HORIZON);
    assert_eq!(series.len(), 12);
    let last = get(&h, &format!("{}/{}", k.path, series[11].as_str().unwrap())).await.json();
    assert_eq!(last["due_date"], "2027-03-12", "11 weeks after the first");
    assert_eq!(last["amount"], "1000.00", "same amount each");
    assert_eq!(last["recurrence_period"], "weekly");
    assert_eq!(last["group_id"], created["group_id"]);
    assert_eq!(last["parcels_amount"], "12000.00");
    let monthly = create(
        &h,
        k,
        with(body(), json!({"type": "recurring", "recurrence_period": "quarterly", "due_date": "2026-11-30"})),
    )
    .await;
    let second = get(&h, &format!("{}/{}", k.path, monthly["series"][1].as_str().unwrap())).await.json();
    assert_eq!(second["due_date"], "2027-02-28");
    let bad = post(&h, k.path, Some(with(body(), json!({"type": "normal", "recurrence_period": "weekly"})))).await;
    assert_eq!(reason(&bad).0, 422);
}

pub async fn apportionment_sums_within_a_cent_and_matches_polarity(k: K) {
    let h = ungated().await;
    let c1 = center(&h, ACME_COMPANY, k.center).await;
    let c2 = center(&h, ACME_COMPANY, k.center).await;
    let c3 = center(&h, ACME_COMPANY, k.center).await;
    let wrong = center(&h, ACME_COMPANY, k.wrong_center).await;
    let sister = center(&h, ACME_SERVICES, k.center).await;
    let thirds = json!([{"classification_center_id": c1, "percentage": "33.33"}, {"classification_center_id": c2, "percentage": "33.33"}, {"classification_center_id": c3, "percentage": "33.33"}]);
    let ok = create(&h, k, with(body(), json!({"amount": "100.00", "classification_centers": thirds}))).await;
    assert_eq!(
        ok["classification_center_id"].as_str(),
        Some(c1.as_str()),
        "the first center mirrors into classification_center_id"
    );
    assert_eq!(ok["classification_center_allocations"].as_array().unwrap().len(), 3);
    let short = post(&h, k.path, Some(with(body(), json!({"amount": "100.00", "classification_centers": [{"classification_center_id": c1, "amount": "60.00"}, {"classification_center_id": c2, "amount": "39.98"}]})))).await;
    expect(&short, 422, "allocation_sum");
    let polarity = post(
        &h,
        k.path,
        Some(with(
            body(),
            json!({"classification_centers": [{"classification_center_id": wrong, "percentage": "100"}]}),
        )),
    )
    .await;
    expect(&polarity, 422, "type_mismatch");
    let company = post(
        &h,
        k.path,
        Some(with(
            body(),
            json!({"classification_centers": [{"classification_center_id": sister, "percentage": "100"}]}),
        )),
    )
    .await;
    expect(&company, 422, "company_mismatch");
    // Replace-all on update; [] clears.
    let path = format!("{}/{}", k.path, ok["id"].as_str().unwrap());
    let replaced =
        patch(&h, &path, json!({"classification_centers": [{"classification_center_id": c3, "amount": "100.00"}]}))
            .await
            .json();
    assert_eq!(
        replaced["classification_center_allocations"],
        json!([{"classification_center_id": c3, "classification_center_name": replaced["classification_center_allocations"][0]["classification_center_name"], "percentage": null, "amount": "100.00"}])
    );
    // A new amount must still be covered by the kept apportionment.
    expect(&patch(&h, &path, json!({"amount": "150.00"})).await, 422, "allocation_sum");
    let cleared = patch(&h, &path, json!({"classification_centers": []})).await.json();
    assert_eq!(cleared["classification_center_allocations"], json!([]));
    assert_eq!(cleared["classification_center_id"], Value::Null);
    let filtered = get(&h, &format!("{}?classification_center_id={c1}", k.path)).await.json();
    assert_eq!(filtered["data"].as_array().unwrap().len(), 0);
    let primary = get(&h, &format!("{}?classification_center_id[in]={c1},{c2}", k.path)).await.json();
    assert_eq!(primary["data"].as_array().unwrap().len(), 0, "only the first center of a record is filtered on");
    // The single-center shorthand and the full set do not mix.
    let mixed = post(&h, k.path, Some(with(body(), json!({"classification_center_id": c1, "classification_centers": [{"classification_center_id": c2, "percentage": "100"}]})))).await;
    assert_eq!(reason(&mixed), (400, "mutually_exclusive".into(), "classification_center_id".into()));
    let again = create(
        &h,
        k,
        with(body(), json!({"classification_centers": [{"classification_center_id": c2, "percentage": "100"}]})),
    )
    .await;
    let by_center = get(&h, &format!("{}?classification_center_id={c2}", k.path)).await.json();
    assert_eq!(by_center["data"][0]["id"], again["id"]);
}

pub async fn find_or_create_by_name_is_exclusive_with_id(k: K) {
    let h = ungated().await;
    let existing = person(&h, ACME_COMPANY, "Maria Silva").await;
    let both = post(&h, k.path, Some(with(body(), json!({"person_id": existing, "person_name": "Maria Silva"})))).await;
    assert_eq!(reason(&both), (400, "mutually_exclusive".into(), "person_id".into()));
    let cat = category(&h, ACME_COMPANY, k.tx_type, "Serviços").await;
    let both = post(&h, k.path, Some(with(body(), json!({"category_id": cat, "category_name": "Serviços"})))).await;
    assert_eq!(reason(&both), (400, "mutually_exclusive".into(), "category_id".into()));
    // By name: found (and marked with the kind's role), or created with the kind's polarity.
    let found = create(
        &h,
        k,
        with(
            body(),
            json!({"person_name": "Maria Silva", "category_name": "Serviços", "classification_center_name": "Obra 7"}),
        ),
    )
    .await;
    assert_eq!(found["person_id"].as_str(), Some(existing.as_str()));
    assert_eq!(count(&h, &format!("SELECT {} FROM people WHERE id = $1", k.person_flag), &existing).await, 1);
    assert_eq!(found["category_id"].as_str(), Some(cat.as_str()));
    assert_eq!(found["category_name"], "Serviços");
    let center_id = found["classification_center_id"].as_str().unwrap();
    assert_eq!(found["classification_center_name"], "Obra 7");
    assert_eq!(found["classification_center_allocations"][0]["percentage"], "100.00");
    let center_type: String = sql::query("SELECT center_type FROM classification_centers WHERE id = $1")
        .bind(center_id)
        .fetch_one(&h.state.db)
        .await
        .unwrap()
        .try_get(0)
        .unwrap();
    assert_eq!(center_type, k.center);
    let created =
        create(&h, k, with(body(), json!({"category_name": "Nova categoria", "person_name": "Pessoa Nova"}))).await;
    let kind: String = sql::query("SELECT category_type FROM categories WHERE id = $1")
        .bind(created["category_id"].as_str().unwrap())
        .fetch_one(&h.state.db)
        .await
        .unwrap()
        .try_get(0)
        .unwrap();
    assert_eq!(kind, k.tx_type);
    // A record created by name is audited as any create of its kind; one found is not.
    let audited = |action: &str, target: &str| {
        format!("SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = '{action}' AND target_type = '{target}' AND channel = 'api'")
    };
    assert_eq!(count(&h, &audited("categories.create", "category"), created["category_id"].as_str().unwrap()).await, 1);
    assert_eq!(count(&h, &audited("people.create", "person"), created["person_id"].as_str().unwrap()).await, 1);
    assert_eq!(count(&h, &audited("classification_centers.create", "classification_center"), center_id).await, 1);
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = 'people.create'", &existing)
            .await,
        0
    );
    // On update too: found or created by name.
    let renamed = patch(
        &h,
        &format!("{}/{}", k.path, created["id"].as_str().unwrap()),
        json!({"person_name": "Maria Silva", "category_id": null}),
    )
    .await
    .json();
    assert_eq!(renamed["person_id"].as_str(), Some(existing.as_str()));
    assert_eq!(renamed["category_id"], Value::Null);
    // A category of the other polarity is refused by id.
    let wrong = category(&h, ACME_COMPANY, k.wrong_category(), "Errada").await;
    expect(&post(&h, k.path, Some(with(body(), json!({"category_id": wrong})))).await, 422, "type_mismatch");
}

pub async fn person_is_required(k: K) {
    let h = ungated().await;
    let reply = post(&h, k.path, Some(with(body(), json!({"person_name": null})))).await;
    assert_eq!(reason(&reply), (422, "person_required".into(), "person_id".into()));
    let foreign = person(&h, BETA_COMPANY, "Fora").await;
    expect(
        &post(&h, k.path, Some(with(body(), json!({"person_name": null, "person_id": foreign})))).await,
        422,
        "invalid_reference",
    );
    let mine = person(&h, ACME_COMPANY, "Dentro").await;
    let ok = create(&h, k, with(body(), json!({"person_name": null, "person_id": mine}))).await;
    assert_eq!(ok["person_name"], "Dentro");
    // A null person is what a read of a record without one answers: no change.
    let cannot_clear =
        patch(&h, &format!("{}/{}", k.path, ok["id"].as_str().unwrap()), json!({"person_id": null})).await;
    assert_eq!(cannot_clear.status, 200);
    assert_eq!(cannot_clear.json()["person_id"], json!(mine));
}

pub async fn period_closed_blocks_create_update_settle_reopen_and_delete(k: K) {
    let h = ungated().await;
    let account = account(&h, ACME_COMPANY).await;
    let open = create(&h, k, with(body(), json!({"due_date": "2026-02-10", "financial_account_id": account}))).await;
    let settled = create(&h, k, with(body(), json!({"due_date": "2026-02-11", "financial_account_id": account}))).await;
    let late = create(&h, k, with(body(), json!({"due_date": "2026-04-10", "financial_account_id": account}))).await;
    let open_path = format!("{}/{}", k.path, open["id"].as_str().unwrap());
    let settled_path = format!("{}/{}", k.path, settled["id"].as_str().unwrap());
    let late_path = format!("{}/{}", k.path, late["id"].as_str().unwrap());
    assert_eq!(
        post(&h, &format!("{settled_path}/settle"), Some(json!({"payment_date": "2026-02-11"}))).await.status,
        200
    );
    lock(&h, ACME_COMPANY, "2026-02-28").await;
    expect(&post(&h, k.path, Some(with(body(), json!({"due_date": "2026-02-28"})))).await, 422, "period_closed");
    expect(&patch(&h, &open_path, json!({"description": "x"})).await, 422, "period_closed");
    expect(&patch(&h, &late_path, json!({"due_date": "2026-01-31"})).await, 422, "period_closed");
    expect(
        &post(&h, &format!("{open_path}/settle"), Some(json!({"payment_date": "2026-03-05"}))).await,
        422,
        "period_closed",
    );
    expect(
        &post(&h, &format!("{late_path}/settle"), Some(json!({"payment_date": "2026-02-20"}))).await,
        422,
        "period_closed",
    );
    expect(&post(&h, &format!("{settled_path}/reopen"), None).await, 422, "period_closed");
    expect(&post(&h, &format!("{open_path}/cancel"), None).await, 422, "period_closed");
    expect(&delete(&h, &open_path).await, 422, "period_closed");
    let details = delete(&h, &settled_path).await.json()["error"]["details"].clone();
    assert_eq!(details["locked_until"], "2026-02-28");
    // After the lock: allowed.
    assert_eq!(post(&h, k.path, Some(with(body(), json!({"due_date": "2026-03-01"})))).await.status, 201);
    assert_eq!(post(&h, &format!("{late_path}/settle"), Some(json!({"payment_date": "2026-03-01"}))).await.status, 200);
    assert_eq!(post(&h, &format!("{late_path}/reopen"), None).await.status, 200);
    assert_eq!(delete(&h, &late_path).await.status, 204);
    assert_eq!(get(&h, &open_path).await.json()["status"], "pending");
}

pub async fn a_payable_is_not_a_receivable(k: K) {
    let h = ungated().await;
    let account = account(&h, ACME_COMPANY).await;
    let b = create(&h, k, body()).await;
    let id = b["id"].as_str().unwrap();
    let elsewhere = format!("{}/{id}", k.other);
    assert_eq!(get(&h, &elsewhere).await.status, 404);
    assert_eq!(patch(&h, &elsewhere, json!({"description": "x"})).await.status, 404);
    assert_eq!(
        post(
            &h,
            &format!("{elsewhere}/settle"),
            Some(json!({"payment_date": "2026-03-12", "financial_account_id": account}))
        )
        .await
        .status,
        404
    );
    assert_eq!(post(&h, &format!("{elsewhere}/cancel"), None).await.status, 404);
    assert_eq!(post(&h, &format!("{elsewhere}/reopen"), None).await.status, 404);
    assert_eq!(delete(&h, &elsewhere).await.status, 404);
    assert_eq!(get(&h, k.other).await.json()["data"], json!([]));
    assert_eq!(get(&h, &format!("{}/ids", k.other)).await.json()["data"], json!([]));
    assert_eq!(get(&h, &format!("{}/aggregates", k.other)).await.json()["count"], 0);
    assert_eq!(get(&h, &format!("{}/{id}", k.path)).await.json()["status"], "pending");
}

pub async fn settle_is_idempotent_with_a_key(k: K) {
    let h = ungated().await;
    let account = account(&h, ACME_COMPANY).await;
    let b = create(&h, k, body()).await;
    let id = b["id"].as_str().unwrap();
    let token = h.api_token(DEMO_OWNER);
    let settle = |body: Value| {
        rest(Method::POST, &format!("{}/{id}/settle", k.path), &token, Some(body))
            .header("x-idempotency-key", "settle-1")
            .build()
    };
    let request = json!({"payment_date": "2026-03-12", "financial_account_id": account});
    let first = h.send(settle(request.clone())).await;
    assert_eq!(first.status, 200, "{}", String::from_utf8_lossy(&first.bytes));
    assert!(first.header("x-idempotency-replayed").is_none());
    let again = h.send(settle(request.clone())).await;
    assert_eq!(again.status, 200);
    assert_eq!(again.header("x-idempotency-replayed"), Some("true"));
    assert_eq!(again.json(), first.json());
    assert_eq!(settled_transactions(&h, id).await.len(), 1, "a retried settle moves money once");
    let other = h.send(settle(json!({"payment_date": "2026-03-13", "financial_account_id": account}))).await;
    assert_eq!(other.status, 409);
    assert_eq!(other.json()["error"]["code"], "conflict");
    assert_eq!(other.json()["error"]["details"]["reason"], "idempotency_key_reused");
    // Concurrent retries: one movement.
    let b2 = create(&h, k, body()).await;
    let id2 = b2["id"].as_str().unwrap().to_string();
    let race = || {
        rest(Method::POST, &format!("{}/{id2}/settle", k.path), &token, Some(request.clone()))
            .header("x-idempotency-key", "race")
            .build()
    };
    let (x, y) = tokio::join!(h.send(race()), h.send(race()));
    assert!([x.status.as_u16(), y.status.as_u16()].iter().all(|s| [200, 409, 422].contains(s)));
    assert!(x.status == 200 || y.status == 200);
    assert_eq!(settled_transactions(&h, &id2).await.len(), 1);
}

pub async fn idempotency_key_replays_a_create(k: K) {
    let h = ungated().await;
    let token = h.api_token(DEMO_OWNER);
    let send =
        |b: Value, header: &'static str| rest(Method::POST, k.path, &token, Some(b)).header(header, "create-1").build();
    let series = with(body(), json!({"type": "installment", "total_installments": 3}));
    let first = h.send(send(series.clone(), "x-idempotency-key")).await;
    assert_eq!(first.status, 201);
    let again = h.send(send(series.clone(), "idempotency-key")).await;
    assert_eq!(again.status, 201);
    assert_eq!(again.header("x-idempotency-replayed"), Some("true"));
    assert_eq!(again.json(), first.json());
    assert_eq!(again.header("location"), first.header("location"));
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM billings WHERE workspace_id = $1", DEMO_WORKSPACE_ACME).await,
        3,
        "the series is written once"
    );
    let reused = h.send(send(body(), "x-idempotency-key")).await;
    assert_eq!(reused.status, 409);
    assert_eq!(reused.json()["error"]["code"], "conflict");
    assert_eq!(reused.json()["error"]["details"]["reason"], "idempotency_key_reused");
}
