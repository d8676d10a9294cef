//! The banking gateway in the tests: the demo with the stand-in of Kobana's banking API
//! (moved by hand), and the gateway's events delivered as it delivers them.

use http::Method;

use kobana_finance_mcp::config::{GatewayConfig, GatewayCredentials};
use kobana_finance_mcp::gateway::standin::{Options, StandIn};
use kobana_finance_mcp::gateway::{Credentials, SIGNATURE_HEADER};
use kobana_finance_mcp::storage::seed::{ACME_CHECKING_BILLET_ACCOUNT, ACME_CHECKING_KOBANA_UID};

use super::{text, Harness, Mcp, Reply};

pub const WEBHOOK_SECRET: &str = "test-webhook-secret";
pub const API_TOKEN: &str = "test-api-token";

/// The stand-in of the tests: the demo's checking account is its Pix account and its
/// boleto agreement, it takes `api_token` and signs its events with `webhook_secret`, it is
/// moved by hand and never fails.
pub fn standin_options(api_token: &str, webhook_secret: &str) -> Options {
    Options {
        api_token: api_token.into(),
        webhook_secret: webhook_secret.into(),
        accounts: vec![ACME_CHECKING_KOBANA_UID.into()],
        billet_accounts: vec![ACME_CHECKING_BILLET_ACCOUNT.parse().unwrap()],
        auto: None,
        failure_rate: 0.0,
        lost_answer_rate: 0.0,
    }
}

/// The demo, its gateway the stand-in (moved by hand).
pub async fn with_gateway() -> (Harness, StandIn) {
    with_gateway_on(None).await
}

/// [`with_gateway`] with one PostgreSQL connection in the pool, as a small Lambda pool
/// may be: a request that holds a connection while it asks the pool for another waits
/// on itself and answers 503.
pub async fn with_gateway_on_one_connection() -> (Harness, StandIn) {
    with_gateway_on(Some(1)).await
}

async fn with_gateway_on(connections: Option<u32>) -> (Harness, StandIn) {
    let standin = StandIn::start(standin_options(API_TOKEN, WEBHOOK_SECRET)).await.expect("stand-in");
    let h = demo_banking(standin.url.clone(), connections).await;
    (h, standin)
}

/// The demo, its banking gateway the stand-in at `url` (with the tests' credentials).
pub async fn demo_banking_at(url: String) -> Harness {
    demo_banking(url, None).await
}

async fn demo_banking(url: String, connections: Option<u32>) -> Harness {
    Harness::with_demo_and(move |c| {
        c.db_max_connections = connections.unwrap_or(c.db_max_connections);
        c.gateway = GatewayConfig {
            url: Some(url),
            credentials: GatewayCredentials::Static(Credentials {
                api_token: API_TOKEN.into(),
                webhook_secret: WEBHOOK_SECRET.into(),
            }),
            embedded: false,
        }
    })
    .await
}

/// Delivers an event as the gateway does: no bearer, the signature header.
pub async fn deliver(h: &Harness, body: &[u8], signature: &str) -> Reply {
    let request = Mcp::raw(body.to_vec())
        .method(Method::POST)
        .path("/v1/webhooks/kobana")
        .header("content-type", "application/json")
        .header(SIGNATURE_HEADER, signature)
        .without("authorization")
        .build();
    h.send(request).await
}

/// Delivers every event the stand-in queued, each answered 200.
pub async fn deliver_all(h: &Harness, standin: &StandIn) -> Vec<(Vec<u8>, String)> {
    let events = standin.take_events();
    for (body, signature) in &events {
        let reply = deliver(h, body, signature).await;
        assert_eq!(reply.status, 200, "{}", text(&reply));
    }
    events
}

/// `POST path` with the bearer `token`, the idempotency key `key` and, when given, a
/// JSON body: an order to the bank as a client sends it.
pub async fn post_keyed(h: &Harness, token: &str, path: &str, body: Option<serde_json::Value>, key: &str) -> Reply {
    h.send(super::rest(Method::POST, path, token, body).header("x-idempotency-key", key).build()).await
}
