//! What the ranged and totalled queries share: the [`Period`] of days a query asks for,
//! with the one cap every ranged route applies ([`MAX_DAYS`]), and the query of every
//! `…/aggregates` route ([`AggregatesParams`]): `company_id`, and either `month` +
//! `year` or `start_date` + `end_date` (inclusive, the real document's names); neither
//! pair means all time.
//!
//! A query string is a type (serde + schemars, as a request body is): its schema is the
//! operation's parameters (OpenAPI, the tool's arguments) and
//! [`parse_query`](super::validate::parse_query) checks the pairs against it; what one
//! parameter cannot say alone (a month with its year, a range's end after its start, the
//! cap) is checked once, here.

use schemars::JsonSchema;
use serde::Deserialize;

use super::common::invalid;
use super::validate::parse_query;
use crate::domain::buckets::{periods, Granularity};
use crate::domain::dates::{Date, Zone};
use crate::error::ApiError;

/// The longest range a ranged route (`from`..=`to`) answers, in days counted with both
/// ends: `to` at most 365 days after `from`. A longer one is 400 `bad_request`, reason
/// `out_of_range`, naming `to`.
pub const MAX_DAYS: i64 = 366;

/// A range of days, `from`..=`to`, both ends counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    pub from: Date,
    pub to: Date,
}

impl Period {
    /// The range of the parameters `names` (first, last): 400 `invalid_value` naming
    /// the last when it is before the first.
    pub fn ordered(from: Date, to: Date, names: (&str, &str)) -> Result<Period, ApiError> {
        if to < from {
            let message = format!("{} must not be before {}", names.1, names.0);
            return Err(invalid(names.1, "invalid_value", &message));
        }
        Ok(Period { from, to })
    }

    /// A ranged route's `from`..=`to`: ordered, and at most [`MAX_DAYS`] days.
    pub fn capped(from: Date, to: Date) -> Result<(Date, Date), ApiError> {
        Period::within(from, to, Granularity::Day)
    }

    /// `from`..=`to` cut into periods of `granularity`: ordered, and at most the
    /// granularity's cap of periods ([`Granularity::cap`]: by day, [`MAX_DAYS`] days),
    /// else 400 `out_of_range` naming `to`. The one cap of every ranged route.
    pub fn within(from: Date, to: Date, granularity: Granularity) -> Result<(Date, Date), ApiError> {
        let period = Period::ordered(from, to, ("from", "to"))?;
        if periods(granularity, period.from, period.to).1 {
            let unit = match granularity {
                Granularity::Day => "days",
                Granularity::Week => "weeks",
                Granularity::Month => "months",
                Granularity::Year => "years",
            };
            let message = format!("The range holds at most {} {unit}, from and to included", granularity.cap());
            return Err(invalid("to", "out_of_range", &message));
        }
        Ok((period.from, period.to))
    }
}

/// The query string of every `…/aggregates` route, as sent.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AggregatesParams {
    #[serde(default)]
    #[schemars(with = "String", extend("format" = "uuid"))]
    pub workspace_id: Option<String>,
    #[serde(default)]
    #[schemars(with = "String", extend("format" = "uuid"))]
    pub company_id: Option<String>,
    /// With year
    #[serde(default)]
    #[schemars(with = "i64", range(min = 1, max = 12))]
    pub month: Option<u8>,
    #[serde(default)]
    #[schemars(with = "i64", range(min = 1900, max = 2999))]
    pub year: Option<i32>,
    /// With end_date: an inclusive range
    #[serde(default)]
    #[schemars(with = "Date")]
    pub start_date: Option<Date>,
    #[serde(default)]
    #[schemars(with = "Date")]
    pub end_date: Option<Date>,
}

/// An aggregates query, checked.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct AggregatesQuery {
    pub company_id: Option<String>,
    /// The first and last day counted (inclusive); `None`: all time.
    pub period: Option<(Date, Date)>,
}

impl AggregatesQuery {
    /// Reads the query pairs against [`AggregatesParams`] (400 naming the parameter: an
    /// unknown or repeated one, a month outside 1–12, a year outside 1900–2999, a date
    /// that is not a real day, a malformed id), then what the pairs say together: one
    /// pair mixed with the other (`mutually_exclusive`), half a pair (`required`, naming
    /// the half missing) and an `end_date` before `start_date`. No cap: all time is an
    /// answer here.
    pub fn parse(query: &[(String, String)]) -> Result<AggregatesQuery, ApiError> {
        let params = parse_query::<AggregatesParams>(query)?;
        let AggregatesParams { company_id, month, year, start_date, end_date, .. } = params;
        if (month.is_some() || year.is_some()) && (start_date.is_some() || end_date.is_some()) {
            return Err(invalid(
                "month",
                "mutually_exclusive",
                "month/year and start_date/end_date are mutually exclusive",
            ));
        }
        let period = match (month, year, start_date, end_date) {
            (Some(m), Some(y), _, _) => Some(Date::month_bounds(y, m).ok_or_else(ApiError::internal)?),
            (Some(_), None, _, _) => return Err(invalid("year", "required", "year is required with month")),
            (None, Some(_), _, _) => return Err(invalid("month", "required", "month is required with year")),
            (None, None, Some(s), Some(e)) => {
                let period = Period::ordered(s, e, ("start_date", "end_date"))?;
                Some((period.from, period.to))
            }
            (None, None, Some(_), None) => {
                return Err(invalid("end_date", "required", "end_date is required with start_date"))
            }
            (None, None, None, Some(_)) => {
                return Err(invalid("start_date", "required", "start_date is required with end_date"))
            }
            (None, None, None, None) => None,
        };
        Ok(AggregatesQuery { company_id: company_id.map(|id| canonical(&id)), period })
    }
}

