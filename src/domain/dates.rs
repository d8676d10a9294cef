//! Calendar dates: `YYYY-MM-DD` on the wire (years 1900–2999), a [`Date`] inside; and
//! instants to the second, `YYYY-MM-DDTHH:MM:SSZ` (UTC), a [`Timestamp`] inside — the
//! one form the server writes them in, to the database and to the wire. The calendar
//! arithmetic (month stepping clamped to the month's end, day stepping, month bounds) is
//! the `time` crate's, which request signing (aws-sigv4) already links into the binary.

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

/// An instant to the second, in UTC: when a record was created or changed. Written as
/// `2026-11-30T19:26:47Z` (what [`crate::clock::rfc3339`] writes, to the database and to
/// the wire) and read back only in that form: its date a [`Date`], a time of day
/// `HH:MM:SS`, the `Z`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(time::PrimitiveDateTime);

impl Timestamp {
    /// The instant of a Unix time in seconds.
    pub fn from_unix(unix: i64) -> Timestamp {
        let utc = crate::clock::utc(unix);
        Timestamp(time::PrimitiveDateTime::new(utc.date(), utc.time()))
    }

    /// Now, to the second.
    pub fn now() -> Timestamp {
        Timestamp::from_unix(crate::clock::now_unix())
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` exactly: a real day (see [`Date::parse`]), hours 00–23,
    /// minutes and seconds 00–59, no fraction, no other offset.
    pub fn parse(text: &str) -> Option<Timestamp> {
        let b = text.as_bytes();
        if b.len() != 20 || b[10] != b'T' || b[13] != b':' || b[16] != b':' || b[19] != b'Z' {
            return None;
        }
        let date = Date::parse(text.get(..10)?)?;
        let number = |at: usize| -> Option<u8> {
            let (tens, units) = (b[at], b[at + 1]);
            (tens.is_ascii_digit() && units.is_ascii_digit()).then(|| (tens - b'0') * 10 + (units - b'0'))
        };
        let time = time::Time::from_hms(number(11)?, number(14)?, number(17)?).ok()?;
        Some(Timestamp(time::PrimitiveDateTime::new(date.0, time)))
    }

    /// The day of the instant.
    pub fn date(self) -> Date {
        Date(self.0.date())
    }

    /// Its Unix time in seconds.
    pub fn unix(self) -> i64 {
        self.0.assume_utc().unix_timestamp()
    }
}

/// The Unix epoch, 1970-01-01T00:00:00Z: the value of a record's timestamp that was not
/// read (a record read in part, for the fields asked for).
impl Default for Timestamp {
    fn default() -> Timestamp {
        Timestamp::from_unix(0)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (date, time) = (self.0.date(), self.0.time());
        write!(
            f,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
            date.year(),
            date.month() as u8,
            date.day(),
            time.hour(),
            time.minute(),
            time.second()
        )
    }
}

impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

// A plain string in the schemas: every record answers two timestamps, and a `format`
// on each would add about 1.8 kB to the tool listing, past its byte budget
// (`tools_catalogue::the_catalogue_stays_within_its_byte_budget`).
string_schema!(Timestamp, { "type": "string" });

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

/// The Unix epoch's day, 1970-01-01: the value of a record's date that was not read
/// (a record read in part, for the fields asked for).
impl Default for Date {
    fn default() -> Date {
        Date(time::OffsetDateTime::UNIX_EPOCH.date())
    }
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

    #[test]
    fn timestamps_read_back_exactly_what_the_clock_writes() {
        for (unix, written) in [
            (0, "1970-01-01T00:00:00Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (1_780_012_345, "2026-05-28T23:52:25Z"),
            (4_102_444_799, "2099-12-31T23:59:59Z"),
        ] {
            assert_eq!(Timestamp::from_unix(unix).to_string(), written);
            assert_eq!(crate::clock::rfc3339(unix), written);
            let read = Timestamp::parse(written).unwrap();
            assert_eq!(read, Timestamp::from_unix(unix), "{written}");
            assert_eq!(read.to_string(), written);
            assert_eq!(serde_json::to_value(read).unwrap(), written);
        }
        let t = Timestamp::parse("2024-02-29T23:59:59Z").unwrap();
        assert_eq!(t.to_string(), "2024-02-29T23:59:59Z");
        assert_eq!(t.date(), Date::parse("2024-02-29").unwrap());
        assert!(Timestamp::parse("2026-11-30T12:00:00Z") < Timestamp::parse("2026-11-30T12:00:01Z"));
        assert_eq!(Timestamp::default().to_string(), "1970-01-01T00:00:00Z");
        assert_eq!(Date::default().to_string(), "1970-01-01");
    }

    #[test]
    fn timestamps_in_any_other_form_are_refused() {
        for bad in [
            "",
            "2026-11-30",
            "2026-11-30T12:00:00",
            "2026-11-30T12:00Z",
            "2026-11-30 12:00:00Z",
            "2026-11-30t12:00:00Z",
            "2026-11-30T12:00:00z",
            "2026-11-30T12:00:00.000Z",
            "2026-11-30T12:00:00+00:00",
            "2026-11-30T24:00:00Z",
            "2026-11-30T12:60:00Z",
            "2026-11-30T12:00:60Z",
            "2026-11-30T1a:00:00Z",
            "2026-11-30T+1:00:00Z",
            "2026-02-30T12:00:00Z",
            "1899-12-31T23:59:59Z",
            "2026-11-30T12:00:00Zé",
            "2026-11-éT12:00:00Z",
            "2026-11-30T1é:00:0Z",
        ] {
            assert_eq!(Timestamp::parse(bad), None, "{bad}");
        }
    }
}
