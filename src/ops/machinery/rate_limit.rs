//! Per-user rate limits (SPEC §8): separate read and write budgets per fixed window,
//! counted in the database so every replica shares them.

use crate::auth::Identity;
use crate::error::{ApiError, ErrorCode};
use crate::ops::Services;
use crate::storage::identity::{Known, Membership};
use crate::storage::rate_limit::{
    hit_unless_revoked, hit_with_memberships, same_memberships, Counting, Outcome, Slot, Take,
};
use crate::storage::{Backend, Conn, Held};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    Read,
    Write,
}

impl Budget {
    fn as_str(self) -> &'static str {
        match self {
            Budget::Read => "read",
            Budget::Write => "write",
        }
    }
}

/// Where a caller stands after a counted request (the `RateLimit-*` headers).
#[derive(Debug, Clone, Copy)]
pub struct RateStatus {
    pub limit: i64,
    pub remaining: i64,
    /// Seconds until the window resets.
    pub reset: i64,
}

/// What a request reads with its count, in the same round trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// The count alone.
    Nothing,
    /// The caller's memberships.
    Memberships,
    /// The memberships, and the connection they were read on, kept for the request's
    /// read (see [`Held`](crate::storage::Held)).
    MembershipsAndConnection,
}

/// The outcome of counting a request.
pub enum Counted {
    /// Within budget; the caller's memberships when they were asked for, and the
    /// connection kept for the request when it was.
    Allowed(RateStatus, Option<Vec<Membership>>, Option<Conn>),
    /// Over budget: `rate_limited` with the status for the headers.
    Limited(ApiError, RateStatus),
    /// The token is revoked (only from [`count_unless_revoked`]); nothing was counted.
    Revoked,
}

/// A request's count, counted or riding on its read ([`count_or_ride`]).
pub enum Admission {
    Counted(Counted),
    /// Not counted yet: the count rides on the first statement of the connection
    /// given, and the request acts on the memberships given (this process's last read of
    /// them). The request computes its answer, then [`Riding::settle`]s the count, which
    /// says whether that answer stands.
    Riding(Vec<Membership>, Conn, Riding),
}

/// A count riding on a request's first statement ([`Admission::Riding`]).
pub struct Riding {
    slot: Slot,
    take: Take,
    expected: Known,
    budget: Budget,
    limit: i64,
    window_start: i64,
    reset: i64,
}

/// What a riding count says of the answer the request computed.
pub enum Settled {
    /// It stands.
    Stands,
    /// It is computed again, on these memberships (they changed since this process last
    /// read them, or the read's connection was found gone).
    Again(Vec<Membership>),
    /// Over budget: `rate_limited` with the status for the headers.
    Limited(ApiError, RateStatus),
    /// The token is revoked: nothing was counted.
    Revoked,
}

impl Riding {
    /// The count's outcome: as the request's first statement found it; else sent now on
    /// the request's connection, back in `held` when no statement carried the count
    /// ([`Lent`](crate::storage::Lent)); else (it was found gone) counted now on the
    /// pool's.
    pub async fn settle(self, state: Services<'_>, identity: &Identity, held: &Held) -> Result<Settled, ApiError> {
        if let Some(mut unused) = held.take() {
            // A failure leaves the slot empty (or `Lost`): the count is sent below.
            let _ = unused.send_count().await;
        }
        let found = self.slot.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let (Take::Held(number), None | Some(Outcome::Revoked | Outcome::Lost)) = (self.take, &found) {
            let (user, bucket) = (&identity.user_id, self.budget.as_str());
            state.db.reserved_hits.give_back(user, bucket, self.window_start, number);
        }
        let (hits, known, again) = match found {
            Some(Outcome::Revoked) => return Ok(refused(state, identity, Settled::Revoked)),
            Some(Outcome::Counted(numbers, known)) => {
                if let Take::Reserve(_) = self.take {
                    let (user, bucket) = (&identity.user_id, self.budget.as_str());
                    state.db.reserved_hits.keep(user, bucket, self.window_start, numbers, self.limit);
                }
                (numbers.first, known, false)
            }
            None | Some(Outcome::Lost) => {
                let hit = hit_with_memberships(
                    state.db,
                    &identity.user_id,
                    self.budget.as_str(),
                    self.window_start,
                    identity.jti.as_deref(),
                    false,
                )
                .await?;
                match hit {
                    Some(hit) => (hit.hits, hit.known(), found.is_some()),
                    None => return Ok(refused(state, identity, Settled::Revoked)),
                }
            }
        };
        if let Err((err, status)) = judge(self.limit, self.reset, hits, self.budget) {
            return Ok(refused(state, identity, Settled::Limited(err, status)));
        }
        let again = again || !same_memberships(&known.memberships, &self.expected.memberships);
        let acting_on = again.then(|| known.memberships.to_vec());
        state.db.recent_memberships.remember(&identity.user_id, known);
        Ok(acting_on.map_or(Settled::Stands, Settled::Again))
    }
}

