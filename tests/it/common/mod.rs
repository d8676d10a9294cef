//! Test harness: the real router over a fresh database — a temporary SQLite file, or a
//! throw-away PostgreSQL database when `KFIN_TEST_DATABASE=postgres`
//! (`KFIN_TEST_POSTGRES_URL`, default `postgres://postgres@127.0.0.1:5432/test`).
#![allow(dead_code)]

pub mod gateway;
pub mod moto;
pub mod pg_cluster;
pub mod runtime_api;

use std::time::Duration;

use axum::body::Body;
use axum::Router;
use bytes::Bytes;
use http::{HeaderMap, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tower::ServiceExt;

use kobana_finance_mcp::app::{App, AppState};
use kobana_finance_mcp::auth::jwt::{self, Audience, Claims};
use kobana_finance_mcp::auth::keys::Keys;
use kobana_finance_mcp::config::{Config, KeySourceConfig, Mode, RateLimits};
pub use kobana_finance_mcp::storage::sql;
use kobana_finance_mcp::storage::{migrate, seed, Db};

pub const SECRET: &str = "test-signing-secret";
pub const PUBLIC_URL: &str = "http://127.0.0.1:8080";
/// The fixture-only signing key of the `events/` fixtures (public on purpose: events/README.md).
pub const FIXTURE_KEY: &str = "kobana-finance-replay-fixtures";
/// The demo's fixed ids (users, workspaces, companies and records), as the seed writes them.
#[allow(unused_imports)]
pub use kobana_finance_mcp::storage::seed::{
    ACME_ADMIN_COST_CENTER, ACME_CAPITAL_CONTRIBUTION, ACME_CASH_ACCOUNT, ACME_CHECKING_ACCOUNT, ACME_COMPANY,
    ACME_CUSTOMER_MARIA, ACME_DARF_NOVEMBER, ACME_INSS_TAX, ACME_IRRF_TAX, ACME_ISS_TAX, ACME_LANDLORD,
    ACME_NOVEMBER_STATEMENT, ACME_RENT_CATEGORY, ACME_RENT_DECEMBER, ACME_RENT_NOVEMBER, ACME_RENT_RECEIPT,
    ACME_RENT_SETTLEMENT, ACME_SALARIES_CATEGORY, ACME_SALES_CATEGORY, ACME_SALE_CANCELLED, ACME_SALE_PENDING,
    ACME_SALE_RECEIVED, ACME_SERVICES, ACME_SERVICE_CHARGE_DECEMBER, ACME_SUPPLIES_CANCELLED, ACME_SUPPLIES_PENDING,
    BETA_ACCOUNT, BETA_ATTACHMENT, BETA_CASH_ACCOUNT, BETA_CATEGORY, BETA_COMPANY, BETA_COST_CENTER, BETA_PAYABLE,
    BETA_PERSON, BETA_RECEIVABLE, BETA_RULE, BETA_SETTLEMENT_TRANSACTION, BETA_TAX, BETA_TRANSFER, DEMO_BETA_OWNER,
    DEMO_FINANCE, DEMO_OWNER, DEMO_VIEWER, DEMO_WORKSPACE_ACME, DEMO_WORKSPACE_BETA,
};
/// An id no record has.
pub const MISSING: &str = "7f000000-0000-4000-8000-000000000000";
/// Banks' ids: name-based UUIDs of their ISPB, the same on every deployment.
pub const BANCO_DO_BRASIL: &str = "c55139a6-47a1-51f6-bb60-5b0fe717e54c";
pub const ITAU: &str = "8b0573a0-ff9c-557e-ba0a-3147e039288a";

pub fn backend() -> &'static str {
    match std::env::var("KFIN_TEST_DATABASE").as_deref() {
        Ok("postgres") => "postgres",
        _ => "sqlite",
    }
}

