//! Per-user rate limits (SPEC §8): separate read and write budgets per fixed window,
//! counted in the database so every replica shares them.

use crate::app::AppState;
use crate::error::{ApiError, ErrorCode};

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

/// Counts one request. `Err` is `rate_limited` (with the status for the headers) or a
/// dependency failure.
pub async fn check(state: &AppState, user_id: &str, budget: Budget) -> Result<RateStatus, (ApiError, Option<RateStatus>)> {
    let limits = state.config.rate_limits;
    let limit = match budget {
        Budget::Read => limits.reads,
        Budget::Write => limits.writes,
    };
    let now = crate::clock::now_unix();
    let window_start = now - now.rem_euclid(limits.window_seconds);
    let reset = (window_start + limits.window_seconds - now).max(1);
    let hits = crate::storage::rate_limit::hit(&state.db, user_id, budget.as_str(), window_start)
        .await
        .map_err(|e| (crate::storage::db_error(e), None))?;
    let status = RateStatus { limit, remaining: (limit - hits).max(0), reset };
    if hits > limit {
        let mut err = ApiError::new(ErrorCode::RateLimited, format!("Rate limit of {limit} {} requests per window exceeded", budget.as_str()));
        err.retry_after_seconds = Some(reset as u64);
        return Err((err, Some(status)));
    }
    Ok(status)
}
