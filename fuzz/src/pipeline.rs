//! The request pipeline target's server: the real router over a fresh SQLite database
//! with the demo data, in this process, on a single-threaded runtime (so a panic in a
//! handler reaches the fuzzer instead of dying in a spawned task).

use std::sync::OnceLock;

use axum::Router;
use http_body_util::BodyExt;
use kobana_finance_mcp::app::App;
use kobana_finance_mcp::auth::jwt::{self, Audience, Claims};
use kobana_finance_mcp::auth::keys::Keys;
use kobana_finance_mcp::config::{Config, KeySourceConfig, Mode, RateLimits};
use kobana_finance_mcp::storage::{migrate, seed};
use tower::ServiceExt;

use crate::raw::{self, Tokens};

const SECRET: &str = "fuzz-signing-secret";
const PUBLIC_URL: &str = "http://127.0.0.1:8080";

struct Server {
    runtime: tokio::runtime::Runtime,
    app: Router,
    tokens: Tokens,
}

fn token(audience: String) -> String {
    let now = kobana_finance_mcp::clock::now_unix() as u64;
    let claims = Claims {
        iss: PUBLIC_URL.into(),
        aud: Audience::One(audience),
        sub: seed::DEMO_OWNER.into(),
        scope: kobana_finance_mcp::domain::roles::all_scopes().join(" "),
        exp: now + 10 * 365 * 86_400,
        iat: Some(now),
        nbf: None,
        jti: None,
    };
    jwt::mint(&claims, &Keys::from_secret(SECRET, None)).expect("mint")
}

fn start() -> Server {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let base = std::env::var_os("KFIN_FUZZ_TMP").map(std::path::PathBuf::from).unwrap_or_else(std::env::temp_dir);
    let dir = base.join(format!("kfin-fuzz-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("fuzz database directory");
    let config = Config {
        mode: Mode::Local,
        database_url: format!("sqlite:{}", dir.join("fuzz.db").display()),
        database_secret: None,
        db_max_connections: 1,
        public_url: PUBLIC_URL.into(),
        api_base_url: PUBLIC_URL.into(),
        auth_server: PUBLIC_URL.into(),
        allowed_origins: vec!["https://app.kobana.com.br".into()],
        keys: KeySourceConfig::Static { jwt_secret: SECRET.into(), state_key: None },
        rate_limits: RateLimits { reads: i64::MAX / 4, writes: i64::MAX / 4, window_seconds: 3600 },
        blob_url: None,
    };
    let app = runtime.block_on(async {
        let state = App::build(config).await.expect("app");
        migrate::run(&state.db).await.expect("migrate");
        seed::run(&state.db).await.expect("seed");
        kobana_finance_mcp::transport::router(state)
    });
    Server { runtime, app, tokens: Tokens { mcp: token(PUBLIC_URL.into()), api: token(format!("{PUBLIC_URL}/v1")) } }
}

/// Runs one input through the router and checks the answer; panics on a broken rule.
pub fn run(data: &[u8]) {
    static SERVER: OnceLock<Server> = OnceLock::new();
    let server = SERVER.get_or_init(start);
    let Some(request) = raw::parse(data, &server.tokens) else { return };
    let path = request.uri().path().to_string();
    let (status, headers, body) = server.runtime.block_on(async {
        let response = server.app.clone().oneshot(request).await.expect("infallible");
        let (parts, body) = response.into_parts();
        let bytes = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
        (parts.status.as_u16(), parts.headers, bytes)
    });
    if let Err(rule) = raw::check(&path, status, &headers, &body) {
        panic!(
            "{rule}: {} {path} → {status} {}",
            String::from_utf8_lossy(&data[..data.len().min(2000)]),
            String::from_utf8_lossy(&body)
        );
    }
}
