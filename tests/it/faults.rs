//! Faults injected into PostgreSQL under a running server (PostgreSQL only; skipped
//! loudly on SQLite):
//!
//! * the connection of a settle is killed in the middle of its transaction (a trigger
//!   holds the ledger insert in `pg_sleep`, another connection terminates that
//!   backend): the answer is 503 + `Retry-After`, the payable is still pending, no
//!   ledger transaction exists, the balance is unchanged, and the same server then
//!   settles it exactly once;
//! * the database becomes unreachable between requests (a loopback TCP proxy in front
//!   of it is cut): both doors answer 503 + `Retry-After` (and `/health` 503), and once
//!   it is back the same server serves again;
//! * the server ends every connection of the pool between requests (as a restart or a
//!   failover does), right after they served: the next request of each kind, read or
//!   write, through either door, is served (its first statement finds its connection
//!   gone and is sent again on a checked one);
//! * the database refuses connections for a moment (a restart): a request sent then
//!   waits for it and is served;
//! * a transaction dropped without its commit frees the rows it locked at once, not when
//!   its connection is next used; a connection whose statement was cut short is drained
//!   (answer read, transaction rolled back) or, when that takes long, closed: never
//!   handed to the next caller busy.

use crate::common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::*;
use http::Method;
use kobana_finance_mcp::storage::Db;
use serde_json::{json, Value};
use tokio::net::{TcpSocket, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

async fn scalar(h: &Harness, sql: &str, bind: &str) -> i64 {
    sql::query(sql.to_string()).bind(bind).fetch_one(&h.state.db).await.unwrap().try_get(0).unwrap()
}

async fn balance(h: &Harness, token: &str) -> Value {
    let reply = h
        .send(rest(Method::GET, &format!("/v1/financial-accounts/{ACME_CHECKING_ACCOUNT}"), token, None).build())
        .await;
    assert_eq!(reply.status, 200);
    reply.json()["balance"].clone()
}

fn assert_unavailable_rest(reply: &Reply) {
    assert_eq!(reply.status, 503, "{}", String::from_utf8_lossy(&reply.bytes));
    assert_eq!(reply.json()["error"]["code"], "service_unavailable");
    assert!(reply.header("retry-after").is_some_and(|v| v.parse::<u64>().is_ok()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_settle_whose_connection_is_killed_loses_nothing_and_settles_once_afterwards() {
    if !postgres_only("the mid-settle connection kill") {
        return;
    }
    let h = Harness::with_demo().await;
    let token = h.api_token(DEMO_OWNER);
    let before = balance(&h, &token).await;
    h.state
        .db
        .execute_script(
            "CREATE FUNCTION kfin_test_hold_ledger() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN PERFORM pg_sleep(30); RETURN NEW; END $$;
         CREATE TRIGGER kfin_test_hold_ledger BEFORE INSERT ON financial_transactions
         FOR EACH ROW EXECUTE FUNCTION kfin_test_hold_ledger();",
        )
        .await
        .unwrap();

    let settle = || {
        rest(
            Method::POST,
            &format!("/v1/payables/{ACME_RENT_DECEMBER}/settle"),
            &token,
            Some(json!({"payment_date": "2026-12-10", "financial_account_id": ACME_CHECKING_ACCOUNT})),
        )
        .build()
    };
    let app = h.app.clone();
    let request = settle();
    let pending =
        tokio::spawn(async move { Reply::from(tower::ServiceExt::oneshot(app, request).await.unwrap()).await });

    // The settling backend, asleep in the trigger with its transaction open: kill it.
    let deadline = Instant::now() + Duration::from_secs(20);
    let pid: i32 = loop {
        let row = sql::query(
            "SELECT pid FROM pg_stat_activity
              WHERE datname = current_database() AND pid <> pg_backend_pid()
                AND wait_event = 'PgSleep' AND query LIKE 'INSERT INTO financial_transactions%'",
        )
        .fetch_optional(&h.state.db)
        .await
        .unwrap();
        if let Some(row) = row {
            break row.try_get(0).unwrap();
        }
        assert!(Instant::now() < deadline, "the settle did not reach the ledger insert");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let killed: bool = sql::query("SELECT pg_terminate_backend($1)")
        .bind(pid)
        .fetch_one(&h.state.db)
        .await
        .unwrap()
        .try_get(0)
        .unwrap();
    assert!(killed);

    let reply =
        tokio::time::timeout(Duration::from_secs(20), pending).await.expect("an answer in time").expect("no panic");
    assert_unavailable_rest(&reply);

    // Nothing of the settle survived.
    h.state.db.execute_script("DROP TRIGGER kfin_test_hold_ledger ON financial_transactions").await.unwrap();
    assert_eq!(
        scalar(
            &h,
            "SELECT COUNT(*) FROM billings WHERE id = $1 AND status = 'pending' AND payment_date IS NULL",
            ACME_RENT_DECEMBER
        )
        .await,
        1
    );
    assert_eq!(
        scalar(&h, "SELECT COUNT(*) FROM financial_transactions WHERE billing_id = $1", ACME_RENT_DECEMBER).await,
        0
    );
    assert_eq!(
        scalar(
            &h,
            "SELECT COUNT(*) FROM audit_events WHERE target_id = $1 AND action = 'payables.settle'",
            ACME_RENT_DECEMBER
        )
        .await,
        0
    );
    assert_eq!(balance(&h, &token).await, before, "the balance is unchanged");

    // The same server settles it, once.
    let reply = h.send(settle()).await;
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.bytes));
    assert_eq!(reply.json()["status"], "paid");
    let again = h.send(settle()).await;
    assert_eq!(again.status, 422);
    assert_eq!(again.json()["error"]["details"]["reason"], "invalid_transition");
    assert_eq!(
        scalar(&h, "SELECT COUNT(*) FROM financial_transactions WHERE billing_id = $1", ACME_RENT_DECEMBER).await,
        1,
        "exactly one ledger transaction"
    );
    assert_ne!(balance(&h, &token).await, before, "the settlement moved the balance");
}

/// A loopback TCP proxy in front of PostgreSQL that a test can cut and restore.
struct Proxy {
    addr: SocketAddr,
    upstream: String,
    accepting: Option<JoinHandle<()>>,
}

impl Proxy {
    async fn start(upstream: String) -> Proxy {
        let mut proxy = Proxy { addr: "127.0.0.1:0".parse().unwrap(), upstream, accepting: None };
        proxy.listen().await;
        proxy
    }

    async fn listen(&mut self) {
        let socket = TcpSocket::new_v4().unwrap();
        socket.set_reuseaddr(true).unwrap();
        socket.bind(self.addr).unwrap();
        let listener = socket.listen(64).unwrap();
        self.addr = listener.local_addr().unwrap();
        let upstream = self.upstream.clone();
        self.accepting = Some(tokio::spawn(async move {
            // Dropping this task drops the set, which aborts every forwarded connection.
            let mut connections = JoinSet::new();
            while let Ok((mut client, _)) = listener.accept().await {
                let upstream = upstream.clone();
                connections.spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
            }
        }));
    }

    /// Closes the listener and every open connection: the database is unreachable.
    async fn cut(&mut self) {
        if let Some(task) = self.accepting.take() {
            task.abort();
            let _ = task.await;
        }
    }

    /// Listens again on the same address.
    async fn restore(&mut self) {
        self.listen().await;
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(task) = self.accepting.take() {
            task.abort();
        }
    }
}

/// A request of one kind, built anew for each send, and what it is called in a failure.
type Kind<'a> = (&'a str, Box<dyn Fn() -> http::Request<axum::body::Body> + 'a>);

/// Ends every other connection to the test database (the server's pool), and waits
/// until they are gone.
async fn end_every_connection(admin: &Db) {
    end_connections(admin, "datname = current_database() AND backend_type = 'client backend'").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_the_server_ended_are_replaced_without_the_caller_seeing_it() {
    if !postgres_only("the ended-connections test") {
        return;
    }
    let h = Harness::with_demo().await;
    let admin = Db::connect(&h.db.url, 1).await.unwrap();
    let (mcp, api) = (h.token(DEMO_OWNER), h.api_token(DEMO_OWNER));
    let requests: Vec<Kind> = vec![
        ("REST list", Box::new(|| rest(Method::GET, "/v1/payables?limit=5", &api, None).build())),
        (
            "REST record",
            Box::new(|| rest(Method::GET, &format!("/v1/payables/{ACME_RENT_DECEMBER}"), &api, None).build()),
        ),
        (
            "REST create",
            Box::new(|| {
                let body = json!({"company_id": ACME_COMPANY, "description": "After the failover", "amount": "1.00",
                                  "due_date": "2026-12-20", "person_name": "Failover Ltda"});
                rest(Method::POST, "/v1/payables", &api, Some(body)).build()
            }),
        ),
        ("tools/call read", Box::new(|| call("finance_payables_list", json!({"limit": 5})).bearer(&mcp).build())),
        (
            "tools/call write",
            Box::new(|| {
                let arguments = json!({"company_id": ACME_COMPANY, "name": "Failover", "type": "debit"});
                call("finance_categories_create", arguments).bearer(&mcp).build()
            }),
        ),
        ("server/discover", Box::new(|| Mcp::modern("server/discover", json!({})).bearer(&mcp).build())),
    ];
    for (what, request) in &requests {
        // Past the previous round's loss, the pool checks only connections idle for a
        // second; two requests at once make it hold two that have just served, which it
        // then hands out unchecked.
        tokio::time::sleep(kobana_finance_mcp::storage::pool::CHECK_ALL_AFTER_LOSS).await;
        let (a, b) = tokio::join!(h.send(request()), h.send(request()));
        assert!(a.status.is_success() && b.status.is_success(), "{what} before: {} {}", text(&a), text(&b));
        end_every_connection(&admin).await;
        let reply = h.send(request()).await;
        assert!(reply.status.is_success(), "{what} after the server ended the connections: {}", text(&reply));
        assert!(!text(&reply).contains("\"isError\":true"), "{what}: {}", text(&reply));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_dropped_uncommitted_frees_its_rows_at_once() {
    if !postgres_only("the dropped-transaction test") {
        return;
    }
    let h = Harness::with_demo().await;
    let other = Db::connect(&h.db.url, 1).await.unwrap();
    let description = "SELECT description FROM billings WHERE id = $1";
    let before: String = sql::query(description).bind(ACME_RENT_DECEMBER).scalar(&other).await.unwrap();
    {
        let mut tx = h.state.db.begin().await.unwrap();
        let changed = sql::query("UPDATE billings SET description = 'never committed' WHERE id = $1")
            .bind(ACME_RENT_DECEMBER)
            .execute(&mut tx)
            .await
            .unwrap();
        assert_eq!(changed, 1);
    }
    // The pool sits idle from here on: only the rollback sent when the transaction was
    // dropped frees the row.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let lock = "SELECT description FROM billings WHERE id = $1 FOR UPDATE NOWAIT";
        match sql::query(lock).bind(ACME_RENT_DECEMBER).scalar::<String>(&other).await {
            Ok(now) => {
                assert_eq!(now, before, "the dropped transaction's change was not rolled back");
                break;
            }
            Err(e) => assert!(Instant::now() < deadline, "the row is still locked: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let open = "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'";
    assert_eq!(sql::query(open).scalar::<i64>(&other).await.unwrap(), 0);
    // Its connection serves the next caller.
    assert_eq!(sql::query(description).bind(ACME_RENT_DECEMBER).scalar::<String>(&h.state.db).await.unwrap(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_whose_statement_was_cut_short_is_drained_or_closed_never_handed_over_busy() {
    if !postgres_only("the cut-short statement test") {
        return;
    }
    let h = Harness::new().await;
    let db = Db::connect(&h.db.url, 1).await.unwrap();
    db.execute_script(
        "CREATE TABLE kfin_test_drain (id int PRIMARY KEY, v text); INSERT INTO kfin_test_drain VALUES (1, 'before')",
    )
    .await
    .unwrap();
    let pid = "SELECT pg_backend_pid()::bigint";
    let first: i64 = sql::query(pid).scalar(&db).await.unwrap();
    assert_eq!(sql::query(pid).scalar::<i64>(&db).await.unwrap(), first, "a settled connection is reused");

    // A short statement in a transaction, cut short: its connection is drained (the
    // answer read, the transaction rolled back) and serves again.
    let mut tx = db.begin().await.unwrap();
    sql::query("UPDATE kfin_test_drain SET v = 'never committed' WHERE id = 1").execute(&mut tx).await.unwrap();
    let short = sql::query("SELECT pg_sleep(0.3)::text").scalar::<String>(&mut tx);
    assert!(tokio::time::timeout(Duration::from_millis(50), short).await.is_err(), "the statement was cut short");
    drop(tx);
    let mut conn = db.acquire().await.unwrap();
    assert_eq!(sql::query(pid).scalar::<i64>(&mut conn).await.unwrap(), first, "a drained connection serves again");
    let value = "SELECT v FROM kfin_test_drain WHERE id = 1 FOR UPDATE NOWAIT";
    assert_eq!(sql::query(value).scalar::<String>(&mut conn).await.unwrap(), "before", "rolled back, lock freed");

    // A long one: past `DRAIN_WITHIN` its connection is closed, and the next caller
    // (the pool holds one) gets a new one, not the one whose answer is still to come.
    let long = sql::query("SELECT pg_sleep(30)::text").scalar::<String>(&mut conn);
    assert!(tokio::time::timeout(Duration::from_millis(200), long).await.is_err(), "the statement was cut short");
    drop(conn);
    let mut conn = db.acquire().await.unwrap();
    let next: i64 = sql::query(pid).scalar(&mut conn).await.unwrap();
    assert_ne!(next, first, "the connection whose statement was cut short was handed out again");
    assert_eq!(sql::query("SELECT (1 + 1)::bigint").scalar::<i64>(&mut conn).await.unwrap(), 2);
    drop(conn);
    end_connections(&db, &format!("pid = {first}")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_that_refuses_connections_for_a_moment_is_waited_out() {
    if !postgres_only("the brief-refusal test") {
        return;
    }
    let (h, mut proxy) = behind_proxy().await;
    let token = h.api_token(DEMO_OWNER);
    assert_eq!(h.send(rest(Method::GET, "/v1/workspaces", &token, None).build()).await.status, 200);

    // As a restart looks: connections refused for a few hundred milliseconds. The
    // request sent meanwhile waits for the database rather than answer 503.
    proxy.cut().await;
    let (reply, ()) = tokio::join!(h.send(rest(Method::GET, "/v1/workspaces", &token, None).build()), async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        proxy.restore().await;
    });
    assert_eq!(reply.status, 200, "{}", text(&reply));
}

/// A server whose database is reached through a [`Proxy`], and the proxy.
async fn behind_proxy() -> (Harness, Proxy) {
    let upstream = host_port(&postgres_admin_url());
    let proxy = Proxy::start(upstream.clone()).await;
    let through_proxy = proxy.addr.to_string();
    let h = Harness::with(|c| c.database_url = c.database_url.replacen(&upstream, &through_proxy, 1)).await;
    assert!(h.state.config.database_url.contains(&through_proxy));
    (h, proxy)
}

/// `host:port` of a `postgres://user@host:port/db` URL.
fn host_port(url: &str) -> String {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let rest = rest.rsplit_once('@').map(|(_, r)| r).unwrap_or(rest);
    rest.split(['/', '?']).next().unwrap_or(rest).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_database_is_503_on_both_doors_and_the_server_recovers() {
    if !postgres_only("the unreachable-database test") {
        return;
    }
    let (h, mut proxy) = behind_proxy().await;
    let (mcp_token, api_token) = (h.token(DEMO_OWNER), h.api_token(DEMO_OWNER));
    let mcp = || Mcp::modern("tools/list", json!({})).bearer(&mcp_token).build();
    let rest_call = || rest(Method::GET, "/v1/workspaces", &api_token, None).build();
    assert_eq!(h.send(mcp()).await.status, 200);
    assert_eq!(h.send(rest_call()).await.status, 200);

    proxy.cut().await;
    let reply = h.send(mcp()).await;
    assert_eq!(reply.status, 503, "{}", String::from_utf8_lossy(&reply.bytes));
    assert_eq!(reply.rpc_code(), Some(-32603));
    let retry = reply.header("retry-after").expect("Retry-After").to_string();
    assert_eq!(reply.json()["error"]["data"]["retryAfterSeconds"].to_string(), retry);
    assert_unavailable_rest(&h.send(rest_call()).await);
    let health = || Mcp::raw("").method(Method::GET).path("/health").build();
    let reply = h.send(health()).await;
    assert_eq!(reply.status, 503, "/health says the database does not answer: {}", text(&reply));
    assert_eq!(reply.json()["database"], "unavailable");

    proxy.restore().await;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (a, b) = (h.send(mcp()).await.status, h.send(rest_call()).await.status);
        let c = h.send(health()).await.status;
        if (a.as_u16(), b.as_u16(), c.as_u16()) == (200, 200, 200) {
            break;
        }
        assert!(Instant::now() < deadline, "the server serves again once the database is back ({a}, {b}, {c})");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
