use super::*;

pub async fn create_returns_201_with_location_provenance_and_audit(k: K) {
    let h = ungated().await;
    let reply = h.send(rest(Method::POST, k.path, &h.api_token(DEMO_OWNER), Some(body())).build()).await;
    assert_eq!(reply.status, 201, "{}", String::from_utf8_lossy(&reply.bytes));
    let created = reply.json();
    let id = created["id"].as_str().unwrap();
    assert_eq!(reply.header("location"), Some(format!("{}/{id}", k.path).as_str()));
    assert_eq!(created["status"], "pending");
    assert_eq!(created["type"], "normal");
    assert_eq!(created["amount"], "1000.00");
    assert_eq!(created["nominal_amount"], "1000.00");
    assert_eq!(created["competence_date"], "2026-03-10", "defaults to the due date");
    assert_eq!(created["person_name"], "Imobiliária Central");
    assert_eq!(created["created_via"], "api");
    assert_eq!(created["created_by"], DEMO_OWNER);
    assert_eq!(created["series"], json!([id]));
    assert_eq!(created["classification_center_allocations"], json!([]));
    assert_eq!(created["tax_charges"], json!([]));
    let person = created["person_id"].as_str().unwrap();
    assert_eq!(count(&h, &format!("SELECT {} FROM people WHERE id = $1", k.person_flag), person).await, 1);
    let action = format!("{}.create", &k.path[4..]);
    assert_eq!(
        count(
            &h,
            &format!(
                "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = '{action}' AND channel = 'api'"
            ),
            id
        )
        .await,
        1
    );
    let mut got = get(&h, &format!("{}/{id}", k.path)).await.json();
    got["series"] = created["series"].clone();
    // A get answers the record's files too (none yet); the create their count.
    assert_eq!(got.as_object_mut().unwrap().remove("attachments"), Some(json!([])));
    assert_eq!(got, created);
}

pub async fn validation_names_the_field(k: K) {
    let h = ungated().await;
    let token = h.api_token(DEMO_OWNER);
    let cases = [
        (with(body(), json!({"description": null})), 422, "description", "required"),
        (with(body(), json!({"amount": "0.00"})), 422, "amount", "invalid_amount"),
        (with(body(), json!({"amount": "10.001"})), 422, "amount", "invalid_amount"),
        (with(body(), json!({"due_date": "2026-02-30"})), 422, "due_date", "invalid_date"),
        (with(body(), json!({"colour": "red"})), 422, "colour", "unknown_field"),
        (with(body(), json!({"status": "paid"})), 422, "status", "unknown_field"),
        (with(body(), json!({"type": "installment"})), 422, "total_installments", "required"),
        (
            with(body(), json!({"type": "installment", "total_installments": 121})),
            422,
            "total_installments",
            "out_of_range",
        ),
        (with(body(), json!({"type": "recurring"})), 422, "recurrence_period", "required"),
        (with(body(), json!({"company_id": BETA_COMPANY})), 422, "company_id", "invalid_reference"),
        (
            with(body(), json!({"tax_charges": [{"tax_id": MISSING, "amount": "1.00"}]})),
            422,
            "tax_charges[0].tax_id",
            "invalid_reference",
        ),
    ];
    for (b, status, field, why) in cases {
        let reply = h.send(rest(Method::POST, k.path, &token, Some(b.clone())).build()).await;
        let (got, r, f) = reason(&reply);
        assert_eq!(
            (got, r.as_str(), f.as_str()),
            (status, why, field),
            "{b}: {}",
            String::from_utf8_lossy(&reply.bytes)
        );
    }
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM billings WHERE workspace_id = $1", DEMO_WORKSPACE_ACME).await,
        0,
        "nothing half-written"
    );
}

