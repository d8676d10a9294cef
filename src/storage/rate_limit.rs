//! Rate-limit counters, shared by every replica through the database: one atomic
//! upsert per request returns the new count of the caller's current window. The count is
//! a request's first statement: on a pooled connection found gone it is sent again
//! ([`retry_if_lost`](super::retry_if_lost)). On PostgreSQL a read's count can ride on
//! the read itself, in one statement ([`Counting`]), and take its number from a block
//! this process reserved before ([`Reserved`]): then it writes nothing.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, LazyLock, Mutex};

use crate::domain::roles::Role;
use crate::storage::sql::{self, Arg, NullOf};

use super::identity::{self, Known, Membership};
use super::{Backend, Conn, Db, Error, OwnedRow};

/// `hits` hits (`1`, or a parameter `$n`: see [`Take::Reserve`]) for user `$user` in
/// bucket `$bucket` (`read`/`write`) in the window starting at `$window`, returning the
/// hits so far including these — unless the token `$jti` is on the deny list: then
/// nothing is counted and no row returned. (`$jti` is NULL for a token without an id,
/// which cannot be revoked.) The parameters' positions are given.
fn hit_sql(user: usize, bucket: usize, window: usize, jti: usize, hits: &str) -> String {
    format!(
        "INSERT INTO rate_limit_counters (user_id, bucket, window_start, hits)
     SELECT ${user}, ${bucket}, ${window}, {hits} WHERE NOT EXISTS (SELECT 1 FROM revoked_tokens WHERE jti = ${jti})
     ON CONFLICT (user_id, bucket, window_start)
     DO UPDATE SET hits = rate_limit_counters.hits + EXCLUDED.hits
     RETURNING hits"
    )
}

/// A number [`Take::Held`] (`$number`) returned as [`hit_sql`]'s count would be: a row
/// unless the token `$jti` is on the deny list. It writes nothing.
fn held_sql(jti: usize, number: usize) -> String {
    format!(
        "SELECT CAST(${number} AS BIGINT) AS hits WHERE NOT EXISTS (SELECT 1 FROM revoked_tokens WHERE jti = ${jti})"
    )
}

/// [`hit_sql`] with the parameters `$1` to `$4`.
static HIT_UNLESS_REVOKED: LazyLock<String> = LazyLock::new(|| hit_sql(1, 2, 3, 4, "1"));

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

/// How a riding count ([`Counting`]) takes its request's number in the shared counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Take {
    /// Adds this many hits to the counter at once: the request takes the first of the
    /// numbers they reach, the process keeps the others for its next requests
    /// ([`Reserved`]).
    Reserve(i64),
    /// A number this process reserved before: the statement writes nothing and still
    /// reads the token's revocation.
    Held(i64),
}

/// The numbers of the shared counter a riding count took: the request's is `first`;
/// `first + 1 ..= last` are the others of a [`Take::Reserve`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Numbers {
    pub first: i64,
    pub last: i64,
}

/// What the count that rode on a request's first statement found ([`Counting`]).
#[derive(Debug, Clone)]
pub enum Outcome {
    /// The token is revoked: nothing was counted.
    Revoked,
    /// Counted: the numbers taken (the request's is the hits so far, this one
    /// included), and the caller's memberships as they stand.
    Counted(Numbers, Known),
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
    take: Take,
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
        take: Take,
    ) -> (Counting, Slot) {
        let slot = Slot::default();
        let counting = Counting {
            user_id: user_id.to_string(),
            bucket,
            window_start,
            jti: jti.map(str::to_string),
            limit,
            expected,
            take,
            slot: Arc::clone(&slot),
        };
        (counting, slot)
    }

    /// The statement `read` (a `SELECT` of `params` parameters; a read of nothing when
    /// `None`) with the count after it, and the count's six parameters to bind after the
    /// read's. The read's rows come first, their columns at their indices, then three
    /// NULL columns; then one row more, the count's: NULL read columns,
    /// `kfin_memberships` (NULL when their version is the one expected, else JSON in
    /// [`identity::MEMBERSHIPS`]' order), `kfin_version` and `kfin_hits` (NULL when the
    /// token is revoked: nothing was counted; else the hits so far, or the number held).
    ///
    /// The two are an `Append`, run in turn: the count's upsert runs after the read, so
    /// the caller's counter row stays locked only from the upsert to the commit — a
    /// user's concurrent requests would otherwise wait for each other's reads.
    pub(super) fn statement(&self, read: Option<(&str, usize)>) -> (String, [Arg<'_>; 6]) {
        let (read, params) = read.unwrap_or((Self::NOTHING, 0));
        let user = params + 1;
        let (hit, taken) = match self.take {
            Take::Reserve(hits) => (hit_sql(user, user + 1, user + 2, user + 3, &format!("${}", user + 5)), hits),
            Take::Held(number) => (held_sql(user + 3, user + 5), number),
        };
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
            Arg::Int(taken),
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
                match self.take {
                    Take::Reserve(taken) => Numbers { first: hits - taken + 1, last: hits },
                    Take::Held(_) => Numbers { first: hits, last: hits },
                },
                match memberships {
                    // Their version is the one the request acted on: they are too.
                    None => self.expected.clone(),
                    Some(json) => Known { version: version.into(), memberships: memberships_of_json(&json)?.into() },
                },
            ),
        };
        let admitted = matches!(&outcome, Outcome::Counted(numbers, mine)
            if numbers.first <= self.limit && same_memberships(&mine.memberships, &self.expected.memberships));
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

