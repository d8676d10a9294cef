//! `/v1/reconciliations` and the reconciliation tools: a group settles every bill from
//! the bank transactions that paid them, atomically, and its deletion reverts them; the
//! refusals name the member; what a group holds is frozen while it lasts.

use http::Method;
use serde_json::{json, Value};

use crate::common::*;

const NOW: &str = "2026-01-01T00:00:00Z";

/// A bill written directly: kind, status, amount in cents, due date, its account.
async fn bill(h: &Harness, kind: &str, status: &str, cents: i64, due: &str, account: Option<&str>) -> String {
    let id = uuid::Uuid::new_v4().to_string();
    sql::query(
        "INSERT INTO billings (id, workspace_id, company_id, kind, description, amount_cents, due_date, competence_date,
                               billing_type, status, financial_account_id, person_id, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7, 'normal', $8, $9, $10, $11, $11, 'system', 'system')",
    )
    .bind(id.clone())
    .bind(DEMO_WORKSPACE_ACME)
    .bind(ACME_COMPANY)
    .bind(kind)
    .bind(format!("Conta {}", &id[..8]))
    .bind(cents)
    .bind(due)
    .bind(status)
    .bind(account)
    .bind(Some(ACME_LANDLORD))
    .bind(NOW)
    .execute(&h.state.db)
    .await
    .unwrap();
    id
}

/// A posted transaction written directly on the checking account (or `account`).
async fn movement(h: &Harness, kind: &str, cents: i64, date: &str, account: &str, pending: bool) -> String {
    let id = uuid::Uuid::new_v4().to_string();
    sql::query(
        "INSERT INTO financial_transactions (id, workspace_id, company_id, financial_account_id, description, amount_cents, occurred_at,
                                             transaction_type, is_pending, created_at, updated_at, created_via, updated_via)
         VALUES ($1, $2, $3, $4, 'Extrato', $5, $6, $7, $8, $9, $9, 'system', 'system')",
    )
    .bind(id.clone())
    .bind(DEMO_WORKSPACE_ACME)
    .bind(ACME_COMPANY)
    .bind(account)
    .bind(cents)
    .bind(date)
    .bind(kind)
    .bind(i64::from(pending))
    .bind(NOW)
    .execute(&h.state.db)
    .await
    .unwrap();
    id
}

async fn post(h: &Harness, body: Value) -> Reply {
    send(h, Method::POST, "/v1/reconciliations", &h.api_token(DEMO_OWNER), Some(body)).await
}

async fn get(h: &Harness, path: &str) -> Value {
    let reply = send(h, Method::GET, path, &h.api_token(DEMO_OWNER), None).await;
    assert_eq!(reply.status, 200, "{path}: {}", String::from_utf8_lossy(&reply.bytes));
    reply.json()
}

fn payables(ids: &[&str]) -> Value {
    Value::Array(ids.iter().map(|id| json!({"kind": "payable", "id": id})).collect())
}

fn reason(reply: &Reply) -> (u16, String, String) {
    let body = reply.json();
    let details = &body["error"]["details"];
    (
        reply.status.as_u16(),
        details["field"].as_str().unwrap_or_default().to_string(),
        details["reason"].as_str().unwrap_or_default().to_string(),
    )
}

async fn count(h: &Harness, sql: &str) -> i64 {
    sql::query(sql.to_string()).fetch_one(&h.state.db).await.unwrap().try_get(0).unwrap()
}

