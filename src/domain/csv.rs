//! Files as Brazilian banks and the Central Bank publish them, for their readers
//! (`statement`, `banks`): bytes decoded (valid UTF-8 is UTF-8, its BOM dropped,
//! anything else Windows-1252), `\r\n` and `\r` as `\n` so line numbers are those an
//! editor shows; CSV records with RFC 4180 quoting; header names compared without case
//! or accents.

/// Windows-1252's bytes 0x80–0x9F (the rest is Latin-1); its five unassigned bytes are
/// U+FFFD, so a stray byte shows as one instead of an invisible C1 control.
const CP1252_80_9F: [char; 32] = [
    '€', '\u{FFFD}', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u{FFFD}', 'Ž', '\u{FFFD}', '\u{FFFD}',
    '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u{FFFD}', 'ž', 'Ÿ',
];

/// The text of a file (see the module's documentation), with `\n` line breaks.
pub fn decode(bytes: &[u8]) -> String {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = std::str::from_utf8(bytes).map_or_else(|_| bytes.iter().map(|&b| cp1252(b)).collect(), str::to_owned);
    text.replace("\r\n", "\n").replace('\r', "\n")
}

fn cp1252(byte: u8) -> char {
    usize::from(byte).checked_sub(0x80).and_then(|i| CP1252_80_9F.get(i)).copied().unwrap_or(char::from(byte))
}

/// Trimmed, every run of whitespace or control characters one space, cut to `max`
/// characters on a character boundary.
pub fn clean(text: &str, max: usize) -> String {
    let words: Vec<_> = text.split(|c: char| c.is_whitespace() || c.is_control()).filter(|w| !w.is_empty()).collect();
    let mut out = words.join(" ");
    if let Some((at, _)) = out.char_indices().nth(max) {
        out.truncate(at);
        out.truncate(out.trim_end().len());
    }
    out
}

/// The accented letters of Portuguese, by the letter without accent.
const ACCENTS: [(&str, char); 6] = [("áàâã", 'a'), ("éê", 'e'), ("í", 'i'), ("óôõ", 'o'), ("úü", 'u'), ("ç", 'c')];

/// A header cell as compared: lower case, accents dropped, every run of other
/// characters one space.
pub fn fold(text: &str) -> String {
    let plain = text.chars().flat_map(char::to_lowercase).map(|c| match ACCENTS.iter().find(|(a, _)| a.contains(c)) {
        Some(&(_, plain)) => plain,
        None if c.is_ascii_alphanumeric() => c,
        None => ' ',
    });
    clean(&plain.collect::<String>(), usize::MAX)
}

/// One record from `pos`: its cells, trimmed. A quoted cell may hold the separator, `""`
/// for a quote and line breaks. Moves `pos` past the record and `line` past its lines.
pub fn record(text: &str, pos: &mut usize, line: &mut usize, separator: char) -> Vec<String> {
    let (start, mut cells, mut cell, mut quoted, mut was_quoted) = (*pos, Vec::new(), String::new(), false, false);
    let mut chars = text[start..].char_indices().peekable();
    *pos = text.len();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' if quoted => match chars.next_if(|&(_, c)| c == '"') {
                Some(_) => cell.push('"'),
                None => quoted = false,
            },
            '"' if !was_quoted && cell.trim().is_empty() => (quoted, was_quoted) = (true, true),
            '\n' if !quoted => {
                *pos = start + i + 1;
                break;
            }
            c if c == separator && !quoted => {
                cells.push(cell.trim().to_owned());
                (cell, was_quoted) = (String::new(), false);
            }
            c => cell.push(c),
        }
        *line += usize::from(c == '\n');
    }
    *line += 1;
    cells.push(cell.trim().to_owned());
    cells
}
