//! A read's rate-limit count sent with the read itself (PostgreSQL, once the process has
//! read the caller's memberships): the token's revocation, the budget and the caller's
//! memberships still decide every request, in the same statement as its rows. On SQLite
//! the same requests are answered the same way (the count goes first there).

use crate::common;

use common::*;
use kobana_finance_mcp::storage::identity::{self, Known, Membership};
use kobana_finance_mcp::storage::rate_limit::{Counting, Numbers, Outcome, Slot, Take};
use kobana_finance_mcp::storage::{query, Backend, Error, Held};
use serde_json::{json, Value};

fn list(token: &str) -> http::Request<axum::body::Body> {
    let arguments = json!({"workspace_id": DEMO_WORKSPACE_ACME, "limit": 3, "fields": ["id", "description"]});
    Mcp::modern("tools/call", json!({"name": "finance_payables_list", "arguments": arguments})).bearer(token).build()
}

/// The rows of a list answer.
fn rows(reply: &Reply) -> Vec<Value> {
    assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.bytes));
    let result = reply.result();
    assert_ne!(result["isError"], true, "{result}");
    result["structuredContent"]["data"].as_array().cloned().unwrap_or_default()
}

/// `user`'s memberships with their version, as the database has them now.
async fn known(h: &Harness, user: &str) -> Known {
    let memberships = identity::memberships(&h.state.db, user).await.unwrap();
    let version: String =
        query("SELECT memberships_version FROM users WHERE id = $1").bind(user).scalar(&h.state.db).await.unwrap();
    Known { version: version.into(), memberships: memberships.into() }
}

/// On PostgreSQL the process now knows `user`'s memberships: their next read carries
/// its count.
fn rides_next(h: &Harness, user: &str) {
    if h.state.db.backend == Backend::Postgres {
        assert!(h.state.db.recent_memberships.get(user).is_some(), "the next read's count rides on it");
    }
}

#[tokio::test]
async fn a_token_revoked_between_two_reads_gets_nothing_from_the_second() {
    let h = Harness::with_demo().await;
    let token = h.token_with(DEMO_OWNER, None, |c| c.jti = Some("revoked-between-reads".into()));
    assert_eq!(rows(&h.send(list(&token)).await).len(), 3);
    rides_next(&h, DEMO_OWNER);
    assert!(identity::revoke(&h.state.db, "revoked-between-reads").await.unwrap());
    let reply = h.send(list(&token)).await;
    assert_eq!(reply.status, 401, "{}", String::from_utf8_lossy(&reply.bytes));
    assert!(reply.header("www-authenticate").unwrap().contains("invalid_token"));
    assert!(!String::from_utf8_lossy(&reply.bytes).contains("description"), "no row in the answer");
    // Nothing was counted for it: a fresh token has the rest of the budget.
    let fresh = h.token(DEMO_OWNER);
    assert_eq!(rows(&h.send(list(&fresh)).await).len(), 3);
}

#[tokio::test]
async fn the_read_past_the_budget_is_429_with_no_rows() {
    let h = Harness::with_demo_and(|c| c.rate_limits.reads = 2).await;
    let token = h.token(DEMO_OWNER);
    assert_eq!(rows(&h.send(list(&token)).await).len(), 3);
    rides_next(&h, DEMO_OWNER);
    assert_eq!(rows(&h.send(list(&token)).await).len(), 3);
    let reply = h.send(list(&token)).await;
    assert_eq!(reply.status, 429, "{}", String::from_utf8_lossy(&reply.bytes));
    assert_eq!(reply.rpc_code(), Some(-31429));
    assert!(reply.header("retry-after").is_some());
    assert_eq!(reply.header("ratelimit-limit"), Some("2"));
    assert_eq!(reply.header("ratelimit-remaining"), Some("0"));
    assert!(!String::from_utf8_lossy(&reply.bytes).contains("description"), "no row in the answer");
}