#[tokio::test]
async fn a_group_settles_every_bill_from_its_transactions_and_its_deletion_reverts_them() {
    let h = Harness::with_demo().await;
    let (a, b) = (
        bill(&h, "payable", "pending", 30_000, "2026-11-10", None).await,
        bill(&h, "payable", "pending", 20_000, "2026-11-12", Some(ACME_CASH_ACCOUNT)).await,
    );
    let first = movement(&h, "debit", 25_000, "2026-11-11", ACME_CHECKING_ACCOUNT, false).await;
    let last = movement(&h, "debit", 25_000, "2026-11-13", ACME_CHECKING_ACCOUNT, false).await;
    let transactions_before = count(&h, "SELECT COUNT(*) FROM financial_transactions").await;
    let reply = post(&h, json!({"billings": payables(&[&a, &b]), "transaction_ids": [last, first]})).await;
    assert_eq!(reply.status, 201, "{}", String::from_utf8_lossy(&reply.bytes));
    let group = reply.json();
    let path = format!("/v1/reconciliations/{}", group["id"].as_str().unwrap());
    assert_eq!(reply.header("location"), Some(path.as_str()));
    assert_eq!(
        (group["kind"].as_str(), group["source"].as_str(), group["created_via"].as_str()),
        (Some("payable"), Some("manual"), Some("api"))
    );
    assert_eq!(group["billing_ids"], json!([a, b]));
    assert_eq!(group["transaction_ids"], json!([last, first]));
    assert_eq!(get(&h, &path).await, group);
    // Both bills paid by the last movement's date and account; no ledger transaction added.
    for id in [&a, &b] {
        let record = get(&h, &format!("/v1/payables/{id}")).await;
        assert_eq!(
            (record["status"].as_str(), record["payment_date"].as_str(), record["financial_account_id"].as_str()),
            (Some("paid"), Some("2026-11-13"), Some(ACME_CHECKING_ACCOUNT)),
            "{record}"
        );
        assert_eq!((record["is_reconciled"].as_bool(), record["transaction_id"].as_str()), (Some(true), None));
        assert_eq!(record["reconciliation"]["id"], group["id"]);
        assert_eq!(record["reconciliation"]["transaction_ids"], json!([last, first]));
    }
    assert_eq!(count(&h, "SELECT COUNT(*) FROM financial_transactions").await, transactions_before);
    let listed = get(&h, &format!("/v1/payables?id={a}")).await;
    assert_eq!(listed["data"][0]["is_reconciled"], true);
    let projection = json!({"filters": {"id": a}, "fields": ["is_reconciled", "ir_relevant"]});
    let projected = h.send(call("finance_payables_list", projection).bearer(&h.token(DEMO_OWNER)).build()).await;
    assert_eq!(projected.result()["structuredContent"]["data"][0], json!({"ir_relevant": null, "is_reconciled": true}));

    // While the group lasts, what it holds is frozen.
    let token = h.api_token(DEMO_OWNER);
    for (method, route, body) in [
        (Method::POST, format!("/v1/payables/{a}/reopen"), None),
        (Method::PATCH, format!("/v1/payables/{a}"), Some(json!({"status": "pending"}))),
        (Method::DELETE, format!("/v1/payables/{b}"), None),
        (Method::DELETE, format!("/v1/financial-transactions/{first}"), None),
        (Method::PATCH, format!("/v1/financial-transactions/{first}"), Some(json!({"amount": "1.00"}))),
    ] {
        let reply = send(&h, method.clone(), &route, &token, body).await;
        assert_eq!(reason(&reply), (422, "id".into(), "reconciled".into()), "{method} {route}");
    }
    // Through MCP the user is not even asked: the confirmation refuses first.
    for (tool, id) in
        [("finance_payables_delete", &b), ("finance_transactions_delete", &first), ("finance_payables_reopen", &a)]
    {
        let asked = crate::tools_catalogue::confirmable(tool, json!({"id": id}), json!({}));
        let result = h.send(asked.bearer(&h.token(DEMO_OWNER)).build()).await.result();
        assert_eq!(result["isError"], true, "{tool}: {result}");
        assert_eq!(tool_error(&result)["details"]["reason"], "reconciled", "{tool}: {result}");
    }
    let noted = send(
        &h,
        Method::PATCH,
        &format!("/v1/financial-transactions/{first}"),
        &token,
        Some(json!({"notes": "Conferido"})),
    )
    .await;
    assert_eq!(noted.status, 200, "a note moves no money");
    // A member is in one group only.
    let again = post(&h, json!({"billings": payables(&[&a]), "transaction_ids": [movement(&h, "debit", 100, "2026-11-14", ACME_CHECKING_ACCOUNT, false).await]})).await;
    assert_eq!(reason(&again), (422, "billings[0].id".into(), "reconciled".into()));
    let other = bill(&h, "payable", "pending", 100, "2026-11-14", None).await;
    let again = post(&h, json!({"billings": payables(&[&other]), "transaction_ids": [first]})).await;
    assert_eq!(reason(&again), (422, "transaction_ids[0]".into(), "reconciled".into()));

    // Deleting reverts both bills, each to its account before the group.
    let deleted = send(&h, Method::DELETE, &path, &token, None).await;
    assert_eq!(deleted.status, 204);
    assert!(deleted.bytes.is_empty());
    for (id, account) in [(&a, Value::Null), (&b, json!(ACME_CASH_ACCOUNT))] {
        let record = get(&h, &format!("/v1/payables/{id}")).await;
        assert_eq!(
            (record["status"].as_str(), &record["payment_date"], &record["financial_account_id"]),
            (Some("pending"), &Value::Null, &account),
            "{record}"
        );
        assert_eq!((record["is_reconciled"].as_bool(), &record["reconciliation"]), (Some(false), &Value::Null));
    }
    assert_eq!(send(&h, Method::GET, &path, &token, None).await.status, 404);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM reconciliation_members").await, 0);
    let audited = count(&h, "SELECT COUNT(*) FROM audit_events WHERE action LIKE 'reconciliations.%'").await;
    assert_eq!(audited, 2, "a create and a delete");
    assert_report_totals_agree(&h).await;
}