pub async fn settle_creates_exactly_one_auto_created_transaction(k: K) {
    let h = ungated().await;
    let account = account(&h, ACME_COMPANY).await;
    let cat = category(&h, ACME_COMPANY, k.tx_type, "Aluguel").await;
    let c1 = center(&h, ACME_COMPANY, k.center).await;
    let c2 = center(&h, ACME_COMPANY, "both").await;
    let b = create(
        &h,
        k,
        with(body(), json!({"category_id": cat, "classification_centers": [{"classification_center_id": c1, "percentage": "70"}, {"classification_center_id": c2, "amount": "300.00"}]})),
    )
    .await;
    let id = b["id"].as_str().unwrap();
    let reply = post(
        &h,
        &format!("{}/{id}/settle", k.path),
        Some(json!({"payment_date": "2026-03-12", "financial_account_id": account, "interest_amount": "10.00"})),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.bytes));
    let settled = reply.json();
    assert_eq!(settled["status"], k.settled);
    assert_eq!(settled["payment_date"], "2026-03-12");
    assert_eq!(settled["financial_account_id"], account.as_str());
    assert_eq!(settled["ticket_amount"], "1010.00", "defaults to the nominal amount");
    let rows = settled_transactions(&h, id).await;
    assert_eq!(rows.len(), 1, "exactly one movement");
    let tx = &rows[0];
    assert_eq!(settled["transaction_id"].as_str(), Some(tx.try_get::<String, _>("id").unwrap().as_str()));
    assert_eq!(tx.try_get::<String, _>("transaction_type").unwrap(), k.tx_type);
    assert_eq!(tx.try_get::<i64, _>("amount_cents").unwrap(), 101_000);
    assert_eq!(tx.try_get::<String, _>("financial_account_id").unwrap(), account);
    assert_eq!(tx.try_get::<String, _>("occurred_at").unwrap(), "2026-03-12");
    assert_eq!(tx.try_get::<i64, _>("auto_created").unwrap(), 1);
    assert_eq!(tx.try_get::<Option<String>, _>("category_id").unwrap().as_deref(), Some(cat.as_str()));
    assert_eq!(tx.try_get::<Option<String>, _>("person_id").unwrap().as_deref(), b["person_id"].as_str());
    let tx_id: String = tx.try_get("id").unwrap();
    // The apportionment follows the transaction's amount: 70 % and the rest.
    let sum: i64 = sql::query("SELECT CAST(SUM(CASE WHEN amount_cents IS NULL THEN 0 ELSE amount_cents END) AS BIGINT) FROM allocations WHERE owner_type = 'transaction' AND owner_id = $1")
        .bind(&tx_id)
        .fetch_one(&h.state.db)
        .await
        .unwrap()
        .try_get(0)
        .unwrap();
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM allocations WHERE owner_type = 'transaction' AND owner_id = $1", &tx_id).await,
        2
    );
    assert_eq!(sum + 70_700, 101_000, "70 % of 1010.00 plus the amount item scaled to 303.00");
    // Settling again is an invalid transition and moves nothing.
    let again = post(
        &h,
        &format!("{}/{id}/settle", k.path),
        Some(json!({"payment_date": "2026-03-12", "financial_account_id": account})),
    )
    .await;
    expect(&again, 422, "invalid_transition");
    assert_eq!(settled_transactions(&h, id).await.len(), 1);
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action LIKE '%.settle'", id).await,
        1
    );
}

