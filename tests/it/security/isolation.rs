use super::*;

// ---------------------------------------------------------------------------------------
// Isolation
// ---------------------------------------------------------------------------------------

fn rest(method: Method, path: &str, token: &str, body: Option<Value>) -> http::Request<axum::body::Body> {
    let mut m = Mcp::raw(body.map(|b| b.to_string()).unwrap_or_default()).method(method).path(path).bearer(token);
    if !m.body.is_empty() {
        m = m.header("content-type", "application/json");
    }
    m.build()
}

/// One workspace's records: ids by resource, and strings only its data contains.
struct Tenant {
    owner: &'static str,
    workspace: &'static str,
    company: &'static str,
    account: String,
    category: &'static str,
    cost_center: &'static str,
    person: &'static str,
    tax: &'static str,
    payable: &'static str,
    receivable: &'static str,
    transaction: &'static str,
    transfer: String,
    attachment: &'static str,
    /// A reconciliation of its own ([`their_reconciliations`] writes them).
    reconciliation: &'static str,
    /// A receipt of its own (written with the reconciliations).
    receipt: &'static str,
    /// An automatic rule of its own (the demo's).
    rule: &'static str,
    /// Names, descriptions, documents and amounts of its records.
    markers: Vec<&'static str>,
}

const ACME_GROUP: &str = "7f000000-0000-4000-8000-00000000acce";
const BETA_GROUP: &str = "7f000000-0000-4000-8000-00000000bcce";
const ACME_RECEIPT: &str = "7ec00000-0000-4000-8000-00000000acce";
const BETA_RECEIPT: &str = "7ec00000-0000-4000-8000-00000000bcce";

/// A reconciliation in each demo workspace (the demo has none), for the tools that take
/// a group's id.
async fn their_reconciliations(h: &Harness) {
    for (id, workspace, company) in
        [(ACME_GROUP, DEMO_WORKSPACE_ACME, ACME_COMPANY), (BETA_GROUP, DEMO_WORKSPACE_BETA, BETA_COMPANY)]
    {
        exec(
            h,
            "INSERT INTO reconciliations (id, workspace_id, company_id, kind, source, created_at, updated_at, created_via, updated_via)
             VALUES ($1, $2, $3, 'payable', 'manual', '2026-11-30T12:00:00Z', '2026-11-30T12:00:00Z', 'system', 'system')",
            &[id, workspace, company],
        )
        .await;
    }
    for (id, workspace, company, payable) in [
        (ACME_RECEIPT, DEMO_WORKSPACE_ACME, ACME_COMPANY, ACME_RENT_NOVEMBER),
        (BETA_RECEIPT, DEMO_WORKSPACE_BETA, BETA_COMPANY, BETA_PAYABLE),
    ] {
        exec(
            h,
            "INSERT INTO receipts (id, workspace_id, company_id, payable_id, source, status, paid_at, amount_cents,
                    external_uid, created_at, updated_at)
             VALUES ($1, $2, $3, $4, 'kobana', 'available', '2026-11-30T12:00:00Z', 100, $1,
                     '2026-11-30T12:00:00Z', '2026-11-30T12:00:00Z')",
            &[id, workspace, company, payable],
        )
        .await;
    }
}

/// The resources of the tools, as their names start (`finance_{resource}_…`).
const RESOURCES: [&str; 16] = [
    "companies",
    "accounts",
    "categories",
    "cost_centers",
    "people",
    "taxes",
    "transactions",
    "transfers",
    "payables",
    "receivables",
    "attachments",
    "reconciliations",
    "automatic_rules",
    "receipts",
    "cash_flow",
    "reports",
];

