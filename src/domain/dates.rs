//! Calendar dates: `YYYY-MM-DD` on the wire (years 1900–2999), a [`Date`] inside. The
//! calendar arithmetic (month stepping clamped to the month's end, day stepping, month
//! bounds) is the `time` crate's, which request signing (aws-sigv4) already links into the binary.

use std::fmt;

use time::{Duration, Month};

/// The years a date may fall in.
const YEARS: std::ops::RangeInclusive<i32> = 1900..=2999;

/// A calendar day. Parsed from `YYYY-MM-DD`; the schema says `format: date`, which the
/// request check honours (400 `invalid_date`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date(time::Date);

/// The distance between two dates of a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Days(i64),
    Months(i64),
}

impl Date {
    /// `YYYY-MM-DD`, a real day of the years 1900–2999.
    pub fn parse(text: &str) -> Option<Date> {
        let b = text.as_bytes();
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return None;
        }
        let number = |r: std::ops::Range<usize>| -> Option<u32> {
            let s = &text[r];
            s.bytes().all(|c| c.is_ascii_digit()).then(|| s.parse().ok()).flatten()
        };
        let (y, m, d) = (number(0..4)?, number(5..7)?, number(8..10)?);
        Date::from_ymd(y as i32, u8::try_from(m).ok()?, u8::try_from(d).ok()?)
    }

    /// The day `year-month-day`, if it exists and lies in the supported years.
    pub fn from_ymd(year: i32, month: u8, day: u8) -> Option<Date> {
        let month = Month::try_from(month).ok()?;
        Date::checked(time::Date::from_calendar_date(year, month, day).ok()?)
    }

    fn checked(date: time::Date) -> Option<Date> {
        YEARS.contains(&date.year()).then_some(Date(date))
    }

    pub fn year(self) -> i32 {
        self.0.year()
    }

    pub fn month(self) -> u8 {
        self.0.month() as u8
    }

    pub fn day(self) -> u8 {
        self.0.day()
    }

    /// `days` days later (earlier when negative).
    pub fn add_days(self, days: i64) -> Option<Date> {
        Date::checked(self.0.checked_add(Duration::days(days))?)
    }

    /// `months` months later (earlier when negative), on the same day clamped to the
    /// month's end: 31 January + 1 month is 28 (or 29) February.
    pub fn add_months(self, months: i64) -> Option<Date> {
        let index = i64::from(self.year()) * 12 + i64::from(self.month()) - 1 + months;
        let year = i32::try_from(index.div_euclid(12)).ok()?;
        let month = Month::try_from(index.rem_euclid(12) as u8 + 1).ok()?;
        let day = self.day().min(month.length(year));
        Date::checked(time::Date::from_calendar_date(year, month, day).ok()?)
    }

    /// The `index`-th date of a series starting here (0: this date).
    pub fn step(self, step: Step, index: i64) -> Option<Date> {
        match step {
            Step::Days(n) => self.add_days(n * index),
            Step::Months(n) => self.add_months(n * index),
        }
    }

    /// The first and the last day of a month.
    pub fn month_bounds(year: i32, month: u8) -> Option<(Date, Date)> {
        let first = Date::from_ymd(year, month, 1)?;
        let last = Date::from_ymd(year, month, Month::try_from(month).ok()?.length(year))?;
        Some((first, last))
    }

    /// Today (UTC).
    pub fn today() -> Date {
        Date(crate::clock::utc(crate::clock::now_unix()).date())
    }
}

/// A valid calendar date `YYYY-MM-DD` (years 1900–2999).
pub fn is_valid_date(text: &str) -> bool {
    Date::parse(text).is_some()
}

/// `date` plus `months` months, on the same day clamped to the month's end.
pub fn add_months(date: &str, months: i64) -> Option<String> {
    Date::parse(date)?.add_months(months).map(|d| d.to_string())
}

/// `date` plus `days` days.
pub fn add_days(date: &str, days: i64) -> Option<String> {
    Date::parse(date)?.add_days(days).map(|d| d.to_string())
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year(), self.month(), self.day())
    }
}

impl serde::Serialize for Date {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Date {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Date, D::Error> {
        let text = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(deserializer)?;
        Date::parse(&text).ok_or_else(|| serde::de::Error::custom("must be a date YYYY-MM-DD"))
    }
}

string_schema!(Date, { "type": "string", "format": "date" });

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_real_days() {
        for ok in ["2026-01-31", "2024-02-29", "2000-02-29", "1900-01-01", "2999-12-31"] {
            assert!(is_valid_date(ok), "{ok}");
            assert_eq!(Date::parse(ok).unwrap().to_string(), ok);
        }
        for bad in [
            "2026-02-29",
            "1900-02-29",
            "2026-13-01",
            "2026-00-10",
            "2026-04-31",
            "26-01-01",
            "2026-1-01",
            "2026/01/01",
            "2026-01-01T00:00:00Z",
            "",
            "1899-12-31",
            "3000-01-01",
            "+026-01-01",
        ] {
            assert!(!is_valid_date(bad), "{bad}");
        }
    }

    #[test]
    fn months_are_added_on_the_same_day_clamped_to_the_end() {
        assert_eq!(add_months("2026-01-31", 1).as_deref(), Some("2026-02-28"));
        assert_eq!(add_months("2024-01-31", 1).as_deref(), Some("2024-02-29"));
        assert_eq!(add_months("2026-01-31", 2).as_deref(), Some("2026-03-31"));
        assert_eq!(add_months("2026-11-15", 3).as_deref(), Some("2027-02-15"));
        assert_eq!(add_months("2026-03-31", -1).as_deref(), Some("2026-02-28"));
        assert_eq!(add_days("2026-12-25", 14).as_deref(), Some("2027-01-08"));
        assert_eq!(add_days("2024-02-28", 1).as_deref(), Some("2024-02-29"));
        assert_eq!(add_days("2026-03-01", -1).as_deref(), Some("2026-02-28"));
        assert_eq!(add_months("2999-12-01", 1), None);
        assert_eq!(add_days("1900-01-01", -1), None);
    }

    #[test]
    fn month_bounds_know_leap_years() {
        let text = |(a, b): (Date, Date)| (a.to_string(), b.to_string());
        assert_eq!(Date::month_bounds(2024, 2).map(text), Some(("2024-02-01".into(), "2024-02-29".into())));
        assert_eq!(Date::month_bounds(1900, 2).map(text), Some(("1900-02-01".into(), "1900-02-28".into())));
        assert_eq!(Date::month_bounds(2026, 13), None);
    }

    #[test]
    fn dates_go_over_the_wire_as_text() {
        let date: Date = serde_json::from_value(serde_json::json!("2026-05-10")).unwrap();
        assert_eq!(serde_json::to_value(date).unwrap(), "2026-05-10");
        assert!(serde_json::from_value::<Date>(serde_json::json!("2026-02-30")).is_err());
        assert!(serde_json::from_value::<Date>(serde_json::json!(20260510)).is_err());
    }
}