pub async fn settle_requires_payment_date_and_an_account_of_the_same_company(k: K) {
    let h = ungated().await;
    let b = create(&h, k, body()).await;
    let path = format!("{}/{}/settle", k.path, b["id"].as_str().unwrap());
    let mine = account(&h, ACME_COMPANY).await;
    let sister = account(&h, ACME_SERVICES).await;
    let foreign = account(&h, BETA_COMPANY).await;
    let no_date = post(&h, &path, Some(json!({"financial_account_id": mine}))).await;
    assert_eq!(reason(&no_date), (422, "required".into(), "payment_date".into()));
    let bad_date = post(&h, &path, Some(json!({"payment_date": "2026-13-01", "financial_account_id": mine}))).await;
    assert_eq!(reason(&bad_date), (422, "invalid_date".into(), "payment_date".into()));
    expect(&post(&h, &path, Some(json!({"payment_date": "2026-03-12"}))).await, 422, "account_required");
    expect(
        &post(&h, &path, Some(json!({"payment_date": "2026-03-12", "financial_account_id": sister}))).await,
        422,
        "account_company_mismatch",
    );
    expect(
        &post(&h, &path, Some(json!({"payment_date": "2026-03-12", "financial_account_id": foreign}))).await,
        422,
        "invalid_reference",
    );
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM financial_transactions WHERE workspace_id = $1", DEMO_WORKSPACE_ACME).await,
        0
    );
    assert_eq!(get(&h, &format!("{}/{}", k.path, b["id"].as_str().unwrap())).await.json()["status"], "pending");
    // Accounts given on create or update must belong to the company too.
    expect(
        &post(&h, k.path, Some(with(body(), json!({"expected_account_id": sister})))).await,
        422,
        "account_company_mismatch",
    );
    expect(
        &post(&h, k.path, Some(with(body(), json!({"financial_account_id": foreign})))).await,
        422,
        "invalid_reference",
    );
    expect(
        &patch(&h, &format!("{}/{}", k.path, b["id"].as_str().unwrap()), json!({"financial_account_id": sister})).await,
        422,
        "account_company_mismatch",
    );
    // An account set on the record beforehand is used.
    let b2 = create(&h, k, with(body(), json!({"financial_account_id": mine}))).await;
    let ok = post(
        &h,
        &format!("{}/{}/settle", k.path, b2["id"].as_str().unwrap()),
        Some(json!({"payment_date": "2026-03-12"})),
    )
    .await;
    assert_eq!(ok.status, 200, "{}", String::from_utf8_lossy(&ok.bytes));
    assert_eq!(ok.json()["status"], k.settled);
}

pub async fn reopen_removes_the_settlement_transaction(k: K) {
    let h = ungated().await;
    let account = account(&h, ACME_COMPANY).await;
    let b = create(&h, k, body()).await;
    let id = b["id"].as_str().unwrap();
    let settled = post(
        &h,
        &format!("{}/{id}/settle", k.path),
        Some(json!({"payment_date": "2026-03-12", "financial_account_id": account, "ticket_amount": "990.00"})),
    )
    .await;
    assert_eq!(settled.status, 200);
    let tx = settled.json()["transaction_id"].as_str().unwrap().to_string();
    let reopened = post(&h, &format!("{}/{id}/reopen", k.path), None).await;
    assert_eq!(reopened.status, 200, "{}", String::from_utf8_lossy(&reopened.bytes));
    let r = reopened.json();
    assert_eq!(r["status"], "pending");
    assert_eq!(r["payment_date"], Value::Null);
    assert_eq!(r["transaction_id"], Value::Null);
    assert_eq!(r["ticket_amount"], Value::Null);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM financial_transactions WHERE id = $1", &tx).await, 0);
    assert_eq!(settled_transactions(&h, id).await.len(), 0);
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = 'transactions.delete'", &tx)
            .await,
        1
    );
    // Reopening a pending record is not a transition; settling again works.
    expect(&post(&h, &format!("{}/{id}/reopen", k.path), None).await, 422, "invalid_transition");
    let again = post(&h, &format!("{}/{id}/settle", k.path), Some(json!({"payment_date": "2026-03-13"}))).await;
    assert_eq!(again.status, 200, "the settlement account stays on the record");
    assert_eq!(settled_transactions(&h, id).await.len(), 1);
}

