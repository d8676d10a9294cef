//! Rate-limit counters, shared by every replica through the database: one atomic
//! upsert per request returns the new count of the caller's current window.

use crate::storage::sql;

use super::Db;

/// Counts one hit for `user_id` in `bucket` (`read`/`write`) in the window starting at
/// `window_start`, returning the hits so far including this one.
pub async fn hit(db: &Db, user_id: &str, bucket: &str, window_start: i64) -> Result<i64, crate::storage::Error> {
    let row = sql::query(
        "INSERT INTO rate_limit_counters (user_id, bucket, window_start, hits) VALUES ($1, $2, $3, 1)
         ON CONFLICT (user_id, bucket, window_start)
         DO UPDATE SET hits = rate_limit_counters.hits + 1
         RETURNING hits",
    )
    .bind(user_id)
    .bind(bucket)
    .bind(window_start)
    .fetch_one(db)
    .await?;
    row.try_get(0)
}

/// As [`hit`], but only for a token that is not revoked, in one statement: `None`
/// when `jti` is on the deny list (nothing is counted then).
pub async fn hit_unless_revoked(db: &Db, user_id: &str, bucket: &str, window_start: i64, jti: &str) -> Result<Option<i64>, crate::storage::Error> {
    let row = sql::query(
        "INSERT INTO rate_limit_counters (user_id, bucket, window_start, hits)
         SELECT $1, $2, $3, 1 WHERE NOT EXISTS (SELECT 1 FROM revoked_tokens WHERE jti = $4)
         ON CONFLICT (user_id, bucket, window_start)
         DO UPDATE SET hits = rate_limit_counters.hits + 1
         RETURNING hits",
    )
    .bind(user_id)
    .bind(bucket)
    .bind(window_start)
    .bind(jti)
    .fetch_optional(db)
    .await?;
    row.map(|r| r.try_get(0)).transpose()
}

/// Drops counters of windows that started before `before` (see `housekeeping`).
pub async fn prune(db: &Db, before: i64) -> Result<u64, crate::storage::Error> {
    sql::query("DELETE FROM rate_limit_counters WHERE window_start < $1").bind(before).execute(db).await
}