/// The process's memory of the caller's memberships is checked in the read's own
/// statement: a membership removed (or a role changed) since counts from the next read.
#[tokio::test]
async fn a_membership_removed_between_two_reads_is_gone_for_the_second() {
    let h = Harness::with_demo().await;
    let token = h.token(DEMO_VIEWER);
    assert_eq!(rows(&h.send(list(&token)).await).len(), 3);
    rides_next(&h, DEMO_VIEWER);
    let removed = query("DELETE FROM memberships WHERE user_id = $1 AND workspace_id = $2")
        .bind(DEMO_VIEWER)
        .bind(DEMO_WORKSPACE_ACME)
        .execute(&h.state.db)
        .await
        .unwrap();
    assert_eq!(removed, 1);
    let reply = h.send(list(&token)).await;
    assert_eq!(reply.status, 200);
    let result = reply.result();
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(tool_error(&result)["code"], "not_found", "as to any non-member: {result}");
    assert!(!result.to_string().contains("description"), "no row in the answer: {result}");
    // And what the process remembers follows.
    if h.state.db.backend == Backend::Postgres {
        let now = h.state.db.recent_memberships.get(DEMO_VIEWER).unwrap();
        assert!(now.memberships.iter().all(|m| m.workspace_id != DEMO_WORKSPACE_ACME), "{now:?}");
        assert_eq!(now, known(&h, DEMO_VIEWER).await, "with the version that goes with them");
    }
}

/// The count and the read in one statement, at the storage layer: the read's rows, in
/// their order, only when the count admits them; the outcome left for the request.
#[tokio::test]
async fn a_count_riding_on_a_statement_lets_its_rows_through_only_when_it_admits_them() {
    if !postgres_only("the riding count") {
        return;
    }
    let h = Harness::with_demo().await;
    let db = &h.state.db;
    let now = known(&h, DEMO_OWNER).await;
    let mine = now.memberships.to_vec();
    assert!(!mine.is_empty());
    let counted = |jti: Option<&str>, limit: i64, expected: Known| {
        Counting::new(DEMO_OWNER, "read", 1_000, jti, limit, expected, Take::Reserve(1))
    };
    let one = |n: i64| Numbers { first: n, last: n };
    let outcome = |slot: &Slot| slot.lock().unwrap().clone();
    let numbers = "SELECT n FROM generate_series(1, $1) n ORDER BY n DESC";

    // Admitted: every row, in the read's order, and the count's outcome — the
    // memberships not read again, their version being the one expected.
    let (counting, slot) = counted(None, 10, now.clone());
    let mut conn = db.acquire().await.unwrap().counting(counting);
    let read: Vec<i64> = query(numbers).bind(40_i64).map_all(&mut conn, |r| r.try_get(0)).await.unwrap();
    assert_eq!(read, (1..=40).rev().collect::<Vec<i64>>());
    let counted_with = |slot: &Slot| match outcome(slot) {
        Some(Outcome::Counted(hits, known)) => (hits, known),
        other => panic!("{other:?}"),
    };
    let (hits, found) = counted_with(&slot);
    assert_eq!(hits, one(1));
    assert!(std::sync::Arc::ptr_eq(&found.memberships, &now.memberships), "not read again: {found:?}");
    // Only the first statement carries it.
    let again: Vec<i64> = query(numbers).bind(2_i64).map_all(&mut conn, |r| r.try_get(0)).await.unwrap();
    assert_eq!(again, [2, 1]);
    assert!(matches!(outcome(&slot), Some(Outcome::Counted(n, _)) if n == one(1)));
    drop(conn);

    // A read that finds nothing is counted all the same.
    let (counting, slot) = counted(None, 10, now.clone());
    let mut conn = db.acquire().await.unwrap().counting(counting);
    let none: Vec<i64> = query(numbers).bind(0_i64).map_all(&mut conn, |r| r.try_get(0)).await.unwrap();
    assert!(none.is_empty());
    assert!(matches!(outcome(&slot), Some(Outcome::Counted(n, _)) if n == one(2)));
    drop(conn);

    // Over the limit, or memberships other than the request acted on (another
    // version): no row; the memberships as they stand, with their version.
    let older = |memberships: Vec<Membership>| Known { version: "older".into(), memberships: memberships.into() };
    for (limit, expected) in [(2, now.clone()), (10, older(Vec::new())), (10, older(mine[1..].to_vec()))] {
        let (counting, slot) = counted(None, limit, expected);
        let mut conn = db.acquire().await.unwrap().counting(counting);
        let refused = query(numbers).bind(3_i64).map_all(&mut conn, |r| r.try_get::<i64, _>(0)).await;
        assert!(matches!(refused, Err(Error::NotAdmitted)), "{refused:?}");
        assert_eq!(counted_with(&slot).1, now);
    }
    // Another version with the same memberships (a role changed and changed back):
    // read again, found the same, admitted.
    let (counting, slot) = counted(None, 10, older(mine.clone()));
    let mut conn = db.acquire().await.unwrap().counting(counting);
    let read: Vec<i64> = query(numbers).bind(2_i64).map_all(&mut conn, |r| r.try_get(0)).await.unwrap();
    assert_eq!(read, [2, 1]);
    assert_eq!(counted_with(&slot).1, now);
    drop(conn);

    // Revoked: nothing counted, no row let through.
    identity::revoke(db, "riding-revoked").await.unwrap();
    let (counting, slot) = counted(Some("riding-revoked"), 10, now.clone());
    let mut conn = db.acquire().await.unwrap().counting(counting);
    let refused = query(numbers).bind(3_i64).map_all(&mut conn, |r| r.try_get::<i64, _>(0)).await;
    assert!(matches!(refused, Err(Error::NotAdmitted)), "{refused:?}");
    assert!(matches!(outcome(&slot), Some(Outcome::Revoked)));
    drop(conn);

    // A read that fails is not counted with it: the outcome stays unknown, for the
    // request to count on its own.
    let (counting, slot) = counted(None, 10, now.clone());
    let mut conn = db.acquire().await.unwrap().counting(counting);
    let failed =
        query("SELECT 1 / (n - n) FROM generate_series(1, 1) n").map_all(&mut conn, |r| r.try_get::<i64, _>(0)).await;
    assert!(matches!(failed, Err(Error::Pg(_))), "{failed:?}");
    assert!(outcome(&slot).is_none(), "{:?}", outcome(&slot));
    drop(conn);

    // A first statement that is not a read runs only after the count, and not at all
    // when the count refuses it.
    let rename = "UPDATE workspaces SET name = name || '!' WHERE id = $1";
    let (counting, slot) = counted(None, 10, now.clone());
    let mut conn = db.acquire().await.unwrap().counting(counting);
    let changed = query(rename).bind(DEMO_WORKSPACE_ACME).execute(&mut conn).await.unwrap();
    assert_eq!(changed, 1);
    assert!(matches!(outcome(&slot), Some(Outcome::Counted(n, _)) if n == one(7)), "{:?}", outcome(&slot));
    drop(conn);
    let (counting, _) = counted(None, 1, now.clone());
    let mut conn = db.acquire().await.unwrap().counting(counting);
    assert!(matches!(query(rename).bind(DEMO_WORKSPACE_ACME).execute(&mut conn).await, Err(Error::NotAdmitted)));
    drop(conn);
    let name: String =
        query("SELECT name FROM workspaces WHERE id = $1").bind(DEMO_WORKSPACE_ACME).scalar(db).await.unwrap();
    assert!(name.ends_with('!') && !name.ends_with("!!"), "{name}");
}

