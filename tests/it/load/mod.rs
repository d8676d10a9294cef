//! Load and integrity: concurrent clients over real TCP (loopback only) send a mix of
//! reads (REST lists, gets and aggregates; MCP `tools/list` and read tools) and writes
//! (payable creates with idempotency keys — some sent twice —, settles racing on
//! shared payables, transfers) for a bounded time; then the database is checked:
//! no 5xx, every acknowledged create and transfer present exactly once, every settled
//! payable with exactly one ledger transaction, every account's balance equal to its
//! opening balance plus its transactions and to what the acknowledged writes moved.
//!
//! * `short_load_keeps_every_write` runs in `make test` (8 clients × 5 s, against the
//!   suite's database: SQLite, and PostgreSQL when the suite runs there).
//! * `external_load` (ignored; `make load`, scripts/load.sh) drives a server started
//!   elsewhere: `KFIN_LOAD_ADDR`, `KFIN_LOAD_DATABASE_URL`, `KFIN_JWT_SECRET`,
//!   `KFIN_LOAD_PUBLIC_URL`, `LOAD_CLIENTS` (64), `LOAD_SECONDS` (60).
//!
//! **Outages under load** (see `outage`): the same mix while faults are inflicted on a
//! schedule — PostgreSQL restarted (`pg_ctl restart -m fast`) and, separately, every
//! server connection terminated (`pg_terminate_backend`) twice, on a throw-away cluster
//! of the test's own (`common::pg_cluster`) behind the real binary's `serve`; or the
//! key secret store (moto) stopped and brought back. Then, besides the checks above:
//! every 5xx is a 503 with `Retry-After` inside an outage, service is back within
//! `RECOVERY_BUDGET` of the dependency's return without restarting the server, and the
//! server never panicked. A write answered 503 may or may not have committed: creates
//! and transfers are sent again with their idempotency key after the run (the replay
//! tells), and a settle answered 503 counts as done when the payable is paid — so the
//! balance checks stay exact.
//!
//! * `short_outage_under_load` runs in `make test` on PostgreSQL (32 clients, ~16 s:
//!   one restart, two mass terminations) and `key_store_outage_under_load` on both
//!   databases (moto stopped under 16 clients, then back);
//! * `external_outage` (ignored; `make load`) does the restart and the terminations at
//!   `LOAD_CLIENTS` (64) for `LOAD_OUTAGE_SECONDS` (60) against the release server.

use crate::common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use kobana_finance_mcp::auth::jwt::{self, Audience, Claims};
use kobana_finance_mcp::auth::keys::Keys;
use kobana_finance_mcp::storage::Db;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod banking;
mod client;
use client::client;

// ---------------------------------------------------------------------------------------
// A minimal HTTP/1.1 client: one kept-alive connection per client.
// ---------------------------------------------------------------------------------------

struct Conn {
    addr: SocketAddr,
    stream: Option<TcpStream>,
    buf: Vec<u8>,
}

struct Answer {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

impl Conn {
    fn new(addr: SocketAddr) -> Conn {
        Conn { addr, stream: None, buf: Vec::new() }
    }

    /// One request; `Err` for a transport failure (refused, reset, timed out).
    async fn send(
        &mut self,
        method: &str,
        path: &str,
        token: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Result<Answer, String> {
        if self.stream.is_none() {
            let stream = TcpStream::connect(self.addr).await.map_err(|e| format!("connect: {e}"))?;
            stream.set_nodelay(true).map_err(|e| e.to_string())?;
            self.stream = Some(stream);
            self.buf.clear();
        }
        let mut request = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\nContent-Length: {}\r\n",
            body.len()
        );
        if !body.is_empty() {
            request.push_str("Content-Type: application/json\r\n");
        }
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(body);
        let result = tokio::time::timeout(Duration::from_secs(30), self.exchange(request.as_bytes()))
            .await
            .unwrap_or_else(|_| Err("timed out".into()));
        if result.as_ref().map_or(true, |a| a.head.to_ascii_lowercase().contains("connection: close")) {
            self.stream = None;
        }
        result
    }

