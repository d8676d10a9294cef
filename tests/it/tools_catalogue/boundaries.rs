use super::*;
use kobana_finance_mcp::ops::bills::approval::Decision;

// ---------------------------------------------------------------------------------------
// Errors

#[tokio::test]
async fn arguments_that_break_the_schema_are_tool_errors_naming_the_field() {
    let h = Harness::with_demo().await;
    let mut a = Agent::new(&h, h.token(DEMO_OWNER));
    let cases = [
        (
            "finance_payables_create",
            json!({"company_id": ACME_COMPANY, "description": "Sem valor", "due_date": "2026-12-01"}),
            "amount",
            "required",
        ),
        ("finance_payables_list", json!({"limit": "ten"}), "limit", "wrong_type"),
        ("finance_payables_get", json!({"id": "b1110000-0001-4000-8000-00000000000z"}), "id", "invalid_uuid"),
        ("finance_payables_list", json!({"limit": 101}), "limit", "out_of_range"),
        ("finance_payables_list", json!({"limit": 0}), "limit", "out_of_range"),
        ("finance_payables_aggregates", json!({"month": 13, "year": 2026}), "month", "out_of_range"),
        (
            "finance_payables_list",
            json!({"filters": {"due_date": {"gte": "2026-13-01"}}}),
            "filters.due_date.gte",
            "invalid_date",
        ),
        (
            "finance_payables_list",
            json!({"filters": {"status": {"in": ["pending", 7]}}}),
            "filters.status.in[1]",
            "wrong_type",
        ),
        (
            "finance_attachments_link",
            json!({"attachment_id": "nope", "type": "payable", "id": ACME_RENT_DECEMBER}),
            "attachment_id",
            "invalid_uuid",
        ),
        (
            "finance_accounts_create",
            json!({"company_id": ACME_COMPANY, "name": "Ouro", "type": "gold"}),
            "type",
            "invalid_value",
        ),
        ("finance_taxes_create", json!({"name": "X", "surprise": 1}), "surprise", "unknown_field"),
        // Destructive tools check their arguments before asking anyone.
        ("finance_payables_settle", json!({"id": ACME_RENT_DECEMBER}), "payment_date", "required"),
    ];
    for (tool, args, field, reason) in cases {
        let error = a.err(tool, args.clone()).await;
        // The code `/v1` answers for the same input: a read's arguments are its route's
        // query parameters (400), a write's are its body (422).
        let read = ["_list", "_get", "_aggregates"].iter().any(|suffix| tool.ends_with(suffix));
        let code = if read { "bad_request" } else { "unprocessable_entity" };
        assert_eq!(error["code"], code, "{tool} {args}: {error}");
        assert_eq!(error["details"]["field"], field, "{tool} {args}: {error}");
        assert_eq!(error["details"]["reason"], reason, "{tool} {args}: {error}");
    }
    assert_eq!(a.ok("finance_payables_get", json!({"id": ACME_RENT_DECEMBER})).await["status"], "pending");
}

#[tokio::test]
async fn an_unknown_tool_or_arguments_that_are_not_an_object_are_protocol_errors() {
    let h = Harness::new().await;
    let token = h.token(DEMO_OWNER);
    let raw = |params: Value| Mcp::modern("tools/call", params).bearer(&token).build();
    for params in [
        json!({"name": "finance_payables_pay", "arguments": {}}),
        json!({"name": "finance_payables_list", "arguments": [1]}),
        json!({"name": "finance_payables_list", "arguments": "limit=5"}),
        json!({"name": "finance_payables_list", "arguments": 5}),
    ] {
        let reply = h.send(raw(params.clone())).await;
        assert_eq!(reply.status, 200, "{params}");
        assert_eq!(reply.rpc_code(), Some(-32602), "{params}: {}", String::from_utf8_lossy(&reply.bytes));
    }
}

#[tokio::test]
async fn the_scope_is_checked_before_the_arguments() {
    let h = Harness::with_demo().await;
    let mut read_only = Agent::new(&h, h.token_with(DEMO_OWNER, Some("finance.payables"), |_| {}));
    for (tool, args) in [
        ("finance_payables_create", json!({"amount": "ten"})),
        ("finance_payables_settle", json!({"id": "nope"})),
        ("finance_taxes_create", json!({"surprise": 1})),
    ] {
        let error = read_only.err(tool, args.clone()).await;
        assert_eq!(error["code"], "insufficient_scope", "{tool} {args}: {error}");
    }
}