/// A read that answers without a statement of its own (the workspaces list comes from
/// the memberships) still has its count sent — once — and still answers 401 once its
/// token is revoked.
#[tokio::test]
async fn a_read_that_runs_no_statement_is_counted_once_all_the_same() {
    let h = Harness::with_demo_and(|c| c.rate_limits.reads = 3).await;
    let token = h.token_with(DEMO_OWNER, None, |c| c.jti = Some("no-statement".into()));
    let workspaces = || {
        Mcp::modern("tools/call", json!({"name": "finance_workspaces_list", "arguments": {}})).bearer(&token).build()
    };
    assert_eq!(rows(&h.send(list(&token)).await).len(), 3);
    rides_next(&h, DEMO_OWNER);
    for _ in 0..2 {
        let reply = h.send(workspaces()).await;
        assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.bytes));
        assert!(reply.result()["structuredContent"].to_string().contains(DEMO_WORKSPACE_ACME));
    }
    let over = h.send(workspaces()).await;
    assert_eq!(over.status, 429, "the fourth read of a budget of three: {}", String::from_utf8_lossy(&over.bytes));
    assert_eq!(over.header("ratelimit-remaining"), Some("0"));
    assert!(!String::from_utf8_lossy(&over.bytes).contains(DEMO_WORKSPACE_ACME));

    let h = Harness::with_demo().await;
    let token = h.token_with(DEMO_OWNER, None, |c| c.jti = Some("no-statement-revoked".into()));
    assert_eq!(rows(&h.send(list(&token)).await).len(), 3);
    assert!(identity::revoke(&h.state.db, "no-statement-revoked").await.unwrap());
    let workspaces =
        Mcp::modern("tools/call", json!({"name": "finance_workspaces_list", "arguments": {}})).bearer(&token).build();
    let reply = h.send(workspaces).await;
    assert_eq!(reply.status, 401, "{}", String::from_utf8_lossy(&reply.bytes));
    assert!(!String::from_utf8_lossy(&reply.bytes).contains(DEMO_WORKSPACE_ACME));
}

