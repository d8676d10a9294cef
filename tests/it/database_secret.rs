//! Database credentials from an RDS-style Secrets Manager secret, for real: the secret
//! lives in `moto_server`, the database is a throw-away PostgreSQL cluster of the test's
//! own whose TCP connections need a password (`scram-sha-256`, unlike the suite's
//! shared server), so a stale password is refused as it would be by Aurora.
//!
//! * the app connects with what the secret says (user, password with URL-special
//!   characters, host, port, dbname) and serves;
//! * the password is rotated in the database and in the secret: connections opened
//!   afterwards use the new one without a restart — at once when the server refuses the
//!   old one (503 + Retry-After meanwhile, never a 500), and on the TTL otherwise;
//! * no password appears in a log line;
//! * the configuration refuses a URL and a secret together.
//!
//! Skipped loudly without moto or PostgreSQL's binaries, except in CI.

use crate::common;

use std::time::{Duration, Instant};

use common::pg_cluster::Cluster;
use common::*;
use kobana_finance_mcp::app::App;
use kobana_finance_mcp::config::DatabaseSecretConfig;
use kobana_finance_mcp::storage::{migrate, seed, Db};
use serde_json::json;

const FIRST: &str = "first p@ss:/w?rd#1%";
const SECOND: &str = "second-Pässwort&=+";
const THIRD: &str = "third-password-3";

fn secret(cluster: &Cluster, password: &str) -> String {
    json!({"engine": "postgres", "username": "kfin_app", "password": password, "host": "127.0.0.1", "port": cluster.port, "dbname": "kfin"}).to_string()
}

/// Ends every connection of the app's user, and waits until they are gone.
async fn terminate_app_connections(admin: &Db) {
    end_connections(admin, "usename = 'kfin_app'").await;
}

async fn alter_password(admin: &Db, password: &str) {
    let quoted = password.replace('\'', "''");
    admin.execute_script(&format!("ALTER ROLE kfin_app PASSWORD '{quoted}'")).await.unwrap();
}

