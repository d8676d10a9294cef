//! Signing keys from AWS Secrets Manager, for real, against `moto_server` on 127.0.0.1
//! (the SDK is pointed at it through `AWS_ENDPOINT_URL`): current and previous keys
//! verify, rotation is picked up after the cache TTL, keys are served from the cache
//! while fresh, and an unreachable store is 503 + Retry-After.
//!
//! moto is found through `KFIN_TEST_MOTO_SERVER`, `target/tools/venv/bin/moto_server`
//! or `PATH`. Without it the test is skipped with a loud message, except in CI, where
//! it fails.

mod common;

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use aws_sdk_secretsmanager::config::{BehaviorVersion, Credentials, Region};
use common::*;
use kobana_finance_mcp::auth::jwt::{self, Audience, Claims};
use kobana_finance_mcp::auth::keys::Keys;
use kobana_finance_mcp::config::KeySourceConfig;
use serde_json::json;

struct Moto(Child);

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn moto_binary() -> Option<String> {
    if let Ok(path) = std::env::var("KFIN_TEST_MOTO_SERVER") {
        return Some(path);
    }
    let local = format!("{}/target/tools/venv/bin/moto_server", env!("CARGO_MANIFEST_DIR"));
    if std::path::Path::new(&local).exists() {
        return Some(local);
    }
    Command::new("moto_server").arg("--help").stdout(Stdio::null()).stderr(Stdio::null()).status().ok().filter(|s| s.success()).map(|_| "moto_server".into())
}

fn start_moto() -> Option<(Moto, String)> {
    let Some(binary) = moto_binary() else {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("moto_server is required in CI (run scripts/ensure-tools.sh)");
        }
        eprintln!("\n*** SKIPPED: moto_server not found; the Secrets Manager test did not run. Run scripts/ensure-tools.sh. ***\n");
        return None;
    };
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(binary)
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start moto_server");
    let moto = Moto(child);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(std::time::Instant::now() < deadline, "moto_server did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    Some((moto, format!("http://127.0.0.1:{port}")))
}

fn token(secret: &str) -> String {
    let now = kobana_finance_mcp::clock::now_unix() as u64;
    let claims = Claims {
        iss: PUBLIC_URL.into(),
        aud: Audience::One(PUBLIC_URL.into()),
        sub: DEMO_OWNER.into(),
        scope: String::new(),
        exp: now + 600,
        iat: Some(now),
        nbf: None,
        jti: Some(uuid::Uuid::new_v4().to_string()),
    };
    jwt::mint(&claims, &Keys::from_secret(secret, None)).unwrap()
}

#[tokio::test]
async fn signing_keys_from_secrets_manager() {
    let Some((moto, endpoint)) = start_moto() else { return };
    // The SDK's standard environment, as in Lambda (this test binary runs this one test).
    std::env::set_var("AWS_ENDPOINT_URL", &endpoint);
    std::env::set_var("AWS_ACCESS_KEY_ID", "testing");
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "testing");
    std::env::set_var("AWS_REGION", "us-east-1");
    std::env::remove_var("AWS_PROFILE");

    let admin = aws_sdk_secretsmanager::Client::from_conf(
        aws_sdk_secretsmanager::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .endpoint_url(&endpoint)
            .region(Region::new("us-east-1"))
            .credentials_provider(Credentials::new("testing", "testing", None, None, "test"))
            .build(),
    );
    let secret_id = "kobana-finance/keys";
    admin
        .create_secret()
        .name(secret_id)
        .secret_string(json!({"jwt_keys": ["key-current", "key-previous"], "state_key": "state"}).to_string())
        .send()
        .await
        .expect("create secret in moto");

    let ttl = Duration::from_secs(2);
    let h = Harness::with(|c| c.keys = KeySourceConfig::SecretsManager { secret_id: secret_id.into(), ttl }).await;
    let discover = |t: &str| Mcp::modern("server/discover", json!({})).bearer(t).build();

    // Current and previous keys verify; any other key does not.
    assert_eq!(h.send(discover(&token("key-current"))).await.status, 200);
    assert_eq!(h.send(discover(&token("key-previous"))).await.status, 200);
    assert_eq!(h.send(discover(&token("key-other"))).await.status, 401);
    let keys = h.state.keys.current().await.unwrap();
    assert_eq!(keys.state, b"state".to_vec());

    // Rotation: the new key is trusted once the cache expires, the retired one no longer.
    admin
        .put_secret_value()
        .secret_id(secret_id)
        .secret_string(json!({"jwt_keys": ["key-next", "key-current"], "state_key": "state"}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(h.send(discover(&token("key-next"))).await.status, 401, "cached keys until the TTL passes");
    tokio::time::sleep(ttl + Duration::from_millis(300)).await;
    assert_eq!(h.send(discover(&token("key-next"))).await.status, 200);
    assert_eq!(h.send(discover(&token("key-current"))).await.status, 200);
    assert_eq!(h.send(discover(&token("key-previous"))).await.status, 401);

    // The store goes away: fresh cached keys keep serving, then 503 + Retry-After.
    drop(moto);
    assert_eq!(h.send(discover(&token("key-next"))).await.status, 200, "served from the cache");
    tokio::time::sleep(ttl + Duration::from_millis(300)).await;
    let reply = h.send(discover(&token("key-next"))).await;
    assert_eq!(reply.status, 503);
    assert_eq!(reply.rpc_code(), Some(-32603));
    assert!(reply.header("retry-after").is_some());
    assert!(reply.json()["error"]["data"]["retryAfterSeconds"].is_u64());
}