fn beta() -> Tenant {
    Tenant {
        owner: DEMO_BETA_OWNER,
        workspace: DEMO_WORKSPACE_BETA,
        company: BETA_COMPANY,
        account: BETA_ACCOUNT.into(),
        category: BETA_CATEGORY,
        cost_center: BETA_COST_CENTER,
        person: BETA_PERSON,
        tax: BETA_TAX,
        payable: BETA_PAYABLE,
        receivable: BETA_RECEIVABLE,
        transaction: BETA_SETTLEMENT_TRANSACTION,
        transfer: BETA_TRANSFER.into(),
        attachment: BETA_ATTACHMENT,
        reconciliation: BETA_GROUP,
        receipt: BETA_RECEIPT,
        rule: BETA_RULE,
        markers: vec![
            "Beta Tecnologia S.A.",
            "Conta corrente Nubank",
            "Caixa Beta",
            "Infraestrutura em nuvem",
            "Engenharia Beta",
            "Nuvem Sul Hospedagem",
            "60456789000111",
            "PIS Beta",
            "Licenças de software",
            "990.00",
            "Consultoria Beta NF-77",
            "7777.00",
            "Suprimento do caixa Beta",
            "333.00",
            "nfse-beta-77.xml",
        ],
    }
}

fn acme(transfer: String) -> Tenant {
    Tenant {
        owner: DEMO_OWNER,
        workspace: DEMO_WORKSPACE_ACME,
        company: ACME_COMPANY,
        account: ACME_CHECKING_ACCOUNT.into(),
        category: ACME_RENT_CATEGORY,
        cost_center: ACME_ADMIN_COST_CENTER,
        person: ACME_LANDLORD,
        tax: ACME_IRRF_TAX,
        payable: ACME_RENT_NOVEMBER,
        receivable: ACME_SALE_PENDING,
        transaction: ACME_CAPITAL_CONTRIBUTION,
        transfer,
        attachment: ACME_RENT_RECEIPT,
        reconciliation: ACME_GROUP,
        receipt: ACME_RECEIPT,
        rule: kobana_finance_mcp::storage::seed::ACME_RIDES_RULE,
        markers: vec![
            "Acme Comércio Ltda",
            "11222333000181",
            "Conta corrente Itaú",
            "Aluguel",
            "Administrativo",
            "Imobiliária Central",
            "IRRF",
            "4500.00",
            "Venda NF-1001",
            "12000.00",
            "Aporte dos sócios",
            "2000.00",
            "Troco do caixa Acme",
            "123.45",
            "recibo-aluguel-novembro.pdf",
        ],
    }
}