    async fn exchange(&mut self, request: &[u8]) -> Result<Answer, String> {
        let stream = self.stream.as_mut().ok_or("no connection")?;
        stream.write_all(request).await.map_err(|e| format!("write: {e}"))?;
        let mut chunk = [0u8; 16 * 1024];
        loop {
            if let Some(end) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&self.buf[..end]).to_string();
                let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).ok_or("no status line")?;
                let length: usize = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase().strip_prefix("content-length:").and_then(|v| v.trim().parse().ok())
                    })
                    .unwrap_or(0);
                if self.buf.len() >= end + 4 + length {
                    let body = self.buf[end + 4..end + 4 + length].to_vec();
                    self.buf.drain(..end + 4 + length);
                    return Ok(Answer { status, head, body });
                }
            }
            let n = stream.read(&mut chunk).await.map_err(|e| format!("read: {e}"))?;
            if n == 0 {
                return Err("connection closed".into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

// ---------------------------------------------------------------------------------------
// The mix
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Kind {
    RestList,
    RestGet,
    RestAggregates,
    McpToolsList,
    McpToolsCall,
    CreatePayable,
    Settle,
    Transfer,
}

impl Kind {
    /// (kind, weight): reads 70 %, writes 30 %.
    const MIX: [(Kind, u32); 8] = [
        (Kind::RestList, 20),
        (Kind::RestGet, 15),
        (Kind::RestAggregates, 10),
        (Kind::McpToolsList, 10),
        (Kind::McpToolsCall, 15),
        (Kind::CreatePayable, 12),
        (Kind::Settle, 10),
        (Kind::Transfer, 8),
    ];

    fn name(self) -> &'static str {
        match self {
            Kind::RestList => "GET /v1 list",
            Kind::RestGet => "GET /v1 record",
            Kind::RestAggregates => "GET /v1 aggregates",
            Kind::McpToolsList => "MCP tools/list",
            Kind::McpToolsCall => "MCP tools/call (read)",
            Kind::CreatePayable => "POST /v1/payables",
            Kind::Settle => "POST /v1/payables/{id}/settle",
            Kind::Transfer => "POST /v1/transfers",
        }
    }
}

/// A small deterministic generator per client (no dependency needed).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// What the clients share: the payables created so far (settle targets) and what the
/// server acknowledged.
#[derive(Default)]
struct Ledger {
    pending: Vec<(String, i64)>,
    created: HashSet<String>,
    settled: HashMap<String, i64>,
    transfers: HashMap<String, (String, String, i64)>,
}

#[derive(Default)]
struct Tally {
    latencies: BTreeMap<Kind, Vec<u32>>,
    statuses: BTreeMap<(Kind, u16), u64>,
    transport_errors: Vec<String>,
    server_errors: Vec<String>,
    replays_checked: u64,
    /// Outage runs: (ms since the start when the answer came, status, had Retry-After).
    timeline: Vec<(u32, u16, bool)>,
    /// Outage runs: writes answered 503, to send again after the run.
    unresolved: Vec<Unresolved>,
    /// Outage runs: settles answered 503 (committed or not: the database tells).
    ambiguous_settles: Vec<(String, i64)>,
}

/// A create or transfer answered 503: sent again with the same key after the run.
struct Unresolved {
    kind: Kind,
    key: String,
    body: String,
    transfer: Option<(String, String, i64)>,
}

struct Plan {
    addr: SocketAddr,
    clients: usize,
    seconds: u64,
    mcp_token: String,
    api_token: String,
    /// Faults to inflict during the run; 503s are tolerated inside them only.
    outage: Option<Arc<outage::Schedule>>,
}

fn mcp_body(method: &str, params: Value) -> String {
    let mut params = params;
    params["_meta"] = meta();
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string()
}

async fn read_tools(conn: &mut Conn, token: &str) -> Vec<String> {
    let answer = conn
        .send(
            "POST",
            "/",
            token,
            &[("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/list")],
            &mcp_body("tools/list", json!({})),
        )
        .await
        .expect("tools/list");
    let tools = answer.json()["result"]["tools"].as_array().cloned().unwrap_or_default();
    tools
        .iter()
        .filter(|t| t["annotations"]["readOnlyHint"] == json!(true))
        .filter_map(|t| t["name"].as_str())
        .filter(|n| n.ends_with("_list"))
        .map(str::to_string)
        .collect()
}

/// When the clients stop: `seconds` after the start, and not before two seconds after the
/// last fault is over — a dependency slow to come back must still be seen serving again.
struct End {
    planned: Instant,
    faults: bool,
    faults_over: Mutex<Option<Instant>>,
}

impl End {
    fn reached(&self) -> bool {
        let now = Instant::now();
        now >= self.planned
            && (!self.faults
                || self.faults_over.lock().unwrap().is_some_and(|over| now >= over + Duration::from_secs(2)))
    }
}

async fn scalar(db: &Db, sql: &str, binds: &[&str]) -> i64 {
    let mut query = sql::query(sql.to_string());
    for b in binds {
        query = query.bind(b.to_string());
    }
    query.fetch_one(&db).await.expect(sql).try_get::<i64, _>(0).expect(sql)
}

/// Account balances as the API reports them.
async fn balances(conn: &mut Conn, token: &str) -> HashMap<String, i64> {
    let mut out = HashMap::new();
    for account in [ACME_CHECKING_ACCOUNT, ACME_CASH_ACCOUNT] {
        let answer =
            conn.send("GET", &format!("/v1/financial-accounts/{account}"), token, &[], "").await.expect("account");
        let text = answer.json()["balance"].as_str().unwrap_or("x").to_string();
        out.insert(
            account.to_string(),
            kobana_finance_mcp::domain::money::Cents::parse(&text, true).expect("balance").0,
        );
    }
    out
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    f64::from(sorted[index]) / 1000.0
}

/// Runs the plan and checks integrity; returns the report (Markdown) and panics on any
/// lost, doubled or failed write.
async fn run(plan: Plan, db: &Db) -> String {
    let plan = Arc::new(plan);
    let mut probe = Conn::new(plan.addr);
    let tools = Arc::new(read_tools(&mut probe, &plan.mcp_token).await);
    assert!(!tools.is_empty(), "no read tools to call");
    let before = balances(&mut probe, &plan.api_token).await;
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let tally = Arc::new(Mutex::new(Tally::default()));
    let started = Instant::now();
    let end = Arc::new(End {
        planned: started + Duration::from_secs(plan.seconds),
        faults: plan.outage.is_some(),
        faults_over: Mutex::new(None),
    });
    let faults = plan.outage.clone().map(|schedule| {
        let end = end.clone();
        tokio::spawn(async move {
            let records = outage::inflict(schedule, started).await;
            *end.faults_over.lock().unwrap() = Some(Instant::now());
            records
        })
    });
    let handles: Vec<_> = (0..plan.clients)
        .map(|i| {
            tokio::spawn(client(plan.clone(), i, tools.clone(), ledger.clone(), tally.clone(), started, end.clone()))
        })
        .collect();
    for handle in handles {
        handle.await.expect("a client panicked");
    }
    let wall = started.elapsed().as_secs_f64();
    let faults = match faults {
        Some(task) => task.await.expect("the fault task panicked"),
        None => Vec::new(),
    };
    let mut tally = std::mem::take(&mut *tally.lock().unwrap());
    let mut ledger = std::mem::take(&mut *ledger.lock().unwrap());
    let mut problems = Vec::new();
    if plan.outage.is_some() {
        outage::reconcile(&plan, &mut tally, &mut ledger, db, &mut problems).await;
    }

    // ---- integrity ----
    if !tally.transport_errors.is_empty() {
        problems.push(format!(
            "{} transport errors, e.g. {:?}",
            tally.transport_errors.len(),
            &tally.transport_errors[..tally.transport_errors.len().min(3)]
        ));
    }
    if !tally.server_errors.is_empty() {
        problems.push(format!(
            "{} server errors, e.g. {:?}",
            tally.server_errors.len(),
            &tally.server_errors[..tally.server_errors.len().min(3)]
        ));
    }
    let ids: HashSet<String> =
        sql::query("SELECT id FROM billings WHERE workspace_id = $1 AND description LIKE 'Carga %'")
            .bind(DEMO_WORKSPACE_ACME)
            .fetch_all(&db)
            .await
            .expect("billings")
            .iter()
            .map(|r| r.try_get::<String, _>(0).expect("id"))
            .collect();
    let missing = ledger.created.iter().filter(|id| !ids.contains(*id)).count();
    if missing > 0 || ids.len() != ledger.created.len() {
        problems.push(format!(
            "{} acknowledged creates, {} in the database, {missing} missing",
            ledger.created.len(),
            ids.len()
        ));
    }
    for id in ledger.settled.keys() {
        if scalar(db, "SELECT COUNT(*) FROM billings WHERE id = $1 AND status = 'paid'", &[id]).await != 1 {
            problems.push(format!("settled payable {id} is not paid"));
        }
    }
    let bad_settlements = scalar(
        db,
        "SELECT COUNT(*) FROM billings b WHERE b.workspace_id = $1 AND (CASE WHEN b.status IN ('paid', 'received') THEN 1 ELSE 0 END) <>
           (SELECT COUNT(*) FROM financial_transactions t WHERE t.billing_id = b.id AND t.auto_created = 1)",
        &[DEMO_WORKSPACE_ACME],
    )
    .await;
    if bad_settlements != 0 {
        problems.push(format!(
            "{bad_settlements} bills whose settlement transactions are not exactly one (paid) or zero (open)"
        ));
    }
    for (id, (from, to, cents)) in &ledger.transfers {
        let legs = scalar(
            db,
            "SELECT COUNT(*) FROM financial_transactions WHERE transfer_id = $1 AND amount_cents = CAST($2 AS BIGINT) AND
               ((financial_account_id = $3 AND transaction_type = 'debit') OR (financial_account_id = $4 AND transaction_type = 'credit'))",
            &[id, &cents.to_string(), from, to],
        )
        .await;
        if legs != 2 {
            problems.push(format!("transfer {id} has {legs} matching legs"));
        }
    }
    let transfer_rows =
        scalar(db, "SELECT COUNT(*) FROM financial_transactions WHERE description = 'Transferência de carga'", &[])
            .await;
    if transfer_rows != 2 * ledger.transfers.len() as i64 {
        problems.push(format!("{} acknowledged transfers but {transfer_rows} transfer legs", ledger.transfers.len()));
    }
    let after = balances(&mut probe, &plan.api_token).await;
    for account in [ACME_CHECKING_ACCOUNT, ACME_CASH_ACCOUNT] {
        let ledger_sum = scalar(
            db,
            "SELECT CAST(a.opening_balance_cents + COALESCE((SELECT SUM(CASE WHEN t.transaction_type = 'credit' THEN t.amount_cents ELSE -t.amount_cents END)
                 FROM financial_transactions t WHERE t.financial_account_id = a.id AND t.is_pending = 0), 0) AS BIGINT)
               FROM financial_accounts a WHERE a.id = $1",
            &[account],
        )
        .await;
        if ledger_sum != after[account] {
            problems
                .push(format!("{account}: the API says {} but opening + transactions is {ledger_sum}", after[account]));
        }
        let settled: i64 = if account == ACME_CHECKING_ACCOUNT { ledger.settled.values().sum() } else { 0 };
        let moved: i64 = ledger
            .transfers
            .values()
            .map(|(from, to, c)| {
                if from == account {
                    -c
                } else if to == account {
                    *c
                } else {
                    0
                }
            })
            .sum();
        let expected = before[account] - settled + moved;
        if after[account] != expected {
            problems
                .push(format!("{account}: balance {} but the acknowledged writes make it {expected}", after[account]));
        }
    }

    // ---- report ----
    let total: usize = tally.latencies.values().map(Vec::len).sum();
    let mut report = format!(
        "{} clients × {:.0} s: {total} requests, {:.0} req/s; {} creates ({} replays checked), {} settles, {} transfers acknowledged; \
         5xx: {}, transport errors: {}\n\n| kind | requests | statuses | p50 ms | p99 ms |\n|---|---:|---|---:|---:|\n",
        plan.clients,
        wall,
        total as f64 / wall,
        ledger.created.len(),
        tally.replays_checked,
        ledger.settled.len(),
        ledger.transfers.len(),
        tally.server_errors.len(),
        tally.transport_errors.len(),
    );
    let mut all = Vec::new();
    for (kind, latencies) in &tally.latencies {
        let mut sorted = latencies.clone();
        sorted.sort_unstable();
        all.extend_from_slice(&sorted);
        let statuses: Vec<String> =
            tally.statuses.iter().filter(|((k, _), _)| k == kind).map(|((_, s), n)| format!("{s}×{n}")).collect();
        report.push_str(&format!(
            "| {} | {} | {} | {:.1} | {:.1} |\n",
            kind.name(),
            sorted.len(),
            statuses.join(" "),
            percentile(&sorted, 0.5),
            percentile(&sorted, 0.99)
        ));
    }
    all.sort_unstable();
    report.push_str(&format!(
        "| all | {} | | {:.1} | {:.1} |\n",
        all.len(),
        percentile(&all, 0.5),
        percentile(&all, 0.99)
    ));
    if let Some(schedule) = &plan.outage {
        report.push_str(&outage::judge(schedule, &faults, &tally, &mut problems));
    }
    println!("{report}");
    assert!(problems.is_empty(), "integrity check failed:\n{}\n\n{report}", problems.join("\n"));
    assert!(
        !ledger.created.is_empty() && !ledger.transfers.is_empty() && !ledger.settled.is_empty(),
        "the mix wrote nothing:\n{report}"
    );
    report
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(default)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_load_keeps_every_write() {
    let h = Harness::with_demo().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = h.app.clone();
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let plan = Plan {
        addr,
        clients: env_number("LOAD_SHORT_CLIENTS", 8) as usize,
        seconds: env_number("LOAD_SHORT_SECONDS", 5),
        mcp_token: h.token(DEMO_OWNER),
        api_token: h.api_token(DEMO_OWNER),
        outage: None,
    };
    run(plan, &h.state.db).await;
    server.abort();
}

