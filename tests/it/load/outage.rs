//! Outages under load: a dependency (PostgreSQL, the secret store) goes away while
//! the clients run, and the service answers 503 meanwhile and recovers after.

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
    Postgres { cluster: Arc<Cluster>, admin: Db, database: String },
    SecretStore { moto: tokio::sync::Mutex<Option<Moto>>, port: u16, secret_id: String, secret: String, ttl: Duration },
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
            match conn.send("POST", path, &plan.api_token, &[("X-Idempotency-Key", &write.key)], &write.body).await {
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
