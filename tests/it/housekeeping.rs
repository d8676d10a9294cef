//! Housekeeping in any mode (a Lambda instance never runs `serve`'s start-up): the
//! first request a process counts, then at most one per rate-limit window, prunes the
//! rate-limit counters of past windows, off the request's own path.

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::json;

const WINDOW: i64 = 3_600;

async fn insert_counter(h: &Harness, user: &str, window_start: i64) {
    sql::query("INSERT INTO rate_limit_counters (user_id, bucket, window_start, hits) VALUES ($1, 'read', $2, 7)")
        .bind(user)
        .bind(window_start)
        .execute(&h.state.db)
        .await
        .unwrap();
}

async fn counter_exists(h: &Harness, user: &str, window_start: i64) -> bool {
    let n: i64 = sql::query("SELECT COUNT(*) FROM rate_limit_counters WHERE user_id = $1 AND window_start = $2")
        .bind(user)
        .bind(window_start)
        .fetch_one(&h.state.db)
        .await
        .unwrap()
        .try_get(0)
        .unwrap();
    n == 1
}

#[tokio::test]
async fn requests_prune_past_windows_at_most_once_per_window() {
    let h = Harness::with(|c| c.rate_limits.window_seconds = WINDOW).await;
    let now = kobana_finance_mcp::clock::now_unix();
    let current = now - now.rem_euclid(WINDOW);
    let (stale, previous) = (current - 3 * WINDOW, current - WINDOW);
    insert_counter(&h, DEMO_VIEWER, stale).await;
    insert_counter(&h, DEMO_VIEWER, previous).await;

    // The process's first counted request starts a run on the MCP door ...
    let token = h.token(DEMO_OWNER);
    let ping = || Mcp::modern("tools/list", json!({})).bearer(&token).build();
    assert_eq!(h.send(ping()).await.status, 200);
    let deadline = Instant::now() + Duration::from_secs(10);
    while counter_exists(&h, DEMO_VIEWER, stale).await {
        assert!(Instant::now() < deadline, "the stale counter is pruned");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(counter_exists(&h, DEMO_VIEWER, previous).await, "the previous window is kept");
    assert!(counter_exists(&h, DEMO_OWNER, current).await, "the request itself was counted");

    // ... and no other request of the same window does.
    insert_counter(&h, DEMO_VIEWER, stale).await;
    let rest = h
        .send(Mcp::raw("").method(http::Method::GET).path("/v1/workspaces").bearer(&h.api_token(DEMO_OWNER)).build())
        .await;
    assert_eq!(rest.status, 200);
    assert_eq!(h.send(ping()).await.status, 200);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(counter_exists(&h, DEMO_VIEWER, stale).await, "not due again within the window");

    // A run on demand (what `serve` does at start) prunes it.
    let report = h.state.housekeep().await;
    assert_eq!(report.counters_pruned, 1);
    assert!(!counter_exists(&h, DEMO_VIEWER, stale).await);
}