/// MCP and API tokens of the demo owner, signed with `secret`, for a server at `public_url`.
fn demo_owner_tokens(secret: &str, public_url: &str) -> (String, String) {
    let keys = Keys::from_secret(secret, None);
    let now = kobana_finance_mcp::clock::now_unix() as u64;
    let mint = |audience: String| {
        let claims = Claims {
            iss: public_url.to_string(),
            aud: Audience::One(audience),
            sub: DEMO_OWNER.into(),
            scope: kobana_finance_mcp::domain::roles::all_scopes().join(" "),
            exp: now + 3600,
            iat: Some(now),
            nbf: None,
            jti: None,
            client_id: None,
            gid: None,
        };
        jwt::mint(&claims, &keys).expect("mint")
    };
    (mint(public_url.to_string()), mint(format!("{public_url}/v1")))
}

/// Drives a server started by scripts/load.sh (see the module's documentation).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "make load: needs a running server (scripts/load.sh)"]
async fn external_load() {
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is required (run scripts/load.sh)"));
    let addr: SocketAddr = var("KFIN_LOAD_ADDR").parse().expect("KFIN_LOAD_ADDR");
    assert!(addr.ip().is_loopback(), "the load test only targets loopback");
    let public_url = var("KFIN_LOAD_PUBLIC_URL");
    let (mcp_token, api_token) = demo_owner_tokens(&var("KFIN_JWT_SECRET"), &public_url);
    let db = Db::connect(&var("KFIN_LOAD_DATABASE_URL"), 2).await.expect("database");
    let plan = Plan {
        addr,
        clients: env_number("LOAD_CLIENTS", 64) as usize,
        seconds: env_number("LOAD_SECONDS", 60),
        mcp_token,
        api_token,
        outage: None,
    };
    let report = run(plan, &db).await;
    if let Ok(path) = std::env::var("KFIN_LOAD_REPORT") {
        std::fs::write(path, report).expect("report");
    }
}