/// The count comes after the read in their statement: the caller's counter row is
/// locked from the count to the commit only, not while the read runs — a user's
/// concurrent reads do not wait for each other's. Shown with the counter row held by
/// another transaction: the read (which advances a sequence, outside any transaction)
/// runs while its count waits; once the row is free, the count admits it.
#[tokio::test]
async fn a_riding_read_runs_before_its_count_takes_the_counter_row() {
    if !postgres_only("the riding count") {
        return;
    }
    let h = Harness::with_demo().await;
    let db = h.state.db.clone();
    query("CREATE SEQUENCE riding_probe").execute(&db).await.unwrap();
    let (counting, slot) =
        Counting::new(DEMO_OWNER, "read", 2_000, None, 10, known(&h, DEMO_OWNER).await, Take::Reserve(1));
    let mut conn = db.acquire().await.unwrap().counting(counting);
    let read = query("SELECT nextval('riding_probe') AS n").map_all(&mut conn, |r| r.try_get::<i64, _>(0)).await;
    assert_eq!(read.unwrap(), [1], "the first read makes the counter row");
    assert!(matches!(slot.lock().unwrap().clone(), Some(Outcome::Counted(Numbers { first: 1, last: 1 }, _))));
    drop(conn);

    let mut holder = db.begin().await.unwrap();
    let held = query("UPDATE rate_limit_counters SET hits = hits WHERE user_id = $1 AND window_start = 2000")
        .bind(DEMO_OWNER)
        .execute(&mut holder)
        .await
        .unwrap();
    assert_eq!(held, 1);
    let (counting, slot) =
        Counting::new(DEMO_OWNER, "read", 2_000, None, 10, known(&h, DEMO_OWNER).await, Take::Reserve(1));
    let mut conn = db.acquire().await.unwrap().counting(counting);
    let riding = tokio::spawn(async move {
        query("SELECT nextval('riding_probe') AS n").map_all(&mut conn, |r| r.try_get::<i64, _>(0)).await
    });
    let probed = async {
        loop {
            let last: i64 = query("SELECT last_value FROM riding_probe").scalar(&db).await.unwrap();
            if last == 2 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(20), probed)
        .await
        .expect("the read ran while its count waited for the counter row");
    assert!(!riding.is_finished(), "the count waits for the row");
    assert!(slot.lock().unwrap().is_none());
    drop(holder);
    let read = tokio::time::timeout(std::time::Duration::from_secs(20), riding).await.unwrap().unwrap();
    assert_eq!(read.unwrap(), [2]);
    assert!(
        matches!(slot.lock().unwrap().clone(), Some(Outcome::Counted(Numbers { first: 2, last: 2 }, _))),
        "{:?}",
        slot.lock().unwrap()
    );
}

/// The statements the storage layer traces (`kobana_finance_mcp::sql`) while `f` runs on
/// this thread.
pub async fn statements_of<F: std::future::Future<Output = ()>>(f: F) -> Vec<String> {
    let captured = Captured::default();
    let guard = tracing::subscriber::set_default(captured.subscriber());
    f.await;
    drop(guard);
    captured.statements()
}

/// A read whose count rode on it ran before its count refused it (its rows dropped):
/// from then on that caller's requests are counted first, and a refused one — past the
/// budget, or with a revoked token — runs no read at all.
#[tokio::test(flavor = "current_thread")]
async fn after_a_refusal_the_callers_reads_are_counted_before_they_run() {
    let h = Harness::with_demo_and(|c| c.rate_limits.reads = 1).await;
    let token = h.token(DEMO_OWNER);
    assert_eq!(rows(&h.send(list(&token)).await).len(), 3);
    rides_next(&h, DEMO_OWNER);
    assert_eq!(h.send(list(&token)).await.status, 429);
    assert!(h.state.db.recent_memberships.get(DEMO_OWNER).is_none(), "not remembered once refused");
    for _ in 0..2 {
        let ran = statements_of(async { assert_eq!(h.send(list(&token)).await.status, 429) }).await;
        assert!(ran.iter().any(|s| s.contains("INSERT INTO rate_limit_counters")), "counted: {ran:#?}");
        assert!(!ran.iter().any(|s| s.contains("FROM billings")), "no read past the budget: {ran:#?}");
    }

    let viewer = h.token_with(DEMO_VIEWER, None, |c| c.jti = Some("refused-then-counted-first".into()));
    assert_eq!(rows(&h.send(list(&viewer)).await).len(), 3);
    rides_next(&h, DEMO_VIEWER);
    assert!(identity::revoke(&h.state.db, "refused-then-counted-first").await.unwrap());
    assert_eq!(h.send(list(&viewer)).await.status, 401);
    assert!(h.state.db.recent_memberships.get(DEMO_VIEWER).is_none(), "not remembered once refused");
    let ran = statements_of(async { assert_eq!(h.send(list(&viewer)).await.status, 401) }).await;
    assert!(!ran.iter().any(|s| s.contains("FROM billings")), "no read for a revoked token: {ran:#?}");
}

/// The connection a request's count took is lent to its read ([`Held::acquire`]): dropped
/// still carrying the count (the read sent no statement on it, or failed before one), it
/// comes back to the request, which sends the count on it — not on a second connection
/// from the pool; once a statement carried the count, it goes back to the pool.
#[tokio::test]
async fn a_lent_connection_still_carrying_the_count_comes_back_to_the_request() {
    if !postgres_only("the riding count") {
        return;
    }
    let h = Harness::with_demo().await;
    let db = &h.state.db;
    let mine = known(&h, DEMO_OWNER).await;
    let outcome = |slot: &Slot| slot.lock().unwrap().clone();

    let (counting, slot) = Counting::new(DEMO_OWNER, "read", 3_000, None, 10, mine.clone(), Take::Reserve(1));
    let held = Held::new(Some(db.acquire().await.unwrap().counting(counting)));
    drop(held.acquire(db).await.unwrap());
    let mut back = held.take().expect("the connection is back with the request");
    assert!(outcome(&slot).is_none(), "nothing sent yet");
    back.send_count().await.unwrap();
    assert!(matches!(outcome(&slot), Some(Outcome::Counted(Numbers { first: 1, last: 1 }, _))), "{:?}", outcome(&slot));
    drop(back);

    let (counting, slot) = Counting::new(DEMO_OWNER, "read", 3_000, None, 10, mine, Take::Reserve(1));
    let held = Held::new(Some(db.acquire().await.unwrap().counting(counting)));
    let mut lent = held.acquire(db).await.unwrap();
    let one: Vec<i64> = query("SELECT 1 AS one").map_all(&mut *lent, |r| r.try_get(0)).await.unwrap();
    assert_eq!(one, [1]);
    drop(lent);
    assert!(matches!(outcome(&slot), Some(Outcome::Counted(Numbers { first: 2, last: 2 }, _))), "{:?}", outcome(&slot));
    assert!(held.take().is_none(), "a connection whose count was sent goes back to the pool");
}

/// The version of a user's memberships (what a riding count checks instead of reading
/// them) is set anew — never to one it had before — with every change to what they are,
/// in the same transaction, on both backends: a membership added, given another role or
/// removed, a workspace of theirs renamed. A workspace's other changes and other users'
/// memberships leave it.
#[tokio::test]
async fn the_version_of_a_users_memberships_changes_with_every_change_to_them() {
    let h = Harness::with_demo().await;
    let db = &h.state.db;
    let version = |user: &'static str| async move {
        query("SELECT memberships_version FROM users WHERE id = $1").bind(user).scalar::<String>(db).await.unwrap()
    };
    let (viewer, owner) = (version(DEMO_VIEWER).await, version(DEMO_OWNER).await);
    let mut seen = std::collections::HashSet::from([viewer.clone(), owner.clone()]);
    let changes = [
        "INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES ($1, $2, 'viewer', '2026-12-06T00:00:00Z')",
        "UPDATE memberships SET role = 'finance' WHERE workspace_id = $1 AND user_id = $2",
        "UPDATE memberships SET role = 'finance' WHERE workspace_id = $1 AND user_id = $2",
        "DELETE FROM memberships WHERE workspace_id = $1 AND user_id = $2",
    ];
    for change in changes {
        let mut tx = db.begin().await.unwrap();
        let changed = query(change).bind(DEMO_WORKSPACE_BETA).bind(DEMO_VIEWER).execute(&mut tx).await.unwrap();
        assert_eq!(changed, 1, "{change}");
        tx.commit().await.unwrap();
        assert!(seen.insert(version(DEMO_VIEWER).await), "a version not seen before: {change}");
    }
    assert_eq!(version(DEMO_OWNER).await, owner, "another user's memberships changed");
    // The version changes inside the change's own transaction, and a change rolled
    // back takes its version with it.
    let viewer = version(DEMO_VIEWER).await;
    let mut tx = db.begin().await.unwrap();
    query(changes[0]).bind(DEMO_WORKSPACE_BETA).bind(DEMO_VIEWER).execute(&mut tx).await.unwrap();
    let inside: String =
        query("SELECT memberships_version FROM users WHERE id = $1").bind(DEMO_VIEWER).scalar(&mut tx).await.unwrap();
    assert!(!seen.contains(&inside), "changed within the transaction");
    drop(tx);
    assert_eq!(version(DEMO_VIEWER).await, viewer);
    assert!(identity::memberships(db, DEMO_VIEWER)
        .await
        .unwrap()
        .iter()
        .all(|m| m.workspace_id != DEMO_WORKSPACE_BETA));

    // Renaming Acme moves its members' versions (the owner's, the viewer's), not Beta's
    // owner's; an update that keeps the name, or changes something else, moves none.
    let beta_owner = version(DEMO_BETA_OWNER).await;
    let rename = "UPDATE workspaces SET name = $1 WHERE id = $2";
    query(rename).bind("Acme Comércio S.A.").bind(DEMO_WORKSPACE_ACME).execute(db).await.unwrap();
    let (owner, viewer) = (version(DEMO_OWNER).await, version(DEMO_VIEWER).await);
    assert!(seen.insert(owner.clone()) && seen.insert(viewer.clone()), "both members' versions changed");
    assert_ne!(owner, viewer, "each its own");
    assert_eq!(version(DEMO_BETA_OWNER).await, beta_owner);
    query(rename).bind("Acme Comércio S.A.").bind(DEMO_WORKSPACE_ACME).execute(db).await.unwrap();
    query("UPDATE workspaces SET payment_approval_gate = payment_approval_gate WHERE id = $1")
        .bind(DEMO_WORKSPACE_ACME)
        .execute(db)
        .await
        .unwrap();
    assert_eq!((version(DEMO_OWNER).await, version(DEMO_VIEWER).await), (owner, viewer));
}