pub async fn cancel_of_a_settled_record_requires_reopen(k: K) {
    let h = ungated().await;
    let account = account(&h, ACME_COMPANY).await;
    let b = create(&h, k, with(body(), json!({"financial_account_id": account}))).await;
    let id = b["id"].as_str().unwrap();
    assert_eq!(
        post(&h, &format!("{}/{id}/settle", k.path), Some(json!({"payment_date": "2026-03-12"}))).await.status,
        200
    );
    let refused = post(&h, &format!("{}/{id}/cancel", k.path), None).await;
    assert_eq!(reason(&refused), (422, "invalid_transition".into(), "status".into()));
    assert_eq!(settled_transactions(&h, id).await.len(), 1, "nothing changed");
    assert_eq!(post(&h, &format!("{}/{id}/reopen", k.path), None).await.status, 200);
    let cancelled = post(&h, &format!("{}/{id}/cancel", k.path), Some(json!({}))).await;
    assert_eq!(cancelled.status, 200);
    assert_eq!(cancelled.json()["status"], "cancelled");
    expect(&post(&h, &format!("{}/{id}/cancel", k.path), None).await, 422, "invalid_transition");
    expect(
        &post(&h, &format!("{}/{id}/settle", k.path), Some(json!({"payment_date": "2026-03-12"}))).await,
        422,
        "invalid_transition",
    );
    let reopened = post(&h, &format!("{}/{id}/reopen", k.path), None).await;
    assert_eq!(reopened.json()["status"], "pending");
    let unknown = post(&h, &format!("{}/{id}/cancel", k.path), Some(json!({"reason": "x"}))).await;
    assert_eq!(reason(&unknown), (422, "unknown_field".into(), "reason".into()));
}

pub async fn update_never_changes_status(k: K) {
    let h = ungated().await;
    let account = account(&h, ACME_COMPANY).await;
    let b = create(&h, k, body()).await;
    let path = format!("{}/{}", k.path, b["id"].as_str().unwrap());
    // The answer's own fields are dropped, as the real API drops them.
    for field in ["transaction_id", "company_id", "nominal_amount", "created_at"] {
        let reply = patch(&h, &path, json!({ field: "x" })).await;
        assert_eq!(reply.status, 200, "{field}: {}", String::from_utf8_lossy(&reply.bytes));
        assert_eq!(reply.json()[field], b[field], "{field} is not written");
    }
    let changed =
        patch(&h, &path, json!({"description": "Aluguel de abril", "amount": "1200.00", "notes": "reajuste"})).await;
    assert_eq!(changed.status, 200, "{}", String::from_utf8_lossy(&changed.bytes));
    let changed = changed.json();
    assert_eq!(
        (changed["description"].as_str(), changed["amount"].as_str(), changed["status"].as_str()),
        (Some("Aluguel de abril"), Some("1200.00"), Some("pending"))
    );
    assert_eq!(changed["updated_via"], "api");
    let cleared = patch(&h, &path, json!({"notes": null})).await.json();
    assert_eq!(cleared["notes"], Value::Null);
    assert_eq!(cleared["description"], "Aluguel de abril", "fields not sent are kept");
    assert_eq!(
        post(
            &h,
            &format!("{path}/settle"),
            Some(json!({"payment_date": "2026-03-12", "financial_account_id": account}))
        )
        .await
        .status,
        200
    );
    expect(&patch(&h, &path, json!({"description": "x"})).await, 422, "invalid_transition");
    assert_eq!(get(&h, &path).await.json()["status"], k.settled);
}

