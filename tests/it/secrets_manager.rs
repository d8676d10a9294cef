//! Signing keys from AWS Secrets Manager, for real, against `moto_server` on 127.0.0.1
//! (the SDK is pointed at it through `AWS_ENDPOINT_URL`): current and previous keys
//! verify, rotation is picked up after the cache TTL, keys are served from the cache
//! while fresh, and an unreachable store is 503 + Retry-After.
//!
//! moto is started by `common::moto` (skipped loudly when absent, except in CI).

use crate::common;

use std::time::Duration;

use common::*;
use kobana_finance_mcp::config::KeySourceConfig;
use serde_json::json;

fn token(secret: &str) -> String {
    token_signed(secret, DEMO_OWNER, String::new(), |_| {})
}

#[tokio::test]
async fn signing_keys_from_secrets_manager() {
    let _env = common::environment().await;
    let Some(moto) = common::moto::start("the Secrets Manager test") else { return };
    let endpoint = moto.endpoint.clone();
    // The SDK's standard environment, as in Lambda (the test holds the process environment).
    common::moto::aws_test_environment();
    std::env::set_var("AWS_ENDPOINT_URL", &endpoint);

    let admin = common::moto::secrets_client(&endpoint);
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
    moto.stop();
    assert_eq!(h.send(discover(&token("key-next"))).await.status, 200, "served from the cache");
    tokio::time::sleep(ttl + Duration::from_millis(300)).await;
    let reply = h.send(discover(&token("key-next"))).await;
    assert_eq!(reply.status, 503);
    assert_eq!(reply.rpc_code(), Some(-32603));
    assert!(reply.header("retry-after").is_some());
    assert!(reply.json()["error"]["data"]["retryAfterSeconds"].is_u64());
}