/// The numbers of the shared counters this process reserved ([`Take::Reserve`]) and has
/// not handed out yet, per user and bucket, for the current window: a riding read that
/// finds one takes it ([`Take::Held`]) and writes nothing — the counter's write, and
/// its transaction's commit, were a third of PostgreSQL's work for a list.
///
/// Every number is handed out once, by one process, so the requests admitted in a
/// window across every replica never exceed the limit. A block starts at one number and
/// doubles with each one reserved in the window, up to [`Reserved::MOST`] and never
/// past 1/[`Reserved::SHARE`] of what the budget had left: near the limit each request
/// counts its own. What a process stops holding — it stops, or the window ends, or it
/// starts over past [`Reserved::USERS`] users — is spent unused: at most the rest of
/// its last block, `MOST - 1` numbers of a caller's window (fewer when it served them
/// fewer than 31 reads in it), which the caller's last requests of the window may then
/// find refused.
#[derive(Debug, Default)]
pub struct Reserved(Mutex<HashMap<String, Vec<Block>>>);

/// A user's reserved numbers in one bucket ([`Reserved`]).
#[derive(Debug)]
struct Block {
    bucket: &'static str,
    window_start: i64,
    /// The ranges not handed out yet, `(next, last)`, oldest first.
    unused: VecDeque<(i64, i64)>,
    /// The hits the next [`Take::Reserve`] adds.
    next_size: i64,
}

impl Reserved {
    /// The most numbers one statement reserves.
    pub const MOST: i64 = 16;
    /// A block is at most this fraction of the budget left when it is reserved.
    pub const SHARE: i64 = 32;
    const USERS: usize = 10_000;