#[tokio::test]
async fn a_tool_outside_the_token_scopes_or_the_role_is_refused_with_a_reason() {
    let h = Harness::with_demo().await;
    let mut payables_only = Agent::new(&h, h.token_with(DEMO_OWNER, Some("finance.payables"), |_| {}));
    let error = payables_only.err("finance_accounts_list", json!({})).await;
    assert_eq!(error["code"], "insufficient_scope");
    assert_eq!(error["details"], json!({"required": "finance.accounts", "granted": ["finance.payables"]}));
    let error = payables_only
        .err("finance_payables_settle", json!({"id": ACME_RENT_DECEMBER, "payment_date": "2026-12-10"}))
        .await;
    assert_eq!(error["code"], "insufficient_scope");
    assert_eq!(error["details"]["required"], json!("finance.payables.write"));

    let mut viewer = Agent::new(&h, h.token(DEMO_VIEWER));
    assert_eq!(viewer.ok("finance_payables_get", json!({"id": ACME_RENT_DECEMBER})).await["status"], "pending");
    for (tool, args) in [
        (
            "finance_payables_create",
            json!({"company_id": ACME_COMPANY, "description": "x", "amount": "1.00", "due_date": "2026-12-01"}),
        ),
        (
            "finance_payables_settle",
            json!({"id": ACME_RENT_DECEMBER, "payment_date": "2026-12-10", "financial_account_id": ACME_CHECKING_ACCOUNT}),
        ),
        ("finance_transactions_delete", json!({"id": ACME_CAPITAL_CONTRIBUTION})),
    ] {
        let error = viewer.err(tool, args).await;
        assert_eq!(error["code"], "forbidden", "viewer → {tool}: {error}");
    }
    // One refusal, one text on both doors: the tool says what the route says.
    let tool = viewer.err("finance_transactions_delete", json!({"id": ACME_CAPITAL_CONTRIBUTION})).await;
    let path = format!("/v1/financial-transactions/{ACME_CAPITAL_CONTRIBUTION}");
    let route = send(&h, http::Method::DELETE, &path, &h.api_token(DEMO_VIEWER), None).await;
    assert_eq!((route.status.as_u16(), &route.json()["error"]), (403, &tool), "{tool}");
    assert_eq!(tool["message"], "The role viewer may not delete transactions in this workspace");
    let mut finance = Agent::new(&h, h.token(DEMO_FINANCE));
    let error = finance.err("finance_accounts_delete", json!({"id": ACME_CASH_ACCOUNT})).await;
    assert_eq!(error["code"], "forbidden");
    // Two workspaces, none named, and no role in either allows it.
    assert_eq!(error["message"], "No role of yours may delete accounts in any of your workspaces");
    // Finance in ACME, viewer in Beta: two workspaces, so each call names one, and the
    // operation checks the role in the one named.
    assert_eq!(
        finance.err("finance_payables_get", json!({"id": ACME_RENT_DECEMBER})).await["code"],
        "workspace_required"
    );
    assert_eq!(
        finance
            .ok("finance_payables_get", json!({"id": ACME_RENT_DECEMBER, "workspace_id": DEMO_WORKSPACE_ACME}))
            .await["status"],
        "pending"
    );
    let in_beta = json!({"company_id": BETA_COMPANY, "description": "x", "amount": "1.00", "due_date": "2026-12-01", "person_name": "x", "workspace_id": DEMO_WORKSPACE_BETA});
    assert_eq!(finance.err("finance_payables_create", in_beta).await["code"], "forbidden");

    // A write scope without the read scope: the confirmation names the records by id
    // (it may not read them) and the settle runs.
    let mut writer = Agent::new(&h, h.token_with(DEMO_OWNER, Some("finance.payables.write"), |_| {}));
    let (message, paid) = writer.confirmed("finance_payables_settle", json!({"id": ACME_SUPPLIES_PENDING, "payment_date": "2026-11-20", "financial_account_id": ACME_CASH_ACCOUNT})).await;
    assert_mentions(&message, &[ACME_SUPPLIES_PENDING, ACME_CASH_ACCOUNT, "2026-11-20"]);
    assert!(!message.contains("Papelaria"), "{message}");
    assert_eq!(paid["status"], "paid");
    assert_eq!(settlements(&h, ACME_RENT_DECEMBER).await, 0);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM financial_accounts WHERE id = $1", ACME_CASH_ACCOUNT).await, 1);
}