#[tokio::test]
async fn a_single_bill_takes_the_transactions_total_as_what_was_paid() {
    let h = Harness::with_demo().await;
    let account = crate::billings::account(&h, ACME_COMPANY).await;
    let sale = bill(&h, "receivable", "pending", 100_000, "2026-11-10", None).await;
    let (one, two) = (
        movement(&h, "credit", 60_000, "2026-11-09", &account, false).await,
        movement(&h, "credit", 40_500, "2026-11-10", &account, false).await,
    );
    let group =
        post(&h, json!({"billings": [{"kind": "receivable", "id": sale}], "transaction_ids": [one, two]})).await;
    assert_eq!(group.status, 201, "{}", String::from_utf8_lossy(&group.bytes));
    let record = get(&h, &format!("/v1/receivables/{sale}")).await;
    assert_eq!(
        (record["status"].as_str(), record["ticket_amount"].as_str(), record["payment_date"].as_str()),
        (Some("received"), Some("1005.00"), Some("2026-11-10"))
    );
}

#[tokio::test]
async fn every_refusal_names_the_member_and_writes_nothing() {
    let h = Harness::with_demo().await;
    let pending = bill(&h, "payable", "pending", 10_000, "2026-11-10", None).await;
    let cancelled = bill(&h, "payable", "cancelled", 10_000, "2026-11-10", None).await;
    let paid = bill(&h, "payable", "paid", 10_000, "2026-11-10", None).await;
    let receivable = bill(&h, "receivable", "pending", 10_000, "2026-11-10", None).await;
    let debit = movement(&h, "debit", 10_000, "2026-11-10", ACME_CHECKING_ACCOUNT, false).await;
    let credit = movement(&h, "credit", 10_000, "2026-11-10", ACME_CHECKING_ACCOUNT, false).await;
    let forecast = movement(&h, "debit", 10_000, "2026-12-30", ACME_CHECKING_ACCOUNT, true).await;
    let beta_debit = "7e000000-0001-4000-8000-000000000022";
    let cases = [
        (json!({"billings": [], "transaction_ids": [debit]}), "billings", "too_few_items"),
        (json!({"billings": payables(&[&pending]), "transaction_ids": []}), "transaction_ids", "too_few_items"),
        (json!({"billings": payables(&[&pending])}), "transaction_ids", "required"),
        (
            json!({"billings": [{"kind": "payable", "id": pending}, {"kind": "receivable", "id": receivable}], "transaction_ids": [debit]}),
            "billings[1].kind",
            "mixed_kinds",
        ),
        (
            json!({"billings": payables(&[&pending, &pending]), "transaction_ids": [debit]}),
            "billings[1].id",
            "duplicate",
        ),
        (json!({"billings": payables(&[&cancelled]), "transaction_ids": [debit]}), "billings[0].id", "cancelled"),
        (json!({"billings": payables(&[&paid]), "transaction_ids": [debit]}), "billings[0].id", "already_settled"),
        (json!({"billings": payables(&[BETA_PAYABLE]), "transaction_ids": [debit]}), "billings[0].id", "not_found"),
        (
            json!({"billings": payables(&[&pending]), "transaction_ids": [credit]}),
            "transaction_ids[0]",
            "wrong_polarity",
        ),
        (json!({"billings": payables(&[&pending]), "transaction_ids": [forecast]}), "transaction_ids[0]", "pending"),
        (
            json!({"billings": payables(&[&pending]), "transaction_ids": [ACME_RENT_SETTLEMENT]}),
            "transaction_ids[0]",
            "linked",
        ),
        (
            json!({"billings": payables(&[&pending]), "transaction_ids": [beta_debit]}),
            "transaction_ids[0]",
            "not_found",
        ),
        (
            json!({"billings": payables(&[&pending]), "transaction_ids": [debit, debit]}),
            "transaction_ids[1]",
            "duplicate",
        ),
        (json!({"billings": payables(&[&pending]), "transaction_ids": ["x"]}), "transaction_ids[0]", "invalid_uuid"),
        (
            json!({"billings": [{"kind": "invoice", "id": pending}], "transaction_ids": [debit]}),
            "billings[0].kind",
            "invalid_value",
        ),
    ];
    for (body, field, why) in cases {
        let reply = post(&h, body.clone()).await;
        assert_eq!(reason(&reply), (422, field.to_string(), why.to_string()), "{body}");
    }
    // A transfer leg pays no bill.
    let transfer = send(&h, Method::POST, "/v1/transfers", &h.api_token(DEMO_OWNER), Some(json!({"from_account_id": ACME_CHECKING_ACCOUNT, "to_account_id": ACME_CASH_ACCOUNT, "amount": "100.00", "occurred_at": "2026-11-10", "description": "Troco"}))).await;
    let leg = transfer.json()["from_transaction_id"].as_str().unwrap().to_string();
    let reply = post(&h, json!({"billings": payables(&[&pending]), "transaction_ids": [leg]})).await;
    assert_eq!(reason(&reply), (422, "transaction_ids[0]".into(), "transfer_leg".into()));
    // A closed period refuses it.
    crate::billings::lock(&h, ACME_COMPANY, "2026-11-30").await;
    let reply = post(&h, json!({"billings": payables(&[&pending]), "transaction_ids": [debit]})).await;
    assert_eq!(reason(&reply).2, "period_closed");
    assert_eq!(count(&h, "SELECT COUNT(*) FROM reconciliations").await, 0);
    assert_eq!(get(&h, &format!("/v1/payables/{pending}")).await["status"], "pending");
}