/// What a caller may send at the other workspace's records: every `/v1` route that
/// takes an id (reads, updates, deletes, actions), and lists naming its workspace.
fn calls_at(them: &Tenant, us: &Tenant) -> Vec<(Method, String, Option<Value>)> {
    let ws = them.workspace;
    let mut calls = Vec::new();
    let crud = [
        ("/v1/companies", them.company, json!({"name": "Mine"})),
        ("/v1/categories", them.category, json!({"name": "Mine"})),
        ("/v1/classification_centers", them.cost_center, json!({"name": "Mine"})),
        ("/v1/people", them.person, json!({"name": "Mine"})),
        ("/v1/taxes", them.tax, json!({"name": "Mine"})),
        ("/v1/financial-accounts", them.account.as_str(), json!({"name": "Mine"})),
        ("/v1/financial-transactions", them.transaction, json!({"description": "Mine"})),
        ("/v1/payables", them.payable, json!({"description": "Mine"})),
        ("/v1/receivables", them.receivable, json!({"description": "Mine"})),
    ];
    for (base, id, patch) in crud {
        calls.push((Method::GET, format!("{base}/{id}"), None));
        calls.push((Method::GET, format!("{base}/{id}?workspace_id={ws}"), None));
        calls.push((Method::PATCH, format!("{base}/{id}"), Some(patch.clone())));
        calls.push((Method::PATCH, format!("{base}/{id}?workspace_id={ws}"), Some(patch)));
        calls.push((Method::DELETE, format!("{base}/{id}"), None));
        calls.push((Method::GET, format!("{base}?workspace_id={ws}"), None));
    }
    for base in ["/v1/payables", "/v1/receivables", "/v1/financial-transactions"] {
        calls.push((Method::GET, format!("{base}/aggregates?workspace_id={ws}"), None));
        calls.push((Method::GET, format!("{base}/ids?workspace_id={ws}"), None));
    }
    calls.push((Method::GET, format!("/v1/people/ids?workspace_id={ws}"), None));
    for (base, id) in [("/v1/payables", them.payable), ("/v1/receivables", them.receivable)] {
        calls.push((
            Method::POST,
            format!("{base}/{id}/settle"),
            Some(json!({"payment_date": "2026-12-01", "financial_account_id": us.account})),
        ));
        calls.push((Method::POST, format!("{base}/{id}/cancel"), None));
        calls.push((Method::POST, format!("{base}/{id}/reopen"), None));
    }
    calls.push((Method::POST, format!("/v1/payables/{}/send-to-bank", them.payable), None));
    calls.push((Method::POST, format!("/v1/payables/{}/cancel-dispatch", them.payable), None));
    calls.push((Method::POST, format!("/v1/receivables/{}/charge", them.receivable), Some(json!({"kind": "pix"}))));
    calls.push((Method::POST, format!("/v1/receivables/{}/charge/cancel", them.receivable), None));
    calls.push((Method::GET, format!("/v1/receipts/{}", them.receipt), None));
    calls.push((Method::GET, format!("/v1/receipts?workspace_id={ws}"), None));
    calls.push((
        Method::POST,
        format!("/v1/financial-accounts/{}/adjust-balance", them.account),
        Some(json!({"target_balance": "1.00", "category_id": us.category, "occurred_at": "2026-12-01"})),
    ));
    calls.push((Method::GET, format!("/v1/transfers/{}", them.transfer), None));
    calls.push((Method::GET, format!("/v1/attachments/{}", them.attachment), None));
    calls.push((Method::GET, format!("/v1/attachments/{}/download", them.attachment), None));
    calls.push((Method::DELETE, format!("/v1/attachments/{}", them.attachment), None));
    calls.push((Method::GET, format!("/v1/attachments?workspace_id={ws}"), None));
    calls.push((
        Method::POST,
        format!("/v1/attachments/{}/links", them.attachment),
        Some(json!({"type": "payable", "id": us.payable})),
    ));
    calls.push((
        Method::DELETE,
        format!("/v1/attachments/{}/links", them.attachment),
        Some(json!({"type": "transaction", "id": them.transaction})),
    ));
    // Our own attachment pointed at their records.
    calls.push((
        Method::POST,
        format!("/v1/attachments/{}/links", us.attachment),
        Some(json!({"type": "payable", "id": them.payable})),
    ));
    calls.push((
        Method::POST,
        format!("/v1/attachments/{}/links", us.attachment),
        Some(json!({"type": "transaction", "id": them.transaction})),
    ));
    calls
}

/// Writes in our workspace that name their records: refused (not found, or an invalid
/// reference), never a record pointing into the other workspace.
fn references_to(them: &Tenant, us: &Tenant) -> Vec<(Method, String, Value)> {
    let bill = |extra: Value| {
        let mut body = json!({"company_id": us.company, "description": "Referência cruzada", "amount": "10.00", "due_date": "2026-12-20", "person_name": "Fornecedor"});
        for (k, v) in extra.as_object().unwrap() {
            match v {
                Value::Null => drop(body.as_object_mut().unwrap().remove(k)),
                v => body[k] = v.clone(),
            }
        }
        body
    };
    vec![
        (Method::POST, "/v1/payables".into(), bill(json!({"company_id": them.company}))),
        (Method::POST, "/v1/payables".into(), bill(json!({"person_id": them.person, "person_name": null}))),
        (Method::POST, "/v1/payables".into(), bill(json!({"category_id": them.category}))),
        (Method::POST, "/v1/payables".into(), bill(json!({"financial_account_id": them.account}))),
        (Method::POST, "/v1/receivables".into(), bill(json!({"company_id": them.company}))),
        (
            Method::POST,
            "/v1/transfers".into(),
            json!({"from_account_id": us.account, "to_account_id": them.account, "amount": "1.00", "occurred_at": "2026-12-01", "description": "Cruzada"}),
        ),
        (
            Method::POST,
            "/v1/transfers".into(),
            json!({"from_account_id": them.account, "to_account_id": us.account, "amount": "1.00", "occurred_at": "2026-12-01", "description": "Cruzada"}),
        ),
        (
            Method::POST,
            "/v1/financial-transactions".into(),
            json!({"company_id": us.company, "financial_account_id": them.account, "description": "x", "amount": "1.00", "occurred_at": "2026-12-01", "type": "debit"}),
        ),
        (
            Method::POST,
            "/v1/financial-accounts".into(),
            json!({"company_id": them.company, "name": "Conta cruzada", "type": "checking"}),
        ),
        (
            Method::POST,
            "/v1/categories".into(),
            json!({"company_id": us.company, "name": "Filha cruzada", "type": "debit", "parent_id": them.category}),
        ),
    ]
}