// ---------------------------------------------------------------------------------------
// Projection, filters, sort and paging

#[tokio::test]
async fn list_tools_filter_sort_page_and_project() {
    let h = Harness::with_demo().await;
    let mut a = Agent::new(&h, h.token(DEMO_OWNER));
    let mut seen = Vec::new();
    let mut cursor = Value::Null;
    for page in 0.. {
        assert!(page < 10, "paging does not end");
        let mut args = json!({"sort": "-amount", "limit": 1, "fields": ["id", "amount"]});
        if !cursor.is_null() {
            args["cursor"] = cursor.clone();
        }
        let page = a.ok("finance_payables_list", args).await;
        for row in page["data"].as_array().unwrap() {
            assert_eq!(
                row.as_object().unwrap().keys().collect::<Vec<_>>(),
                ["amount", "id"],
                "only the projected fields"
            );
            seen.push((
                row["amount"].as_str().unwrap().parse::<f64>().unwrap(),
                row["id"].as_str().unwrap().to_string(),
            ));
        }
        cursor = page["meta"]["next_cursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    let ids: BTreeSet<&str> = seen.iter().map(|(_, id)| id.as_str()).collect();
    assert_eq!(
        ids,
        BTreeSet::from([
            ACME_RENT_DECEMBER,
            ACME_RENT_NOVEMBER,
            ACME_SUPPLIES_CANCELLED,
            ACME_SUPPLIES_PENDING,
            ACME_SERVICE_CHARGE_DECEMBER,
            ACME_DARF_NOVEMBER
        ]),
        "ACME's six payables, once each"
    );
    assert_eq!(seen.len(), 6);
    assert!(seen.windows(2).all(|w| w[0].0 >= w[1].0), "descending amount: {seen:?}");

    let early = a
        .ok(
            "finance_payables_list",
            json!({"filters": {"due_date": {"lt": "2026-11-15"}}, "sort": "due_date", "fields": ["id"]}),
        )
        .await;
    assert_eq!(early["data"], json!([{"id": ACME_SUPPLIES_CANCELLED}, {"id": ACME_RENT_NOVEMBER}]));
    let settled = a.ok("finance_payables_list", json!({"filters": {"status": {"in": ["paid", "cancelled"]}, "person_id": ACME_LANDLORD}, "fields": ["id", "status"]})).await;
    assert_eq!(settled["data"], json!([{"id": ACME_RENT_NOVEMBER, "status": "paid"}]));

    let projected = a
        .ok("finance_payables_get", json!({"id": ACME_RENT_DECEMBER, "fields": ["description", "amount", "status"]}))
        .await;
    assert_eq!(projected, json!({"description": "Aluguel de dezembro", "amount": "4500.00", "status": "pending"}));
    let error = a.err("finance_payables_list", json!({"cursor": "not-a-cursor"})).await;
    assert_eq!((error["code"].as_str(), error["details"]["field"].as_str()), (Some("bad_request"), Some("cursor")));
}

// ---------------------------------------------------------------------------------------
// Isolation

#[tokio::test]
async fn ids_of_another_workspace_are_not_found_through_any_tool() {
    let h = Harness::with_demo().await;
    // Beta's own records, one of each resource, made by Beta's owner.
    let mut beta = Agent::new(&h, h.token(DEMO_BETA_OWNER));
    let category = id_of(
        &beta
            .ok(
                "finance_categories_create",
                json!({"company_id": BETA_COMPANY, "name": "Licenças Beta", "type": "debit"}),
            )
            .await,
    );
    let center = id_of(
        &beta
            .ok(
                "finance_cost_centers_create",
                json!({"company_id": BETA_COMPANY, "name": "Engenharia Beta", "type": "cost"}),
            )
            .await,
    );
    let person =
        id_of(&beta.ok("finance_people_create", json!({"company_id": BETA_COMPANY, "name": "Fornecedora Beta"})).await);
    let tax = id_of(&beta.ok("finance_taxes_create", json!({"name": "ISS Beta", "default_rate": "2.00"})).await);
    let transaction = id_of(
        &beta
            .ok("finance_transactions_create", json!({"company_id": BETA_COMPANY, "financial_account_id": BETA_ACCOUNT, "description": "Servidor Beta", "amount": "99.00", "occurred_at": "2026-11-20", "type": "debit"}))
            .await,
    );
    let server_bill = id_of(&beta.ok("finance_payables_create", json!({"company_id": BETA_COMPANY, "description": "Servidor Beta", "amount": "99.00", "due_date": "2026-11-20", "person_name": "Nuvem Sul"})).await);
    // A person approves it (the dashboard's act) before it is reconciled.
    kobana_finance_mcp::ops::bills::approval::decide(&h.state.db, &server_bill, &Decision::Approve).await.unwrap();
    let reconciled = json!({"billings": [{"kind": "payable", "id": server_bill}], "transaction_ids": [transaction]});
    let (_, group) = beta.confirmed("finance_reconciliations_create", reconciled.clone()).await;
    let group = id_of(&group);
    let receivable = id_of(&beta.ok("finance_receivables_create", json!({"company_id": BETA_COMPANY, "description": "Contrato Beta", "amount": "5000.00", "due_date": "2026-12-20", "person_name": "Cliente Beta"})).await);
    let second_account = id_of(
        &beta
            .ok("finance_accounts_create", json!({"company_id": BETA_COMPANY, "name": "Caixa Beta", "type": "cash"}))
            .await,
    );
    let (_, transfer) = beta
        .confirmed("finance_transfers_create", json!({"from_account_id": BETA_ACCOUNT, "to_account_id": second_account, "amount": "10.00", "occurred_at": "2026-11-21", "description": "Troco Beta"}))
        .await;
    let transfer = transfer["transfer_id"].as_str().unwrap().to_string();
    let attachment = id_of(&beta.ok("finance_attachments_upload", json!({"file_name": "beta.pdf", "content_base64": base64::engine::general_purpose::STANDARD.encode(TINY_PDF)})).await);
    let beta_balance = beta.ok("finance_accounts_get", json!({"id": BETA_ACCOUNT})).await["balance"].clone();
    // A receipt of Beta's (the bank's proof of its paid bill).
    let receipt = "7ec00000-0000-4000-8000-0000000000b1";
    exec(
        &h,
        "INSERT INTO receipts (id, workspace_id, company_id, payable_id, source, status, paid_at, amount_cents, payee_name,
                external_uid, created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'kobana', 'available', '2026-11-20T12:00:00Z', 9900, 'Nuvem Sul Beta', 'beta-payment',
                 '2026-11-20T12:00:00Z', '2026-11-20T12:00:00Z')",
        &[receipt, DEMO_WORKSPACE_BETA, BETA_COMPANY, &server_bill],
    )
    .await;

    let bill = |id: &str| json!({"id": id});
    let cases: Vec<(&str, Value)> = vec![
        ("finance_companies_get", bill(BETA_COMPANY)),
        ("finance_companies_update", json!({"id": BETA_COMPANY, "name": "Tomada"})),
        ("finance_companies_delete", bill(BETA_COMPANY)),
        ("finance_accounts_get", bill(BETA_ACCOUNT)),
        ("finance_accounts_update", json!({"id": BETA_ACCOUNT, "name": "Tomada"})),
        ("finance_accounts_delete", bill(&second_account)),
        (
            "finance_accounts_adjust_balance",
            json!({"id": BETA_ACCOUNT, "target_balance": "0.00", "category_id": ACME_RENT_CATEGORY}),
        ),
        ("finance_accounts_import_statement", json!({"id": BETA_ACCOUNT, "attachment_id": attachment})),
        ("finance_categories_get", bill(&category)),
        ("finance_categories_update", json!({"id": category, "name": "Tomada"})),
        ("finance_categories_delete", bill(&category)),
        ("finance_cost_centers_get", bill(&center)),
        ("finance_cost_centers_update", json!({"id": center, "name": "Tomada"})),
        ("finance_cost_centers_delete", bill(&center)),
        ("finance_people_get", bill(&person)),
        ("finance_people_update", json!({"id": person, "name": "Tomada"})),
        ("finance_people_delete", bill(&person)),
        ("finance_taxes_get", bill(&tax)),
        ("finance_taxes_update", json!({"id": tax, "name": "Tomada"})),
        ("finance_taxes_delete", bill(&tax)),
        ("finance_transactions_get", bill(&transaction)),
        ("finance_transactions_update", json!({"id": transaction, "notes": "Tomada"})),
        ("finance_transactions_delete", bill(&transaction)),
        ("finance_transfers_get", bill(&transfer)),
        ("finance_automatic_rules_get", bill(BETA_RULE)),
        ("finance_automatic_rules_update", json!({"id": BETA_RULE, "active": false})),
        ("finance_automatic_rules_delete", bill(BETA_RULE)),
        ("finance_reconciliations_get", bill(&group)),
        ("finance_reconciliations_delete", bill(&group)),
        ("finance_reconciliations_create", reconciled.clone()),
        ("finance_payables_get", bill(BETA_PAYABLE)),
        ("finance_payables_update", json!({"id": BETA_PAYABLE, "notes": "Tomada"})),
        ("finance_payables_delete", bill(BETA_PAYABLE)),
        (
            "finance_payables_settle",
            json!({"id": BETA_PAYABLE, "payment_date": "2026-12-05", "financial_account_id": ACME_CHECKING_ACCOUNT}),
        ),
        ("finance_payables_cancel", bill(BETA_PAYABLE)),
        ("finance_payables_reopen", bill(BETA_PAYABLE)),
        ("finance_payables_send_to_bank", bill(BETA_PAYABLE)),
        ("finance_payables_cancel_dispatch", bill(BETA_PAYABLE)),
        ("finance_receipts_get", bill(receipt)),
        ("finance_receivables_get", bill(&receivable)),
        ("finance_receivables_update", json!({"id": receivable, "notes": "Tomada"})),
        ("finance_receivables_delete", bill(&receivable)),
        (
            "finance_receivables_settle",
            json!({"id": receivable, "payment_date": "2026-12-20", "financial_account_id": ACME_CHECKING_ACCOUNT}),
        ),
        ("finance_receivables_cancel", bill(&receivable)),
        ("finance_receivables_reopen", bill(&receivable)),
        ("finance_receivables_charge", json!({"id": receivable, "kind": "pix"})),
        ("finance_receivables_cancel_charge", bill(&receivable)),
        ("finance_attachments_get", bill(&attachment)),
        ("finance_attachments_download", bill(&attachment)),
        ("finance_attachments_delete", bill(&attachment)),
        ("finance_attachments_link", json!({"attachment_id": attachment, "type": "payable", "id": ACME_RENT_DECEMBER})),
        (
            "finance_attachments_unlink",
            json!({"attachment_id": attachment, "type": "payable", "id": ACME_RENT_DECEMBER}),
        ),
        // An ACME record pointing at a Beta one.
        (
            "finance_attachments_link",
            json!({"attachment_id": ACME_RENT_RECEIPT, "type": "payable", "id": BETA_PAYABLE}),
        ),
        (
            "finance_transfers_create",
            json!({"from_account_id": BETA_ACCOUNT, "to_account_id": ACME_CHECKING_ACCOUNT, "amount": "10.00", "occurred_at": "2026-11-21", "description": "Desvio"}),
        ),
        (
            "finance_transactions_create",
            json!({"company_id": ACME_COMPANY, "financial_account_id": BETA_ACCOUNT, "description": "Desvio", "amount": "1.00", "occurred_at": "2026-11-21", "type": "credit"}),
        ),
        (
            "finance_payables_create",
            json!({"company_id": BETA_COMPANY, "description": "Desvio", "amount": "1.00", "due_date": "2026-12-01"}),
        ),
    ];
    let beta_words = ["Beta", "Nubank", "Licenças de software"];
    let mut acme = Agent::new(&h, h.token(DEMO_OWNER));
    for (tool, args) in &cases {
        // As ACME's owner, in ACME: those ids do not exist there.
        let result = acme.result(confirmable(tool, args.clone(), json!({})), tool).await;
        let error = tool_error(&result);
        let code = error["code"].as_str().unwrap();
        if args.get("attachment_id").is_none() && !tool.ends_with("_create") {
            assert_eq!(code, "not_found", "{tool} {args}: {error}");
        } else {
            assert!(matches!(code, "not_found" | "unprocessable_entity" | "bad_request"), "{tool} {args}: {error}");
        }
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(!beta_words.iter().any(|w| text.contains(w)), "{tool} leaks: {text}");
        // Naming Beta's workspace does not help: the caller is not a member.
        let mut in_beta = args.clone();
        in_beta["workspace_id"] = json!(DEMO_WORKSPACE_BETA);
        let result = acme.result(confirmable(tool, in_beta, json!({})), tool).await;
        let error = tool_error(&result);
        assert!(matches!(error["code"].as_str(), Some("forbidden" | "not_found")), "{tool} in Beta: {error}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(!beta_words.iter().any(|w| text.contains(w)), "{tool} leaks: {text}");
    }
    // Every tool that takes a record's id was tried.
    let listed = h.send(Mcp::modern("tools/list", json!({})).bearer(&acme.token).build()).await.result();
    let taking_ids: BTreeSet<String> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| ["id", "attachment_id"].iter().any(|f| t["inputSchema"]["properties"].get(f).is_some()))
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(taking_ids.len(), 51);
    let tried: BTreeSet<String> = cases.iter().map(|(t, _)| t.to_string()).collect();
    assert_eq!(taking_ids.difference(&tried).collect::<Vec<_>>(), Vec::<&String>::new());
    // And Beta's records are as they were.
    assert_eq!(beta.ok("finance_payables_get", json!({"id": BETA_PAYABLE})).await["status"], "pending");
    assert_eq!(beta.ok("finance_payables_get", json!({"id": BETA_PAYABLE})).await["notes"], Value::Null);
    assert_eq!(beta.ok("finance_receivables_get", json!({"id": receivable})).await["status"], "pending");
    assert_eq!(beta.ok("finance_accounts_get", json!({"id": BETA_ACCOUNT})).await["balance"], beta_balance);
    assert_eq!(beta.ok("finance_companies_get", json!({"id": BETA_COMPANY})).await["name"], "Beta Tecnologia S.A.");
    for (tool, id) in [
        ("finance_categories_get", &category),
        ("finance_cost_centers_get", &center),
        ("finance_people_get", &person),
        ("finance_taxes_get", &tax),
        ("finance_transactions_get", &transaction),
        ("finance_accounts_get", &second_account),
        ("finance_attachments_get", &attachment),
    ] {
        assert_ne!(beta.ok(tool, json!({"id": id})).await["name"], "Tomada", "{tool}");
    }
    assert_eq!(beta.ok("finance_attachments_get", json!({"id": attachment})).await["linked_payables_count"], 0);
    assert_eq!(acme.ok("finance_attachments_get", json!({"id": ACME_RENT_RECEIPT})).await["linked_payables_count"], 1);
}

// ---------------------------------------------------------------------------------------
// Files

#[tokio::test]
async fn files_go_up_as_base64_and_come_down_only_through_the_api() {
    let h = Harness::with_demo().await;
    let mut a = Agent::new(&h, h.token(DEMO_OWNER));
    let b64 = base64::engine::general_purpose::STANDARD;
    let uploaded = a
        .ok(
            "finance_attachments_upload",
            json!({"file_name": "boleto-luz.pdf", "content_base64": b64.encode(TINY_PDF), "title": "Boleto da luz"}),
        )
        .await;
    let id = id_of(&uploaded);
    assert_eq!(
        (uploaded["mime_type"].as_str(), uploaded["title"].as_str()),
        (Some("application/pdf"), Some("Boleto da luz"))
    );
    assert_eq!(uploaded["file_size"], TINY_PDF.len());
    let via: String = sql::query("SELECT created_via FROM attachments WHERE id = $1")
        .bind(&id)
        .fetch_one(&h.state.db)
        .await
        .unwrap()
        .try_get(0)
        .unwrap();
    assert_eq!(via, "mcp");

    // Download: where and what, never the bytes.
    let result =
        a.result(call("finance_attachments_download", json!({"id": id})), "finance_attachments_download").await;
    let download = payload(&result);
    let url = format!("{PUBLIC_URL}/v1/attachments/{id}/download");
    assert_eq!(
        download,
        json!({"id": id, "file_name": "boleto-luz.pdf", "content_type": "application/pdf", "size": TINY_PDF.len(), "download_url": url})
    );
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(!text.contains("%PDF") && !text.contains(&b64.encode(TINY_PDF)), "no bytes through the tool");
    let path = url.strip_prefix(PUBLIC_URL).unwrap();
    let get = |token: String| Mcp::raw(vec![]).method(http::Method::GET).path(path).bearer(&token).build();
    let refused = h.send(get(h.token(DEMO_OWNER))).await;
    assert_eq!(refused.status, 401, "an MCP token is refused at the API");
    let bytes = h.send(get(h.api_token(DEMO_OWNER))).await;
    assert_eq!(bytes.status, 200);
    assert_eq!(bytes.header("content-type"), Some("application/pdf"));
    assert_eq!(&bytes.bytes[..], TINY_PDF);

    // Too large, undecodable, or not what it says.
    let mut big = TINY_PDF.to_vec();
    big.resize(10 * 1024 * 1024 + 1, b' ');
    let error = a
        .err("finance_attachments_upload", json!({"file_name": "grande.pdf", "content_base64": b64.encode(&big)}))
        .await;
    assert_eq!(error["details"]["reason"], "too_large", "{error}");
    assert_eq!(error["details"]["limit_bytes"], 10_485_760);
    let error = a
        .err("finance_attachments_upload", json!({"file_name": "x.pdf", "content_base64": "%%% not base64 %%%"}))
        .await;
    assert_eq!(
        (error["code"].as_str(), error["details"]["field"].as_str()),
        (Some("bad_request"), Some("content_base64"))
    );
    let error = a
        .err("finance_attachments_upload", json!({"file_name": "foto.png", "content_base64": b64.encode(TINY_PDF)}))
        .await;
    assert_eq!(error["details"]["field"], "file", "{error}");
    // The demo's two (the receipt, the statement) and the one uploaded above.
    assert_eq!(count(&h, "SELECT COUNT(*) FROM attachments WHERE workspace_id = $1", DEMO_WORKSPACE_ACME).await, 3);

    // Link, refuse a second link and a delete while linked, unlink, delete.
    let link = json!({"attachment_id": id, "type": "transaction", "id": ACME_CAPITAL_CONTRIBUTION});
    a.ok("finance_attachments_link", link.clone()).await;
    assert_eq!(a.err("finance_attachments_link", link.clone()).await["code"], "conflict");
    assert_eq!(a.ok("finance_attachments_get", json!({"id": id})).await["linked_transactions_count"], 1);
    let (_, state) = a.ask("finance_attachments_delete", json!({"id": id})).await;
    let refused = a
        .result(
            confirmable("finance_attachments_delete", json!({"id": id}), accept(&state)),
            "finance_attachments_delete",
        )
        .await;
    assert_eq!(tool_error(&refused)["code"], "unprocessable_entity");
    assert_eq!(
        a.ok("finance_attachments_unlink", link.clone()).await,
        json!({"unlinked": true, "attachment_id": id, "type": "transaction", "id": ACME_CAPITAL_CONTRIBUTION})
    );
    assert_eq!(a.ok("finance_attachments_get", json!({"id": id})).await["linked_transactions_count"], 0);
    let (message, deleted) = a.confirmed("finance_attachments_delete", json!({"id": id})).await;
    assert_mentions(&message, &["boleto-luz.pdf", "Boleto da luz"]);
    assert_eq!(deleted, json!({"deleted": true, "id": id}));
    assert_eq!(a.err("finance_attachments_download", json!({"id": id})).await["code"], "not_found");
}