// ---------------------------------------------------------------------------------------
// Outages under load
// ---------------------------------------------------------------------------------------

mod outage;

/// `make test` (PostgreSQL pass): the short outage run against the debug binary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_outage_under_load() {
    if !postgres_only("the PostgreSQL outage under load") {
        return;
    }
    let clients = env_number("LOAD_OUTAGE_SHORT_CLIENTS", 32) as usize;
    let seconds = env_number("LOAD_OUTAGE_SHORT_SECONDS", 16);
    outage::postgres(env!("CARGO_BIN_EXE_kobana-finance-mcp"), clients, seconds).await;
}

/// `make load`: the outage run at full size against the release server (`LOAD_BINARY`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "make load: the full outage run (scripts/load.sh)"]
async fn external_outage() {
    let binary = std::env::var("LOAD_BINARY")
        .unwrap_or_else(|_| format!("{}/target/release/kobana-finance-mcp", env!("CARGO_MANIFEST_DIR")));
    assert!(std::path::Path::new(&binary).exists(), "{binary}: build the release server first (scripts/load.sh does)");
    let clients = env_number("LOAD_CLIENTS", 64) as usize;
    let seconds = env_number("LOAD_OUTAGE_SECONDS", 60);
    let report = outage::postgres(&binary, clients, seconds).await.expect("PostgreSQL binaries for the outage run");
    if let Ok(path) = std::env::var("KFIN_LOAD_OUTAGE_REPORT") {
        std::fs::write(path, report).expect("report");
    }
}

