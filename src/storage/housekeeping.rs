//! Housekeeping that every replica does now and then, in any mode (a Lambda instance
//! never runs `serve`'s start-up steps): dropping rate-limit counters of past windows,
//! removing the S3 objects of deleted attachments, and sweeping the authorization
//! server's expired codes, tokens, documents and grants.
//!
//! It is piggy-backed on requests: the first request a process counts, and then at most
//! one per interval, starts a run on a task of its own, off that request's latency path.
//! Replicas do not coordinate; both jobs are idempotent, so two running at once only
//! repeat each other's work.

use std::sync::atomic::{AtomicI64, Ordering};

use crate::storage::{sql, Conn};

use super::blob::BlobStore;
use super::Db;

/// How many deleted attachments' objects one run removes at most.
const BLOB_BATCH: i64 = 100;

/// When this process last ran its housekeeping.
#[derive(Debug)]
pub struct Housekeeping {
    interval_seconds: i64,
    /// Unix seconds of the last run claimed; `i64::MIN` before the first.
    last: AtomicI64,
}

impl Housekeeping {
    /// Runs at most once per `interval_seconds` (at least one second).
    pub fn new(interval_seconds: i64) -> Housekeeping {
        Housekeeping { interval_seconds: interval_seconds.max(1), last: AtomicI64::new(i64::MIN) }
    }

    /// Whether a run is due at `now` (Unix seconds); `true` for exactly one caller per
    /// interval, however many ask at once.
    pub fn claim(&self, now: i64) -> bool {
        let last = self.last.load(Ordering::Relaxed);
        if last != i64::MIN && now.saturating_sub(last) < self.interval_seconds {
            return false;
        }
        self.last.compare_exchange(last, now, Ordering::AcqRel, Ordering::Relaxed).is_ok()
    }
}

/// What one run did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Report {
    /// Rate-limit counters dropped.
    pub counters_pruned: u64,
    /// Objects of deleted attachments removed from the blob store.
    pub blobs_removed: usize,
    /// The authorization server's rows that expired (codes, refresh tokens, access
    /// tokens' ids, cached client documents, ended grants, unused registrations).
    pub oauth_swept: u64,
}

/// One run: counters of windows that started before `counters_before` are dropped, and
/// a batch of pending object removals is carried out. Failures are logged and left for
/// the next run.
pub async fn run(db: &Db, blobs: &BlobStore, counters_before: i64) -> Report {
    let mut report = Report::default();
    match super::rate_limit::prune(db, counters_before).await {
        Ok(n) => report.counters_pruned = n,
        Err(e) => tracing::warn!(error = %e, "could not prune rate-limit counters"),
    }
    match remove_deleted_blobs(db, blobs).await {
        Ok(n) => report.blobs_removed = n,
        Err(e) => tracing::warn!(error = %e, "could not read the pending object removals"),
    }
    match super::oauth::sweep(db, crate::clock::now_unix()).await {
        Ok(n) => report.oauth_swept = n,
        Err(e) => tracing::warn!(error = %e, "could not sweep the authorization server's expired rows"),
    }
    if report != Report::default() {
        tracing::info!(
            counters_pruned = report.counters_pruned,
            blobs_removed = report.blobs_removed,
            oauth_swept = report.oauth_swept,
            "housekeeping"
        );
    }
    report
}

/// Records, in the caller's transaction, that the object at `location` is to be removed
/// once that transaction has committed (an outbox: the entry exists only if the delete
/// of its attachment does).
pub async fn queue_blob_removal(conn: &mut Conn, location: &str) -> Result<(), crate::storage::Error> {
    sql::query("INSERT INTO blob_deletions (blob_key, requested_at) VALUES ($1, $2) ON CONFLICT (blob_key) DO NOTHING")
        .bind(location)
        .bind(crate::clock::now_rfc3339())
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Removes the objects whose attachments were deleted, oldest first, and their queue
/// entries. No connection is held while the store is called. Stops at the first store
/// failure: the rest waits for the next run.
pub async fn remove_deleted_blobs(db: &Db, blobs: &BlobStore) -> Result<usize, crate::storage::Error> {
    let pending: Vec<String> =
        sql::query("SELECT blob_key FROM blob_deletions ORDER BY requested_at, blob_key LIMIT $1")
            .bind(BLOB_BATCH)
            .map_all(db, |row| row.try_get(0))
            .await?;
    let mut removed = 0;
    for location in pending {
        if blobs.remove(&location).await.is_err() {
            break;
        }
        sql::query("DELETE FROM blob_deletions WHERE blob_key = $1").bind(&location).execute(db).await?;
        removed += 1;
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_due_first_and_then_once_per_interval() {
        let h = Housekeeping::new(60);
        assert!(h.claim(1_000), "the first request of a process runs it");
        assert!(!h.claim(1_000));
        assert!(!h.claim(1_059));
        assert!(h.claim(1_060));
        assert!(!h.claim(1_061));
        assert!(h.claim(5_000));
    }

    #[test]
    fn one_caller_claims_a_due_run() {
        let h = std::sync::Arc::new(Housekeeping::new(3_600));
        let winners: usize = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8).map(|_| s.spawn(|| h.claim(42) as usize)).collect();
            handles.into_iter().map(|t| t.join().unwrap()).sum()
        });
        assert_eq!(winners, 1);
    }
}
