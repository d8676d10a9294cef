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

/// São Paulo's summer time (UTC−02:00), as Unix-second ranges `[start, end)`: every
/// period of the IANA time zone database's `America/Sao_Paulo` since 1914; there has been
/// none since February 2019. Outside them São Paulo is UTC−03:00.
const SAO_PAULO_SUMMER: [(i64, i64); 45] = [
    (-1206957600, -1191362400),
    (-1175374800, -1159826400),
    (-633819600, -622069200),
    (-602283600, -591832800),
    (-570747600, -560210400),
    (-539125200, -531352800),
    (-195426000, -184197600),
    (-155163600, -150069600),
    (-128898000, -121125600),
    (-99954000, -89589600),
    (-68418000, -57967200),
    (499748400, 511236000),
    (530593200, 540266400),
    (562129200, 571197600),
    (592974000, 602042400),
    (624423600, 634701600),
    (656478000, 666756000),
    (687927600, 697600800),
    (719982000, 728445600),
    (750826800, 761709600),
    (782276400, 793159200),
    (813726000, 824004000),
    (844570800, 856058400),
    (876106800, 888717600),
    (908074800, 919562400),
    (938919600, 951616800),
    (970974000, 982461600),
    (1003028400, 1013911200),
    (1036292400, 1045360800),
    (1066532400, 1076810400),
    (1099364400, 1108864800),
    (1129431600, 1140314400),
    (1162695600, 1172368800),
    (1192330800, 1203213600),
    (1224385200, 1234663200),
    (1255834800, 1266717600),
    (1287284400, 1298167200),
    (1318734000, 1330221600),
    (1350788400, 1361066400),
    (1382238000, 1392516000),
    (1413687600, 1424570400),
    (1445137200, 1456020000),
    (1476586800, 1487469600),
    (1508036400, 1518919200),
    (1541300400, 1550368800),
];

/// São Paulo's offset from UTC at the Unix time `unix`, in seconds.
fn sao_paulo_offset(unix: i64) -> i64 {
    let summer = SAO_PAULO_SUMMER.iter().any(|&(start, end)| (start..end).contains(&unix));
    if summer {
        -2 * 3600
    } else {
        -3 * 3600
    }
}

/// A date-time as the real API's documents declare its dates: RFC 3339
/// (`2026-07-04T15:30:00-03:00`, `…Z`, a space for the `T`), or the form its answers
/// write (`2026-07-04 00:00:00 UTC`). Its Unix time, and whether it is midnight UTC
/// exactly (how the real API writes a date).
fn instant(text: &str) -> Option<(i64, bool)> {
    if text.len() < 20 || !text.is_char_boundary(10) {
        return None;
    }
    let mut normal = String::with_capacity(text.len());
    normal.push_str(&text[..10]);
    normal.push(match text.as_bytes()[10] {
        b' ' | b'T' | b't' => 'T',
        _ => return None,
    });
    match text[11..].strip_suffix(" UTC") {
        Some(time) => {
            normal.push_str(time);
            normal.push('Z');
        }
        None => normal.push_str(&text[11..]),
    }
    let parsed = time::OffsetDateTime::parse(&normal, &time::format_description::well_known::Rfc3339).ok()?;
    let utc = parsed.to_offset(time::UtcOffset::UTC);
    Some((utc.unix_timestamp(), utc.time() == time::Time::MIDNIGHT))
}

impl Date {
    /// A date as a client sends it: `YYYY-MM-DD`, or a date-time ([`instant`]) whose
    /// calendar date in São Paulo is the date — but for midnight UTC exactly, which is
    /// how the real API writes a date, and is that date. A real day of the years
    /// 1900–2999 either way.
    pub fn parse(text: &str) -> Option<Date> {
        Date::parse_plain(text).or_else(|| {
            let (unix, midnight) = instant(text)?;
            let local = if midnight { unix } else { unix + sao_paulo_offset(unix) };
            Date::checked(crate::clock::utc(local).date())
        })
    }

    /// `YYYY-MM-DD`, a real day of the years 1900–2999.
    fn parse_plain(text: &str) -> Option<Date> {
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

    /// Today where the clock is `zone`'s.
    pub fn today_in(zone: Zone) -> Date {
        let now = crate::clock::now_unix();
        Date(crate::clock::utc(now + zone.offset(now)).date())
    }

    /// Days from this date to `other` (negative when `other` is earlier).
    pub fn days_until(self, other: Date) -> i64 {
        (other.0 - self.0).whole_days()
    }

    /// Days since the Monday of its week (0 on a Monday).
    pub fn days_from_monday(self) -> u8 {
        self.0.weekday().number_days_from_monday()
    }

    /// Its ISO 8601 week: the week's year and number (`2026-W01` starts on 29 December 2025).
    pub fn iso_week(self) -> (i32, u8) {
        let (year, week, _) = self.0.to_iso_week_date();
        (year, week)
    }
}

/// A Brazilian time zone (IANA name), or UTC: what "today" is for a report. Brazil has
/// kept no summer time since 2019, so each zone is its offset, but for São Paulo's
/// past summers ([`SAO_PAULO_SUMMER`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zone {
    SaoPaulo,
    /// A fixed offset from UTC, in hours.
    Fixed(i8),
}

