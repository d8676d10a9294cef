//! How many statements a request costs. `tools/list` reads the database once, whatever
//! the size of the catalogue: the caller's memberships (the visibility of every tool
//! is computed from them), besides the rate-limit statement every authenticated request
//! makes (SPEC §8). A list tool reads a bill's apportionment and taxes only when the
//! `fields` it was asked for include them: each is one more round trip. On PostgreSQL
//! a read's count is sent in the read's own statement once the process knows the
//! caller's memberships.

use crate::common;

use common::*;
use serde_json::json;

/// The SQL statements the server ran while `f` ran, as the storage layer traces them
/// (`kobana_finance_mcp::sql`, one event per statement, on either backend). The
/// subscriber is global. (The test has its process to itself, so nothing else logs
/// meanwhile.)
async fn statements<F: std::future::Future<Output = ()>>(captured: &Captured, f: F) -> Vec<String> {
    captured.0.lock().unwrap().clear();
    f.await;
    captured
        .statements()
        .into_iter()
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
    tracing::subscriber::set_global_default(captured.subscriber()).unwrap();
    let h = Harness::with_demo().await;
    let token = h.token(DEMO_OWNER);
    // Warm up: signing keys, schema cache.
    let first = h.send(Mcp::modern("tools/list", json!({})).bearer(&token).build()).await;
    assert_eq!(first.result()["tools"].as_array().unwrap().len(), catalogue_size());

    let ran = statements(&captured, async {
        let reply = h.send(Mcp::modern("tools/list", json!({})).bearer(&token).build()).await;
        assert_eq!(reply.result()["tools"].as_array().unwrap().len(), catalogue_size());
    })
    .await;
    // The memberships are read with the rate-limit count: in its statement on
    // PostgreSQL (one round trip), in its transaction on SQLite.
    if backend() == "postgres" {
        assert_eq!(ran.len(), 1, "statements: {ran:#?}");
        assert!(
            ran[0].starts_with("WITH hit AS (INSERT INTO rate_limit_counters") && ran[0].contains("FROM memberships"),
            "{ran:#?}"
        );
    } else {
        assert_eq!(ran.len(), 2, "statements: {ran:#?}");
        assert!(ran[0].starts_with("INSERT INTO rate_limit_counters"), "the rate-limit count: {ran:#?}");
        assert!(
            ran[1].starts_with("SELECT w.id AS workspace_id, w.name AS workspace_name, m.role"),
            "the memberships: {ran:#?}"
        );
    }

    // A payables list with a projection that leaves out the apportionment and the taxes
    // reads neither; asked for them (or for every field), it reads them.
    let list = |fields: Option<serde_json::Value>| {
        let mut arguments = json!({"limit": 5});
        if let Some(fields) = fields {
            arguments["fields"] = fields;
        }
        Mcp::modern("tools/call", json!({"name": "finance_payables_list", "arguments": arguments}))
            .bearer(&token)
            .build()
    };
    // (the statements of the allocations read and of the tax charges read.)
    let reads = |ran: &[String]| {
        (
            ran.iter().any(|s| s.starts_with("SELECT a.owner_id")),
            ran.iter().any(|s| s.starts_with("SELECT c.billing_id")),
        )
    };
    // A page is one statement: a row carries its first center and the counts of its
    // parts, never the parts themselves.
    for (fields, allocations, taxes) in [
        (Some(json!(["id", "description", "amount", "due_date", "status", "person_name"])), false, false),
        (Some(json!(["id", "classification_center_name"])), false, false),
        (Some(json!(["id", "tax_charges_count"])), false, false),
        (None, false, false),
    ] {
        let ran = statements(&captured, async {
            let reply = h.send(list(fields.clone())).await;
            assert!(reply.result()["isError"].is_null(), "{:?}", reply.bytes);
            let rows = reply.result()["structuredContent"]["data"].as_array().unwrap().clone();
            assert!(!rows.is_empty(), "{:?}", reply.bytes);
            if let Some(fields) = fields.as_ref().and_then(|f| f.as_array()) {
                for row in &rows {
                    let keys: Vec<&String> = row.as_object().unwrap().keys().collect();
                    assert!(keys.iter().all(|k| fields.contains(&json!(k))), "{keys:?}");
                }
            }
        })
        .await;
        assert_eq!(reads(&ran), (allocations, taxes), "fields {fields:?}: {ran:#?}");
        // The count: on PostgreSQL it rides on the page's own statement (the process
        // has read the caller's memberships by now), on SQLite two statements before it.
        let counted = if backend() == "postgres" { 0 } else { 2 };
        assert_eq!(ran.len(), counted + 1 + allocations as usize + taxes as usize, "fields {fields:?}: {ran:#?}");
    }
}
