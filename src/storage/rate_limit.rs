//! Rate-limit counters, shared by every replica through the database: one atomic
//! upsert per request returns the new count of the caller's current window. The count is
//! a request's first statement: on a pooled connection found gone it is sent again
//! ([`retry_if_lost`](super::retry_if_lost)). On PostgreSQL a read's count can ride on
//! the read itself, in one statement ([`Counting`]).

use std::sync::{Arc, LazyLock, Mutex};

use crate::domain::roles::Role;
use crate::storage::sql::{self, Arg, NullOf};

use super::identity::{self, Known, Membership};
use super::{Backend, Conn, Db, Error, OwnedRow};

/// One hit for user `$user` in bucket `$bucket` (`read`/`write`) in the window starting
/// at `$window`, returning the hits so far including this one — unless the token `$jti`
/// is on the deny list: then nothing is counted and no row returned. (`$jti` is NULL for
/// a token without an id, which cannot be revoked.) The parameters' positions are given.
fn hit_sql(user: usize, bucket: usize, window: usize, jti: usize) -> String {
    format!(
        "INSERT INTO rate_limit_counters (user_id, bucket, window_start, hits)
     SELECT ${user}, ${bucket}, ${window}, 1 WHERE NOT EXISTS (SELECT 1 FROM revoked_tokens WHERE jti = ${jti})
     ON CONFLICT (user_id, bucket, window_start)
     DO UPDATE SET hits = rate_limit_counters.hits + 1
     RETURNING hits"
    )
}

/// [`hit_sql`] with the parameters `$1` to `$4`.
static HIT_UNLESS_REVOKED: LazyLock<String> = LazyLock::new(|| hit_sql(1, 2, 3, 4));

/// PostgreSQL: the hit, the version of the user's memberships and the memberships in one
/// statement, a row per membership (one row with NULL membership columns for a user
/// with none); no row when the token is revoked. Composed once per process from the
/// statements it joins.
static HIT_WITH_MEMBERSHIPS: LazyLock<String> = LazyLock::new(|| {
    format!(
        "WITH hit AS ({})
     SELECT hit.hits, {}, mine.workspace_id, mine.workspace_name, mine.role
       FROM hit LEFT JOIN ({}) mine ON TRUE
      ORDER BY mine.workspace_name, mine.workspace_id",
        HIT_UNLESS_REVOKED.as_str(),
        identity::version_of_user(1),
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
        sql::query(HIT_UNLESS_REVOKED.as_str())
            .bind(user_id)
            .bind(bucket)
            .bind(window_start)
            .bind(jti)
            .map_optional(db, |r| r.try_get(0))
    };
    super::retry_if_lost(hit).await
}

/// What [`hit_with_memberships`] counted and read.
pub struct Hit {
    /// The hits so far, this one included.
    pub hits: i64,
    /// The caller's memberships, in [`identity::MEMBERSHIPS`]' order.
    pub memberships: Vec<Membership>,
    /// PostgreSQL: the version of those memberships ([`Known`]); `None` on SQLite.
    pub version: Option<Arc<str>>,
    /// PostgreSQL, when asked for: the connection they were read on, for the request to
    /// go on with ([`Held`](super::Held)).
    pub conn: Option<Conn>,
}

impl Hit {
    /// The memberships with their version, for the process to remember (PostgreSQL;
    /// without one, [`Known::UNSURE`]).
    pub fn known(&self) -> Known {
        let version = self.version.clone().unwrap_or_else(|| Known::UNSURE.into());
        Known { version, memberships: self.memberships.as_slice().into() }
    }
}

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
                    .map_all(&mut conn, |row| {
                        Ok((row.try_get::<i64, _>(0)?, row.try_get::<String, _>(1)?, identity::membership(row, 2)?))
                    })
                    .await?;
                Ok((rows, conn))
            };
            let (rows, conn) = super::retry_if_lost(hit).await?;
            let Some((hits, version, _)) = rows.first() else { return Ok(None) };
            let (hits, version) = (*hits, Some(version.as_str().into()));
            let memberships = rows.into_iter().filter_map(|(_, _, m)| m).collect();
            Ok(Some(Hit { hits, memberships, version, conn: keep.then_some(conn) }))
        }
        Backend::Sqlite => {
            let mut tx = db.begin().await?;
            let Some(hits) = sql::query(HIT_UNLESS_REVOKED.as_str())
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
            Ok(Some(Hit { hits, memberships: memberships.into_iter().flatten().collect(), version: None, conn: None }))
        }
    }
}