#[tokio::test]
async fn an_imported_group_is_read_only_and_a_key_replays_the_create() {
    let h = Harness::with_demo().await;
    let pending = bill(&h, "payable", "pending", 10_000, "2026-11-10", None).await;
    let debit = movement(&h, "debit", 10_000, "2026-11-10", ACME_CHECKING_ACCOUNT, false).await;
    let body = json!({"billings": payables(&[&pending]), "transaction_ids": [debit]});
    let keyed = |body: Value| {
        rest(Method::POST, "/v1/reconciliations", &h.api_token(DEMO_OWNER), Some(body))
            .header("x-idempotency-key", "conc-1")
    };
    let first = h.send(keyed(body.clone()).build()).await;
    assert_eq!(first.status, 201);
    let replay = h.send(keyed(body.clone()).build()).await;
    assert_eq!((replay.status.as_u16(), replay.header("x-idempotency-replayed")), (201, Some("true")));
    assert_eq!(replay.json(), first.json());
    assert_eq!(count(&h, "SELECT COUNT(*) FROM reconciliations").await, 1);
    let id = first.json()["id"].as_str().unwrap().to_string();
    exec(&h, "UPDATE reconciliations SET source = 'fintera' WHERE id = $1", &[&id]).await;
    let reply = send(&h, Method::DELETE, &format!("/v1/reconciliations/{id}"), &h.api_token(DEMO_OWNER), None).await;
    assert_eq!(reason(&reply), (422, "id".into(), "read_only".into()));
    assert_eq!(get(&h, &format!("/v1/payables/{pending}")).await["status"], "paid");
    // A viewer reads it and cannot delete it; a token without the scope cannot read it.
    let path = format!("/v1/reconciliations/{id}");
    assert_eq!(send(&h, Method::GET, &path, &h.api_token(DEMO_VIEWER), None).await.status, 200);
    assert_eq!(send(&h, Method::DELETE, &path, &h.api_token(DEMO_VIEWER), None).await.status, 403);
    let other = h.token_with(DEMO_OWNER, Some("finance.payables"), |c| {
        c.aud = kobana_finance_mcp::auth::jwt::Audience::One(format!("{PUBLIC_URL}/v1"))
    });
    let refused = send(&h, Method::GET, &path, &other, None).await;
    assert_eq!(refused.json()["error"]["details"]["required"], "finance.reconciliations");
}

