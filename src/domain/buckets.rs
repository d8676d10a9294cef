//! The periods a report counts in — a day, an ISO week, a month, a year — and how a
//! range of days is cut into them: each period's first day, the next one's, and its
//! name (`2026-07-04`, `2026-W27`, `2026-07`, `2026`). A range holds at most a cap of
//! periods per granularity; what lies past the cap is cut off, and the caller says so.

use super::dates::Date;

/// How long one period of a report is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Granularity {
    Day,
    Week,
    Month,
    Year,
}

impl Granularity {
    pub const NAMES: &'static [&'static str] = &["day", "week", "month", "year"];

    pub fn parse(name: &str) -> Option<Granularity> {
        match name {
            "day" => Some(Granularity::Day),
            "week" => Some(Granularity::Week),
            "month" => Some(Granularity::Month),
            "year" => Some(Granularity::Year),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Granularity::Day => "day",
            Granularity::Week => "week",
            Granularity::Month => "month",
            Granularity::Year => "year",
        }
    }

    /// The most periods one range holds: a year of days, five years of weeks, ten of
    /// months, twenty years.
    pub fn cap(self) -> usize {
        match self {
            Granularity::Day => 366,
            Granularity::Week => 261,
            Granularity::Month => 120,
            Granularity::Year => 20,
        }
    }

    /// The first day of the period holding `date`.
    pub fn start(self, date: Date) -> Date {
        let start = match self {
            Granularity::Day => Some(date),
            Granularity::Week => date.add_days(-i64::from(date.days_from_monday())),
            Granularity::Month => Date::from_ymd(date.year(), date.month(), 1),
            Granularity::Year => Date::from_ymd(date.year(), 1, 1),
        };
        // Only the first week of the supported years starts before them.
        start.unwrap_or(date)
    }

    /// The first day of the period after the one starting on `start` (none past the
    /// supported years).
    pub fn next(self, start: Date) -> Option<Date> {
        match self {
            Granularity::Day => start.add_days(1),
            Granularity::Week => start.add_days(7),
            Granularity::Month => start.add_months(1),
            Granularity::Year => start.add_months(12),
        }
    }

    /// The name of the period starting on `start`.
    pub fn key(self, start: Date) -> String {
        match self {
            Granularity::Day => start.to_string(),
            Granularity::Week => {
                let (year, week) = start.iso_week();
                format!("{year}-W{week:02}")
            }
            Granularity::Month => format!("{:04}-{:02}", start.year(), start.month()),
            Granularity::Year => format!("{:04}", start.year()),
        }
    }
}

/// One period of a range: its name and the days of the range it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Period {
    pub key: String,
    pub first: Date,
    pub last: Date,
}

/// The periods of `from..=to` (`from` not after `to`), the first and the last clipped
/// to the range, at most [`Granularity::cap`] of them; and whether the range went on
/// past the cap.
pub fn periods(granularity: Granularity, from: Date, to: Date) -> (Vec<Period>, bool) {
    let mut out = Vec::new();
    let mut start = granularity.start(from);
    loop {
        let next = granularity.next(start);
        let first = start.max(from);
        let last = next.and_then(|n| n.add_days(-1)).map_or(to, |end| end.min(to));
        if out.len() == granularity.cap() {
            return (out, true);
        }
        out.push(Period { key: granularity.key(start), first, last });
        match next {
            Some(next) if next <= to => start = next,
            _ => return (out, false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(text: &str) -> Date {
        Date::parse(text).unwrap()
    }

    fn keys(granularity: Granularity, from: &str, to: &str) -> (Vec<String>, bool) {
        let (periods, truncated) = periods(granularity, day(from), day(to));
        (periods.into_iter().map(|p| p.key).collect(), truncated)
    }

    #[test]
    fn a_range_is_cut_into_named_periods_clipped_at_its_ends() {
        assert_eq!(keys(Granularity::Month, "2026-07-15", "2026-09-02").0, ["2026-07", "2026-08", "2026-09"]);
        let (months, _) = periods(Granularity::Month, day("2026-07-15"), day("2026-09-02"));
        assert_eq!((months[0].first, months[0].last), (day("2026-07-15"), day("2026-07-31")));
        assert_eq!((months[2].first, months[2].last), (day("2026-09-01"), day("2026-09-02")));
        // ISO weeks: 2026-01-01 is a Thursday of week 1; 2025-12-29 is its Monday.
        assert_eq!(keys(Granularity::Week, "2025-12-28", "2026-01-05").0, ["2025-W52", "2026-W01", "2026-W02"]);
        let (weeks, _) = periods(Granularity::Week, day("2025-12-28"), day("2026-01-05"));
        assert_eq!((weeks[1].first, weeks[1].last), (day("2025-12-29"), day("2026-01-04")));
        assert_eq!(keys(Granularity::Day, "2026-02-27", "2026-03-01").0, ["2026-02-27", "2026-02-28", "2026-03-01"]);
        assert_eq!(keys(Granularity::Year, "2025-06-01", "2026-01-01").0, ["2025", "2026"]);
        assert_eq!(keys(Granularity::Day, "2026-03-01", "2026-03-01"), (vec!["2026-03-01".to_string()], false));
    }

    #[test]
    fn a_range_past_the_cap_is_cut_off() {
        let (days, truncated) = keys(Granularity::Day, "2026-01-01", "2027-12-31");
        assert!(truncated);
        assert_eq!(days.len(), 366);
        assert_eq!(days.last().unwrap(), "2027-01-01");
        assert_eq!(keys(Granularity::Day, "2026-01-01", "2027-01-01"), (days, false), "exactly the cap");
        let (months, truncated) = keys(Granularity::Month, "2020-01-15", "2035-01-01");
        assert!(truncated && months.len() == 120 && months.last().unwrap() == "2029-12");
    }
}
