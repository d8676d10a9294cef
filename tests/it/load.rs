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

#[allow(clippy::too_many_arguments)]
async fn client(
    plan: Arc<Plan>,
    index: usize,
    tools: Arc<Vec<String>>,
    ledger: Arc<Mutex<Ledger>>,
    tally: Arc<Mutex<Tally>>,
    run_started: Instant,
    end: Arc<End>,
) {
    let outage = plan.outage.is_some();
    let mut conn = Conn::new(plan.addr);
    let mut rng = Rng(0x2545_f491_4f6c_dd1d ^ (index as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let total: u32 = Kind::MIX.iter().map(|(_, w)| w).sum();
    let mut local = Tally::default();
    let mut sequence = 0u64;
    while !end.reached() {
        sequence += 1;
        let mut pick = rng.below(u64::from(total)) as u32;
        let kind = Kind::MIX
            .iter()
            .find(|(_, w)| {
                if pick < *w {
                    true
                } else {
                    pick -= w;
                    false
                }
            })
            .map(|(k, _)| *k)
            .unwrap_or(Kind::RestList);
        let api = plan.api_token.as_str();
        let started = Instant::now();
        let (answer, note) = match kind {
            Kind::RestList => {
                let path = [
                    "/v1/payables?limit=25&sort=-due_date",
                    "/v1/receivables?limit=25",
                    "/v1/financial-transactions?limit=25",
                    "/v1/people?limit=25",
                ][rng.below(4) as usize];
                (conn.send("GET", path, api, &[], "").await, None)
            }
            Kind::RestGet => {
                let path = [
                    format!("/v1/payables/{ACME_RENT_DECEMBER}"),
                    format!("/v1/financial-accounts/{ACME_CHECKING_ACCOUNT}"),
                    format!("/v1/companies/{ACME_COMPANY}"),
                ][rng.below(3) as usize]
                    .clone();
                (conn.send("GET", &path, api, &[], "").await, None)
            }
            Kind::RestAggregates => {
                let path = [
                    "/v1/payables/aggregates",
                    "/v1/receivables/aggregates?company_id=c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a11",
                    "/v1/financial-transactions/aggregates",
                ][rng.below(3) as usize];
                (conn.send("GET", path, api, &[], "").await, None)
            }
            Kind::McpToolsList => (
                conn.send(
                    "POST",
                    "/",
                    &plan.mcp_token,
                    &[("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/list")],
                    &mcp_body("tools/list", json!({})),
                )
                .await,
                None,
            ),
            Kind::McpToolsCall => {
                let name = tools[rng.below(tools.len() as u64) as usize].clone();
                let arguments = if name == "finance_workspaces_list" { json!({}) } else { json!({"limit": 5}) };
                let body = mcp_body("tools/call", json!({"name": name, "arguments": arguments}));
                (
                    conn.send(
                        "POST",
                        "/",
                        &plan.mcp_token,
                        &[("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", &name)],
                        &body,
                    )
                    .await,
                    None,
                )
            }
            Kind::CreatePayable => {
                let cents = 100 + rng.below(99_900) as i64;
                let key = format!("load-{index}-{sequence}");
                let body = json!({"company_id": ACME_COMPANY, "description": format!("Carga {index}-{sequence}"), "amount": format!("{}.{:02}", cents / 100, cents % 100),
                                  "due_date": "2026-12-28", "person_name": "Fornecedor de carga"})
                .to_string();
                let answer = conn.send("POST", "/v1/payables", api, &[("X-Idempotency-Key", &key)], &body).await;
                // One create in eight is sent again with the same key: it must replay.
                let replay = if rng.below(8) == 0 {
                    Some(conn.send("POST", "/v1/payables", api, &[("X-Idempotency-Key", &key)], &body).await)
                } else {
                    None
                };
                let replay = replay.filter(|again| !(outage && again.as_ref().is_ok_and(|a| a.status == 503)));
                if outage && answer.as_ref().is_ok_and(|a| a.status == 503) {
                    local.unresolved.push(Unresolved { kind, key: key.clone(), body: body.clone(), transfer: None });
                }
                if let Ok(first) = &answer {
                    if first.status == 201 {
                        let id = first.json()["id"].as_str().unwrap_or_default().to_string();
                        if let Some(Ok(again)) = &replay {
                            local.replays_checked += 1;
                            if again.status != 201
                                || again.json()["id"].as_str() != Some(id.as_str())
                                || !again.head.to_ascii_lowercase().contains("x-idempotency-replayed: true")
                            {
                                local.server_errors.push(format!(
                                    "replay of {key} answered {} {}",
                                    again.status,
                                    String::from_utf8_lossy(&again.body)
                                ));
                            }
                        }
                        let mut ledger = ledger.lock().unwrap();
                        ledger.created.insert(id.clone());
                        ledger.pending.push((id, cents));
                    }
                }
                (answer, None)
            }
            Kind::Settle => {
                // Clients pick from the shared pool, so settles of one payable race.
                let target = {
                    let ledger = ledger.lock().unwrap();
                    let n = ledger.pending.len();
                    (n > 0).then(|| ledger.pending[n - 1 - rng.below(n.min(16) as u64) as usize].clone())
                };
                match target {
                    None => continue,
                    Some((id, cents)) => {
                        let body = json!({"payment_date": "2026-11-30", "financial_account_id": ACME_CHECKING_ACCOUNT})
                            .to_string();
                        let answer = conn.send("POST", &format!("/v1/payables/{id}/settle"), api, &[], &body).await;
                        (answer, Some((id, cents)))
                    }
                }
            }
            Kind::Transfer => {
                let cents = 1 + rng.below(999) as i64;
                let (from, to) = if rng.below(2) == 0 {
                    (ACME_CHECKING_ACCOUNT, ACME_CASH_ACCOUNT)
                } else {
                    (ACME_CASH_ACCOUNT, ACME_CHECKING_ACCOUNT)
                };
                let key = format!("load-transfer-{index}-{sequence}");
                let body = json!({"from_account_id": from, "to_account_id": to, "amount": format!("{}.{:02}", cents / 100, cents % 100),
                                  "occurred_at": "2026-11-30", "description": "Transferência de carga"})
                .to_string();
                let answer = conn.send("POST", "/v1/transfers", api, &[("X-Idempotency-Key", &key)], &body).await;
                if outage && answer.as_ref().is_ok_and(|a| a.status == 503) {
                    local.unresolved.push(Unresolved {
                        kind,
                        key: key.clone(),
                        body: body.clone(),
                        transfer: Some((from.to_string(), to.to_string(), cents)),
                    });
                }
                if let Ok(done) = &answer {
                    if done.status == 201 {
                        let id = done.json()["transfer_id"].as_str().unwrap_or_default().to_string();
                        ledger.lock().unwrap().transfers.insert(id, (from.to_string(), to.to_string(), cents));
                    }
                }
                (answer, None)
            }
        };
        let elapsed = started.elapsed().as_micros().min(u128::from(u32::MAX)) as u32;
        match answer {
            Err(e) => local.transport_errors.push(format!("{}: {e}", kind.name())),
            Ok(answer) => {
                local.latencies.entry(kind).or_default().push(elapsed);
                *local.statuses.entry((kind, answer.status)).or_default() += 1;
                let retry_after = answer.head.lines().any(|l| l.to_ascii_lowercase().starts_with("retry-after:"));
                // In an outage run a 503 with Retry-After is judged by when it came (see
                // outage::judge); every other 5xx is an error.
                let tolerated = outage && answer.status == 503 && retry_after;
                if answer.status >= 500 && !tolerated {
                    local.server_errors.push(format!(
                        "{} → {} {}",
                        kind.name(),
                        answer.status,
                        String::from_utf8_lossy(&answer.body)
                    ));
                }
                if outage {
                    let at = run_started.elapsed().as_millis().min(u128::from(u32::MAX)) as u32;
                    local.timeline.push((at, answer.status, retry_after));
                    if answer.status == 503 {
                        if let Some(settle) = note.clone() {
                            local.ambiguous_settles.push(settle);
                        }
                        // A client backs off a little after a 503.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
                if let (Some((id, cents)), 200) = (note, answer.status) {
                    let mut ledger = ledger.lock().unwrap();
                    if ledger.settled.insert(id.clone(), cents).is_some() {
                        local.server_errors.push(format!("payable {id} settled twice"));
                    }
                    ledger.pending.retain(|(p, _)| *p != id);
                }
            }
        }
    }
    let mut tally = tally.lock().unwrap();
    for (kind, mut l) in local.latencies {
        tally.latencies.entry(kind).or_default().append(&mut l);
    }
    for (key, n) in local.statuses {
        *tally.statuses.entry(key).or_default() += n;
    }
    tally.transport_errors.extend(local.transport_errors);
    tally.server_errors.extend(local.server_errors);
    tally.replays_checked += local.replays_checked;
    tally.timeline.extend(local.timeline);
    tally.unresolved.extend(local.unresolved);
    tally.ambiguous_settles.extend(local.ambiguous_settles);
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

mod outage {
    use super::*;
    use crate::common::moto::Moto;
    use crate::common::pg_cluster::Cluster;

    /// Service must be back (no more 503s) within this long of the dependency's return.
    pub const RECOVERY_BUDGET: Duration = Duration::from_secs(10);

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Fault {
        /// `pg_ctl restart -m fast`.
        RestartPostgres,
        /// `pg_terminate_backend` on every connection of the server's database.
        TerminateConnections,
        /// The key secret store stops (moto killed).
        StopSecretStore,
        /// It comes back on the same address, with the same secret.
        StartSecretStore,
    }

    impl Fault {
        fn name(self) -> &'static str {
            match self {
                Fault::RestartPostgres => "PostgreSQL restarted (pg_ctl restart -m fast)",
                Fault::TerminateConnections => "every server connection terminated (pg_terminate_backend)",
                Fault::StopSecretStore => "key secret store stopped",
                Fault::StartSecretStore => "key secret store back",
            }
        }
    }

    /// Where the faults land.
    pub enum Target {
        Postgres {
            cluster: Arc<Cluster>,
            admin: Db,
            database: String,
        },
        SecretStore {
            moto: tokio::sync::Mutex<Option<Moto>>,
            port: u16,
            secret_id: String,
            secret: String,
            ttl: Duration,
        },
    }

    pub struct Schedule {
        pub faults: Vec<(Duration, Fault)>,
        pub target: Target,
    }

    #[derive(Debug)]
    pub struct Record {
        pub fault: Fault,
        pub started_ms: u32,
        pub ended_ms: u32,
        pub detail: String,
    }

    fn ms(since: Instant) -> u32 {
        since.elapsed().as_millis().min(u128::from(u32::MAX)) as u32
    }

    /// Inflicts the schedule's faults at their times; returns when each began and ended.
    pub async fn inflict(schedule: Arc<Schedule>, started: Instant) -> Vec<Record> {
        let mut records = Vec::new();
        for (at, fault) in &schedule.faults {
            tokio::time::sleep_until((started + *at).into()).await;
            let started_ms = ms(started);
            let detail = match (&schedule.target, fault) {
                (Target::Postgres { cluster, .. }, Fault::RestartPostgres) => {
                    let cluster = cluster.clone();
                    let took = tokio::task::spawn_blocking(move || cluster.restart()).await.expect("restart");
                    format!("pg_ctl took {:.1} s", took.as_secs_f64())
                }
                (Target::Postgres { admin, database, .. }, Fault::TerminateConnections) => {
                    let killed: i64 = sql::query(
                        "SELECT COUNT(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()) t",
                    )
                    .bind(database.as_str())
                    .fetch_one(&admin)
                    .await
                    .expect("pg_terminate_backend")
                    .try_get(0)
                    .expect("count");
                    format!("{killed} connections terminated")
                }
                (Target::SecretStore { moto, .. }, Fault::StopSecretStore) => {
                    if let Some(m) = moto.lock().await.take() {
                        m.stop();
                    }
                    "moto stopped".into()
                }
                (Target::SecretStore { moto, port, secret_id, secret, .. }, Fault::StartSecretStore) => {
                    let port = *port;
                    let back = tokio::task::spawn_blocking(move || {
                        crate::common::moto::start_on("the key store outage", Some(port))
                    })
                    .await
                    .expect("moto")
                    .expect("moto_server");
                    crate::common::moto::secrets_client(&back.endpoint)
                        .create_secret()
                        .name(secret_id)
                        .secret_string(secret)
                        .send()
                        .await
                        .expect("secret again");
                    *moto.lock().await = Some(back);
                    "moto started again, secret put back".into()
                }
                (_, fault) => panic!("{fault:?} does not apply to this target"),
            };
            records.push(Record { fault: *fault, started_ms, ended_ms: ms(started), detail });
        }
        records
    }

    /// After the run: writes answered 503 are sent again with their key until answered
    /// (a replay if the first attempt had committed), and settles answered 503 count as
    /// done when the payable is paid.
    pub async fn reconcile(plan: &Plan, tally: &mut Tally, ledger: &mut Ledger, db: &Db, problems: &mut Vec<String>) {
        let mut conn = Conn::new(plan.addr);
        let deadline = Instant::now() + Duration::from_secs(60);
        for write in std::mem::take(&mut tally.unresolved) {
            let path = if write.kind == Kind::Transfer { "/v1/transfers" } else { "/v1/payables" };
            loop {
                match conn.send("POST", path, &plan.api_token, &[("X-Idempotency-Key", &write.key)], &write.body).await
                {
                    Ok(a) if a.status == 201 => {
                        let body = a.json();
                        match &write.transfer {
                            Some(t) => {
                                ledger
                                    .transfers
                                    .insert(body["transfer_id"].as_str().unwrap_or_default().to_string(), t.clone());
                            }
                            None => {
                                ledger.created.insert(body["id"].as_str().unwrap_or_default().to_string());
                            }
                        }
                        break;
                    }
                    Ok(a) if a.status == 503 && Instant::now() < deadline => {
                        tokio::time::sleep(Duration::from_millis(200)).await
                    }
                    Ok(a) => {
                        problems.push(format!(
                            "{} sent again with key {} answered {} {}",
                            write.kind.name(),
                            write.key,
                            a.status,
                            String::from_utf8_lossy(&a.body)
                        ));
                        break;
                    }
                    Err(e) => {
                        problems.push(format!("{} sent again: {e}", write.kind.name()));
                        break;
                    }
                }
            }
        }
        for (id, cents) in std::mem::take(&mut tally.ambiguous_settles) {
            if !ledger.settled.contains_key(&id)
                && scalar(db, "SELECT COUNT(*) FROM billings WHERE id = $1 AND status = 'paid'", &[&id]).await == 1
            {
                ledger.settled.insert(id, cents);
            }
        }
    }

    /// Checks when the 503s came and how soon service was back; returns the report's
    /// outage section.
    pub fn judge(schedule: &Schedule, faults: &[Record], tally: &Tally, problems: &mut Vec<String>) -> String {
        let mut section = String::from("\n| fault | at s | dependency back after s | 503s | clients saw 503s for s | service back s after the dependency |\n|---|---:|---:|---:|---:|---:|\n");
        let budget = RECOVERY_BUDGET.as_millis() as u32;
        let without_retry_after = tally.timeline.iter().filter(|(_, s, r)| *s == 503 && !r).count();
        if without_retry_after > 0 {
            problems.push(format!("{without_retry_after} 503s without Retry-After"));
        }
        // An outage runs from a fault to the next one (or the end); a secret-store stop
        // and its return make one outage.
        let mut windows = Vec::new();
        let mut i = 0;
        while i < faults.len() {
            let start = &faults[i];
            let end = if start.fault == Fault::StopSecretStore
                && faults.get(i + 1).is_some_and(|r| r.fault == Fault::StartSecretStore)
            {
                i += 1;
                &faults[i]
            } else {
                start
            };
            let until = faults.get(i + 1).map_or(u32::MAX, |r| r.started_ms);
            windows.push((start, end, until));
            i += 1;
        }
        let first_fault = faults.first().map_or(u32::MAX, |r| r.started_ms);
        let early = tally.timeline.iter().filter(|(at, s, _)| *s == 503 && *at < first_fault).count();
        if early > 0 {
            problems.push(format!("{early} 503s before the first fault"));
        }
        let mut total_503 = 0;
        for (start, end, until) in &windows {
            let in_window: Vec<u32> = tally
                .timeline
                .iter()
                .filter(|(at, s, _)| *s == 503 && *at >= start.started_ms && *at < *until)
                .map(|(at, _, _)| *at)
                .collect();
            total_503 += in_window.len();
            let first = in_window.iter().min().copied();
            let last = in_window.iter().max().copied();
            let back_after = last.map_or(0, |l| l.saturating_sub(end.ended_ms));
            if back_after > budget {
                problems.push(format!(
                    "{}: 503s went on {:.1} s after the dependency was back",
                    start.fault.name(),
                    f64::from(back_after) / 1000.0
                ));
            }
            let served_after =
                tally.timeline.iter().any(|(at, s, _)| *s < 500 && *at > last.unwrap_or(end.ended_ms) && *at < *until);
            if !served_after {
                problems.push(format!("{}: nothing served after it", start.fault.name()));
            }
            if let (Fault::StopSecretStore, Target::SecretStore { ttl, .. }) = (start.fault, &schedule.target) {
                // Cached keys serve until their TTL: no 503 in the first part of it, and
                // answers served between the stop and the expiry.
                let grace = start.ended_ms + (ttl.as_millis() as u32).saturating_sub(1500);
                if first.is_some_and(|f| f < grace) {
                    problems.push(format!(
                        "a 503 {:.1} s after the key store stopped, before the cached keys' TTL",
                        f64::from(first.unwrap_or(0) - start.ended_ms) / 1000.0
                    ));
                }
                if !tally.timeline.iter().any(|(at, s, _)| *s < 500 && *at > start.ended_ms && *at < grace) {
                    problems.push("nothing served on the cached keys after the key store stopped".into());
                }
                if first.is_none() {
                    problems.push("no 503 once the cached keys expired with the key store down".into());
                }
            }
            section.push_str(&format!(
                "| {}{} | {:.1} | {:.1} | {} | {:.1} | {:.1} |\n",
                start.fault.name(),
                if std::ptr::eq(*start, *end) { String::new() } else { format!(" → {}", end.fault.name()) },
                f64::from(start.started_ms) / 1000.0,
                f64::from(end.ended_ms - start.started_ms) / 1000.0,
                in_window.len(),
                f64::from(last.unwrap_or(0).saturating_sub(first.unwrap_or(0))) / 1000.0,
                f64::from(back_after) / 1000.0,
            ));
        }
        let details: Vec<String> = faults.iter().map(|r| format!("{}: {}", r.fault.name(), r.detail)).collect();
        format!(
            "\nOutages: {} faults, {total_503} answers 503 (all with Retry-After: {}), other 5xx: {}; {}.\n{section}",
            faults.len(),
            without_retry_after == 0,
            tally.server_errors.len(),
            details.join("; ")
        )
    }

    /// The real binary's `serve` on 127.0.0.1 (a free port) over `database_url`, until
    /// dropped; its log goes to `log`.
    pub struct Server {
        child: std::process::Child,
        pub addr: SocketAddr,
        log: std::path::PathBuf,
    }

    impl Server {
        pub async fn start(binary: &str, database_url: &str, secret: &str, log: std::path::PathBuf) -> Server {
            let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
            let child = std::process::Command::new(binary)
                .args(["serve", "--addr", &addr.to_string(), "--database-url", database_url])
                .env("KFIN_JWT_SECRET", secret)
                .env("KFIN_PUBLIC_URL", format!("http://{addr}"))
                .env("KFIN_RATE_LIMIT_READS", "1000000000")
                .env("KFIN_RATE_LIMIT_WRITES", "1000000000")
                .env("KFIN_LOG", "warn")
                .env_remove("KFIN_SECRET_ID")
                .env_remove("KFIN_DATABASE_SECRET_ID")
                .env_remove("AWS_LAMBDA_RUNTIME_API")
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::fs::File::create(&log).expect("server log"))
                .spawn()
                .expect("start the server");
            let mut server = Server { child, addr, log };
            let deadline = Instant::now() + Duration::from_secs(60);
            while TcpStream::connect(addr).await.is_err() {
                assert!(server.child.try_wait().unwrap().is_none(), "the server exited: {}", server.log_text());
                assert!(Instant::now() < deadline, "the server did not listen");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            server
        }

        pub fn log_text(&self) -> String {
            std::fs::read_to_string(&self.log).unwrap_or_default()
        }

        /// Still running, and never panicked.
        pub fn assert_alive(&mut self) {
            assert!(self.child.try_wait().unwrap().is_none(), "the server exited: {}", self.log_text());
            assert!(!self.log_text().contains("panicked"), "the server panicked: {}", self.log_text());
        }
    }

    impl Drop for Server {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    /// The PostgreSQL outage run: a cluster of its own, the binary's `serve` over it,
    /// `clients` for `seconds` with a restart and two mass terminations; returns the
    /// report.
    pub async fn postgres(binary: &str, clients: usize, seconds: u64) -> Option<String> {
        let cluster = Arc::new(Cluster::start("the PostgreSQL outage under load", None)?);
        let admin = Db::connect(&cluster.url("postgres"), 1).await.expect("the cluster");
        admin.execute_script("CREATE DATABASE kfin_outage").await.expect("create database");
        let secret = format!("outage-{}", uuid::Uuid::new_v4().simple());
        let url = cluster.url("kfin_outage");
        let mut server = Server::start(binary, &url, &secret, cluster.dir.join("kfin-server.log")).await;
        let (mcp_token, api_token) = demo_owner_tokens(&secret, &format!("http://{}", server.addr));
        // Faults at fixed fractions of the run: the restart, then the two terminations,
        // each followed by time to recover and serve.
        let at = |fraction: f64| Duration::from_secs_f64(seconds as f64 * fraction);
        let faults = vec![
            (at(0.2), Fault::RestartPostgres),
            (at(0.5), Fault::TerminateConnections),
            (at(0.7), Fault::TerminateConnections),
        ];
        let schedule = Arc::new(Schedule {
            faults,
            target: Target::Postgres { cluster: cluster.clone(), admin, database: "kfin_outage".into() },
        });
        let db = Db::connect(&url, 2).await.expect("database");
        let plan = Plan { addr: server.addr, clients, seconds, mcp_token, api_token, outage: Some(schedule) };
        let report = run(plan, &db).await;
        server.assert_alive();
        Some(report)
    }
}

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