/// A fault while the second bill is settled (a trigger refuses its update) rolls the
/// whole group back: the first bill is still pending, no group or member exists.
#[tokio::test]
async fn a_fault_between_members_leaves_nothing_half_settled() {
    let h = Harness::with_demo().await;
    let a = bill(&h, "payable", "pending", 10_000, "2026-11-10", None).await;
    let b = bill(&h, "payable", "pending", 10_000, "2026-11-10", None).await;
    let debit = movement(&h, "debit", 20_000, "2026-11-11", ACME_CHECKING_ACCOUNT, false).await;
    let fault = match h.state.db.backend {
        kobana_finance_mcp::storage::Backend::Sqlite => vec![format!(
            "CREATE TRIGGER refuse_second BEFORE UPDATE OF status ON billings WHEN NEW.id = '{b}'
             BEGIN SELECT RAISE(ABORT, 'injected fault'); END"
        )],
        kobana_finance_mcp::storage::Backend::Postgres => vec![
            format!(
                "CREATE FUNCTION refuse_second() RETURNS trigger AS $$ BEGIN
                   IF NEW.id = '{b}' AND NEW.status <> OLD.status THEN RAISE EXCEPTION 'injected fault'; END IF;
                   RETURN NEW; END $$ LANGUAGE plpgsql"
            ),
            "CREATE TRIGGER refuse_second BEFORE UPDATE ON billings FOR EACH ROW EXECUTE FUNCTION refuse_second()"
                .into(),
        ],
    };
    for statement in fault {
        h.state.db.execute_script(&statement).await.unwrap();
    }
    let reply = post(&h, json!({"billings": payables(&[&a, &b]), "transaction_ids": [debit]})).await;
    assert!(reply.status.is_server_error(), "{}", String::from_utf8_lossy(&reply.bytes));
    assert_eq!(get(&h, &format!("/v1/payables/{a}")).await["status"], "pending");
    assert_eq!(count(&h, "SELECT COUNT(*) FROM reconciliations").await, 0);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM reconciliation_members").await, 0);
}

async fn suggest(h: &Harness, query: &str) -> Value {
    get(h, &format!("/v1/reconciliations/suggestions?{query}")).await
}

/// The transactions of a suggestions answer that found a match.
fn with_matches(answer: &Value) -> Vec<Value> {
    let data = answer["data"].as_array().unwrap();
    data.iter().filter(|s| !s["matches"].as_array().unwrap().is_empty()).cloned().collect()
}

