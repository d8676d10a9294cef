//! Wall-clock helpers: Unix seconds and RFC 3339 UTC timestamps, on the `time` crate's
//! calendar (the same as [`crate::domain::dates`]).

use std::time::{SystemTime, UNIX_EPOCH};

use time::OffsetDateTime;

pub fn now_unix() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

/// The UTC instant of a Unix time in seconds (the epoch for one out of range).
pub fn utc(unix: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(unix).unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

/// `2026-11-30T19:26:47Z` for a Unix time in seconds (UTC): the form of every stored and
/// answered timestamp ([`crate::domain::dates::Timestamp`] writes it).
pub fn rfc3339(unix: i64) -> String {
    crate::domain::dates::Timestamp::from_unix(unix).to_string()
}

pub fn now_rfc3339() -> String {
    rfc3339(now_unix())
}

#[cfg(test)]
mod tests {
    use super::rfc3339;

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_780_000_000), "2026-05-28T20:26:40Z");
        assert_eq!(rfc3339(4_102_444_800), "2100-01-01T00:00:00Z");
    }
}
