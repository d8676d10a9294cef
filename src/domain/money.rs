//! Money: integer cents inside, a string with two decimals on the wire (`"1500.00"`).
//! Never floating point: amounts are parsed digit by digit.

use std::fmt;

/// An amount in cents of BRL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Cents(pub i64);

/// Why an amount was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MoneyError {
    /// Not `^\d{1,13}\.\d{1,2}$` (or its signed form where allowed).
    Format,
    /// Negative where only positive amounts are allowed.
    Negative,
    /// Zero where a positive amount is required.
    Zero,
}

impl fmt::Display for MoneyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MoneyError::Format => "must be a decimal string with up to 13 integer digits and 1-2 decimals, e.g. \"1500.00\"",
            MoneyError::Negative => "must not be negative",
            MoneyError::Zero => "must be greater than zero",
        })
    }
}

/// The input pattern of amounts (documented in schemas).
pub const AMOUNT_PATTERN: &str = r"^\d{1,13}\.\d{1,2}$";
/// The input pattern of signed amounts (balances).
pub const SIGNED_AMOUNT_PATTERN: &str = r"^-?\d{1,13}\.\d{1,2}$";

impl Cents {
    /// Parses `"1500.00"`, `"0.5"` (13 integer digits at most, 1–2 decimals); a leading
    /// `-` only when `signed`.
    pub fn parse(text: &str, signed: bool) -> Result<Cents, MoneyError> {
        let (negative, digits) = match text.strip_prefix('-') {
            Some(rest) if signed => (true, rest),
            Some(_) => return Err(MoneyError::Negative),
            None => (false, text),
        };
        let (int, frac) = digits.split_once('.').ok_or(MoneyError::Format)?;
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if int.is_empty() || int.len() > 13 || frac.is_empty() || frac.len() > 2 || !all_digits(int) || !all_digits(frac) {
            return Err(MoneyError::Format);
        }
        let whole: i64 = int.parse().map_err(|_| MoneyError::Format)?;
        let mut cents: i64 = frac.parse().map_err(|_| MoneyError::Format)?;
        if frac.len() == 1 {
            cents *= 10;
        }
        let value = whole * 100 + cents;
        Ok(Cents(if negative { -value } else { value }))
    }

    /// Parses a positive amount (zero refused).
    pub fn parse_positive(text: &str) -> Result<Cents, MoneyError> {
        let cents = Cents::parse(text, false)?;
        if cents.0 == 0 {
            return Err(MoneyError::Zero);
        }
        Ok(cents)
    }
}

impl Cents {
    /// The amount as Brazilians write it: `R$ 4.500,00`, `-R$ 12,50`.
    pub fn brl(self) -> String {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.unsigned_abs();
        let units = (abs / 100).to_string();
        let mut grouped = String::with_capacity(units.len() + units.len() / 3);
        for (i, digit) in units.chars().enumerate() {
            if i > 0 && (units.len() - i) % 3 == 0 {
                grouped.push('.');
            }
            grouped.push(digit);
        }
        format!("{sign}R$ {grouped},{:02}", abs % 100)
    }
}

impl fmt::Display for Cents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.unsigned_abs();
        write!(f, "{sign}{}.{:02}", abs / 100, abs % 100)
    }
}

impl serde::Serialize for Cents {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brl_groups_thousands_with_dots_and_cents_with_a_comma() {
        assert_eq!(Cents(450000).brl(), "R$ 4.500,00");
        assert_eq!(Cents(-1250).brl(), "-R$ 12,50");
        assert_eq!(Cents(5).brl(), "R$ 0,05");
        assert_eq!(Cents(123456789012).brl(), "R$ 1.234.567.890,12");
        assert_eq!(Cents(99999).brl(), "R$ 999,99");
    }

    #[test]
    fn money_is_parsed_digit_by_digit() {
        assert_eq!(Cents::parse("1500.00", false), Ok(Cents(150_000)));
        assert_eq!(Cents::parse("0.5", false), Ok(Cents(50)));
        assert_eq!(Cents::parse("0.05", false), Ok(Cents(5)));
        assert_eq!(Cents::parse("9999999999999.99", false), Ok(Cents(999_999_999_999_999)));
        assert_eq!(Cents::parse("-10.10", true), Ok(Cents(-1010)));
        for bad in ["", "1", "1.", ".5", "1.234", "1e3", "1,00", " 1.00", "10000000000000.00", "+1.00", "0x1.00", "1.0a"] {
            assert_eq!(Cents::parse(bad, true), Err(MoneyError::Format), "{bad}");
        }
        assert_eq!(Cents::parse("-1.00", false), Err(MoneyError::Negative));
        assert_eq!(Cents::parse_positive("0.00"), Err(MoneyError::Zero));
    }

    #[test]
    fn money_is_printed_with_two_decimals() {
        assert_eq!(Cents(150_000).to_string(), "1500.00");
        assert_eq!(Cents(5).to_string(), "0.05");
        assert_eq!(Cents(-1010).to_string(), "-10.10");
        assert_eq!(Cents(0).to_string(), "0.00");
        assert_eq!(serde_json::to_string(&Cents(199)).unwrap(), "\"1.99\"");
    }
}