/// The planted matches are found and ranked with their reasons; the decoys — another
/// amount, due too far, the other polarity, cancelled, a forecast — are not; the demo's
/// own ledger suggests nothing.
#[tokio::test]
async fn suggestions_find_the_planted_matches_and_no_false_ones() {
    let h = Harness::with_demo().await;
    let range = format!("account_id={ACME_CHECKING_ACCOUNT}&from=2026-10-01&to=2026-12-31");
    assert_eq!(with_matches(&suggest(&h, &range).await), Vec::<Value>::new(), "the demo holds no unreconciled pair");
    // A debit of 321.00 on 10 October: two bills of that amount, one of them the same
    // person's and naming its document in the statement line.
    let debit = movement(&h, "debit", 32_100, "2026-10-10", ACME_CHECKING_ACCOUNT, false).await;
    exec(
        &h,
        "UPDATE financial_transactions SET person_id = $1, bank_description = 'PAGTO BOLETO NF 4471' WHERE id = $2",
        &[ACME_LANDLORD, &debit],
    )
    .await;
    let best = bill(&h, "payable", "pending", 32_100, "2026-10-12", None).await;
    exec(&h, "UPDATE billings SET document_number = '4471' WHERE id = $1", &[&best]).await;
    let plain = bill(&h, "payable", "pending", 32_100, "2026-10-10", None).await;
    exec(&h, "UPDATE billings SET person_id = NULL WHERE id = $1", &[&plain]).await;
    // Decoys.
    bill(&h, "payable", "pending", 32_000, "2026-10-10", None).await;
    bill(&h, "payable", "pending", 32_100, "2026-10-25", None).await;
    bill(&h, "receivable", "pending", 32_100, "2026-10-10", None).await;
    bill(&h, "payable", "cancelled", 32_100, "2026-10-10", None).await;
    movement(&h, "debit", 32_100, "2026-10-11", ACME_CHECKING_ACCOUNT, true).await;
    let answer = suggest(&h, &range).await;
    let data = with_matches(&answer);
    assert_eq!(data.len(), 1, "{answer}");
    assert_eq!(
        (data[0]["transaction_id"].as_str(), data[0]["amount"].as_str()),
        (Some(debit.as_str()), Some("321.00"))
    );
    let matches = data[0]["matches"].as_array().unwrap();
    let found: Vec<(&str, u64)> =
        matches.iter().map(|m| (m["billing_id"].as_str().unwrap(), m["score"].as_u64().unwrap())).collect();
    // 50 + 24 (two days apart) + 15 + 15, then 50 + 30 (the same day).
    assert_eq!(found, [(best.as_str(), 100), (plain.as_str(), 80)], "{answer}");
    assert_eq!(
        matches[0]["reasons"],
        json!(["same_amount", "due_date_close", "same_person", "document_in_transaction"])
    );
    // Reconciled, the debit is suggested no more.
    let made = post(&h, json!({"billings": payables(&[&best]), "transaction_ids": [debit]})).await;
    assert_eq!(made.status, 201);
    assert_eq!(with_matches(&suggest(&h, &range).await), Vec::<Value>::new());
    // The tool answers the same, and refuses what the route refuses.
    let token = h.token(DEMO_OWNER);
    let arguments = json!({"account_id": ACME_CHECKING_ACCOUNT, "from": "2026-10-01", "to": "2026-12-31"});
    let tool = h.send(call("finance_reconciliations_suggest", arguments).bearer(&token).build()).await.result();
    assert_eq!(tool["structuredContent"], suggest(&h, &range).await);
    let bad = json!({"account_id": ACME_CHECKING_ACCOUNT, "from": "2026-01-01", "to": "2027-06-01"});
    let tool = h.send(call("finance_reconciliations_suggest", bad).bearer(&token).build()).await.result();
    assert_eq!(tool_error(&tool)["details"]["field"], "to", "{tool}");
    let elsewhere = format!("/v1/reconciliations/suggestions?account_id={BETA_ACCOUNT}&from=2026-10-01&to=2026-10-31");
    let reply = send(&h, Method::GET, &elsewhere, &h.api_token(DEMO_OWNER), None).await;
    let body = reply.json();
    assert_eq!(
        (
            reply.status.as_u16(),
            body["error"]["details"]["field"].as_str(),
            body["error"]["details"]["reason"].as_str()
        ),
        (422, Some("account_id"), Some("invalid_reference")),
        "{body}"
    );
}