    /// The user's block in `bucket` for the window starting at `window_start`, if any.
    fn block<'a>(
        reserved: &'a mut HashMap<String, Vec<Block>>,
        user_id: &str,
        bucket: &str,
        window_start: i64,
    ) -> Option<&'a mut Block> {
        let blocks = reserved.get_mut(user_id)?;
        blocks.iter_mut().find(|b| b.bucket == bucket && b.window_start == window_start)
    }

    /// How the user's next request in `bucket` and the window starting at `window_start`
    /// takes its number: a held one, else a reservation of the next block's size.
    pub fn take(&self, user_id: &str, bucket: &'static str, window_start: i64) -> Take {
        let mut reserved = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let Some(block) = Self::block(&mut reserved, user_id, bucket, window_start) else {
            return Take::Reserve(1);
        };
        match block.unused.front_mut() {
            Some((next, last)) if *next < *last => {
                *next += 1;
                Take::Held(*next - 1)
            }
            Some(&mut (number, _)) => {
                block.unused.pop_front();
                Take::Held(number)
            }
            None => Take::Reserve(block.next_size),
        }
    }

    /// Gives back a [`Take::Held`] number its request did not spend: the token was
    /// revoked, or the statement that carried it was not answered (it writes nothing, so
    /// the number was not used either way). It is the next one handed out.
    pub fn give_back(&self, user_id: &str, bucket: &'static str, window_start: i64, number: i64) {
        let mut reserved = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(block) = Self::block(&mut reserved, user_id, bucket, window_start) {
            block.unused.push_front((number, number));
        }
    }

    /// Keeps what a [`Take::Reserve`] of the user's took beyond its request's number (up
    /// to `limit`: a number past it admits nothing), and sizes the next block.
    pub fn keep(&self, user_id: &str, bucket: &'static str, window_start: i64, numbers: Numbers, limit: i64) {
        let mut reserved = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if !reserved.contains_key(user_id) && reserved.len() >= Self::USERS {
            reserved.clear();
        }
        let blocks = reserved.entry(user_id.to_string()).or_default();
        // A block of an earlier window is spent; one of a later window (this reservation
        // was answered as the window turned) is kept instead of this one.
        blocks.retain(|b| b.bucket != bucket || b.window_start >= window_start);
        let at = match blocks.iter().position(|b| b.bucket == bucket) {
            Some(at) if blocks[at].window_start > window_start => return,
            Some(at) => at,
            None => {
                blocks.push(Block { bucket, window_start, unused: VecDeque::new(), next_size: 1 });
                blocks.len() - 1
            }
        };
        let block = &mut blocks[at];
        let (next, last) = (numbers.first + 1, numbers.last.min(limit));
        if next <= last {
            block.unused.push_back((next, last));
        }
        let size = numbers.last - numbers.first + 1;
        let left = (limit - numbers.last) / Self::SHARE;
        block.next_size = (size * 2).min(Self::MOST).min(left).max(1);
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

#[cfg(test)]
mod tests {
    use super::{Numbers, Reserved, Take};

    /// Takes `count` numbers of `user`'s reads in `window`, reserving as told and
    /// keeping each reservation's numbers as a statement would have counted them from
    /// `*counter`: the numbers each request took, in order.
    fn serve(reserved: &Reserved, counter: &mut i64, user: &str, window: i64, limit: i64, count: usize) -> Vec<i64> {
        (0..count)
            .map(|_| match reserved.take(user, "read", window) {
                Take::Held(number) => number,
                Take::Reserve(hits) => {
                    let numbers = Numbers { first: *counter + 1, last: *counter + hits };
                    *counter += hits;
                    reserved.keep(user, "read", window, numbers, limit);
                    numbers.first
                }
            })
            .collect()
    }

    #[test]
    fn blocks_double_up_to_the_most_and_every_number_is_handed_out_once_in_order() {
        let reserved = Reserved::default();
        let mut counter = 0;
        let taken = serve(&reserved, &mut counter, "u", 0, 10_000, 40);
        assert_eq!(taken, (1..=40).collect::<Vec<_>>());
        // Blocks of 1, 2, 4, 8, 16, 16: the counter is at 47 after 40 requests.
        assert_eq!(counter, 1 + 2 + 4 + 8 + 16 + 16);
        assert_eq!(reserved.take("u", "read", 0), Take::Held(41));
        // Another bucket, another user: their own blocks, from one again.
        assert_eq!(reserved.take("u", "write", 0), Take::Reserve(1));
        assert_eq!(reserved.take("v", "read", 0), Take::Reserve(1));
        // A number given back is the next handed out; in another window it is dropped.
        reserved.give_back("u", "read", 0, 41);
        assert_eq!(reserved.take("u", "read", 0), Take::Held(41));
        reserved.give_back("u", "read", 3_600, 42);
        assert_eq!(reserved.take("u", "read", 0), Take::Held(42));
        assert_eq!(reserved.take("u", "read", 3_600), Take::Reserve(1));
    }

    #[test]
    fn a_new_window_starts_from_one_number_and_drops_the_last_windows() {
        let reserved = Reserved::default();
        let mut counter = 0;
        serve(&reserved, &mut counter, "u", 0, 10_000, 20);
        assert!(matches!(reserved.take("u", "read", 0), Take::Held(_)));
        assert_eq!(reserved.take("u", "read", 3_600), Take::Reserve(1));
        reserved.keep("u", "read", 3_600, Numbers { first: 1, last: 1 }, 10_000);
        assert_eq!(reserved.take("u", "read", 0), Take::Reserve(1), "the earlier window's numbers are gone");
        // A reservation of the earlier window answered late does not replace the new one.
        reserved.keep("u", "read", 0, Numbers { first: 30, last: 45 }, 10_000);
        assert_eq!(reserved.take("u", "read", 3_600), Take::Reserve(2));
        assert_eq!(reserved.take("u", "read", 0), Take::Reserve(1));
    }

    #[test]
    fn near_the_limit_each_request_counts_its_own_and_no_number_past_it_is_held() {
        let reserved = Reserved::default();
        let mut counter = 0;
        let limit = 100;
        let taken = serve(&reserved, &mut counter, "u", 0, limit, 120);
        assert_eq!(taken, (1..=120).collect::<Vec<_>>(), "one number each, in order");
        // Blocks never past 1/32 of what was left (one number each from 37 hits on): no
        // number reserved and left unused.
        assert_eq!(counter, 120);
        let reserved = Reserved::default();
        reserved.keep("u", "read", 0, Numbers { first: 95, last: 110 }, limit);
        let held: Vec<Take> = (0..6).map(|_| reserved.take("u", "read", 0)).collect();
        let expected: Vec<Take> = (96..=100).map(Take::Held).chain([Take::Reserve(1)]).collect();
        assert_eq!(held, expected);
    }
}