/// A membership added since the process read the caller's memberships counts from the
/// caller's next read: its version moved, so the read's statement reads them again and
/// the request is answered on them.
#[tokio::test]
async fn a_membership_added_between_two_reads_counts_for_the_second() {
    let h = Harness::with_demo().await;
    let token = h.token(DEMO_VIEWER);
    let beta = || {
        let arguments = json!({"workspace_id": DEMO_WORKSPACE_BETA, "limit": 3, "fields": ["id", "description"]});
        Mcp::modern("tools/call", json!({"name": "finance_payables_list", "arguments": arguments}))
            .bearer(&token)
            .build()
    };
    let reply = h.send(beta()).await;
    assert_eq!(tool_error(&reply.result())["code"], "not_found", "not a member yet");
    assert_eq!(rows(&h.send(list(&token)).await).len(), 3);
    rides_next(&h, DEMO_VIEWER);
    query("INSERT INTO memberships (workspace_id, user_id, role, created_at) VALUES ($1, $2, 'viewer', '2026-12-06T00:00:00Z')")
        .bind(DEMO_WORKSPACE_BETA)
        .bind(DEMO_VIEWER)
        .execute(&h.state.db)
        .await
        .unwrap();
    assert!(!rows(&h.send(beta()).await).is_empty(), "a member now");
    if h.state.db.backend == Backend::Postgres {
        assert_eq!(h.state.db.recent_memberships.get(DEMO_VIEWER).unwrap(), known(&h, DEMO_VIEWER).await);
    }
}

