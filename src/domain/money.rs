//! Money: integer cents inside, a string with two decimals on the wire (`"1500.00"`).
//! Never floating point: amounts are parsed digit by digit. [`Amount`] and
//! [`SignedAmount`] are the request forms: their schema carries the input pattern, which
//! the request check honours (400 `invalid_amount`), and they refuse bad input when
//! deserialised. The rules on amounts — the nominal amount of a bill, the split of a
//! series into installments, a percentage of an amount — live here, once.

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
            MoneyError::Format => {
                "must be a decimal string with up to 13 integer digits and 1-2 decimals, e.g. \"1500.00\""
            }
            MoneyError::Negative => "must not be negative",
            MoneyError::Zero => "must be greater than zero",
        })
    }
}

/// The input pattern of amounts (in the schemas of [`Amount`]).
pub const AMOUNT_PATTERN: &str = r"^\d{1,13}\.\d{1,2}$";
/// The input pattern of signed amounts (balances; in the schemas of [`SignedAmount`]).
pub const SIGNED_AMOUNT_PATTERN: &str = r"^-?\d{1,13}\.\d{1,2}$";

/// The reason a text breaking one of the money patterns is refused with, or `None`
/// when it matches — or when the pattern is not one of ours (the request check knows no
/// other). A text shorter or longer than any amount can be is `too_short` (under 3
/// characters) or `too_long` (over 16, 17 signed), as the string lengths of amounts
/// always answered; any other mismatch is `invalid_amount`. The pattern implies those
/// lengths, so the schemas carry the pattern alone.
pub fn pattern_refusal(pattern: &str, text: &str) -> Option<&'static str> {
    let (signed, longest) = match pattern {
        AMOUNT_PATTERN => (false, 16),
        SIGNED_AMOUNT_PATTERN => (true, 17),
        _ => return None,
    };
    match text.chars().count() {
        n if n < 3 => Some("too_short"),
        n if n > longest => Some("too_long"),
        _ => Cents::parse(text, signed).is_err().then_some("invalid_amount"),
    }
}

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
        if int.is_empty()
            || int.len() > 13
            || frac.is_empty()
            || frac.len() > 2
            || !all_digits(int)
            || !all_digits(frac)
        {
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
    /// The nominal amount of a bill: amount + interest − discount.
    pub fn nominal(amount: Cents, interest: Option<Cents>, discount: Option<Cents>) -> Cents {
        Cents(amount.0 + interest.map_or(0, |c| c.0) - discount.map_or(0, |c| c.0))
    }

    /// Splits the amount into `n` installments (n ≥ 1): floor to the cent, the
    /// remainder on the last.
    pub fn split(self, n: i64) -> Vec<Cents> {
        let n = n.max(1);
        let base = self.0 / n;
        let mut parcels = vec![Cents(base); n as usize];
        if let Some(last) = parcels.last_mut() {
            *last = Cents(self.0 - base * (n - 1));
        }
        parcels
    }

    /// `bp` basis points (10,000 = 100 %) of the amount, rounded half up to the cent.
    /// In i128: the largest amount (13 integer digits, in cents) times 10,000 basis
    /// points does not fit in i64; the result is at most the amount, so it fits back.
    pub fn percentage(self, bp: i64) -> Cents {
        Cents(((i128::from(self.0) * i128::from(bp) + 5_000) / 10_000) as i64)
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
            if i > 0 && (units.len() - i).is_multiple_of(3) {
                grouped.push('.');
            }
            grouped.push(digit);
        }
        format!("{sign}R$ {grouped},{:02}", abs % 100)
    }
}

impl Cents {
    /// The wire form (`"1500.00"`, `"-12.50"`), written into `buf` digit by digit: money
    /// is written for every amount of every record a list answers, and the formatting
    /// machinery costs more than the digits.
    pub fn write_wire(self, buf: &mut [u8; 24]) -> &str {
        let abs = self.0.unsigned_abs();
        let mut at = buf.len();
        let mut put = |b: u8| {
            at -= 1;
            buf[at] = b;
        };
        put(b'0' + (abs % 10) as u8);
        put(b'0' + (abs / 10 % 10) as u8);
        put(b'.');
        let mut units = abs / 100;
        loop {
            put(b'0' + (units % 10) as u8);
            units /= 10;
            if units == 0 {
                break;
            }
        }
        if self.0 < 0 {
            put(b'-');
        }
        // Only ASCII digits, '.' and '-' were written.
        std::str::from_utf8(&buf[at..]).unwrap_or("0.00")
    }
}

impl fmt::Display for Cents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.write_wire(&mut [0; 24]))
    }
}

impl serde::Serialize for Cents {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.write_wire(&mut [0; 24]))
    }
}

/// An amount in a request: zero or more, `"1500.00"` (`^\d{1,13}\.\d{1,2}$`). Whether
/// zero is allowed is the operation's rule ([`Amount::positive`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Amount(pub Cents);

/// A signed amount in a request (balances): `"-12.50"` (`^-?\d{1,13}\.\d{1,2}$`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SignedAmount(pub Cents);

