//! Rate-limit counters, shared by every replica through the database: one atomic
//! upsert per request returns the new count of the caller's current window. The count is
//! a request's first statement: on a pooled connection found gone it is sent again
//! ([`retry_if_lost`](super::retry_if_lost)).

use std::sync::LazyLock;

use crate::storage::sql;

use super::identity::{self, Membership};
use super::{Backend, Conn, Db};

/// One hit for user `$1` in bucket `$2` (`read`/`write`) in the window starting at
/// `$3`, returning the hits so far including this one — unless the token `$4` is on the
/// deny list: then nothing is counted and no row returned. (`$4` is NULL for a token
/// without an id, which cannot be revoked.)
const HIT_UNLESS_REVOKED: &str = "INSERT INTO rate_limit_counters (user_id, bucket, window_start, hits)
     SELECT $1, $2, $3, 1 WHERE NOT EXISTS (SELECT 1 FROM revoked_tokens WHERE jti = $4)
     ON CONFLICT (user_id, bucket, window_start)
     DO UPDATE SET hits = rate_limit_counters.hits + 1
     RETURNING hits";

/// PostgreSQL: the hit and the user's memberships in one statement, a row per
/// membership (one row with NULL membership columns for a user with none); no row when
/// the token is revoked. Composed once per process from the two statements it joins.
static HIT_WITH_MEMBERSHIPS: LazyLock<String> = LazyLock::new(|| {
    format!(
        "WITH hit AS ({HIT_UNLESS_REVOKED})
     SELECT hit.hits, mine.workspace_id, mine.workspace_name, mine.role
       FROM hit LEFT JOIN ({}) mine ON TRUE
      ORDER BY mine.workspace_name, mine.workspace_id",
        identity::MEMBERSHIPS_OF_USER
    )
});

/// Counts one hit of a token that is not revoked, in one statement: `None` when `jti`
/// is on the deny list (nothing is counted then).
pub async fn hit_unless_revoked(
    db: &Db,
    user_id: &str,
    bucket: &str,
    window_start: i64,
    jti: Option<&str>,
) -> Result<Option<i64>, crate::storage::Error> {
    let hit = || {
        sql::query(HIT_UNLESS_REVOKED)
            .bind(user_id)
            .bind(bucket)
            .bind(window_start)
            .bind(jti)
            .map_optional(db, |r| r.try_get(0))
    };
    super::retry_if_lost(hit).await
}

/// The hits so far, the caller's memberships, and on PostgreSQL the connection they were
/// read on, for the request to go on with ([`Held`](super::Held)).
pub type Hit = (i64, Vec<Membership>, Option<Conn>);

/// As [`hit_unless_revoked`], and the caller's memberships read with it: on PostgreSQL
/// in the same statement (one round trip), on SQLite in the same transaction. With
/// `keep`, PostgreSQL's connection comes back with them.
pub async fn hit_with_memberships(
    db: &Db,
    user_id: &str,
    bucket: &str,
    window_start: i64,
    jti: Option<&str>,
    keep: bool,
) -> Result<Option<Hit>, crate::storage::Error> {
    match db.backend {
        Backend::Postgres => {
            let hit = || async {
                let mut conn = db.acquire().await?;
                let rows = sql::query(HIT_WITH_MEMBERSHIPS.as_str())
                    .bind(user_id)
                    .bind(bucket)
                    .bind(window_start)
                    .bind(jti)
                    .map_all(&mut conn, |row| Ok((row.try_get::<i64, _>(0)?, identity::membership(row, 1)?)))
                    .await?;
                Ok((rows, conn))
            };
            let (rows, conn) = super::retry_if_lost(hit).await?;
            let Some(&(hits, _)) = rows.first() else { return Ok(None) };
            Ok(Some((hits, rows.into_iter().filter_map(|(_, m)| m).collect(), keep.then_some(conn))))
        }
        Backend::Sqlite => {
            let mut tx = db.begin().await?;
            let Some(hits) = sql::query(HIT_UNLESS_REVOKED)
                .bind(user_id)
                .bind(bucket)
                .bind(window_start)
                .bind(jti)
                .map_optional(&mut tx, |r| r.try_get(0))
                .await?
            else {
                return Ok(None);
            };
            let memberships = sql::query(identity::MEMBERSHIPS.as_str())
                .bind(user_id)
                .map_all(&mut tx, |row| identity::membership(row, 0))
                .await?;
            tx.commit().await?;
            Ok(Some((hits, memberships.into_iter().flatten().collect(), None)))
        }
    }
}

/// Drops counters of windows that started before `before` (see `housekeeping`).
pub async fn prune(db: &Db, before: i64) -> Result<u64, crate::storage::Error> {
    sql::query("DELETE FROM rate_limit_counters WHERE window_start < $1").bind(before).execute(db).await
}