/// Every transaction looked at is answered, with its matches or `matches: []` ("checked,
/// nothing matches"), and the answer counts them; the tool answers the same.
#[tokio::test]
async fn suggestions_answer_every_transaction_looked_at_with_its_matches_or_none() {
    let h = Harness::with_demo().await;
    let range = format!("account_id={ACME_CHECKING_ACCOUNT}&from=2026-10-01&to=2026-10-31");
    let before = suggest(&h, &range).await;
    let matching = movement(&h, "debit", 32_100, "2026-10-10", ACME_CHECKING_ACCOUNT, false).await;
    bill(&h, "payable", "pending", 32_100, "2026-10-12", None).await;
    let lonely = movement(&h, "debit", 77_700, "2026-10-15", ACME_CHECKING_ACCOUNT, false).await;
    let answer = suggest(&h, &range).await;
    let data = answer["data"].as_array().unwrap();
    let row = |id: &str| data.iter().find(|s| s["transaction_id"] == id).cloned();
    assert_eq!(row(&matching).unwrap()["matches"].as_array().unwrap().len(), 1, "{answer}");
    assert_eq!(row(&lonely).expect("a transaction without a match is answered")["matches"], json!([]), "{answer}");
    let examined = answer["examined"].as_i64().unwrap();
    assert_eq!(examined, data.len() as i64, "{answer}");
    assert_eq!(examined, before["examined"].as_i64().unwrap() + 2, "{answer}");
    assert_eq!(answer["matched"], json!(with_matches(&answer).len()), "{answer}");
    assert_eq!(answer["matched"].as_i64().unwrap() + answer["unmatched"].as_i64().unwrap(), examined, "{answer}");
    assert_eq!(answer["more"], false);
    let token = h.token(DEMO_OWNER);
    let arguments = json!({"account_id": ACME_CHECKING_ACCOUNT, "from": "2026-10-01", "to": "2026-10-31"});
    let tool = h.send(call("finance_reconciliations_suggest", arguments).bearer(&token).build()).await.result();
    assert_eq!(tool["structuredContent"], answer);
}

/// Two groups racing for one transaction: one is made, the other refused (409 when the
/// unique index stops it, 422 when its check already sees the first), never both.
#[tokio::test]
async fn two_groups_racing_for_a_transaction_make_one() {
    let h = Harness::with_demo().await;
    let debit = movement(&h, "debit", 10_000, "2026-11-10", ACME_CHECKING_ACCOUNT, false).await;
    let (a, b) = (
        bill(&h, "payable", "pending", 10_000, "2026-11-10", None).await,
        bill(&h, "payable", "pending", 10_000, "2026-11-11", None).await,
    );
    let token = h.api_token(DEMO_OWNER);
    let request = |id: &str| {
        rest(
            Method::POST,
            "/v1/reconciliations",
            &token,
            Some(json!({"billings": payables(&[id]), "transaction_ids": [debit]})),
        )
        .build()
    };
    let (first, second) = tokio::join!(h.send(request(&a)), h.send(request(&b)));
    let mut statuses = [first.status.as_u16(), second.status.as_u16()];
    statuses.sort();
    assert!(statuses == [201, 409] || statuses == [201, 422], "{statuses:?}");
    assert_eq!(count(&h, "SELECT COUNT(*) FROM reconciliations").await, 1);
    let paid = format!("SELECT COUNT(*) FROM billings WHERE status = 'paid' AND id IN ('{a}', '{b}')");
    assert_eq!(count(&h, &paid).await, 1);
}

/// The suggestions read the ledger and the bills in one statement, after the account's
/// check: the candidates and their bills come together, whatever the backend.
#[tokio::test(flavor = "current_thread")]
async fn suggestions_read_the_movements_and_the_bills_in_one_statement() {
    let h = Harness::with_demo().await;
    let debit = movement(&h, "debit", 32_100, "2026-10-10", ACME_CHECKING_ACCOUNT, false).await;
    let due = bill(&h, "payable", "pending", 32_100, "2026-10-12", None).await;
    let range = format!("account_id={ACME_CHECKING_ACCOUNT}&from=2026-10-01&to=2026-12-31");
    suggest(&h, &range).await;
    let mut answer = Value::Null;
    let ran = crate::riding_count::statements_of(async { answer = suggest(&h, &range).await }).await;
    let reads: Vec<&String> =
        ran.iter().filter(|s| s.contains("financial_transactions") || s.contains("billings")).collect();
    assert_eq!(reads.len(), 1, "{ran:#?}");
    assert!(reads[0].contains("FROM financial_transactions") && reads[0].contains("FROM billings"), "{ran:#?}");
    let found = with_matches(&answer);
    assert_eq!(found.len(), 1, "{answer}");
    assert_eq!(
        (found[0]["transaction_id"].as_str(), found[0]["matches"][0]["billing_id"].as_str()),
        (Some(debit.as_str()), Some(due.as_str()))
    );
}