/// A riding count that refused its request: the read it rode on ran all the same (its
/// rows were dropped), so the caller's next requests are counted before they read.
fn refused(state: Services<'_>, identity: &Identity, settled: Settled) -> Settled {
    state.db.recent_memberships.forget(&identity.user_id);
    settled
}

/// As [`count_unless_revoked`]; but a request that `needs` the memberships and the
/// connection, on PostgreSQL, by a caller whose memberships this process has read
/// before, is not counted yet: its count rides on the connection's first statement
/// ([`Counting`]) — one round trip for the count and the read, where they took two.
pub async fn count_or_ride(
    state: Services<'_>,
    identity: &Identity,
    budget: Budget,
    needs: Needs,
) -> Result<Admission, ApiError> {
    let db = state.db;
    let known = (needs == Needs::MembershipsAndConnection && db.backend == Backend::Postgres)
        .then(|| db.recent_memberships.get(&identity.user_id))
        .flatten();
    let Some(expected) = known else {
        return count_unless_revoked(state, identity, budget, needs).await.map(Admission::Counted);
    };
    let (limit, window_start, reset) = window(state, budget);
    let (user, bucket, jti) = (&identity.user_id, budget.as_str(), identity.jti.as_deref());
    // The connection first: a number taken would be lost with a request that gets none.
    let conn = db.acquire().await?;
    let take = db.reserved_hits.take(user, bucket, window_start);
    let (counting, slot) = Counting::new(user, bucket, window_start, jti, limit, expected.clone(), take);
    let conn = conn.counting(counting);
    let acting_on = expected.memberships.to_vec();
    let riding = Riding { slot, take, expected, budget, limit, window_start, reset };
    Ok(Admission::Riding(acting_on, conn, riding))
}

/// The window of a counted request.
fn window(state: Services<'_>, budget: Budget) -> (i64, i64, i64) {
    let limits = state.config.rate_limits;
    let limit = match budget {
        Budget::Read => limits.reads,
        Budget::Write => limits.writes,
    };
    let now = crate::clock::now_unix();
    let window_start = now - now.rem_euclid(limits.window_seconds);
    let reset = (window_start + limits.window_seconds - now).max(1);
    (limit, window_start, reset)
}

fn judge(limit: i64, reset: i64, hits: i64, budget: Budget) -> Result<RateStatus, (ApiError, RateStatus)> {
    let status = RateStatus { limit, remaining: (limit - hits).max(0), reset };
    if hits > limit {
        let mut err = ApiError::new(
            ErrorCode::RateLimited,
            format!("Rate limit of {limit} {} requests per window exceeded", budget.as_str()),
        );
        err.retry_after_seconds = Some(reset as u64);
        return Err((err, status));
    }
    Ok(status)
}

/// Counts one request of a verified token and checks its revocation in the same
/// statement (one database round trip on the hot path); reads what the request `needs`
/// in that round trip too. A token without `jti` cannot be revoked and is simply
/// counted.
pub async fn count_unless_revoked(
    state: Services<'_>,
    identity: &Identity,
    budget: Budget,
    needs: Needs,
) -> Result<Counted, ApiError> {
    let (limit, window_start, reset) = window(state, budget);
    let (user, bucket, jti) = (&identity.user_id, budget.as_str(), identity.jti.as_deref());
    let db = state.db;
    let counted = match needs {
        Needs::Nothing => hit_unless_revoked(db, user, bucket, window_start, jti)
            .await
            .map(|hit| hit.map(|hits| (hits, None, None, None))),
        Needs::Memberships | Needs::MembershipsAndConnection => {
            let keep = needs != Needs::Memberships;
            let hit = hit_with_memberships(db, user, bucket, window_start, jti, keep).await?;
            Ok(hit.map(|hit| (hit.hits, hit.version.is_some().then(|| hit.known()), Some(hit.memberships), hit.conn)))
        }
    }?;
    // On PostgreSQL the memberships of a caller admitted are remembered, for their next
    // read's count to ride on it; a caller refused (revoked, past the budget) is counted
    // first next time too.
    let recent = (db.backend == Backend::Postgres).then_some(&db.recent_memberships);
    Ok(match counted {
        None => {
            if let Some(recent) = recent {
                recent.forget(user);
            }
            Counted::Revoked
        }
        Some((hits, known, memberships, conn)) => match judge(limit, reset, hits, budget) {
            Ok(status) => {
                if let (Some(recent), Some(known)) = (recent, known) {
                    recent.remember(user, known);
                }
                Counted::Allowed(status, memberships, conn)
            }
            Err((err, status)) => {
                if let Some(recent) = recent {
                    recent.forget(user);
                }
                Counted::Limited(err, status)
            }
        },
    })
}
