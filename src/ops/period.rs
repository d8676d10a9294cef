//! The query of every `…/aggregates` route: `company_id`, and either `month` + `year`
//! or `start_date` + `end_date` (inclusive); neither pair means all time. One parser,
//! so every aggregates route refuses the same things with the same reasons.

use super::common::invalid;
use crate::domain::dates::{Date, Zone};
use crate::error::ApiError;

/// An aggregates query, checked.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct AggregatesQuery {
    pub company_id: Option<String>,
    /// The first and last day counted (inclusive); `None`: all time.
    pub period: Option<(Date, Date)>,
}

impl AggregatesQuery {
    /// The query's parameters as a schema (an aggregates tool's arguments): the
    /// workspace, which the parser leaves to the door, and the query's own.
    pub fn schema() -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "workspace_id": { "type": "string", "format": "uuid" },
                "company_id": { "type": "string", "format": "uuid" },
                "month": { "type": "integer", "minimum": 1, "maximum": 12, "description": "With year" },
                "year": { "type": "integer", "minimum": 1900, "maximum": 2999 },
                "start_date": { "type": "string", "format": "date", "description": "With end_date: an inclusive range" },
                "end_date": { "type": "string", "format": "date" },
            },
            "additionalProperties": false,
        })
    }

    /// Reads the query pairs: `workspace_id` is the door's (skipped here); any other
    /// key is refused (`unknown_filter`), and so is a key given twice, one pair mixed
    /// with the other (`mutually_exclusive`), half a pair (`required`, naming the half
    /// missing), a month outside 1–12, a year outside 1900–2999, a date that is not a
    /// real day (`invalid_date`) and an `end_date` before `start_date`.
    pub fn parse(query: &[(String, String)]) -> Result<AggregatesQuery, ApiError> {
        let mut company_id = None;
        let (mut month, mut year, mut start, mut end) = (None, None, None, None);
        for (key, value) in query {
            let key = key.as_str();
            let repeated = match key {
                "workspace_id" => false,
                "company_id" => company_id.replace(query_id(key, value)?).is_some(),
                "month" => month.replace(month_of(value)?).is_some(),
                "year" => year.replace(year_of(value)?).is_some(),
                "start_date" => start.replace(date_of(key, value)?).is_some(),
                "end_date" => end.replace(date_of(key, value)?).is_some(),
                _ => return Err(invalid(key, "unknown_filter", "Unknown parameter")),
            };
            if repeated {
                return Err(invalid(key, "invalid_value", "A parameter appears twice"));
            }
        }
        if (month.is_some() || year.is_some()) && (start.is_some() || end.is_some()) {
            return Err(invalid(
                "month",
                "mutually_exclusive",
                "month/year and start_date/end_date are mutually exclusive",
            ));
        }
        let period = match (month, year, start, end) {
            (Some(m), Some(y), _, _) => Some(Date::month_bounds(y, m).ok_or_else(ApiError::internal)?),
            (Some(_), None, _, _) => return Err(invalid("year", "required", "year is required with month")),
            (None, Some(_), _, _) => return Err(invalid("month", "required", "month is required with year")),
            (None, None, Some(s), Some(e)) if e < s => {
                return Err(invalid("end_date", "invalid_value", "end_date must not be before start_date"))
            }
            (None, None, Some(s), Some(e)) => Some((s, e)),
            (None, None, Some(_), None) => {
                return Err(invalid("end_date", "required", "end_date is required with start_date"))
            }
            (None, None, None, Some(_)) => {
                return Err(invalid("start_date", "required", "start_date is required with end_date"))
            }
            (None, None, None, None) => None,
        };
        Ok(AggregatesQuery { company_id, period })
    }
}

fn month_of(value: &str) -> Result<u8, ApiError> {
    value
        .parse::<u8>()
        .ok()
        .filter(|m| (1..=12).contains(m))
        .ok_or_else(|| invalid("month", "invalid_value", "month must be 1 to 12"))
}

fn year_of(value: &str) -> Result<i32, ApiError> {
    value
        .parse::<i32>()
        .ok()
        .filter(|y| (1900..=2999).contains(y))
        .ok_or_else(|| invalid("year", "invalid_value", "year must be between 1900 and 2999"))
}

/// A query parameter's UUID (400 `invalid_uuid` naming it).
pub(crate) fn query_id(field: &str, value: &str) -> Result<String, ApiError> {
    uuid::Uuid::parse_str(value)
        .map(|u| u.to_string())
        .map_err(|_| invalid(field, "invalid_uuid", &format!("{field} must be a UUID")))
}

/// A query parameter's date (400 `invalid_date` naming it).
pub(crate) fn date_of(field: &str, value: &str) -> Result<Date, ApiError> {
    Date::parse(value).ok_or_else(|| {
        invalid(field, "invalid_date", &format!("{field} must be a date YYYY-MM-DD or an RFC 3339 date-time"))
    })
}

/// A query parameter's time zone, whose "today" a report takes (400 naming it).
pub(crate) fn zone_of(field: &str, value: &str) -> Result<Zone, ApiError> {
    Zone::parse(value).ok_or_else(|| {
        invalid(field, "invalid_value", "tz must be a Brazilian IANA time zone (America/Sao_Paulo…) or UTC")
    })
}

/// A required `from`..=`to` of a query (400 naming what is missing, or `to` before
/// `from`).
pub(crate) fn range_of(from: Option<Date>, to: Option<Date>) -> Result<(Date, Date), ApiError> {
    let from = from.ok_or_else(|| invalid("from", "required", "from is required"))?;
    let to = to.ok_or_else(|| invalid("to", "required", "to is required"))?;
    if to < from {
        return Err(invalid("to", "invalid_value", "to must not be before from"));
    }
    Ok((from, to))
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
        assert_eq!(parse("workspace_id=w").unwrap(), AggregatesQuery::default());
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
            ("month=13&year=2026", "month", "invalid_value"),
            ("month=0&year=2026", "month", "invalid_value"),
            ("month=5&year=1899", "year", "invalid_value"),
            ("start_date=2026-02-30&end_date=2026-05-01", "start_date", "invalid_date"),
            ("start_date=2026-05-31&end_date=2026-05-01", "end_date", "invalid_value"),
        ] {
            assert_eq!(refused(query), (field.to_string(), reason.to_string()), "{query}");
        }
    }
}