/// For a test that needs PostgreSQL: true on PostgreSQL; on SQLite it says loudly that
/// the test did not run (the PostgreSQL pass of `make test` and CI runs it).
/// PostgreSQL: ends, from `admin`'s connection, every other connection that `whose` (a
/// condition on `pg_stat_activity`) picks, and waits until none is left; one a
/// background task opens meanwhile is ended too.
pub async fn end_connections(admin: &Db, whose: &str) {
    let others = format!("FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND {whose}");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        admin.execute_script(&format!("SELECT pg_terminate_backend(pid) {others}")).await.unwrap();
        let left: i64 = sql::query(format!("SELECT COUNT(*) {others}")).scalar::<i64>(admin).await.unwrap();
        if left == 0 {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "{left} connections outlived pg_terminate_backend");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub fn postgres_only(what: &str) -> bool {
    if backend() == "postgres" {
        return true;
    }
    eprintln!("\n*** SKIPPED on SQLite: {what} needs PostgreSQL (run with KFIN_TEST_DATABASE=postgres) ***\n");
    false
}

pub fn config(database_url: String) -> Config {
    Config {
        mode: Mode::Local,
        // PostgreSQL's pool. SQLite always has one connection (`storage::lite`), as in
        // production, so a code path that holds a transaction while asking the database
        // for another statement waits out its timeout in the tests too.
        db_max_connections: 4,
        database_url,
        database_secret: None,
        public_url: PUBLIC_URL.into(),
        api_base_url: PUBLIC_URL.into(),
        auth_server: PUBLIC_URL.into(),
        allowed_origins: vec!["https://app.kobana.com.br".into()],
        keys: KeySourceConfig::Static { jwt_secret: SECRET.into(), state_key: None },
        rate_limits: RateLimits { reads: 100_000, writes: 100_000, window_seconds: 3600 },
        blob_url: None,
        gateway: kobana_finance_mcp::config::GatewayConfig::none(),
        oauth: Default::default(),
    }
}

/// The process environment, held by a test that changes it (`std::env::set_var`, the AWS
/// SDK's variables) or starts a process that inherits it. nextest runs every test in a
/// process of its own; `cargo test` runs the whole binary in one, so there such tests
/// take turns, and what one changed is put back when its guard drops.
pub struct Environment {
    saved: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    _turn: tokio::sync::MutexGuard<'static, ()>,
}

static ENVIRONMENT: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Waits for the environment (from an async test).
pub async fn environment() -> Environment {
    let turn = ENVIRONMENT.lock().await;
    Environment { saved: std::env::vars_os().collect(), _turn: turn }
}

/// Waits for the environment (from a plain `#[test]`).
pub fn environment_blocking() -> Environment {
    let turn = ENVIRONMENT.blocking_lock();
    Environment { saved: std::env::vars_os().collect(), _turn: turn }
}

impl Drop for Environment {
    fn drop(&mut self) {
        for (name, _) in std::env::vars_os() {
            if !self.saved.iter().any(|(saved, _)| *saved == name) {
                std::env::remove_var(name);
            }
        }
        for (name, value) in &self.saved {
            if std::env::var_os(name).as_ref() != Some(value) {
                std::env::set_var(name, value);
            }
        }
    }
}

/// For a test that needs its process to itself (it installs a global tracing
/// subscriber): under nextest, which runs every test in a process of its own, it returns
/// true and the test goes on; under `cargo test` it runs the test `name` (its full path)
/// again, alone, in a child process of this binary, asserts that it passed there, and
/// returns false.
pub fn alone_in_process(name: &str) -> bool {
    if std::env::var_os("NEXTEST").is_some() || std::env::var_os("KFIN_TEST_ALONE").is_some() {
        return true;
    }
    let binary = std::env::current_exe().expect("the test binary");
    let status = std::process::Command::new(binary)
        .args([name, "--exact", "--test-threads=1", "--nocapture"])
        .env("KFIN_TEST_ALONE", "1")
        .status()
        .expect("run the test alone");
    assert!(status.success(), "{name}, run alone in its own process, failed");
    false
}

/// A fresh, migrated and seeded database; dropped with the harness (PostgreSQL).
pub struct TestDb {
    pub url: String,
    _dir: Option<TempDir>,
    pg: Option<(String, String)>,
}

pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    pub fn new() -> TempDir {
        let dir = std::env::temp_dir().join(format!("kfin-test-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn postgres_admin_url() -> String {
    std::env::var("KFIN_TEST_POSTGRES_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

impl TestDb {
    pub async fn new() -> TestDb {
        if backend() == "postgres" {
            let admin = postgres_admin_url();
            let name = format!("kfin_t_{}", uuid::Uuid::new_v4().simple());
            let db = Db::connect(&admin, 1).await.expect("PostgreSQL for tests (KFIN_TEST_POSTGRES_URL)");
            db.execute_script(&format!("CREATE DATABASE {name}")).await.expect("create test database");
            db.close().await;
            let base = admin.rsplit_once('/').map(|(b, _)| b.to_string()).unwrap_or(admin.clone());
            TestDb { url: format!("{base}/{name}"), _dir: None, pg: Some((admin, name)) }
        } else {
            let dir = TempDir::new();
            let url = format!("sqlite:{}", dir.0.join("kfin.db").display());
            TestDb { url, _dir: Some(dir), pg: None }
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some((admin, name)) = self.pg.take() {
            // Dropped from a plain thread: Drop cannot await, and the test's runtime may be gone.
            let _ = std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
                rt.block_on(async {
                    if let Ok(db) = Db::connect(&admin, 1).await {
                        let _ = db.execute_script(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await;
                        db.close().await;
                    }
                });
            })
            .join();
        }
    }
}

pub struct Harness {
    pub state: AppState,
    pub app: Router,
    pub db: TestDb,
}

impl Harness {
    pub async fn new() -> Harness {
        Harness::with(|_| {}).await
    }

    /// Workspaces, users and companies of the demo, without its finance records.
    pub async fn with(adjust: impl FnOnce(&mut Config)) -> Harness {
        Harness::build(adjust, false).await
    }

    /// The whole demo, finance records included (as `serve` seeds it).
    pub async fn with_demo() -> Harness {
        Harness::build(|_| {}, true).await
    }

    /// The whole demo, with the configuration adjusted by `adjust`.
    pub async fn with_demo_and(adjust: impl FnOnce(&mut Config)) -> Harness {
        Harness::build(adjust, true).await
    }

    async fn build(adjust: impl FnOnce(&mut Config), finance: bool) -> Harness {
        let db = TestDb::new().await;
        let mut config = config(db.url.clone());
        adjust(&mut config);
        let state = App::build(config).await.expect("app");
        migrate::run(&state.db).await.expect("migrate");
        seed::run_with(&state.db, finance).await.expect("seed");
        let app = kobana_finance_mcp::transport::router(state.clone());
        Harness { state, app, db }
    }

    pub fn token(&self, user: &str) -> String {
        self.token_with(user, None, |_| {})
    }

    /// A token with the given scope (default: all 20) and claims adjusted by `edit`.
    pub fn token_with(&self, user: &str, scope: Option<&str>, edit: impl FnOnce(&mut Claims)) -> String {
        let scope =
            scope.map(str::to_string).unwrap_or_else(|| kobana_finance_mcp::domain::roles::all_scopes().join(" "));
        token_signed(SECRET, user, scope, edit)
    }

    pub fn api_token(&self, user: &str) -> String {
        self.token_with(user, None, |c| c.aud = Audience::One(format!("{PUBLIC_URL}/v1")))
    }

    pub async fn send(&self, request: Request<Body>) -> Reply {
        let response = self.app.clone().oneshot(request).await.expect("infallible");
        Reply::from(response).await
    }
}

pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub bytes: Bytes,
}

impl Reply {
    pub async fn from(response: http::Response<Body>) -> Reply {
        let (parts, body) = response.into_parts();
        let bytes = tokio::time::timeout(Duration::from_secs(10), body.collect())
            .await
            .expect("body in time")
            .expect("body")
            .to_bytes();
        Reply { status: parts.status, headers: parts.headers, bytes }
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.bytes)
            .unwrap_or_else(|_| panic!("JSON body, got {:?}", String::from_utf8_lossy(&self.bytes)))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn rpc_code(&self) -> Option<i64> {
        serde_json::from_slice::<Value>(&self.bytes).ok()?.get("error")?.get("code")?.as_i64()
    }

    pub fn result(&self) -> Value {
        let body = self.json();
        assert!(body.get("error").is_none(), "unexpected error: {body}");
        body["result"].clone()
    }
}

/// A `/v1` request with the bearer `token`; `body`, when given, is sent as JSON.
pub fn rest(method: http::Method, path: &str, token: &str, body: Option<Value>) -> Mcp {
    let m = Mcp::raw(body.map(|b| b.to_string()).unwrap_or_default()).method(method).path(path).bearer(token);
    if m.body.is_empty() {
        m
    } else {
        m.header("content-type", "application/json")
    }
}

/// Sends a `/v1` request (`rest`) through the router.
pub async fn send(h: &Harness, method: http::Method, path: &str, token: &str, body: Option<Value>) -> Reply {
    h.send(rest(method, path, token, body).build()).await
}

/// Creates a record with `POST path`, asserting 201, and returns it.
pub async fn create_at(h: &Harness, path: &str, token: &str, body: Value) -> Value {
    let reply = send(h, http::Method::POST, path, token, Some(body)).await;
    assert_eq!(reply.status, 201, "{}", text(&reply));
    reply.json()
}

/// Closes `company`'s books up to `until` (`PATCH /v1/companies/{id}` with
/// `locked_until`), asserting 200.
pub async fn close_period(h: &Harness, token: &str, company: &str, until: &str) {
    let body = json!({"locked_until": until});
    let reply = send(h, http::Method::PATCH, &format!("/v1/companies/{company}"), token, Some(body)).await;
    assert_eq!(reply.status, 200, "{}", text(&reply));
}

/// How many tools the whole catalogue has (what the owner's `tools/list` answers).
pub fn catalogue_size() -> usize {
    kobana_finance_mcp::mcp::tools::catalogue().count()
}

/// The body as text, for assertion messages.
pub fn text(reply: &Reply) -> String {
    String::from_utf8_lossy(&reply.bytes).into_owned()
}

/// The `id` of a record.
pub fn id(record: &Value) -> String {
    record["id"].as_str().unwrap().to_string()
}

/// A `/v1` token for `user` with exactly `scope`.
pub fn v1_token(h: &Harness, user: &str, scope: &str) -> String {
    h.token_with(user, Some(scope), |c| c.aud = Audience::One(format!("{PUBLIC_URL}/v1")))
}

/// A token of `user` with `scope` for ten minutes, its claims adjusted by `edit`, signed
/// with `secret` (the harness's, or a key a test serves from elsewhere).
pub fn token_signed(secret: &str, user: &str, scope: String, edit: impl FnOnce(&mut Claims)) -> String {
    let now = kobana_finance_mcp::clock::now_unix() as u64;
    let mut claims = Claims {
        iss: PUBLIC_URL.into(),
        aud: Audience::One(PUBLIC_URL.into()),
        sub: user.into(),
        scope,
        exp: now + 600,
        iat: Some(now),
        nbf: None,
        jti: Some(uuid::Uuid::new_v4().to_string()),
        client_id: None,
        gid: None,
    };
    edit(&mut claims);
    jwt::mint(&claims, &Keys::from_secret(secret, None)).expect("mint")
}

/// The `details.field` and `details.reason` of an error body.
pub fn details(reply: &Reply) -> (Option<String>, Option<String>) {
    let d = &reply.json()["error"]["details"];
    (d["field"].as_str().map(str::to_string), d["reason"].as_str().map(str::to_string))
}

/// Queries every `…/aggregates` route refuses, with the `details.field` and
/// `details.reason` it names: one period parser answers them all alike.
pub const AGGREGATES_REFUSALS: [(&str, &str, &str); 12] = [
    ("month=1", "year", "required"),
    ("year=2020", "month", "required"),
    ("month=1&year=2020&start_date=2020-01-01&end_date=2020-01-31", "month", "mutually_exclusive"),
    ("colour=red", "colour", "unknown_filter"),
    ("start_date=2020-01-01", "end_date", "required"),
    ("end_date=2020-01-01", "start_date", "required"),
    ("month=13&year=2020", "month", "out_of_range"),
    ("start_date=2020-02-30&end_date=2020-05-01", "start_date", "invalid_date"),
    ("start_date=2020-05-31&end_date=2020-05-01", "end_date", "invalid_value"),
    ("month=1&month=2&year=2020", "month", "invalid_value"),
    ("company_id=nope", "company_id", "invalid_uuid"),
    (
        "company_id=c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a11&company_id=c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a11",
        "company_id",
        "invalid_value",
    ),
];

/// What `details` returns for `field` refused with `reason`.
pub fn pair(field: &str, reason: &str) -> (Option<String>, Option<String>) {
    (Some(field.to_string()), Some(reason.to_string()))
}

/// Asserts that `reply` is `status` with `field` refused for `reason` (its body in the
/// message).
#[track_caller]
pub fn assert_refused(reply: &Reply, status: u16, field: &str, reason: &str) {
    assert_eq!((reply.status.as_u16(), details(reply)), (status, pair(field, reason)), "{}", text(reply));
}

/// The REST envelope's `error` of an `isError` tool result, read from its text content —
/// the only place an error result carries it (SPEC §5: no `structuredContent`, which a
/// client validates against the tool's `outputSchema`, a success's shape).
pub fn tool_error(result: &Value) -> Value {
    assert_eq!(result["isError"], true, "expected isError: {result}");
    assert!(result.get("structuredContent").is_none(), "an error result has no structuredContent: {result}");
    assert_eq!(result["content"].as_array().map(Vec::len), Some(1), "one text content: {result}");
    assert_eq!(result["content"][0]["type"], "text", "{result}");
    let text = result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text content: {result}"));
    let envelope: Value = serde_json::from_str(text).unwrap_or_else(|_| panic!("text content is not JSON: {text}"));
    envelope["error"].clone()
}

/// A `tools/call` of the 2026 protocol.
pub fn call(tool: &str, arguments: Value) -> Mcp {
    Mcp::modern("tools/call", json!({"name": tool, "arguments": arguments}))
}

/// The integer the query `sql` (one `$1`) returns.
pub async fn count(h: &Harness, sql: &str, bind: &str) -> i64 {
    sql::query(sql.to_string()).bind(bind.to_string()).fetch_one(&h.state.db).await.unwrap().try_get(0).unwrap()
}

/// Runs `sql` with its binds, for rows the test writes directly.
pub async fn exec(h: &Harness, sql: &str, binds: &[&str]) {
    let mut query = sql::query(sql.to_string());
    for b in binds {
        query = query.bind(b.to_string());
    }
    query.execute(&h.state.db).await.unwrap();
}

/// Serves the harness's router on a fresh 127.0.0.1 port (as `serve` does) and returns
/// the address; the server lives as long as the test's runtime.
pub async fn serve_over_tcp(h: &Harness) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = h.app.clone();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// The `_meta` envelope of a 2026-07-28 request.
pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "tests", "version": "1.0.0" },
    })
}