/// What the count that rode on a request's first statement found ([`Counting`]).
#[derive(Debug, Clone)]
pub enum Outcome {
    /// The token is revoked: nothing was counted.
    Revoked,
    /// Counted: the hits so far, and the caller's memberships as they stand.
    Counted(i64, Known),
    /// The connection was found gone: whether the hit was counted is not known.
    Lost,
}

/// Where a [`Counting`] leaves its [`Outcome`] for the request to read once its answer
/// is computed; empty when no statement carried the count.
pub type Slot = Arc<Mutex<Option<Outcome>>>;

/// A request's count that rides on the first statement of its connection (PostgreSQL,
/// see [`Conn::counting`]): a read is sent with the hit and the version of the caller's
/// memberships after it, in one statement — one round trip where the count and the read
/// took two; anything else is sent after the count has been sent alone. The
/// memberships themselves are read only when their version is not the one the request
/// acted on (`expected`). The read's rows are let through only when the token is not
/// revoked, the hit is within `limit` and the memberships are the ones the request acted
/// on; otherwise its statement fails with [`Error::NotAdmitted`] and the request answers
/// from the [`Outcome`].
pub struct Counting {
    user_id: String,
    bucket: &'static str,
    window_start: i64,
    jti: Option<String>,
    limit: i64,
    expected: Known,
    slot: Slot,
}

impl Counting {
    /// What a first statement that is not a read is preceded by: the count, with a read
    /// of nothing.
    pub(super) const NOTHING: &str = "SELECT 1 WHERE FALSE";

    /// The columns [`Counting::statement`] adds after the read's.
    const ADDED_COLUMNS: usize = 3;

    pub fn new(
        user_id: &str,
        bucket: &'static str,
        window_start: i64,
        jti: Option<&str>,
        limit: i64,
        expected: Known,
    ) -> (Counting, Slot) {
        let slot = Slot::default();
        let counting = Counting {
            user_id: user_id.to_string(),
            bucket,
            window_start,
            jti: jti.map(str::to_string),
            limit,
            expected,
            slot: Arc::clone(&slot),
        };
        (counting, slot)
    }