/// The IANA names of Brazil's time zones and their offsets in hours (and UTC's).
const ZONES: &[(&str, i8)] = &[
    ("America/Noronha", -2),
    ("America/Araguaina", -3),
    ("America/Bahia", -3),
    ("America/Belem", -3),
    ("America/Fortaleza", -3),
    ("America/Maceio", -3),
    ("America/Recife", -3),
    ("America/Santarem", -3),
    ("America/Boa_Vista", -4),
    ("America/Campo_Grande", -4),
    ("America/Cuiaba", -4),
    ("America/Manaus", -4),
    ("America/Porto_Velho", -4),
    ("America/Eirunepe", -5),
    ("America/Rio_Branco", -5),
    ("UTC", 0),
    ("Etc/UTC", 0),
];

impl Zone {
    /// The zone of an IANA name: `America/Sao_Paulo`, another Brazilian zone, or UTC.
    pub fn parse(name: &str) -> Option<Zone> {
        if name == "America/Sao_Paulo" {
            return Some(Zone::SaoPaulo);
        }
        ZONES.iter().find(|(zone, _)| *zone == name).map(|&(_, hours)| Zone::Fixed(hours))
    }

    /// Its offset from UTC at the Unix time `unix`, in seconds.
    pub fn offset(self, unix: i64) -> i64 {
        match self {
            Zone::SaoPaulo => sao_paulo_offset(unix),
            Zone::Fixed(hours) => i64::from(hours) * 3600,
        }
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

    /// An instant as a client sends it (a filter's bound): `YYYY-MM-DD` (its midnight
    /// UTC) or a date-time ([`instant`]), to the second.
    pub fn parse_input(text: &str) -> Option<Timestamp> {
        if let Some(date) = Date::parse_plain(text) {
            return Some(Timestamp(time::PrimitiveDateTime::new(date.0, time::Time::MIDNIGHT)));
        }
        let (unix, _) = instant(text)?;
        let stamp = Timestamp::from_unix(unix);
        YEARS.contains(&stamp.0.year()).then_some(stamp)
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

/// A valid calendar date `YYYY-MM-DD` (years 1900–2999), or a date-time of one.
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
        Date::parse(&text).ok_or_else(|| serde::de::Error::custom("must be a date YYYY-MM-DD or an RFC 3339 date-time"))
    }
}

// A date's schema: `format: date`, and the note that says so where the real API's
// document declares its dates as date-times (`x-kobana-difference`, read by `/v1`'s
// OpenAPI; the tools' schemas leave `x-` keys out).
string_schema!(Date, {
    "type": "string",
    "format": "date",
    "x-kobana-difference": DATE_DIFFERENCE
});

/// What the OpenAPI document says of every date it declares.
pub const DATE_DIFFERENCE: &str = "Deliberate difference: a calendar date, answered as YYYY-MM-DD (the real API's document declares its dates as date-times). A date-time is accepted on input and stands for its calendar date in São Paulo.";

#[cfg(test)]
mod tests {
    use super::*;

    /// A date-time stands for its calendar date in São Paulo (UTC−03:00, −02:00 in the
    /// summers before 2019), but for midnight UTC exactly, the real API's form of a date.
    #[test]
    fn a_date_time_is_its_date_in_sao_paulo() {
        for (sent, date) in [
            ("2026-07-04T00:00:00Z", "2026-07-04"),
            ("2026-07-04 00:00:00 UTC", "2026-07-04"),
            ("2026-07-04T00:00:00+00:00", "2026-07-04"),
            ("2026-07-04T02:59:59Z", "2026-07-03"),
            ("2026-07-04T03:00:00Z", "2026-07-04"),
            ("2026-07-04T23:30:00-03:00", "2026-07-04"),
            ("2026-07-04T23:30:00.250-03:00", "2026-07-04"),
            ("2026-07-04 10:00:00Z", "2026-07-04"),
            ("2026-07-05T01:30:00+02:00", "2026-07-04"),
            ("2018-01-10T02:30:00Z", "2018-01-10"),
            ("2018-01-10T01:30:00Z", "2018-01-09"),
            ("2019-03-01T02:30:00Z", "2019-02-28"),
        ] {
            assert_eq!(Date::parse(sent).map(|d| d.to_string()).as_deref(), Some(date), "{sent}");
        }
        for bad in [
            "2026-07-04T25:00:00Z",
            "2026-07-04T10:00:00",
            "2026-02-30T10:00:00Z",
            "2026-07-04X10:00:00Z",
            "2026-07-04 10:00:00 BRT",
            "3000-01-01T12:00:00Z",
            "2026-07-04T10:00Z",
        ] {
            assert!(Date::parse(bad).is_none(), "{bad}");
        }
        assert_eq!(Timestamp::parse_input("2026-07-04").unwrap().to_string(), "2026-07-04T00:00:00Z");
        assert_eq!(Timestamp::parse_input("2026-07-04T10:00:00-03:00").unwrap().to_string(), "2026-07-04T13:00:00Z");
        assert!(Timestamp::parse_input("2026-07-04T10:00:00").is_none());
    }

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
            "2026-01-01T00:00:00",
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