/// The key secret store goes away under load: cached keys serve until their TTL, then
/// 503 + Retry-After, and service is back once the store is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn key_store_outage_under_load() {
    let _env = common::environment().await;
    let Some(moto) = common::moto::start("the key store outage under load") else { return };
    common::moto::aws_test_environment();
    std::env::set_var("AWS_ENDPOINT_URL", &moto.endpoint);
    let secret_id = "kobana-finance/load-keys".to_string();
    let secret = json!({"jwt_keys": [SECRET], "state_key": "load-state"}).to_string();
    common::moto::secrets_client(&moto.endpoint)
        .create_secret()
        .name(&secret_id)
        .secret_string(&secret)
        .send()
        .await
        .expect("secret");
    let ttl = Duration::from_secs(4);
    let h = Harness::with_demo_and(|c| {
        c.keys = kobana_finance_mcp::config::KeySourceConfig::SecretsManager { secret_id: secret_id.clone(), ttl }
    })
    .await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = h.app.clone();
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    // Keys fetched just before the run: they expire ~TTL into it.
    h.state.keys.current().await.expect("keys");
    let port = moto.port;
    let faults = vec![
        (Duration::from_millis(500), outage::Fault::StopSecretStore),
        (ttl + Duration::from_secs(3), outage::Fault::StartSecretStore),
    ];
    let target =
        outage::Target::SecretStore { moto: tokio::sync::Mutex::new(Some(moto)), port, secret_id, secret, ttl };
    let plan = Plan {
        addr,
        clients: env_number("LOAD_KEYS_CLIENTS", 16) as usize,
        seconds: env_number("LOAD_KEYS_SECONDS", 14),
        mcp_token: h.token(DEMO_OWNER),
        api_token: h.api_token(DEMO_OWNER),
        outage: Some(Arc::new(outage::Schedule { faults, target })),
    };
    run(plan, &h.state.db).await;
    server.abort();
}
