//! Per-user rate limits (SPEC §8): separate read and write budgets per fixed window,
//! counted in the database so every replica shares them.

use super::Services;
use crate::auth::Identity;
use crate::error::{ApiError, ErrorCode};
use crate::storage::identity::Membership;

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

/// The outcome of counting a request.
#[derive(Debug)]
pub enum Counted {
    /// Within budget; the caller's memberships when they were asked for.
    Allowed(RateStatus, Option<Vec<Membership>>),
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
/// statement (one database round trip on the hot path); with `memberships`, reads the
/// caller's memberships in that round trip too, for a request that will need them. A
/// token without `jti` cannot be revoked and is simply counted.
pub async fn count_unless_revoked(
    state: Services<'_>,
    identity: &Identity,
    budget: Budget,
    memberships: bool,
) -> Result<Counted, ApiError> {
    use crate::storage::rate_limit::{hit_unless_revoked, hit_with_memberships};
    let (limit, window_start, reset) = window(state, budget);
    let (user, bucket, jti) = (&identity.user_id, budget.as_str(), identity.jti.as_deref());
    let counted = if memberships {
        hit_with_memberships(state.db, user, bucket, window_start, jti)
            .await
            .map(|hit| hit.map(|(hits, m)| (hits, Some(m))))
    } else {
        hit_unless_revoked(state.db, user, bucket, window_start, jti).await.map(|hit| hit.map(|hits| (hits, None)))
    }?;
    Ok(match counted {
        None => Counted::Revoked,
        Some((hits, memberships)) => match judge(limit, reset, hits, budget) {
            Ok(status) => Counted::Allowed(status, memberships),
            Err((err, status)) => Counted::Limited(err, status),
        },
    })
}
