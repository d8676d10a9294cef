//! Races that must not lose or double money, through the HTTP `/v1` routes, on the real
//! database (PostgreSQL in CI, with several pooled connections; SQLite serialises them):
//! 50 concurrent settles of one payable and 50 concurrent creates with one idempotency
//! key.

use crate::common;

use common::*;
use http::Method;
use serde_json::{json, Value};

fn post(path: &str, token: &str, body: Value) -> Mcp {
    Mcp::raw(body.to_string()).method(Method::POST).path(path).bearer(token).header("content-type", "application/json")
}

async fn scalar(h: &Harness, sql: &str, bind: &str) -> i64 {
    sql::query(sql.to_string()).bind(bind).fetch_one(&h.state.db).await.unwrap().try_get(0).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_concurrent_settles_of_one_payable_make_one_movement() {
    let h = Harness::with_demo().await;
    let token = h.api_token(DEMO_OWNER);
    let path = format!("/v1/payables/{ACME_RENT_DECEMBER}/settle");
    let body = json!({"payment_date": "2026-12-10", "financial_account_id": ACME_CHECKING_ACCOUNT});
    let replies = all_at_once(&h, (0..50).map(|_| post(&path, &token, body.clone()).build()).collect()).await;
    let ok = replies.iter().filter(|r| r.status == 200).count();
    let refused = replies
        .iter()
        .filter(|r| r.status == 422 && r.json()["error"]["details"]["reason"] == "invalid_transition")
        .count();
    let busy = replies.iter().filter(|r| r.status == 503).count();
    eprintln!("settles: {ok} succeeded, {refused} refused, {busy} told to retry");
    assert_eq!(ok, 1, "exactly one settle succeeds");
    assert_eq!(ok + refused + busy, 50, "the others are refused (or told to retry), never a 500");
    assert_eq!(
        scalar(
            &h,
            "SELECT COUNT(*) FROM financial_transactions WHERE billing_id = $1 AND auto_created = 1",
            ACME_RENT_DECEMBER
        )
        .await,
        1,
        "exactly one ledger transaction"
    );
    assert_eq!(
        scalar(&h, "SELECT COUNT(*) FROM billings WHERE id = $1 AND status = 'paid'", ACME_RENT_DECEMBER).await,
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_concurrent_creates_with_one_key_make_one_record() {
    let h = Harness::with_demo().await;
    let token = h.api_token(DEMO_OWNER);
    let body = json!({"company_id": ACME_COMPANY, "description": "Frete", "amount": "250.00",
                      "due_date": "2026-12-20", "person_name": "Transportadora Rápida"});
    let replies = all_at_once(
        &h,
        (0..50)
            .map(|_| post("/v1/payables", &token, body.clone()).header("x-idempotency-key", "one-key").build())
            .collect(),
    )
    .await;
    let created: std::collections::HashSet<String> =
        replies.iter().filter(|r| r.status == 201).map(|r| r.json()["id"].as_str().unwrap().to_string()).collect();
    assert_eq!(created.len(), 1, "every success names the same record");
    assert!(replies.iter().all(|r| r.status == 201 || r.status == 409 || r.status == 503), "never a 500");
    assert_eq!(scalar(&h, "SELECT COUNT(*) FROM billings WHERE description = $1", "Frete").await, 1, "one record");
    assert_eq!(
        scalar(&h, "SELECT COUNT(*) FROM people WHERE name = $1", "Transportadora Rápida").await,
        1,
        "one person found-or-created"
    );
}

/// Sends every request at once, each on its own task, and collects the replies.
async fn all_at_once(h: &Harness, requests: Vec<http::Request<axum::body::Body>>) -> Vec<Reply> {
    use tower::ServiceExt;
    let tasks: Vec<_> = requests
        .into_iter()
        .map(|request| {
            let app = h.app.clone();
            tokio::spawn(async move { Reply::from(app.oneshot(request).await.expect("infallible")).await })
        })
        .collect();
    let mut replies = Vec::with_capacity(tasks.len());
    for task in tasks {
        replies.push(task.await.expect("request task"));
    }
    replies
}

/// On a pool of one PostgreSQL connection (a Lambda's may be that small) both doors
/// serve reads, writes and a read after a write, one request after another and eight at
/// once: a read goes on with the connection its rate-limit count took, and no request
/// holds it while it asks the pool for another (it would wait on itself and answer 503).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_pooled_connection_serves_both_doors() {
    let h = Harness::with_demo_and(|c| c.db_max_connections = 1).await;
    let token = h.api_token(DEMO_OWNER);
    let mcp = h.token(DEMO_OWNER);
    let created = post(
        "/v1/payables",
        &token,
        json!({"company_id": ACME_COMPANY, "description": "Pool check", "amount": "12.34", "due_date": "2026-12-20", "person_name": "Pool Ltda"}),
    );
    let requests = |round: &str| {
        vec![
            rest(Method::GET, "/v1/payables?limit=5", &token, None).build(),
            rest(Method::GET, &format!("/v1/payables/{ACME_RENT_DECEMBER}"), &token, None).build(),
            rest(Method::GET, "/v1/payables/aggregates", &token, None).build(),
            call("finance_payables_list", json!({"limit": 5})).bearer(&mcp).build(),
            call("finance_payables_get", json!({"id": ACME_RENT_DECEMBER})).bearer(&mcp).build(),
            Mcp::modern("resources/read", json!({"uri": format!("kobana://finance/payables/{ACME_RENT_DECEMBER}")}))
                .bearer(&mcp)
                .build(),
            Mcp::modern("tools/list", json!({})).bearer(&mcp).build(),
            call("finance_categories_create", json!({"company_id": ACME_COMPANY, "name": round, "type": "debit"}))
                .bearer(&mcp)
                .build(),
        ]
    };
    let one_by_one = async {
        let mut replies = vec![h.send(created.build()).await];
        for request in requests("Pool, one by one") {
            replies.push(h.send(request).await);
        }
        replies
    };
    let replies = tokio::time::timeout(std::time::Duration::from_secs(20), one_by_one).await.expect("in time");
    assert_eq!(replies[0].status, 201, "{}", text(&replies[0]));
    for reply in &replies[1..] {
        assert_eq!(reply.status, 200, "{}", text(reply));
        assert!(!text(reply).contains("\"isError\":true"), "{}", text(reply));
    }
    let at_once = tokio::time::timeout(std::time::Duration::from_secs(20), all_at_once(&h, requests("Pool, at once")))
        .await
        .expect("in time");
    for reply in &at_once {
        assert_eq!(reply.status, 200, "{}", text(reply));
        assert!(!text(reply).contains("\"isError\":true"), "{}", text(reply));
    }
}