/// The real API moves a bill by `PATCH {status}`: the same settle, cancel and reopen as
/// the action routes, with their rules, ledger transaction and audit; a record read,
/// its status changed and sent back whole, moves.
pub async fn a_patch_with_a_status_moves_it_as_the_actions_do(k: K) {
    let h = ungated().await;
    let account = account(&h, ACME_COMPANY).await;
    let b = create(&h, k, body()).await;
    let id = b["id"].as_str().unwrap();
    let path = format!("{}/{id}", k.path);
    let other_settled = if k.settled == "paid" { "received" } else { "paid" };
    for (sent, field, why) in [
        (json!({"status": "x"}), "status", "invalid_value"),
        (json!({"status": other_settled}), "status", "invalid_value"),
        (json!({"status": k.settled}), "payment_date", "required"),
        (json!({"payment_date": "2026-03-12"}), "payment_date", "not_allowed"),
        (json!({"status": "pending", "ticket_amount": "1.00"}), "ticket_amount", "not_allowed"),
    ] {
        let reply = patch(&h, &path, sent.clone()).await;
        assert_eq!(reason(&reply), (422, why.to_string(), field.to_string()), "{sent}");
    }
    assert_eq!(settled_transactions(&h, id).await.len(), 0);
    let audit = async |action: &str| {
        let action = format!("{}.{action}", &k.path[4..]);
        count(&h, &format!("SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = '{action}'"), id).await
    };

    // Read, set the status and the payment, send it all back: settled once, with its
    // one auto-created transaction, and a retry under the key moves nothing more.
    let mut read = get(&h, &path).await.json();
    read["status"] = json!(k.settled);
    read["payment_date"] = json!("2026-03-12");
    read["financial_account_id"] = json!(account);
    read["interest_amount"] = json!("10.00");
    let keyed = |body: &Value| rest(Method::PATCH, &path, &h.api_token(DEMO_OWNER), Some(body.clone()));
    let settled = h.send(keyed(&read).header("x-idempotency-key", "settle-by-patch").build()).await;
    assert_eq!(settled.status, 200, "{}", String::from_utf8_lossy(&settled.bytes));
    let settled = settled.json();
    assert_eq!(
        (settled["status"].as_str(), settled["payment_date"].as_str(), settled["ticket_amount"].as_str()),
        (Some(k.settled), Some("2026-03-12"), Some("1010.00"))
    );
    let again = h.send(keyed(&read).header("x-idempotency-key", "settle-by-patch").build()).await;
    assert_eq!(again.header("x-idempotency-replayed"), Some("true"));
    let transactions = settled_transactions(&h, id).await;
    assert_eq!(transactions.len(), 1);
    let tx = &transactions[0];
    assert_eq!(tx.try_get::<String, _>(1).unwrap(), k.tx_type);
    assert_eq!(tx.try_get::<i64, _>(2).unwrap(), 101_000);
    assert_eq!(settled["transaction_id"].as_str(), Some(tx.try_get::<String, _>(0).unwrap().as_str()));
    assert_eq!(audit("settle").await, 1);

    // Settled, it changes only after a reopen; the status it has is no move.
    let mut read = get(&h, &path).await.json();
    read["description"] = json!("Outra");
    expect(&patch(&h, &path, read.clone()).await, 422, "invalid_transition");
    expect(&patch(&h, &path, json!({"status": "cancelled"})).await, 422, "invalid_transition");
    // Reopened with the read sent back: its transaction is removed, the change written.
    read["status"] = json!("pending");
    let reopened = patch(&h, &path, read).await;
    assert_eq!(reopened.status, 200, "{}", String::from_utf8_lossy(&reopened.bytes));
    let reopened = reopened.json();
    assert_eq!(
        (reopened["status"].as_str(), reopened["description"].as_str(), reopened["payment_date"].as_str()),
        (Some("pending"), Some("Outra"), None)
    );
    assert_eq!(reopened["transaction_id"], Value::Null);
    assert_eq!(settled_transactions(&h, id).await.len(), 0);
    assert_eq!(audit("reopen").await, 1);

    let cancelled = patch(&h, &path, json!({"status": "cancelled"})).await;
    assert_eq!(cancelled.json()["status"], "cancelled");
    assert_eq!(patch(&h, &path, json!({"status": "pending"})).await.json()["status"], "pending");
    assert_eq!((audit("cancel").await, audit("reopen").await), (1, 2));
}
