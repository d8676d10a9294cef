use super::*;

// ---------------------------------------------------------------------------------------
// Every tool, called

/// A record resource as the demo run drives it: its name, how many the demo has, a demo
/// id and that record's name, a create, a change, and what the delete's confirmation
/// must say.
type RecordRun = (&'static str, usize, &'static str, &'static str, Value, Value, &'static [&'static str]);

#[tokio::test]
async fn every_tool_runs_on_the_demo_data() {
    // On the heap: the run's future is larger than a test thread's stack in a debug build.
    Box::pin(every_tool_runs(false)).await;
}

/// The same run in find mode (SPEC §5.5): every call through its runner, every answer
/// and every confirmation as the direct call's.
#[tokio::test]
async fn every_tool_runs_on_the_demo_data_through_its_runner() {
    Box::pin(every_tool_runs(true)).await;
}

/// On PostgreSQL the pool holds one connection: a read goes on with its rate-limit
/// count's connection, and nothing may hold it while it asks the pool for another.
async fn every_tool_runs(find: bool) {
    let (h, standin) = gateway::with_gateway_on_one_connection().await;
    let mut a = Agent::new(&h, h.token(DEMO_OWNER));
    a.find = find;

    let workspaces = a.ok("finance_workspaces_list", json!({})).await;
    assert_eq!(workspaces["data"].as_array().unwrap().len(), 1);
    assert_eq!(workspaces["data"][0]["id"], DEMO_WORKSPACE_ACME);
    assert_eq!(workspaces["data"][0]["role"], "owner");

    // The record resources: list, get, create, update and a confirmed delete of what
    // was created.
    let records: [RecordRun; 6] = [
        (
            "companies",
            2,
            ACME_COMPANY,
            "Acme Comércio Ltda",
            json!({"name": "Filial Norte Ltda", "cnpj": "11444777000242", "workspace_id": DEMO_WORKSPACE_ACME}),
            json!({"trade_name": "Filial Norte"}),
            &["Filial Norte Ltda", "CNPJ 11.444.777/0002-42", "Acme Comércio"],
        ),
        (
            "accounts",
            2,
            ACME_CASH_ACCOUNT,
            "Caixa",
            json!({"company_id": ACME_COMPANY, "name": "Conta Inter", "type": "checking", "bank_code": "077", "balance": "100.00"}),
            json!({"name": "Conta Inter PJ"}),
            &["Conta Inter PJ", "R$ 100,00"],
        ),
        (
            "categories",
            7,
            ACME_RENT_CATEGORY,
            "Aluguel",
            json!({"company_id": ACME_COMPANY, "name": "Impostos", "type": "debit"}),
            json!({"name": "Impostos e taxas"}),
            &["Impostos e taxas", "debit"],
        ),
        (
            "cost_centers",
            3,
            ACME_ADMIN_COST_CENTER,
            "Administrativo",
            json!({"company_id": ACME_COMPANY, "name": "Marketing", "type": "cost"}),
            json!({"description": "Campanhas"}),
            &["Marketing"],
        ),
        (
            "people",
            4,
            ACME_LANDLORD,
            "Imobiliária Central Ltda",
            json!({"company_id": ACME_COMPANY, "name": "Gráfica Rápida", "kind": "juridical", "is_supplier": true}),
            json!({"nickname": "Gráfica"}),
            &["Gráfica Rápida"],
        ),
        (
            "taxes",
            3,
            ACME_IRRF_TAX,
            "IRRF",
            json!({"name": "CSLL", "default_rate": "1.00"}),
            json!({"default_rate": "9.00"}),
            &["CSLL"],
        ),
    ];
    for (resource, count, known, name, create, change, told) in records {
        let tool = |action: &str| format!("finance_{resource}_{action}");
        assert_eq!(a.ok(&tool("list"), json!({})).await["data"].as_array().unwrap().len(), count, "{resource}");
        assert_eq!(a.ok(&tool("get"), json!({"id": known})).await["name"], name, "{resource}");
        let record = a.ok(&tool("create"), create).await;
        created_through_mcp(&record);
        let mut update = change.clone();
        update["id"] = json!(id_of(&record));
        let updated = a.ok(&tool("update"), update).await;
        for (field, value) in change.as_object().unwrap() {
            assert_eq!(&updated[field], value, "{resource}.{field}");
        }
        assert_eq!(updated["updated_via"], "mcp", "{resource}");
        let (message, deleted) = a.confirmed(&tool("delete"), json!({"id": id_of(&record)})).await;
        assert_mentions(&message, told);
        assert_eq!(deleted, json!({"deleted": true, "id": id_of(&record)}), "{resource}");
    }
    let (message, adjusted) = a
        .confirmed("finance_accounts_adjust_balance", json!({"id": ACME_CASH_ACCOUNT, "target_balance": "2600.00", "category_id": ACME_SALES_CATEGORY, "occurred_at": "2026-11-30"}))
        .await;
    assert_mentions(&message, &["“Caixa”", "R$ 2.500,00", "R$ 2.600,00", "credit of R$ 100,00", "2026-11-30"]);
    assert_eq!(
        (adjusted["previous_balance"].clone(), adjusted["new_balance"].clone()),
        (json!("2500.00"), json!("2600.00"))
    );
    assert_eq!(a.ok("finance_accounts_get", json!({"id": ACME_CASH_ACCOUNT})).await["balance"], "2600.00");
    // A one-movement statement into the cash account.
    let statement = "data;descricao;valor\n29/11/2026;Troco;-1,00\n";
    let file = json!({"file_name": "caixa.csv", "mime_type": "text/csv",
                      "content_base64": base64::engine::general_purpose::STANDARD.encode(statement)});
    let file = a.ok("finance_attachments_upload", file).await;
    let imported = a
        .ok("finance_accounts_import_statement", json!({"id": ACME_CASH_ACCOUNT, "attachment_id": id_of(&file)}))
        .await;
    assert_eq!((imported["created"].as_u64(), imported["format"].as_str()), (Some(1), Some("csv")), "{imported}");
    let (message, deleted) = a.confirmed("finance_attachments_delete", json!({"id": id_of(&file)})).await;
    assert_mentions(&message, &["caixa.csv"]);
    assert_eq!(deleted["deleted"], true);
    let undo = json!({"id": imported["transaction_ids"][0]});
    let _ = a.confirmed("finance_transactions_delete", undo).await;
    assert_eq!(a.ok("finance_accounts_get", json!({"id": ACME_CASH_ACCOUNT})).await["balance"], "2600.00");

    // Transactions and transfers.
    assert!(a.ok("finance_transactions_list", json!({})).await["data"].as_array().unwrap().len() >= 3);
    assert_eq!(
        a.ok("finance_transactions_get", json!({"id": ACME_CAPITAL_CONTRIBUTION})).await["description"],
        "Aporte dos sócios"
    );
    let november =
        a.ok("finance_transactions_aggregates", json!({"month": 11, "year": 2026, "company_id": ACME_COMPANY})).await;
    // November: the capital contribution, the rent paid, the sale received and the adjustment above.
    assert_eq!(november, json!({"count": 4, "credit": "10100.00", "debit": "4500.00", "net": "5600.00"}));
    let coffee = a
        .ok("finance_transactions_create", json!({"company_id": ACME_COMPANY, "financial_account_id": ACME_CASH_ACCOUNT, "description": "Café", "amount": "35.90", "occurred_at": "2026-11-28", "type": "debit"}))
        .await;
    created_through_mcp(&coffee);
    assert_eq!(
        a.ok("finance_transactions_update", json!({"id": id_of(&coffee), "notes": "Copa"})).await["notes"],
        "Copa"
    );
    let (message, _) = a.confirmed("finance_transactions_delete", json!({"id": id_of(&coffee)})).await;
    assert_mentions(&message, &["Café", "R$ 35,90", "2026-11-28"]);
    let (message, transfer) = a
        .confirmed("finance_transfers_create", json!({"from_account_id": ACME_CHECKING_ACCOUNT, "to_account_id": ACME_CASH_ACCOUNT, "amount": "1500.00", "occurred_at": "2026-11-29", "description": "Reforço de caixa"}))
        .await;
    assert_mentions(&message, &["R$ 1.500,00", "Conta corrente Itaú", "Caixa", "2026-11-29", "Reforço de caixa"]);
    let got = a.ok("finance_transfers_get", json!({"id": transfer["transfer_id"]})).await;
    assert_eq!(got, transfer);
    let projected = a
        .ok("finance_transfers_get", json!({"id": transfer["transfer_id"], "fields": ["from_account_id", "amount"]}))
        .await;
    assert_eq!(projected, json!({"from_account_id": ACME_CHECKING_ACCOUNT, "amount": "1500.00"}));

    // Reports: the aging totals what the aggregates call pending; November's result on
    // the cash basis nets, with its transfers, to the transactions' aggregates.
    let aging = a.ok("finance_reports_aging", json!({"kind": "payable", "group_by": "person"})).await;
    let totals = a.ok("finance_payables_aggregates", json!({})).await;
    // The demo's open payables: no likely duplicates among them.
    let duplicates = a.ok("finance_payables_duplicates", json!({"within_days": 31})).await;
    assert_eq!(duplicates["data"], json!([]), "{duplicates}");
    assert_eq!(aging["total"]["amount"], totals["pending"], "{aging}");
    assert_eq!(aging["buckets"].as_array().map(Vec::len), Some(5));
    let statement = a
        .ok("finance_reports_income_statement", json!({"from": "2026-11-01", "to": "2026-11-30", "basis": "cash"}))
        .await;
    let moved = a.ok("finance_transactions_aggregates", json!({"month": 11, "year": 2026})).await;
    let signed = |v: &Value| -> i64 { v.as_str().unwrap().replace('.', "").parse().unwrap() };
    assert_eq!(
        signed(&statement["net_result"]["amount"]) + signed(&statement["transfers_net"]["amount"]),
        signed(&moved["net"]),
        "{statement}"
    );

    // Cash flow: November's, in the user's terms of a month; the period chains its balances.
    let flow = a.ok("finance_cash_flow_get", json!({"from": "2026-11-01", "to": "2026-11-30"})).await;
    assert_eq!((flow["granularity"].as_str(), flow["buckets"].as_array().map(Vec::len)), (Some("month"), Some(1)));
    let november = &flow["buckets"][0];
    assert_eq!(november["bucket"], "2026-11");
    let cents = |v: &Value| -> i64 { v.as_str().unwrap().replace('.', "").parse().unwrap() };
    assert_eq!(cents(&november["closing_balance"]), cents(&november["opening_balance"]) + cents(&november["net"]));
    assert!(cents(&november["expenses"]) >= 450_000, "November's rent was paid: {november}");

    // Payables.
    let pending = a.ok("finance_payables_list", json!({"filters": {"status": "pending"}})).await;
    assert_eq!(pending["data"].as_array().unwrap().len(), 4);
    let rent = a.ok("finance_payables_get", json!({"id": ACME_RENT_DECEMBER})).await;
    assert_eq!((rent["status"].as_str(), rent["amount"].as_str()), (Some("pending"), Some("4500.00")));
    let totals =
        a.ok("finance_payables_aggregates", json!({"start_date": "2026-11-01", "end_date": "2026-12-31"})).await;
    assert_eq!(
        (totals["count"].as_i64(), totals["total"].as_str(), totals["pending"].as_str(), totals["paid"].as_str()),
        (Some(6), Some("10830.45"), Some("6330.45"), Some("4500.00")),
        "{totals}"
    );
    let power = a
        .ok("finance_payables_create", json!({"company_id": ACME_COMPANY, "description": "Conta de luz", "amount": "380.45", "due_date": "2026-12-18", "person_name": "Enel", "idempotency_key": "luz-12"}))
        .await;
    created_through_mcp(&power);
    assert_eq!(power["status"], "pending");
    let again = a
        .ok("finance_payables_create", json!({"company_id": ACME_COMPANY, "description": "Conta de luz", "amount": "380.45", "due_date": "2026-12-18", "person_name": "Enel", "idempotency_key": "luz-12"}))
        .await;
    assert_eq!(again, power, "the same key answers the first record");
    assert_eq!(
        a.ok("finance_payables_update", json!({"id": id_of(&power), "notes": "Referente a novembro"})).await["notes"],
        "Referente a novembro"
    );
    // The payment coordinates, checked as on /v1: a boleto's line passes them; the demo
    // rent's own is refused, a slip being on one open payable at a time.
    assert_eq!(rent["barcode"], "34191090080000000000000000000018316560000450000");
    let taken = a.err("finance_payables_update", json!({"id": id_of(&power), "barcode": rent["barcode"]})).await;
    assert_eq!(
        (taken["code"].as_str(), taken["details"]["payable_id"].as_str()),
        (Some("conflict"), rent["id"].as_str())
    );
    let line = "00190.50095 40144.816069 06809.350314 3 37370000000100";
    let boleto = a.ok("finance_payables_update", json!({"id": id_of(&power), "barcode": line})).await;
    assert_eq!(boleto["barcode"], "00190500954014481606906809350314337370000000100");
    let slip = a
        .ok(
            "finance_payables_update",
            json!({"id": id_of(&power), "barcode": "83620000000 5 66780048100 0 18097565731 3 00158963608 1"}),
        )
        .await;
    assert_eq!(slip["barcode"], "836200000005667800481000180975657313001589636081");
    let refused = a.err("finance_payables_update", json!({"id": id_of(&power), "pix_key": "+5511987654321"})).await;
    assert_eq!(
        (refused["code"].as_str(), refused["details"]["field"].as_str(), refused["details"]["reason"].as_str()),
        (Some("unprocessable_entity"), Some("pix_key_type"), Some("required")),
        "{refused}"
    );
    let (message, paid) = a.confirmed("finance_payables_settle", json!({"id": ACME_RENT_DECEMBER, "payment_date": "2026-12-10", "financial_account_id": ACME_CHECKING_ACCOUNT})).await;
    assert_mentions(
        &message,
        &["Aluguel de dezembro", "Imobiliária Central Ltda", "R$ 4.500,00", "2026-12-10", "Conta corrente Itaú"],
    );
    assert_eq!(paid["status"], "paid");
    let (message, reopened) = a.confirmed("finance_payables_reopen", json!({"id": ACME_RENT_DECEMBER})).await;
    assert_mentions(&message, &["Aluguel de dezembro", "R$ 4.500,00", "Conta corrente Itaú"]);
    assert_eq!(reopened["status"], "pending");
    let (message, cancelled) = a.confirmed("finance_payables_cancel", json!({"id": id_of(&power)})).await;
    assert_mentions(&message, &["Conta de luz", "Enel", "R$ 380,45", "2026-12-18"]);
    assert_eq!(cancelled["status"], "cancelled");
    let (message, _) = a.confirmed("finance_payables_delete", json!({"id": id_of(&power)})).await;
    assert_mentions(&message, &["Conta de luz", "R$ 380,45"]);

    // Through the bank: the rent's boleto sent, stopped, sent again and paid; its receipt.
    let rent = json!({"id": ACME_RENT_DECEMBER});
    a.ok("finance_payables_update", json!({"id": ACME_RENT_DECEMBER, "expected_account_id": ACME_CHECKING_ACCOUNT}))
        .await;
    let (message, sent) = a.confirmed("finance_payables_send_to_bank", rent.clone()).await;
    assert_mentions(
        &message,
        &["Aluguel de dezembro", "Imobiliária Central Ltda", "R$ 4.500,00", "boleto", "Conta corrente Itaú"],
    );
    assert_eq!(sent["kobana_status"], "pending");
    let (message, stopped) = a.confirmed("finance_payables_cancel_dispatch", rent.clone()).await;
    assert_mentions(&message, &["Aluguel de dezembro", "R$ 4.500,00"]);
    assert_eq!((stopped["kobana_status"].as_str(), stopped["status"].as_str()), (Some("canceled"), Some("pending")));
    let (_, sent) = a.confirmed("finance_payables_send_to_bank", rent.clone()).await;
    let uid = sent["kobana_payment_uid"].as_str().unwrap();
    assert!(standin.advance(uid, "confirmed").is_some());
    gateway::deliver_all(&h, &standin).await;
    assert_eq!(a.ok("finance_payables_get", rent).await["status"], "paid");
    let receipts = a.ok("finance_receipts_list", json!({})).await;
    assert_eq!(receipts["data"].as_array().map(Vec::len), Some(1), "{receipts}");
    let receipt = a.ok("finance_receipts_get", json!({"id": receipts["data"][0]["id"]})).await;
    assert_eq!(
        (receipt["payable_id"].as_str(), receipt["amount"].as_str()),
        (Some(ACME_RENT_DECEMBER), Some("4500.00"))
    );
    assert_eq!(standin.payments_made(), 2);

    // Receivables.
    assert_eq!(a.ok("finance_receivables_list", json!({})).await["data"].as_array().unwrap().len(), 3);
    assert_eq!(a.ok("finance_receivables_get", json!({"id": ACME_SALE_PENDING})).await["amount"], "12000.00");
    let totals = a.ok("finance_receivables_aggregates", json!({})).await;
    assert_eq!(
        (totals["total"].as_str(), totals["pending"].as_str(), totals["received"].as_str()),
        (Some("20000.00"), Some("12000.00"), Some("8000.00")),
        "{totals}"
    );
    let sale = a
        .ok("finance_receivables_create", json!({"company_id": ACME_COMPANY, "description": "Venda NF-1002", "amount": "990.00", "due_date": "2026-12-20", "person_id": ACME_CUSTOMER_MARIA}))
        .await;
    created_through_mcp(&sale);
    assert_eq!(
        a.ok("finance_receivables_update", json!({"id": id_of(&sale), "document_number": "1002"})).await
            ["document_number"],
        "1002"
    );
    let (message, received) = a.confirmed("finance_receivables_settle", json!({"id": ACME_SALE_PENDING, "payment_date": "2026-12-15", "financial_account_id": ACME_CHECKING_ACCOUNT})).await;
    assert_mentions(
        &message,
        &["Venda NF-1001", "Cliente Exemplo S.A.", "R$ 12.000,00", "2026-12-15", "Conta corrente Itaú"],
    );
    assert_eq!(received["status"], "received");
    let (_, reopened) = a.confirmed("finance_receivables_reopen", json!({"id": ACME_SALE_PENDING})).await;
    assert_eq!(reopened["status"], "pending");
    let (message, cancelled) = a.confirmed("finance_receivables_cancel", json!({"id": id_of(&sale)})).await;
    assert_mentions(&message, &["Venda NF-1002", "Maria Oliveira", "R$ 990,00"]);
    assert_eq!(cancelled["status"], "cancelled");
    a.confirmed("finance_receivables_delete", json!({"id": id_of(&sale)})).await;

    // Through the bank: the pending sale charged by boleto, the charge cancelled, then
    // by Pix and paid.
    let sale = json!({"id": ACME_SALE_PENDING});
    a.ok("finance_receivables_update", json!({"id": ACME_SALE_PENDING, "expected_account_id": ACME_CHECKING_ACCOUNT}))
        .await;
    let (message, charged) =
        a.confirmed("finance_receivables_charge", json!({"id": ACME_SALE_PENDING, "kind": "bank_billet"})).await;
    assert_mentions(&message, &["boleto", "R$ 12.000,00", "Venda NF-1001", "Conta corrente Itaú"]);
    assert_eq!(charged["charge_state"], "registering");
    let (message, stopped) = a.confirmed("finance_receivables_cancel_charge", sale.clone()).await;
    assert_mentions(&message, &["R$ 12.000,00", "Venda NF-1001"]);
    assert_eq!(stopped["charge_state"], "canceled");
    let (_, charged) = a.confirmed("finance_receivables_charge", json!({"id": ACME_SALE_PENDING, "kind": "pix"})).await;
    assert!(standin.advance_charge(charged["kobana_charge_uid"].as_str().unwrap(), "paid"));
    gateway::deliver_all(&h, &standin).await;
    assert_eq!(a.ok("finance_receivables_get", sale).await["status"], "received");

    // Reconciliations: the stationery bill and the bank debit that paid it.
    let debit = a
        .ok("finance_transactions_create", json!({"company_id": ACME_COMPANY, "financial_account_id": ACME_CHECKING_ACCOUNT, "description": "PIX Papelaria Boa Vista", "amount": "150.00", "occurred_at": "2026-11-21", "type": "debit"}))
        .await;
    let suggested = a
        .ok(
            "finance_reconciliations_suggest",
            json!({"account_id": ACME_CHECKING_ACCOUNT, "from": "2026-11-01", "to": "2026-11-30"}),
        )
        .await;
    assert_eq!(suggested["data"].as_array().map(Vec::len), Some(1), "only the planted pair: {suggested}");
    let best = &suggested["data"][0]["matches"][0];
    assert_eq!(
        (best["billing_id"].as_str(), best["score"].as_u64()),
        (Some(ACME_SUPPLIES_PENDING), Some(77)),
        "{best}"
    );
    assert_eq!(best["reasons"], json!(["same_amount", "due_date_close"]));
    let pair =
        json!({"billings": [{"kind": "payable", "id": ACME_SUPPLIES_PENDING}], "transaction_ids": [id_of(&debit)]});
    let (message, group) = a.confirmed("finance_reconciliations_create", pair).await;
    assert_mentions(&message, &["Papelaria — reposição", "Papelaria Boa Vista", "R$ 150,00", "2026-11-21", "paid"]);
    assert_eq!(group["billing_ids"], json!([ACME_SUPPLIES_PENDING]));
    assert_eq!(a.ok("finance_reconciliations_get", json!({"id": id_of(&group)})).await, group);
    let bill = a.ok("finance_payables_get", json!({"id": ACME_SUPPLIES_PENDING})).await;
    assert_eq!((bill["status"].as_str(), bill["is_reconciled"].as_bool()), (Some("paid"), Some(true)), "{bill}");
    assert_eq!(bill["reconciliation"]["id"], group["id"]);
    let (message, deleted) = a.confirmed("finance_reconciliations_delete", json!({"id": id_of(&group)})).await;
    assert_mentions(&message, &["Papelaria — reposição", "R$ 150,00", "pending"]);
    assert_eq!(deleted["deleted"], true);
    let bill = a.ok("finance_payables_get", json!({"id": ACME_SUPPLIES_PENDING})).await;
    assert_eq!((bill["status"].as_str(), bill["is_reconciled"].as_bool()), (Some("pending"), Some(false)), "{bill}");

    // Automatic rules: the demo's two, one added, moved first, changed, then deleted.
    let rules = a.ok("finance_automatic_rules_list", json!({"filters": {"scope": "transactions"}})).await;
    assert_eq!(rules["data"][0]["description_contains"], "uber");
    let rule = json!({"company_id": ACME_COMPANY, "scope": "transactions", "description_contains": "ifood",
                      "set_category_id": ACME_SALARIES_CATEGORY});
    let rule = a.ok("finance_automatic_rules_create", rule).await;
    assert_eq!(rule["position"], 2);
    let first = json!({"company_id": ACME_COMPANY, "scope": "transactions", "ordered_ids": [rule["id"], rules["data"][0]["id"]]});
    assert_eq!(a.ok("finance_automatic_rules_reorder", first).await["ordered_ids"][0], rule["id"]);
    assert_eq!(a.ok("finance_automatic_rules_get", json!({"id": id_of(&rule)})).await["position"], 1);
    let paused = a.ok("finance_automatic_rules_update", json!({"id": id_of(&rule), "active": false})).await;
    assert_eq!(paused["active"], false);
    let (message, deleted) = a.confirmed("finance_automatic_rules_delete", json!({"id": id_of(&rule)})).await;
    assert_mentions(&message, &["rule #1", "ifood"]);
    assert_eq!(deleted["deleted"], true);

    // Banks: the list an account names its bank from.
    let banks = a.ok("finance_banks_list", json!({"filters": {"code": "341"}, "fields": ["id", "name"]})).await;
    assert_eq!(banks["data"], json!([{"id": ITAU, "name": "ITAÚ UNIBANCO S.A."}]));

    // Attachments: the rent receipt and November's statement.
    assert_eq!(a.ok("finance_attachments_list", json!({})).await["data"].as_array().unwrap().len(), 2);
    assert_eq!(
        a.ok("finance_attachments_get", json!({"id": ACME_RENT_RECEIPT})).await["file_name"],
        "recibo-aluguel-novembro.pdf"
    );
    let where_ = a.ok("finance_attachments_download", json!({"id": ACME_RENT_RECEIPT})).await;
    assert_eq!(where_["content_type"], "application/pdf");
    let uploaded = a
        .ok("finance_attachments_upload", json!({"file_name": "nota.pdf", "content_base64": base64::engine::general_purpose::STANDARD.encode(TINY_PDF), "title": "Nota"}))
        .await;
    assert_eq!(uploaded["uploaded_by"], format!("mcp:{DEMO_OWNER}"));
    let link = json!({"attachment_id": id_of(&uploaded), "type": "payable", "id": ACME_RENT_DECEMBER});
    let linked = a.ok("finance_attachments_link", link.clone()).await;
    assert_eq!(
        (linked["parent_type"].as_str(), linked["parent_id"].as_str()),
        (Some("payable"), Some(ACME_RENT_DECEMBER))
    );
    assert_eq!(a.ok("finance_attachments_unlink", link).await["unlinked"], true);
    let (message, _) = a.confirmed("finance_attachments_delete", json!({"id": id_of(&uploaded)})).await;
    assert_mentions(&message, &["nota.pdf"]);

    let all: BTreeSet<String> = contract_names().into_iter().collect();
    let missed: Vec<&String> = all.difference(&a.called).collect();
    assert!(missed.is_empty(), "tools never called: {missed:?}");
    // Every write above was recorded as made through MCP; the bank's settlements of the
    // rent (its transaction and receipt) and of the sale (its transaction), as the
    // system's for the user who sent them.
    assert!(
        count(&h, "SELECT COUNT(*) FROM audit_events WHERE user_id = $1 AND channel = 'mcp'", DEMO_OWNER).await > 30
    );
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM audit_events WHERE user_id = $1 AND channel = 'api'", DEMO_OWNER).await,
        0
    );
    assert_eq!(
        count(
            &h,
            "SELECT COUNT(*) FROM audit_events WHERE user_id = $1 AND channel = 'system' \
             AND action IN ('payables.settle', 'receivables.settle', 'transactions.create', 'receipts.create')",
            DEMO_OWNER
        )
        .await,
        5
    );
    assert_eq!(
        count(&h, "SELECT COUNT(*) FROM audit_events WHERE channel = 'system' AND user_id = $1", DEMO_OWNER).await,
        5
    );
    // Every write of the run kept the reports' running totals.
    assert_report_totals_agree(&h).await;
}

// ---------------------------------------------------------------------------------------
// Confirmation of a money-moving tool, in every era

#[tokio::test]
async fn settling_the_rent_asks_in_the_users_terms_and_moves_the_money_once() {
    let h = Harness::with_demo().await;
    let mut a = Agent::new(&h, h.token(DEMO_OWNER));
    let before = a.ok("finance_accounts_get", json!({"id": ACME_CHECKING_ACCOUNT})).await["balance"]
        .as_str()
        .unwrap()
        .to_string();
    let args =
        json!({"id": ACME_RENT_DECEMBER, "payment_date": "2026-12-10", "financial_account_id": ACME_CHECKING_ACCOUNT});

    let (message, state) = a.ask("finance_payables_settle", args.clone()).await;
    assert_eq!(
        message,
        "Record a payment of R$ 4.500,00 for the payable “Aluguel de dezembro” to “Imobiliária Central Ltda” \
(R$ 4.500,00, due 2026-12-10), made on 2026-12-10 out of the account “Conta corrente Itaú”? \
No money moves: this records in the books a payment made outside Kobana."
    );
    assert_eq!(
        a.ok("finance_payables_get", json!({"id": ACME_RENT_DECEMBER})).await["status"],
        "pending",
        "asking changes nothing"
    );
    assert_eq!(settlements(&h, ACME_RENT_DECEMBER).await, 0);

    let accepted = accept(&state);
    let done = a
        .result(confirmable("finance_payables_settle", args.clone(), accepted.clone()), "finance_payables_settle")
        .await;
    let paid = payload(&done);
    assert_eq!(
        (paid["status"].as_str(), paid["payment_date"].as_str(), paid["financial_account_id"].as_str()),
        (Some("paid"), Some("2026-12-10"), Some(ACME_CHECKING_ACCOUNT))
    );
    assert!(paid["transaction_id"].is_string());
    let after = a.ok("finance_accounts_get", json!({"id": ACME_CHECKING_ACCOUNT})).await["balance"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!((before.as_str(), after.as_str()), ("13500.00", "9000.00"));

    // The accepted retry, replayed: the first outcome, no second movement.
    let replay = a.result(confirmable("finance_payables_settle", args, accepted), "finance_payables_settle").await;
    assert_eq!(replay["structuredContent"], done["structuredContent"]);
    assert_eq!(a.ok("finance_accounts_get", json!({"id": ACME_CHECKING_ACCOUNT})).await["balance"], "9000.00");
    assert_eq!(settlements(&h, ACME_RENT_DECEMBER).await, 1, "exactly one settlement transaction");
    let ledger = a.ok("finance_transactions_get", json!({"id": paid["transaction_id"]})).await;
    assert_eq!((ledger["type"].as_str(), ledger["amount"].as_str()), (Some("debit"), Some("4500.00")));
    let outcomes = count(
        &h,
        "SELECT COUNT(*) FROM audit_events WHERE action = 'tools.confirmation' AND target_id = $1",
        "finance_payables_settle",
    )
    .await;
    assert_eq!(outcomes, 3, "requested, executed, replayed");
}

#[tokio::test]
async fn destructive_tools_change_nothing_without_a_client_that_can_confirm() {
    let h = Harness::with_demo().await;
    let token = h.token(DEMO_OWNER);
    let cases: [(&str, Value); 4] = [
        (
            "finance_payables_settle",
            json!({"id": ACME_RENT_DECEMBER, "payment_date": "2026-12-10", "financial_account_id": ACME_CHECKING_ACCOUNT}),
        ),
        ("finance_payables_reopen", json!({"id": ACME_RENT_NOVEMBER})),
        (
            "finance_transfers_create",
            json!({"from_account_id": ACME_CHECKING_ACCOUNT, "to_account_id": ACME_CASH_ACCOUNT, "amount": "10.00", "occurred_at": "2026-11-29", "description": "x"}),
        ),
        (
            "finance_accounts_adjust_balance",
            json!({"id": ACME_CASH_ACCOUNT, "target_balance": "0.00", "category_id": ACME_RENT_CATEGORY}),
        ),
    ];
    for (tool, args) in &cases {
        for version in ["2025-06-18", "2025-03-26"] {
            let reply = h.send(legacy(tool, args.clone(), version).bearer(&token).build()).await;
            let result = reply.result();
            assert_eq!(result["isError"], true, "{tool} on {version}: {result}");
            let text = result["content"][0]["text"].as_str().unwrap();
            assert!(text.contains("2026-07-28") && text.contains("Nothing changed"), "{text}");
        }
        // 2026 without form elicitation: the client must declare it.
        let reply = h.send(call(tool, args.clone()).bearer(&token).build()).await;
        assert_eq!(reply.status, 400, "{tool}");
        assert_eq!(reply.rpc_code(), Some(-32021));
        assert_eq!(reply.json()["error"]["data"], json!({"requiredCapabilities": {"elicitation": {}}}));
    }
    let mut a = Agent::new(&h, token);
    assert_eq!(a.ok("finance_payables_get", json!({"id": ACME_RENT_DECEMBER})).await["status"], "pending");
    assert_eq!(a.ok("finance_payables_get", json!({"id": ACME_RENT_NOVEMBER})).await["status"], "paid");
    assert_eq!(settlements(&h, ACME_RENT_DECEMBER).await, 0);
    assert_eq!(a.ok("finance_accounts_get", json!({"id": ACME_CHECKING_ACCOUNT})).await["balance"], "13500.00");
    assert_eq!(a.ok("finance_accounts_get", json!({"id": ACME_CASH_ACCOUNT})).await["balance"], "2500.00");
}

#[tokio::test]
async fn read_tools_answer_in_every_era() {
    let h = Harness::with_demo().await;
    let token = h.token(DEMO_OWNER);
    let reads = [
        (
            "finance_payables_list",
            json!({"filters": {"status": {"in": ["pending"]}, "due_date": {"gte": "2026-12-01"}}}),
        ),
        ("finance_accounts_get", json!({"id": ACME_CHECKING_ACCOUNT, "fields": ["name", "balance"]})),
        ("finance_transactions_aggregates", json!({"month": 11, "year": 2026})),
        ("finance_workspaces_list", json!({})),
    ];
    for (tool, args) in reads {
        let modern = h.send(call(tool, args.clone()).bearer(&token).build()).await.result();
        let value = payload(&modern);
        assert_eq!(modern["resultType"], "complete");
        let june = h.send(legacy(tool, args.clone(), "2025-06-18").bearer(&token).build()).await.result();
        assert_eq!(payload(&june), value, "{tool} on 2025-06-18");
        assert!(june.get("resultType").is_none());
        let march = h.send(legacy(tool, args, "2025-03-26").bearer(&token).build()).await.result();
        assert!(march.get("structuredContent").is_none(), "2025-03-26 has no structuredContent");
        assert_eq!(text_of(&march), value, "{tool} on 2025-03-26");
    }
}