/// A role changed since the process read the caller's memberships is the role the
/// caller's next read is answered on (SPEC §6: every operation checks the role): the
/// workspaces list, which answers from the memberships themselves, shows the new one.
#[tokio::test]
async fn a_role_changed_between_two_reads_is_the_role_of_the_second() {
    let h = Harness::with_demo().await;
    let token = h.token(DEMO_VIEWER);
    let role_in_acme = |reply: &Reply| {
        assert_eq!(reply.status, 200, "{}", String::from_utf8_lossy(&reply.bytes));
        let result = reply.result();
        let data = result["structuredContent"]["data"].as_array().cloned().unwrap_or_default();
        let acme = data.iter().find(|w| w["id"] == DEMO_WORKSPACE_ACME).cloned();
        acme.unwrap_or_else(|| panic!("{result}"))["role"].clone()
    };
    let workspaces = || {
        Mcp::modern("tools/call", json!({"name": "finance_workspaces_list", "arguments": {}})).bearer(&token).build()
    };
    assert_eq!(role_in_acme(&h.send(workspaces()).await), "viewer");
    assert_eq!(rows(&h.send(list(&token)).await).len(), 3);
    rides_next(&h, DEMO_VIEWER);
    let changed = query("UPDATE memberships SET role = 'finance' WHERE workspace_id = $1 AND user_id = $2")
        .bind(DEMO_WORKSPACE_ACME)
        .bind(DEMO_VIEWER)
        .execute(&h.state.db)
        .await
        .unwrap();
    assert_eq!(changed, 1);
    assert_eq!(role_in_acme(&h.send(workspaces()).await), "finance");
}

