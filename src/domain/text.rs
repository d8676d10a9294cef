//! Text written by users — names, descriptions, a payee's name on a bill, a statement's
//! line — on its way in and on its way into a sentence a person reads before money
//! moves.
//!
//! * **In** ([`is_plain`], [`PLAIN_PATTERN`]): a name or a description is one line of
//!   text. Control characters (NUL, BEL, line breaks, tabs, C1 controls) and the
//!   bidirectional controls that reorder what follows them (U+202E and its kin) are
//!   refused; every other character — accents, emoji, any script — is kept.
//! * **Out** ([`quoted`]): whatever is stored (older rows, a bank's statement, a Pix
//!   code's merchant name) is shown so that it cannot pass for the sentence around it:
//!   on one line (controls and line breaks become one space), invisible characters shown
//!   by their code point (`Imobili[U+200B]ária`), the typographic quotes that close a
//!   quotation replaced by a plain `"`, and at most a given number of characters, cut
//!   with `…`; then between “ and ”.

/// The JSON Schema `pattern` of a name or a description: no control character and no
/// bidirectional control. Written with `\x` and `\u` escapes, which both ECMA-262 and
/// Python's `re` read; [`is_plain`] is its check.
pub const PLAIN_PATTERN: &str = r"^[^\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]*$";

/// What the check says of a text that is not plain.
pub const PLAIN_RULE: &str =
    "must be one line of text: no line breaks, tabs, control or bidirectional-override characters";

/// Whether `c` is an embedding, override or isolate: it reorders the text after it
/// (U+202A–U+202E, U+2066–U+2069; the marks LRM, RLM and ALM only set a direction, and
/// a question shows them).
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Whether `text` is a plain line: [`PLAIN_PATTERN`].
pub fn is_plain(text: &str) -> bool {
    !text.chars().any(|c| c.is_control() || is_bidi_control(c))
}

/// Whether `c` takes no visible room of its own: Unicode's format characters (zero-width
/// spaces and joiners, the bidirectional controls, the soft hyphen, the byte-order mark,
/// the language tags), the Hangul fillers and the variation selectors. Shown by their
/// code point in a question.
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00ad}'
            | '\u{034f}'
            | '\u{0600}'..='\u{0605}'
            | '\u{061c}'
            | '\u{06dd}'
            | '\u{070f}'
            | '\u{0890}'..='\u{0891}'
            | '\u{08e2}'
            | '\u{115f}'..='\u{1160}'
            | '\u{17b4}'..='\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{110bd}'
            | '\u{110cd}'
            | '\u{13430}'..='\u{1343f}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e0fff}'
    )
}

/// Whether `c` ends or opens a quotation: shown as a plain `"` inside a quoted field, so
/// a name cannot close the quotation the question put it in.
fn is_quotation_mark(c: char) -> bool {
    matches!(c, '“' | '”' | '„' | '‟' | '«' | '»' | '‹' | '›' | '〝' | '〞' | '〟' | '＂')
}

/// `text` as one bounded line: at most `max` characters of it (`max` ≥ 1), cut with `…`,
/// every control and space character one space, no leading or trailing space,
/// invisible characters as `[U+XXXX]` (counted in the bound), quotation marks as `"`.
pub fn one_line(text: &str, max: usize) -> String {
    let max = max.max(1);
    // The pieces shown, each with the characters it takes, up to one past the bound.
    let mut pieces: Vec<(String, usize)> = Vec::new();
    let mut shown = 0;
    let mut space = false;
    for c in text.chars() {
        if shown > max {
            break;
        }
        let piece = if c.is_control() || c.is_whitespace() {
            space = !pieces.is_empty();
            continue;
        } else if is_invisible(c) {
            format!("[U+{:04X}]", u32::from(c))
        } else if is_quotation_mark(c) {
            String::from('"')
        } else {
            String::from(c)
        };
        if std::mem::take(&mut space) {
            pieces.push((String::from(' '), 1));
            shown += 1;
        }
        let width = piece.chars().count();
        shown += width;
        pieces.push((piece, width));
    }
    let fits = shown <= max;
    let mut out = String::with_capacity(max * 2);
    let mut taken = 0;
    for (piece, width) in &pieces {
        // Cut, the ellipsis takes the last place.
        if !fits && taken + width > max - 1 {
            break;
        }
        out.push_str(piece);
        taken += width;
    }
    if !fits {
        let kept = out.trim_end().len();
        out.truncate(kept);
        out.push('…');
    }
    out
}