    /// The statement `read` (a `SELECT` of `params` parameters; a read of nothing when
    /// `None`) with the count after it, and the count's five parameters to bind after the
    /// read's. The read's rows come first, their columns at their indices, then three
    /// NULL columns; then one row more, the count's: NULL read columns,
    /// `kfin_memberships` (NULL when their version is the one expected, else JSON in
    /// [`identity::MEMBERSHIPS`]' order), `kfin_version` and `kfin_hits` (NULL when the
    /// token is revoked: nothing was counted).
    ///
    /// The two are an `Append`, run in turn: the count's upsert runs after the read, so
    /// the caller's counter row stays locked only from the upsert to the commit — a
    /// user's concurrent requests would otherwise wait for each other's reads.
    pub(super) fn statement(&self, read: Option<(&str, usize)>) -> (String, [Arg<'_>; 5]) {
        let (read, params) = read.unwrap_or((Self::NOTHING, 0));
        let user = params + 1;
        let sql = format!(
            "WITH kfin_hit AS ({hit})
     SELECT kfin_rows.*, NULL::text AS kfin_memberships, NULL::text AS kfin_version, NULL::bigint AS kfin_hits
       FROM ({read}) kfin_rows
     UNION ALL
     SELECT kfin_none.*,
            CASE WHEN kfin_mine.version = ${expected} THEN NULL ELSE
              (SELECT COALESCE(json_agg(json_build_array(mine.workspace_id, mine.workspace_name, mine.role)
                                        ORDER BY mine.workspace_name, mine.workspace_id), '[]')::text
                 FROM ({memberships}) mine)
            END,
            kfin_mine.version,
            (SELECT hits FROM kfin_hit)
       FROM (VALUES ({version})) kfin_mine (version)
            LEFT JOIN (SELECT * FROM ({read}) kfin_rows WHERE FALSE) kfin_none ON FALSE",
            hit = hit_sql(user, user + 1, user + 2, user + 3),
            expected = user + 4,
            memberships = identity::MEMBERSHIPS_OF_USER.replace("$1", &format!("${user}")),
            version = identity::version_of_user(user),
        );
        let args = [
            Arg::Text(self.user_id.as_str().into()),
            Arg::Text(self.bucket.into()),
            Arg::Int(self.window_start),
            self.jti.as_deref().map_or(Arg::Null(NullOf::Text), |jti| Arg::Text(jti.into())),
            Arg::Text(self.expected.version.as_ref().into()),
        ];
        (sql, args)
    }

    /// Records what [`Counting::statement`] answered (all its `rows`) and gives back the
    /// read's rows, its columns only — when the count admits them: else
    /// [`Error::NotAdmitted`].
    pub(super) fn settle(&self, mut rows: Vec<OwnedRow>) -> Result<Vec<OwnedRow>, Error> {
        let missing = || Error::Decode { column: "kfin_version".into(), message: "no count row".into() };
        let count = rows.pop().ok_or_else(missing)?;
        let count = count.row();
        let version: Option<String> = count.try_get("kfin_version")?;
        let version = version.ok_or_else(missing)?;
        let memberships: Option<String> = count.try_get("kfin_memberships")?;
        let outcome = match count.try_get::<Option<i64>, _>("kfin_hits")? {
            None => Outcome::Revoked,
            Some(hits) => Outcome::Counted(
                hits,
                match memberships {
                    // Their version is the one the request acted on: they are too.
                    None => self.expected.clone(),
                    Some(json) => Known { version: version.into(), memberships: memberships_of_json(&json)?.into() },
                },
            ),
        };
        let admitted = matches!(&outcome, Outcome::Counted(hits, mine)
            if *hits <= self.limit && same_memberships(&mine.memberships, &self.expected.memberships));
        self.record(outcome);
        if !admitted {
            return Err(Error::NotAdmitted);
        }
        Ok(rows
            .into_iter()
            .map(|row| {
                let width = row.row().column_count().saturating_sub(Self::ADDED_COLUMNS);
                row.first_columns(width)
            })
            .collect())
    }

    /// Records that the connection was found gone before the count was known.
    pub(super) fn lost(&self) {
        self.record(Outcome::Lost);
    }

    fn record(&self, outcome: Outcome) {
        *self.slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(outcome);
    }
}

/// Whether two lists of memberships are the same (most often, the very same list).
pub fn same_memberships(a: &Arc<[Membership]>, b: &Arc<[Membership]>) -> bool {
    Arc::ptr_eq(a, b) || a == b
}

/// The memberships of [`Counting::statement`]'s `kfin_memberships`: `[id, name, role]`
/// triples; a role this version does not know is left out, as [`identity::membership`]
/// does.
fn memberships_of_json(json: &str) -> Result<Vec<Membership>, Error> {
    let triples: Vec<(String, String, String)> = serde_json::from_str(json)
        .map_err(|e| Error::Decode { column: "kfin_memberships".into(), message: e.to_string() })?;
    Ok(triples
        .into_iter()
        .filter_map(|(workspace_id, workspace_name, role)| {
            Some(Membership { workspace_id, workspace_name, role: Role::parse(&role)? })
        })
        .collect())
}

/// Drops counters of windows that started before `before` (see `housekeeping`).
pub async fn prune(db: &Db, before: i64) -> Result<u64, crate::storage::Error> {
    sql::query("DELETE FROM rate_limit_counters WHERE window_start < $1").bind(before).execute(db).await
}
