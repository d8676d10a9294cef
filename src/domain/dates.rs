//! Calendar dates on the wire: `YYYY-MM-DD`, checked for a real day.

/// A valid calendar date `YYYY-MM-DD` (years 1900–2999).
pub fn is_valid_date(text: &str) -> bool {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let number = |r: std::ops::Range<usize>| -> Option<u32> {
        let s = &text[r];
        s.bytes().all(|c| c.is_ascii_digit()).then(|| s.parse().ok()).flatten()
    };
    let (Some(y), Some(m), Some(d)) = (number(0..4), number(5..7), number(8..10)) else { return false };
    if !(1900..=2999).contains(&y) || !(1..=12).contains(&m) || d == 0 {
        return false;
    }
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    d <= days
}

#[cfg(test)]
mod tests {
    use super::is_valid_date;

    #[test]
    fn dates_are_real_days() {
        for ok in ["2026-01-31", "2024-02-29", "2000-02-29", "1900-01-01"] {
            assert!(is_valid_date(ok), "{ok}");
        }
        for bad in ["2026-02-29", "1900-02-29", "2026-13-01", "2026-00-10", "2026-04-31", "26-01-01", "2026-1-01", "2026/01/01", "2026-01-01T00:00:00Z", ""] {
            assert!(!is_valid_date(bad), "{bad}");
        }
    }
}
