//! `tools/list` reads the database once, whatever the size of the catalogue: the
//! caller's memberships (the visibility of all 65 tools is computed from them), besides
//! the rate-limit statement every authenticated request makes (SPEC §8).

use crate::common;

use common::*;
use serde_json::json;

/// The SQL statements the server ran while `f` ran, as sqlx logs them. The subscriber
/// is global: SQLite statements run on sqlx's worker thread. (The test has its process
/// to itself, so nothing else logs meanwhile.)
async fn statements<F: std::future::Future<Output = ()>>(captured: &Captured, f: F) -> Vec<String> {
    captured.0.lock().unwrap().clear();
    f.await;
    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    logs.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|l| l["target"] == "sqlx::query")
        .map(|l| l["fields"]["summary"].as_str().or(l["fields"]["db.statement"].as_str()).unwrap_or_default().to_string())
        // Housekeeping (pruning counters, removing deleted blobs) runs on a task of its
        // own, at most once per window, off the request's path: not the request's work.
        .filter(|s| !s.contains("blob_deletions") && !s.starts_with("DELETE FROM rate_limit_counters"))
        .collect()
}

#[tokio::test(flavor = "current_thread")]
async fn tools_list_reads_the_memberships_once_for_the_whole_catalogue() {
    if !alone_in_process("tools_list_queries::tools_list_reads_the_memberships_once_for_the_whole_catalogue") {
        return;
    }
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .json()
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::set_global_default(subscriber).unwrap();
    let h = Harness::new().await;
    let token = h.token(DEMO_OWNER);
    // Warm up: signing keys, schema cache.
    let first = h.send(Mcp::modern("tools/list", json!({})).bearer(&token).build()).await;
    assert_eq!(first.result()["tools"].as_array().unwrap().len(), 65);

    let ran = statements(&captured, async {
        let reply = h.send(Mcp::modern("tools/list", json!({})).bearer(&token).build()).await;
        assert_eq!(reply.result()["tools"].as_array().unwrap().len(), 65);
    })
    .await;
    assert_eq!(ran.len(), 2, "statements: {ran:#?}");
    assert!(ran.iter().any(|s| s.starts_with("INSERT INTO rate_limit_counters")), "the rate-limit count: {ran:#?}");
    assert!(ran.iter().any(|s| s.starts_with("SELECT w.id, w.name, m.role")), "the memberships: {ran:#?}");
}