/// Their names, documents and amounts found in an answer (an id the caller sent may
/// be echoed in an error's details; a record's data may not).
fn leaks(body: &str, them: &Tenant) -> Vec<&'static str> {
    them.markers.iter().copied().filter(|m| body.contains(m)).collect()
}

/// Row counts, settled or cancelled bills, and records renamed by the refused updates.
async fn snapshot(h: &Harness) -> Vec<i64> {
    let mut statements: Vec<String> = [
        "billings",
        "financial_transactions",
        "financial_accounts",
        "categories",
        "classification_centers",
        "attachment_links",
        "attachments",
        "people",
        "taxes",
        "companies",
    ]
    .iter()
    .map(|table| format!("SELECT COUNT(*) FROM {table}"))
    .collect();
    statements.push(
        "SELECT COUNT(*) FROM billings WHERE status IN ('paid', 'received', 'cancelled') OR description = 'Mine'"
            .into(),
    );
    statements.push("SELECT COUNT(*) FROM financial_transactions WHERE description = 'Mine'".into());
    for table in ["companies", "categories", "classification_centers", "people", "taxes", "financial_accounts"] {
        statements.push(format!("SELECT COUNT(*) FROM {table} WHERE name = 'Mine'"));
    }
    let mut counts = Vec::new();
    for sql in statements {
        let row = sql::query(sql).fetch_one(&h.state.db).await.unwrap();
        counts.push(row.try_get::<i64, _>(0).unwrap());
    }
    counts
}

