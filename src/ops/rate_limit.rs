//! Per-user rate limits (SPEC §8): separate read and write budgets per fixed window,
//! counted in the database so every replica shares them.

use super::Services;
use crate::auth::Identity;
use crate::error::{ApiError, ErrorCode};
use crate::storage::identity::Membership;
use crate::storage::Conn;

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
    use crate::storage::rate_limit::{hit_unless_revoked, hit_with_memberships};
    let (limit, window_start, reset) = window(state, budget);
    let (user, bucket, jti) = (&identity.user_id, budget.as_str(), identity.jti.as_deref());
    let counted = match needs {
        Needs::Nothing => hit_unless_revoked(state.db, user, bucket, window_start, jti)
            .await
            .map(|hit| hit.map(|hits| (hits, None, None))),
        Needs::Memberships | Needs::MembershipsAndConnection => {
            let keep = needs == Needs::MembershipsAndConnection;
            hit_with_memberships(state.db, user, bucket, window_start, jti, keep)
                .await
                .map(|hit| hit.map(|(hits, m, conn)| (hits, Some(m), conn)))
        }
    }?;
    Ok(match counted {
        None => Counted::Revoked,
        Some((hits, memberships, conn)) => match judge(limit, reset, hits, budget) {
            Ok(status) => Counted::Allowed(status, memberships, conn),
            Err((err, status)) => Counted::Limited(err, status),
        },
    })
}