impl Amount {
    pub fn cents(self) -> Cents {
        self.0
    }

    /// The amount, refused when zero.
    pub fn positive(self) -> Result<Cents, MoneyError> {
        if self.0 .0 == 0 {
            return Err(MoneyError::Zero);
        }
        Ok(self.0)
    }
}

impl SignedAmount {
    pub fn cents(self) -> Cents {
        self.0
    }
}

fn deserialize_cents<'de, D: serde::Deserializer<'de>>(deserializer: D, signed: bool) -> Result<Cents, D::Error> {
    let text = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(deserializer)?;
    Cents::parse(&text, signed).map_err(serde::de::Error::custom)
}

impl<'de> serde::Deserialize<'de> for Amount {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Amount, D::Error> {
        deserialize_cents(deserializer, false).map(Amount)
    }
}

impl<'de> serde::Deserialize<'de> for SignedAmount {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<SignedAmount, D::Error> {
        deserialize_cents(deserializer, true).map(SignedAmount)
    }
}

impl serde::Serialize for Amount {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl serde::Serialize for SignedAmount {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

string_schema!(Amount, { "type": "string", "pattern": AMOUNT_PATTERN });

string_schema!(SignedAmount, { "type": "string", "pattern": SIGNED_AMOUNT_PATTERN });

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_form_has_two_decimals_and_a_sign() {
        for (cents, wire) in [
            (0, "0.00"),
            (5, "0.05"),
            (99, "0.99"),
            (100, "1.00"),
            (150000, "1500.00"),
            (-1250, "-12.50"),
            (-1, "-0.01"),
            (i64::MAX, "92233720368547758.07"),
            (i64::MIN, "-92233720368547758.08"),
        ] {
            assert_eq!(Cents(cents).to_string(), wire);
            assert_eq!(serde_json::to_string(&Cents(cents)).unwrap(), format!("\"{wire}\""));
        }
    }

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
        for bad in
            ["", "1", "1.", ".5", "1.234", "1e3", "1,00", " 1.00", "10000000000000.00", "+1.00", "0x1.00", "1.0a"]
        {
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

    #[test]
    fn request_amounts_refuse_what_the_pattern_refuses() {
        let amount = |v: serde_json::Value| serde_json::from_value::<Amount>(v);
        assert_eq!(amount(serde_json::json!("1500.00")).unwrap(), Amount(Cents(150_000)));
        assert_eq!(serde_json::to_value(Amount(Cents(5))).unwrap(), "0.05");
        for bad in
            [serde_json::json!("-1.00"), serde_json::json!("1.001"), serde_json::json!(10.5), serde_json::json!(10)]
        {
            assert!(amount(bad.clone()).is_err(), "{bad}");
        }
        assert_eq!(
            serde_json::from_value::<SignedAmount>(serde_json::json!("-12.50")).unwrap(),
            SignedAmount(Cents(-1250))
        );
        assert_eq!(pattern_refusal(AMOUNT_PATTERN, "10.00"), None);
        assert_eq!(pattern_refusal(AMOUNT_PATTERN, "-10.00"), Some("invalid_amount"));
        assert_eq!(pattern_refusal(SIGNED_AMOUNT_PATTERN, "-10.00"), None);
        assert_eq!(pattern_refusal(AMOUNT_PATTERN, "1e3.00"), Some("invalid_amount"));
        assert_eq!(pattern_refusal(AMOUNT_PATTERN, "10"), Some("too_short"));
        assert_eq!(pattern_refusal(AMOUNT_PATTERN, "10000000000000.00"), Some("too_long"));
        assert_eq!(pattern_refusal(SIGNED_AMOUNT_PATTERN, "-9999999999999.99"), None);
        assert_eq!(pattern_refusal("^[a-z]+$", "10.00"), None, "other patterns are not ours to judge");
        assert_eq!(Amount(Cents(0)).positive(), Err(MoneyError::Zero));
    }

    #[test]
    fn the_nominal_amount_is_amount_plus_interest_minus_discount() {
        assert_eq!(Cents::nominal(Cents(10_000), Some(Cents(250)), Some(Cents(100))), Cents(10_150));
        assert_eq!(Cents::nominal(Cents(10_000), None, None), Cents(10_000));
        assert_eq!(Cents::nominal(Cents(100), None, Some(Cents(100))), Cents(0));
    }

    #[test]
    fn installments_split_to_the_cent_with_the_remainder_on_the_last() {
        assert_eq!(Cents(10_000).split(3), vec![Cents(3333), Cents(3333), Cents(3334)]);
        assert_eq!(Cents(5).split(2), vec![Cents(2), Cents(3)]);
        assert_eq!(Cents(5).split(1), vec![Cents(5)]);
    }

    #[test]
    fn percentages_round_half_up_without_overflow() {
        assert_eq!(Cents(10_000).percentage(3333), Cents(3333));
        assert_eq!(Cents(1).percentage(5_000), Cents(1));
        assert_eq!(Cents(999_999_999_999_999).percentage(10_000), Cents(999_999_999_999_999));
    }
}