#[tokio::test]
async fn database_credentials_come_from_the_secret_and_a_rotation_needs_no_restart() {
    let _env = common::environment().await;
    let Some(moto) = common::moto::start("the database secret test") else { return };
    let Some(cluster) = Cluster::start("the database secret test", Some("admin-secret")) else { return };
    common::moto::aws_test_environment();
    std::env::set_var("AWS_ENDPOINT_URL", &moto.endpoint);
    let (captured, _logs) = {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::INFO)
            .json()
            .with_writer(move || writer.clone())
            .finish();
        (captured, tracing::subscriber::set_default(subscriber))
    };

    let admin = Db::connect(&cluster.url("postgres"), 1).await.expect("the cluster");
    admin.execute_script("CREATE ROLE kfin_app LOGIN").await.unwrap();
    alter_password(&admin, FIRST).await;
    admin.execute_script("CREATE DATABASE kfin OWNER kfin_app").await.unwrap();

    let secrets = common::moto::secrets_client(&moto.endpoint);
    let secret_id = "kobana-finance/database";
    secrets
        .create_secret()
        .name(secret_id)
        .secret_string(secret(&cluster, FIRST))
        .send()
        .await
        .expect("secret in moto");

    let ttl = Duration::from_secs(3);
    let mut config = common::config("postgres://(from the secret)".into());
    config.database_secret = Some(DatabaseSecretConfig {
        secret_id: secret_id.into(),
        host: None,
        dbname: None,
        // The throw-away cluster has no TLS; verify-full is the deployed default.
        ssl_mode: "disable".into(),
        ssl_root_cert: None,
        ttl,
    });
    // The schema and the demo data come first, through an app of their own, so the
    // served app's TTL starts just before its first request however slow they are.
    let setup = App::start(config.clone()).await.expect("app from the secret");
    migrate::run(&setup.db).await.expect("migrations as kfin_app");
    seed::run_with(&setup.db, false).await.expect("seed");
    drop(setup);
    let state = App::start(config).await.expect("app from the secret");
    let h = Harness {
        app: kobana_finance_mcp::transport::router(state.clone()),
        state: state.clone(),
        db: TestDb::new().await,
    };
    let discover = || Mcp::modern("server/discover", json!({})).bearer(&h.token(DEMO_OWNER)).build();
    assert_eq!(h.send(discover()).await.status, 200);

    // Rotation as Secrets Manager's single-user strategy does it: the database first,
    // then the secret. Open connections keep working; new ones need the new password.
    alter_password(&admin, SECOND).await;
    secrets.put_secret_value().secret_id(secret_id).secret_string(secret(&cluster, SECOND)).send().await.unwrap();
    terminate_app_connections(&admin).await;
    let rotated = Instant::now();
    let mut statuses = Vec::new();
    loop {
        let reply = h.send(discover()).await;
        statuses.push(reply.status.as_u16());
        if reply.status == 200 {
            break;
        }
        assert_eq!(
            reply.status,
            503,
            "a refused password is 503, never another status: {}",
            String::from_utf8_lossy(&reply.bytes)
        );
        assert!(reply.header("retry-after").is_some());
        assert!(rotated.elapsed() < ttl, "the refused password should trigger a refresh before the TTL: {statuses:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let refreshes = || captured.text().matches("database credentials refreshed").count();
    let deadline = Instant::now() + ttl;
    while refreshes() == 0 {
        assert!(Instant::now() < deadline, "the refused password did not trigger a refresh: {statuses:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    terminate_app_connections(&admin).await;
    let reply = h.send(discover()).await;
    assert_eq!(
        reply.status,
        200,
        "a new connection with the rotated password: {}",
        String::from_utf8_lossy(&reply.bytes)
    );

    // A rotation with the connections left open: they go on; once the TTL has passed a
    // request starts the refresh, and connections opened after it use the new password.
    alter_password(&admin, THIRD).await;
    secrets.put_secret_value().secret_id(secret_id).secret_string(secret(&cluster, THIRD)).send().await.unwrap();
    assert_eq!(h.send(discover()).await.status, 200, "open connections survive a password change");
    let before = refreshes();
    tokio::time::sleep(ttl + Duration::from_millis(200)).await;
    assert_eq!(h.send(discover()).await.status, 200, "this request starts the refresh");
    let deadline = Instant::now() + Duration::from_secs(5);
    while refreshes() == before {
        assert!(Instant::now() < deadline, "no refresh on the TTL");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    terminate_app_connections(&admin).await;
    let reply = h.send(discover()).await;
    assert_eq!(
        reply.status,
        200,
        "new connections use the refreshed password: {}",
        String::from_utf8_lossy(&reply.bytes)
    );

    let logs = captured.text();
    // Raw or percent-encoded as in a URL.
    for fragment in ["first p", "first%20p", "second-P", "third-password", "admin-secret"] {
        assert!(!logs.contains(fragment), "a password in the logs");
    }
}

#[test]
fn the_configuration_takes_a_database_url_or_a_secret_not_both() {
    let _env = common::environment_blocking();
    std::env::remove_var("AWS_LAMBDA_RUNTIME_API");
    std::env::set_var("KFIN_JWT_SECRET", "x");
    std::env::set_var("KFIN_DATABASE_SECRET_ID", "kobana-finance/database");
    std::env::set_var("KFIN_DATABASE_URL", "postgres://u:p@db/kfin");
    let err = kobana_finance_mcp::config::Config::from_env(None).unwrap_err();
    assert!(err.0.contains("not both"), "{err}");

    std::env::remove_var("KFIN_DATABASE_URL");
    let config = kobana_finance_mcp::config::Config::from_env(None).unwrap();
    let secret = config.database_secret.expect("the secret");
    assert_eq!(secret.ssl_mode, "verify-full", "TLS is verified unless told otherwise");
    assert!(!config.database_url.contains('@'), "no credentials in the described URL");

    std::env::set_var("KFIN_DATABASE_SSL_MODE", "sometimes");
    assert!(kobana_finance_mcp::config::Config::from_env(None).is_err());
    std::env::remove_var("KFIN_DATABASE_SSL_MODE");

    // A --database-url flag wins over the environment, the secret included.
    let config = kobana_finance_mcp::config::Config::from_env(Some("sqlite::memory:".into())).unwrap();
    assert!(config.database_secret.is_none());
}