/// A riding count that reserves a block adds it to the counter at once and takes its
/// first number; one that holds a number writes nothing and still reads the token's
/// revocation and the budget.
#[tokio::test]
async fn a_reserved_block_is_counted_at_once_and_a_held_number_writes_nothing() {
    if !postgres_only("the riding count") {
        return;
    }
    let h = Harness::with_demo().await;
    let db = &h.state.db;
    let now = known(&h, DEMO_OWNER).await;
    let outcome = |slot: &Slot| slot.lock().unwrap().clone();
    let numbers = "SELECT n FROM generate_series(1, $1) n ORDER BY n DESC";
    let hits = || async {
        query("SELECT hits FROM rate_limit_counters WHERE user_id = $1 AND window_start = 5000")
            .bind(DEMO_OWNER)
            .scalar::<i64>(db)
            .await
            .unwrap()
    };
    let ride = |jti: Option<&str>, limit: i64, take: Take| {
        let (counting, slot) = Counting::new(DEMO_OWNER, "read", 5_000, jti, limit, now.clone(), take);
        async move {
            let mut conn = db.acquire().await.unwrap().counting(counting);
            let read = query(numbers).bind(2_i64).map_all(&mut conn, |r| r.try_get::<i64, _>(0)).await;
            (read, outcome(&slot))
        }
    };

    let (read, found) = ride(None, 10, Take::Reserve(4)).await;
    assert_eq!(read.unwrap(), [2, 1]);
    assert!(matches!(found, Some(Outcome::Counted(Numbers { first: 1, last: 4 }, _))), "{found:?}");
    assert_eq!(hits().await, 4, "the block counted at once");

    let (read, found) = ride(None, 10, Take::Held(2)).await;
    assert_eq!(read.unwrap(), [2, 1]);
    assert!(matches!(found, Some(Outcome::Counted(Numbers { first: 2, last: 2 }, _))), "{found:?}");
    assert_eq!(hits().await, 4, "a held number writes nothing");

    // A held number past the budget admits nothing; a revoked token gets nothing either.
    let (read, found) = ride(None, 10, Take::Held(11)).await;
    assert!(matches!(read, Err(Error::NotAdmitted)), "{read:?}");
    assert!(matches!(found, Some(Outcome::Counted(Numbers { first: 11, last: 11 }, _))), "{found:?}");
    identity::revoke(db, "held-revoked").await.unwrap();
    let (read, found) = ride(Some("held-revoked"), 10, Take::Held(3)).await;
    assert!(matches!(read, Err(Error::NotAdmitted)), "{read:?}");
    assert!(matches!(found, Some(Outcome::Revoked)), "{found:?}");
    let (read, found) = ride(Some("held-revoked"), 10, Take::Reserve(4)).await;
    assert!(matches!(read, Err(Error::NotAdmitted)), "{read:?}");
    assert!(matches!(found, Some(Outcome::Revoked)), "{found:?}");
    assert_eq!(hits().await, 4, "nothing counted for a revoked token");

    // A block that crosses the limit: its first number decides.
    let (read, found) = ride(None, 6, Take::Reserve(4)).await;
    assert_eq!(read.unwrap(), [2, 1]);
    assert!(matches!(found, Some(Outcome::Counted(Numbers { first: 5, last: 8 }, _))), "{found:?}");
    let (read, _) = ride(None, 8, Take::Reserve(4)).await;
    assert!(matches!(read, Err(Error::NotAdmitted)), "{read:?}");
    assert_eq!(hits().await, 12);
}