/// A request builder for the MCP endpoint.
#[derive(Clone)]
pub struct Mcp {
    pub method: http::Method,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Mcp {
    /// A raw POST with the given body and no headers.
    pub fn raw(body: impl Into<Vec<u8>>) -> Mcp {
        Mcp { method: http::Method::POST, path: "/".into(), headers: vec![], body: body.into() }
    }

    /// A 2026-era request with matching headers and envelope.
    pub fn modern(method: &str, mut params: Value) -> Mcp {
        params["_meta"] = meta();
        let mut m = Mcp::raw(json!({"jsonrpc":"2.0","id":1,"method":method,"params":params}).to_string())
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method);
        if method == "tools/call" {
            if let Some(name) = params.get("name").and_then(Value::as_str) {
                m = m.header("mcp-name", name);
            }
        }
        m
    }

    /// A 2025-era request (no envelope); `version` is the header, if any.
    pub fn legacy(method: &str, params: Value, version: Option<&str>) -> Mcp {
        let mut m = Mcp::raw(json!({"jsonrpc":"2.0","id":1,"method":method,"params":params}).to_string())
            .header("content-type", "application/json");
        if let Some(v) = version {
            m = m.header("mcp-protocol-version", v);
        }
        m
    }

    pub fn header(mut self, name: &str, value: &str) -> Mcp {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    pub fn without(mut self, name: &str) -> Mcp {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self
    }

    pub fn path(mut self, path: &str) -> Mcp {
        self.path = path.into();
        self
    }

    pub fn method(mut self, method: http::Method) -> Mcp {
        self.method = method;
        self
    }

    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Mcp {
        self.body = body.into();
        self
    }

    pub fn bearer(self, token: &str) -> Mcp {
        self.header("authorization", &format!("Bearer {token}"))
    }

    pub fn build(self) -> Request<Body> {
        let mut builder = Request::builder().method(self.method).uri(self.path);
        for (name, value) in &self.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        builder.body(Body::from(self.body)).expect("request")
    }
}

/// Log output captured in memory (a `tracing_subscriber` writer); `.text()` reads it.
#[derive(Clone, Default)]
pub struct Captured(pub std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl Captured {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }

    /// The SQL statements the storage layer traced here (`kobana_finance_mcp::sql`, one
    /// event per statement, on either backend; values are bound, never in them).
    pub fn statements(&self) -> Vec<String> {
        self.text()
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|l| l["target"] == "kobana_finance_mcp::sql")
            .map(|l| l["fields"]["statement"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    /// A subscriber writing every event, down to `TRACE`, here as JSON lines (the
    /// storage layer traces each statement it runs at that level).
    pub fn subscriber(&self) -> impl tracing::Subscriber + Send + Sync + 'static {
        let writer = self.clone();
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .json()
            .with_writer(move || writer.clone())
            .finish()
    }
}

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().map_err(|_| std::io::Error::other("poisoned"))?.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What a JSON Schema means, for comparing a tool's compact schema with the request
/// type's own: every local `$ref` resolved, and the annotations that constrain nothing
/// (`description`, `title`, `$schema`, `"default": null`, schemars' numeric `format`s)
/// left out. Fields, types, enums, required lists, lengths, formats and ranges stay.
pub fn meaning(schema: &Value) -> Value {
    fn strip(value: &Value, in_map: bool) -> Value {
        match value {
            Value::Object(object) if in_map => {
                Value::Object(object.iter().map(|(k, v)| (k.clone(), strip(v, false))).collect())
            }
            Value::Object(object) => Value::Object(
                object
                    .iter()
                    .filter(|(k, v)| match k.as_str() {
                        "description" | "title" | "$schema" => false,
                        // The `/v1` document's annotations (`x-kobana-extension`).
                        other if other.starts_with("x-") => false,
                        "default" => !v.is_null(),
                        "format" => {
                            !v.as_str().is_some_and(|f| f.starts_with("int") || f.starts_with("uint") || f == "double")
                        }
                        _ => true,
                    })
                    .map(|(k, v)| {
                        let v = match k.as_str() {
                            "enum" | "required" | "const" | "default" => v.clone(),
                            "properties" | "$defs" | "patternProperties" => strip(v, true),
                            _ => strip(v, false),
                        };
                        (k.clone(), v)
                    })
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(|v| strip(v, false)).collect()),
            other => other.clone(),
        }
    }
    strip(&kobana_finance_mcp::mcp::schema::resolve(schema), false)
}

/// The running totals of the reports and the cash flow (migrations 0014, 0023 and 0024,
/// kept by triggers) agree with the rows they sum, computed again here from the bills
/// (those owed: a payable waiting for approval is, a rejected one is not), the ledger
/// (a transfer leg by whether another leg of its transfer is in its company) and the
/// reconciliations: whatever wrote, updated or deleted them, nothing drifted.
pub async fn assert_report_totals_agree(h: &Harness) {
    let owed = kobana_finance_mcp::ops::bills::approval::owed("b");
    const SIDE: &str = "CASE WHEN t.transfer_id IS NOT NULL THEN CASE WHEN t.transaction_type = 'credit' \
        THEN 'transfer_in' ELSE 'transfer_out' END WHEN t.transaction_type = 'credit' THEN 'revenue' ELSE 'expense' END";
    let pairs = [
        (
            "SELECT workspace_id, kind, due_date, company_id, person_key, bills, amount_cents FROM report_open_bills
              WHERE bills <> 0 OR amount_cents <> 0"
                .to_string(),
            format!(
                "SELECT b.workspace_id, b.kind, b.due_date, b.company_id, COALESCE(b.person_id, ''), CAST(COUNT(*) AS BIGINT), CAST(SUM(b.amount_cents) AS BIGINT)
                   FROM billings b WHERE b.status = 'pending' AND {owed}
                  GROUP BY b.workspace_id, b.kind, b.due_date, b.company_id, COALESCE(b.person_id, '')"
            ),
        ),
        (
            "SELECT workspace_id, day, kind, company_id, category_key, amount_cents FROM report_bill_competence
              WHERE amount_cents <> 0"
                .to_string(),
            format!(
                "SELECT b.workspace_id, b.competence_date, b.kind, b.company_id, COALESCE(b.category_id, ''), CAST(SUM(b.amount_cents) AS BIGINT)
                   FROM billings b WHERE b.status <> 'cancelled' AND {owed}
                  GROUP BY b.workspace_id, b.competence_date, b.kind, b.company_id, COALESCE(b.category_id, '')"
            ),
        ),
        (
            "SELECT workspace_id, day, side, company_id, category_key, amount_cents FROM report_ledger_cash
              WHERE amount_cents <> 0"
                .to_string(),
            format!(
                "SELECT x.workspace_id, x.day, x.side, x.company_id, x.category_key, CAST(SUM(x.amount_cents) AS BIGINT) FROM (
                   SELECT t.workspace_id, t.occurred_at AS day, {SIDE} AS side, t.company_id,
                          COALESCE(t.category_id, '') AS category_key, t.amount_cents
                     FROM financial_transactions t WHERE t.is_pending = 0) x
                  GROUP BY x.workspace_id, x.day, x.side, x.company_id, x.category_key"
            ),
        ),
        (
            "SELECT workspace_id, day, side, company_id, category_key, amount_cents FROM report_ledger_competence
              WHERE amount_cents <> 0"
                .to_string(),
            format!(
                "SELECT x.workspace_id, x.day, x.side, x.company_id, x.category_key, CAST(SUM(x.amount_cents) AS BIGINT) FROM (
                   SELECT t.workspace_id, COALESCE(t.competence_date, t.occurred_at) AS day, {SIDE} AS side,
                          t.company_id, COALESCE(t.category_id, '') AS category_key, t.amount_cents
                     FROM financial_transactions t
                    WHERE t.is_pending = 0 AND t.billing_id IS NULL
                      AND NOT EXISTS (SELECT 1 FROM reconciliation_members m
                                       WHERE m.member_type = 'transaction' AND m.member_id = t.id)) x
                  GROUP BY x.workspace_id, x.day, x.side, x.company_id, x.category_key"
            ),
        ),
        (
            "SELECT workspace_id, day, company_id, account_key, reach, posted_in, posted_out, pending_in, pending_out
               FROM cash_flow_days WHERE posted_in <> 0 OR posted_out <> 0 OR pending_in <> 0 OR pending_out <> 0"
                .to_string(),
            format!(
                "SELECT x.workspace_id, x.day, x.company_id, x.account_key, x.reach, CAST(SUM(x.posted_in) AS BIGINT),
                        CAST(SUM(x.posted_out) AS BIGINT), CAST(SUM(x.pending_in) AS BIGINT), CAST(SUM(x.pending_out) AS BIGINT) FROM (
                   SELECT t.workspace_id, t.occurred_at AS day, t.company_id, t.financial_account_id AS account_key,
                          CASE WHEN t.transfer_id IS NULL THEN 'own'
                               WHEN EXISTS (SELECT 1 FROM financial_transactions o WHERE o.workspace_id = t.workspace_id
                                             AND o.transfer_id = t.transfer_id AND o.id <> t.id AND o.company_id = t.company_id)
                               THEN 'internal' ELSE 'transfer' END AS reach,
                          CASE WHEN t.is_pending = 0 AND t.transaction_type = 'credit' THEN t.amount_cents ELSE 0 END AS posted_in,
                          CASE WHEN t.is_pending = 0 AND t.transaction_type = 'debit' THEN t.amount_cents ELSE 0 END AS posted_out,
                          CASE WHEN t.is_pending = 1 AND t.transaction_type = 'credit' THEN t.amount_cents ELSE 0 END AS pending_in,
                          CASE WHEN t.is_pending = 1 AND t.transaction_type = 'debit' THEN t.amount_cents ELSE 0 END AS pending_out
                     FROM financial_transactions t
                   UNION ALL
                   SELECT b.workspace_id, b.due_date, b.company_id, COALESCE(b.financial_account_id, b.expected_account_id, ''), 'bill', 0, 0,
                          CASE WHEN b.kind = 'receivable' THEN b.amount_cents ELSE 0 END,
                          CASE WHEN b.kind = 'payable' THEN b.amount_cents ELSE 0 END
                     FROM billings b WHERE b.status = 'pending' AND {owed}) x
                  GROUP BY x.workspace_id, x.day, x.company_id, x.account_key, x.reach"
            ),
        ),
    ];
    for (kept, computed) in pairs {
        let rows = |statement: String| async move {
            let mut rows = sql::query(statement)
                .map_all(&h.state.db, |row| {
                    let mut fields = Vec::new();
                    for at in 0..row.column_count() {
                        let text =
                            row.try_get::<String, _>(at).or_else(|_| row.try_get::<i64, _>(at).map(|n| n.to_string()));
                        fields.push(text?);
                    }
                    Ok(fields.join("|"))
                })
                .await
                .unwrap();
            rows.sort();
            rows
        };
        let (kept_rows, computed_rows) = (rows(kept.clone()).await, rows(computed).await);
        assert_eq!(kept_rows, computed_rows, "the running totals drifted from their rows: {kept}");
    }
}