/// A UUID its schema accepted, in its one spelling (lower case, hyphenated).
pub(crate) fn canonical(id: &str) -> String {
    uuid::Uuid::parse_str(id).map_or_else(|_| id.to_string(), |u| u.to_string())
}

/// A query parameter's time zone, whose "today" a report takes (400 naming it).
pub(crate) fn zone_of(field: &str, value: Option<&str>) -> Result<Zone, ApiError> {
    let Some(value) = value else { return Ok(Zone::SaoPaulo) };
    Zone::parse(value).ok_or_else(|| {
        invalid(field, "invalid_value", "tz must be a Brazilian IANA time zone (America/Sao_Paulo…) or UTC")
    })
}

/// The pairs of a query string as a door hands them over (tests write queries as text).
#[cfg(test)]
pub(crate) fn pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (k.to_string(), v.to_string())
        })
        .collect()
}

/// A query's refusal as tests compare it: its status, `details.field` and
/// `details.reason`.
#[cfg(test)]
pub(crate) fn refusal<T: std::fmt::Debug>(parsed: Result<T, ApiError>) -> (u16, String, String) {
    let err = parsed.expect_err("a refusal");
    let details = err.details.clone().unwrap_or_default();
    let text = |key: &str| details[key].as_str().unwrap_or("").to_string();
    (err.status().as_u16(), text("field"), text("reason"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(query: &str) -> Result<AggregatesQuery, ApiError> {
        AggregatesQuery::parse(&pairs(query))
    }

    fn refused(query: &str) -> (String, String) {
        let err = parse(query).expect_err(query);
        assert_eq!(err.status().as_u16(), 400, "{query}");
        let details = err.details.clone().unwrap_or_default();
        (details["field"].as_str().unwrap_or("").to_string(), details["reason"].as_str().unwrap_or("").to_string())
    }

    fn day(text: &str) -> Date {
        Date::parse(text).unwrap()
    }

    #[test]
    fn reads_either_pair_or_all_time() {
        assert_eq!(parse("").unwrap(), AggregatesQuery::default());
        assert_eq!(parse("workspace_id=5d0c7b1e-2f7a-4c39-9a53-0b8e61f2d4a7").unwrap(), AggregatesQuery::default());
        assert_eq!(parse("month=02&year=2028").unwrap().period, Some((day("2028-02-01"), day("2028-02-29"))));
        assert_eq!(
            parse("start_date=2026-05-10&end_date=2026-05-10").unwrap().period,
            Some((day("2026-05-10"), day("2026-05-10")))
        );
        let company = "c1a4e9d2-5b7f-4c3e-8a1d-2f6b9e0c7a11";
        assert_eq!(parse(&format!("company_id={company}")).unwrap().company_id.as_deref(), Some(company));
    }

    #[test]
    fn refuses_with_one_set_of_reasons() {
        for (query, field, reason) in [
            ("colour=red", "colour", "unknown_filter"),
            ("month=5&month=6&year=2026", "month", "invalid_value"),
            ("start_date=2026-01-01&start_date=2026-01-02&end_date=2026-02-01", "start_date", "invalid_value"),
            ("company_id=nope", "company_id", "invalid_uuid"),
            ("month=5&year=2026&start_date=2026-05-01&end_date=2026-05-31", "month", "mutually_exclusive"),
            ("month=5", "year", "required"),
            ("year=2026", "month", "required"),
            ("start_date=2026-05-01", "end_date", "required"),
            ("end_date=2026-05-01", "start_date", "required"),
            ("month=13&year=2026", "month", "out_of_range"),
            ("month=0&year=2026", "month", "out_of_range"),
            ("month=5&year=1899", "year", "out_of_range"),
            ("start_date=2026-02-30&end_date=2026-05-01", "start_date", "invalid_date"),
            ("start_date=2026-05-31&end_date=2026-05-01", "end_date", "invalid_value"),
            ("month=may&year=2026", "month", "wrong_type"),
        ] {
            assert_eq!(refused(query), (field.to_string(), reason.to_string()), "{query}");
        }
    }

    /// The one cap: `to` at most 365 days after `from` (366 days counted with both
    /// ends), by day; a granularity's cap of periods otherwise; one error past it.
    #[test]
    fn a_range_holds_at_most_366_days() {
        assert_eq!(Period::capped(day("2026-01-01"), day("2027-01-01")).unwrap().1, day("2027-01-01"));
        assert_eq!(Period::capped(day("2028-01-01"), day("2028-12-31")).unwrap().1, day("2028-12-31"));
        for (from, to) in [("2026-01-01", "2027-01-02"), ("2028-01-01", "2029-01-01")] {
            let err = Period::capped(day(from), day(to)).expect_err(to);
            let details = err.details.clone().unwrap_or_default();
            assert_eq!(
                (err.status().as_u16(), &details["field"], &details["reason"]),
                (400, &"to".into(), &"out_of_range".into())
            );
        }
        assert!(Period::within(day("2026-01-01"), day("2035-12-31"), Granularity::Month).is_ok());
        assert!(Period::within(day("2026-01-01"), day("2036-01-01"), Granularity::Month).is_err());
        let err = Period::capped(day("2026-02-01"), day("2026-01-01")).unwrap_err();
        assert_eq!(err.details.unwrap_or_default()["reason"], "invalid_value");
    }
}