#[tokio::test]
async fn every_rest_route_with_the_other_workspaces_ids_is_not_found_and_leaks_nothing() {
    let h = Harness::with_demo().await;
    // Acme has no transfer in the demo: its owner makes one.
    let acme_token = h.api_token(DEMO_OWNER);
    let made = h
        .send(rest(
            Method::POST,
            "/v1/transfers",
            &acme_token,
            Some(json!({"from_account_id": ACME_CASH_ACCOUNT, "to_account_id": ACME_CHECKING_ACCOUNT,
                        "amount": "123.45", "occurred_at": "2026-11-30", "description": "Troco do caixa Acme"})),
        ))
        .await;
    assert_eq!(made.status, 201, "{}", String::from_utf8_lossy(&made.bytes));
    let acme = acme(made.json()["transfer_id"].as_str().unwrap().to_string());
    let beta = beta();
    let before = snapshot(&h).await;
    let mut failures = Vec::new();
    let mut tried = 0;
    for (us, them) in [(&acme, &beta), (&beta, &acme)] {
        let token = h.api_token(us.owner);
        // The record exists for its owner (so a 404 below is isolation, not absence).
        let theirs =
            h.send(rest(Method::GET, &format!("/v1/payables/{}", them.payable), &h.api_token(them.owner), None)).await;
        assert_eq!(theirs.status, 200, "{}", them.payable);
        for (method, path, body) in calls_at(them, us) {
            tried += 1;
            let reply = h.send(rest(method.clone(), &path, &token, body)).await;
            let text = String::from_utf8_lossy(&reply.bytes).to_string();
            let code =
                serde_json::from_str::<Value>(&text).ok().and_then(|v| v["error"]["code"].as_str().map(str::to_string));
            if reply.status != 404 || code.as_deref() != Some("not_found") {
                failures.push(format!("{} {method} {path}: {} {text}", us.owner, reply.status));
            }
            let leaked = leaks(&text, them);
            if !leaked.is_empty() {
                failures.push(format!("{} {method} {path} leaks {leaked:?}: {text}", us.owner));
            }
        }
        for (method, path, body) in references_to(them, us) {
            tried += 1;
            let reply = h.send(rest(method.clone(), &path, &token, Some(body.clone()))).await;
            let text = String::from_utf8_lossy(&reply.bytes).to_string();
            let json: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            let refused = match reply.status.as_u16() {
                404 => json["error"]["code"] == "not_found",
                422 => json["error"]["details"]["reason"] == "invalid_reference",
                _ => false,
            };
            if !refused {
                failures.push(format!("{} {method} {path} {body}: {} {text}", us.owner, reply.status));
            }
            let leaked = leaks(&text, them);
            if !leaked.is_empty() {
                failures.push(format!("{} {method} {path} leaks {leaked:?}: {text}", us.owner));
            }
        }
        // Our own lists, unfiltered or filtered by their ids, show none of their records;
        // a filter naming their company or account is an invalid reference, as a missing one.
        for path in [
            "/v1/companies".to_string(),
            "/v1/categories".to_string(),
            "/v1/classification_centers".to_string(),
            "/v1/people".to_string(),
            "/v1/taxes".to_string(),
            "/v1/financial-accounts".to_string(),
            "/v1/financial-transactions?limit=100".to_string(),
            format!("/v1/financial-transactions?financial_account_id={}", them.account),
            "/v1/payables?limit=100".to_string(),
            format!("/v1/payables?company_id={}", them.company),
            "/v1/receivables?limit=100".to_string(),
            "/v1/payables/aggregates".to_string(),
            "/v1/receivables/aggregates".to_string(),
            "/v1/financial-transactions/aggregates".to_string(),
            "/v1/payables/ids".to_string(),
            "/v1/attachments".to_string(),
            "/v1/workspaces".to_string(),
        ] {
            tried += 1;
            let reply = h.send(rest(Method::GET, &path, &token, None)).await;
            let text = String::from_utf8_lossy(&reply.bytes).to_string();
            let answered = match path.contains("_id=") {
                true => reply.status == 422 && reply.json()["error"]["details"]["reason"] == "invalid_reference",
                false => reply.status == 200,
            };
            if !answered {
                failures.push(format!("{} GET {path}: {} {text}", us.owner, reply.status));
            }
            let mut leaked = leaks(&text, them);
            for id in [them.payable, them.receivable, them.transaction, them.attachment, them.person] {
                if text.contains(id) {
                    leaked.push("one of their ids");
                }
            }
            if !leaked.is_empty() {
                failures.push(format!("{} GET {path} leaks {leaked:?}: {text}", us.owner));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {tried} call(s) crossed the workspace boundary:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(tried >= 150, "{tried}");
    assert_eq!(snapshot(&h).await, before, "nothing changed in either workspace");
}

/// An idempotency key is the caller's own: another tenant sending the same key (and
/// the same body) gets its own record, never a replay of someone else's response.
#[tokio::test]
async fn idempotency_keys_do_not_cross_workspaces() {
    let h = Harness::new().await;
    let body = |company: &str| json!({"company_id": company, "description": "Chave compartilhada", "amount": "10.00", "due_date": "2026-12-20", "person_name": "Fornecedor"});
    let send = |token: String, company: &'static str| {
        let m = Mcp::raw(body(company).to_string())
            .method(Method::POST)
            .path("/v1/payables")
            .bearer(&token)
            .header("content-type", "application/json")
            .header("x-idempotency-key", "same-key-for-everyone");
        m.build()
    };
    let ours = h.send(send(h.api_token(DEMO_OWNER), ACME_COMPANY)).await;
    assert_eq!(ours.status, 201);
    let theirs = h.send(send(h.api_token(DEMO_BETA_OWNER), BETA_COMPANY)).await;
    assert_eq!(theirs.status, 201, "{}", String::from_utf8_lossy(&theirs.bytes));
    assert!(theirs.header("x-idempotency-replayed").is_none());
    assert_ne!(theirs.json()["id"], ours.json()["id"]);
    assert_eq!(theirs.json()["company_id"], BETA_COMPANY);
    // And the Beta owner sending Acme's exact request is refused, not replayed.
    let replay = h.send(send(h.api_token(DEMO_BETA_OWNER), ACME_COMPANY)).await;
    assert!(
        !String::from_utf8_lossy(&replay.bytes).contains(ours.json()["id"].as_str().unwrap()),
        "no replay of another tenant's answer"
    );
}

/// Every tool that takes an id or a workspace, called by one owner with the other
/// workspace's ids: not found, nothing of theirs in the result. The table follows the
/// catalogue: a tool added later is covered by the same rule.
#[tokio::test]
async fn every_tool_with_the_other_workspaces_ids_is_not_found_and_leaks_nothing() {
    let h = Harness::with_demo().await;
    their_reconciliations(&h).await;
    let acme = acme(String::from("7f000000-0000-4000-8000-00000000aaaa"));
    let beta = beta();
    let mut failures = Vec::new();
    let mut called = 0;
    for (us, them) in [(&acme, &beta), (&beta, &acme)] {
        let token = h.token(us.owner);
        let list = h.send(Mcp::modern("tools/list", json!({})).bearer(&token).build()).await.result();
        for tool in list["tools"].as_array().unwrap() {
            let name = tool["name"].as_str().unwrap();
            let properties = &tool["inputSchema"]["properties"];
            let resource = RESOURCES
                .iter()
                .find(|r| name.strip_prefix("finance_").is_some_and(|rest| rest.starts_with(&format!("{r}_"))))
                .copied()
                .unwrap_or_default();
            let id = match resource {
                "companies" => Some(them.company.to_string()),
                "accounts" => Some(them.account.clone()),
                "categories" => Some(them.category.to_string()),
                "cost_centers" => Some(them.cost_center.to_string()),
                "people" => Some(them.person.to_string()),
                "taxes" => Some(them.tax.to_string()),
                "transactions" => Some(them.transaction.to_string()),
                "transfers" => Some(them.transfer.clone()),
                "payables" => Some(them.payable.to_string()),
                "receivables" => Some(them.receivable.to_string()),
                "attachments" => Some(them.attachment.to_string()),
                "reconciliations" => Some(them.reconciliation.to_string()),
                "automatic_rules" => Some(them.rule.to_string()),
                "receipts" => Some(them.receipt.to_string()),
                _ => None,
            };
            let mut arguments = serde_json::Map::new();
            if properties.get("id").is_some() {
                arguments.insert("id".into(), json!(id));
            } else if properties.get("attachment_id").is_some() {
                arguments.insert("attachment_id".into(), json!(them.attachment));
            } else if properties.get("workspace_id").is_some() {
                arguments.insert("workspace_id".into(), json!(them.workspace));
            } else {
                continue;
            }
            called += 1;
            let mut params = json!({"name": name, "arguments": arguments});
            params["_meta"] = meta();
            params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {"form": {}}});
            let request =
                Mcp::raw(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).to_string())
                    .header("content-type", "application/json")
                    .header("mcp-protocol-version", "2026-07-28")
                    .header("mcp-method", "tools/call")
                    .header("mcp-name", name)
                    .bearer(&token);
            let reply = h.send(request.build()).await;
            let text = String::from_utf8_lossy(&reply.bytes).to_string();
            let result = reply.json()["result"].clone();
            let code = result["content"][0]["text"]
                .as_str()
                .and_then(|t| serde_json::from_str::<Value>(t).ok())
                .and_then(|v| v["error"]["code"].as_str().map(str::to_string));
            // A tool that needs more arguments than these may refuse them by its schema
            // (bad_request for a read, unprocessable_entity for a write) first; one that
            // has all it requires must answer not found.
            let complete = tool["inputSchema"]["required"]
                .as_array()
                .is_none_or(|r| r.iter().all(|k| arguments.contains_key(k.as_str().unwrap_or_default())));
            let allowed: &[&str] =
                if complete { &["not_found"] } else { &["not_found", "bad_request", "unprocessable_entity"] };
            let refused = result["isError"] == json!(true) && code.as_deref().is_some_and(|c| allowed.contains(&c));
            if reply.status != 200 || !refused {
                failures.push(format!("{} {name}: {} {text}", us.owner, reply.status));
            }
            let leaked = leaks(&text, them);
            if !leaked.is_empty() {
                failures.push(format!("{} {name} leaks {leaked:?}: {text}", us.owner));
            }
        }
    }
    assert!(called >= 4, "{called} tools called");
    assert!(
        failures.is_empty(),
        "{} tool call(s) crossed the workspace boundary:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