/// The longest a user-written field is shown in a question, in characters.
pub const FIELD_MAX: usize = 60;

/// `text` as a question quotes it: [`one_line`] within [`FIELD_MAX`] characters,
/// between “ and ”.
pub fn quoted(text: &str) -> String {
    format!("“{}”", one_line(text, FIELD_MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_line_keeps_every_script_and_refuses_controls_and_overrides() {
        for plain in ["Imobiliária Central Ltda", "Café ☕ & Cia.", "株式会社", "Zero\u{200b}width", "שלום", ""]
        {
            assert!(is_plain(plain), "{plain:?}");
        }
        for bad in ["a\nb", "a\tb", "a\0b", "bell\u{7}", "c1\u{85}", "rtl\u{202e}lro", "iso\u{2066}late"] {
            assert!(!is_plain(bad), "{bad:?}");
        }
    }

    #[test]
    fn a_quoted_field_is_one_bounded_line_with_its_hidden_characters_shown() {
        assert_eq!(quoted("Imobiliária Central Ltda"), "“Imobiliária Central Ltda”");
        assert_eq!(quoted("Imobili\u{200b}ária"), "“Imobili[U+200B]ária”");
        assert_eq!(quoted("a\n\n\n  b\t\rc"), "“a b c”");
        assert_eq!(quoted("\u{202e}evil"), "“[U+202E]evil”");
        assert_eq!(quoted("x” to Mallory “y"), "“x\" to Mallory \"y”");
        assert_eq!(one_line("abcdefghij", 5), "abcd…");
        assert_eq!(one_line("abc def", 5), "abc…");
        assert_eq!(one_line("  lead", 10), "lead");
        assert_eq!(one_line("\u{200b}\u{200b}", 9), "[U+200B]…");
        assert_eq!(one_line("\u{200b}", 8), "[U+200B]");
        assert_eq!(quoted(&"R$ 850,00 ".repeat(20)).chars().count(), FIELD_MAX + 2);
    }

    /// Whatever text goes in — any mix of controls, line and paragraph separators,
    /// overrides, invisible characters, quotation marks and ordinary characters, at any
    /// length — the quoted field has no line break, no control, no bidirectional control
    /// or other invisible character, no closing quotation mark but its own, and at most
    /// [`FIELD_MAX`] characters between its quotes.
    #[test]
    fn no_text_breaks_out_of_its_quotation() {
        use proptest::prelude::*;
        let alphabet = prop::sample::select(vec![
            'a',
            'Z',
            'é',
            ' ',
            '\n',
            '\r',
            '\t',
            '\0',
            '\u{7}',
            '\u{1b}',
            '\u{85}',
            '\u{2028}',
            '\u{2029}',
            '\u{a0}',
            '\u{3000}',
            '\u{202e}',
            '\u{202a}',
            '\u{2066}',
            '\u{200e}',
            '\u{200b}',
            '\u{feff}',
            '\u{ad}',
            '\u{e0041}',
            '“',
            '”',
            '»',
            '"',
            'R',
            '$',
            '8',
            ',',
            '…',
            '株',
            '😀',
        ]);
        let any_char = prop::char::any();
        let texts = prop::collection::vec(prop_oneof![3 => alphabet, 1 => any_char], 0..300)
            .prop_map(|chars| chars.into_iter().collect::<String>());
        proptest!(ProptestConfig::with_cases(2000), |(text in texts)| {
            let shown = quoted(&text);
            let inner = shown.strip_prefix('“').and_then(|s| s.strip_suffix('”')).expect("quoted");
            prop_assert!(inner.chars().count() <= FIELD_MAX, "{inner:?}");
            prop_assert!(!inner.chars().any(|c| c.is_control() || is_bidi_control(c) || is_invisible(c)), "{inner:?}");
            prop_assert!(!inner.chars().any(|c| c.is_whitespace() && c != ' '), "{inner:?}");
            prop_assert!(!inner.chars().any(is_quotation_mark), "{inner:?}");
            prop_assert!(!inner.starts_with(' ') && !inner.ends_with(' '), "{inner:?}");
        });
    }
}
