//! Percentages: basis points inside (`1250` = 12.5 %), a string with two decimals on the
//! wire (`"12.50"`), 0–100 only. Parsed digit by digit, never through floating point:
//! a tax's default rate and an apportionment item's share are both a [`Percent`].

use std::fmt;

/// 100 % in basis points.
const WHOLE: i64 = 10_000;

/// The input pattern of a tax rate (1–3 integer digits, 1–2 decimals); the request check
/// enforces it ([`fits_rate_pattern`]), the 0–100 range is the operation's (422).
pub const RATE_PATTERN: &str = r"^\d{1,3}\.\d{1,2}$";

/// What a rate off [`RATE_PATTERN`] is told (400 `invalid_format`).
pub const RATE_FORMAT: &str = "The rate must be a decimal string with 1-2 decimals, e.g. \"1.50\"";

/// A percentage from 0 to 100, in basis points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Percent(i64);

/// Why a percentage was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PercentError {
    /// Not 1–3 digits, optionally a point and 1–2 decimals.
    Format,
    /// Over 100.
    OutOfRange,
}

impl Percent {
    /// `"70"`, `"70.5"`, `"70.50"` → 70 % (7000, 7050, 7050 basis points).
    pub fn parse(text: &str) -> Result<Percent, PercentError> {
        let (int, frac) = shape(text).ok_or(PercentError::Format)?;
        let whole: i64 = int.parse().map_err(|_| PercentError::Format)?;
        let hundredths = match frac.len() {
            0 => 0,
            1 => frac.parse::<i64>().map_err(|_| PercentError::Format)? * 10,
            _ => frac.parse::<i64>().map_err(|_| PercentError::Format)?,
        };
        let bp = whole * 100 + hundredths;
        if bp > WHOLE {
            return Err(PercentError::OutOfRange);
        }
        Ok(Percent(bp))
    }

    /// A stored value in basis points; `None` outside 0–100.
    pub fn from_basis_points(bp: i64) -> Option<Percent> {
        (0..=WHOLE).contains(&bp).then_some(Percent(bp))
    }

    pub fn basis_points(self) -> i64 {
        self.0
    }

    /// A stored value in basis points as the wire shows it (`"12.50"`); `None` outside
    /// 0–100.
    pub fn shown(bp: i64) -> Option<String> {
        Percent::from_basis_points(bp).map(|p| p.to_string())
    }
}

/// The integer and decimal digits of `text` when it is 1–3 digits, optionally a point
/// and 1–2 decimals.
fn shape(text: &str) -> Option<(&str, &str)> {
    let (int, frac) = match text.split_once('.') {
        Some((int, frac)) if (1..=2).contains(&frac.len()) => (int, frac),
        Some(_) => return None,
        None => (text, ""),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    ((1..=3).contains(&int.len()) && digits(int) && digits(frac)).then_some((int, frac))
}

/// Whether `text` matches [`RATE_PATTERN`] (the decimals are required there).
pub fn fits_rate_pattern(text: &str) -> bool {
    text.contains('.') && shape(text).is_some()
}

impl fmt::Display for Percent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:02}", self.0 / 100, self.0 % 100)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_digit_by_digit_within_0_and_100() {
        for (text, bp) in [("70", 7000), ("12.5", 1250), ("0.01", 1), ("100.00", 10_000), ("0", 0), ("4.8", 480)] {
            assert_eq!(Percent::parse(text).map(Percent::basis_points), Ok(bp), "{text}");
        }
        for text in ["100.01", "101", "999.99"] {
            assert_eq!(Percent::parse(text), Err(PercentError::OutOfRange), "{text}");
        }
        for text in ["", ".5", "1.", "1.234", "1,50", "-1", "1e2", " 1", "1000", "abc", "+1"] {
            assert_eq!(Percent::parse(text), Err(PercentError::Format), "{text}");
        }
        assert_eq!(Percent::parse("12.5").unwrap().to_string(), "12.50");
        assert_eq!(Percent::from_basis_points(10_001), None);
        assert_eq!(Percent::shown(1250).as_deref(), Some("12.50"));
        assert_eq!(Percent::shown(-1), None);
    }

    #[test]
    fn the_rate_pattern_wants_decimals() {
        for ok in ["0.00", "1.5", "100.00", "999.99"] {
            assert!(fits_rate_pattern(ok), "{ok}");
        }
        for bad in ["1", "1.234", "1000.00", "-1.00", "", "1,50", " 1.50"] {
            assert!(!fits_rate_pattern(bad), "{bad}");
        }
    }
}