/// A caller's reads on one process, on PostgreSQL riding on their statements: the
/// counter is written once per block (1, 2, 4, 8, 16, 16 numbers…), and the budget
/// still admits exactly its limit — the read after it is 429, with no rows. A read of a
/// token revoked meanwhile spends nothing of it, held numbers or not.
#[tokio::test]
async fn a_callers_riding_reads_are_counted_in_blocks_and_admitted_to_the_limit() {
    const READS: i64 = 600;
    let h = Harness::with_demo_and(|c| c.rate_limits.reads = READS).await;
    let token = h.token_with(DEMO_OWNER, None, |c| c.jti = Some("blocks-revoked".into()));
    let hits = || async {
        query("SELECT CAST(SUM(hits) AS BIGINT) FROM rate_limit_counters WHERE user_id = $1")
            .bind(DEMO_OWNER)
            .scalar::<i64>(&h.state.db)
            .await
            .unwrap()
    };
    for _ in 0..41 {
        assert_eq!(rows(&h.send(list(&token)).await).len(), 3);
    }
    // The first read is counted before it runs (one hit); on PostgreSQL the others ride,
    // reserving blocks. On SQLite each is counted.
    let expected = match h.state.db.backend {
        Backend::Postgres => 1 + (1 + 2 + 4 + 8 + 16 + 16),
        Backend::Sqlite => 41,
    };
    assert_eq!(hits().await, expected);
    assert!(identity::revoke(&h.state.db, "blocks-revoked").await.unwrap());
    assert_eq!(h.send(list(&token)).await.status, 401);
    let token = h.token(DEMO_OWNER);
    for n in 42..=READS {
        let reply = h.send(list(&token)).await;
        assert_eq!(reply.status, 200, "read {n} of {READS}: {}", String::from_utf8_lossy(&reply.bytes));
        assert_eq!(rows(&reply).len(), 3);
    }
    let reply = h.send(list(&token)).await;
    assert_eq!(reply.status, 429, "{}", String::from_utf8_lossy(&reply.bytes));
    assert_eq!(reply.rpc_code(), Some(-31429));
    assert_eq!(reply.header("ratelimit-limit"), Some(READS.to_string().as_str()));
    assert_eq!(reply.header("ratelimit-remaining"), Some("0"));
    let retry = reply.header("retry-after").expect("Retry-After on a 429").to_string();
    assert_eq!(reply.json()["error"]["data"]["retryAfterSeconds"].to_string(), retry);
    assert!(!String::from_utf8_lossy(&reply.bytes).contains("description"), "no row in the answer");
    assert_eq!(hits().await, READS + 1, "no number reserved near the limit is left unused");
}

/// A read that gets no connection (the database is gone: 503) takes no number: the
/// numbers its process holds are still there, in order, for the reads after it.
#[tokio::test]
async fn a_read_that_gets_no_connection_leaves_the_held_numbers_as_they_were() {
    if !postgres_only("the riding count") {
        return;
    }
    let h = Harness::with_demo_and(|c| c.rate_limits.window_seconds = 86_400).await;
    let token = h.token(DEMO_OWNER);
    // Counted first (1), then blocks of 1 (2), 2 (3, 4) and 4 (5 to 8): 6, 7, 8 held.
    for _ in 0..5 {
        assert_eq!(rows(&h.send(list(&token)).await).len(), 3);
    }
    let reserved = std::sync::Arc::clone(&h.state.db.reserved_hits);
    h.state.db.close().await;
    let reply = h.send(list(&token)).await;
    assert_eq!(reply.status, 503, "{}", String::from_utf8_lossy(&reply.bytes));
    let now = kobana_finance_mcp::clock::now_unix();
    let window = now - now.rem_euclid(86_400);
    assert_eq!(reserved.take(DEMO_OWNER, "read", window), Take::Held(6));
}
