//! Bank statements as Brazilian banks export them, read into movements: OFX 1.x (SGML:
//! leaves left open, aggregates closed, an element a line or all on one line) and 2.x
//! (XML), or an internet banking CSV. `POST /v1/financial-accounts/{id}/statement-imports`
//! creates one ledger transaction per [`Line`], deduplicated on [`Line::fitid`]; this
//! module only reads bytes.
//!
//! * **Text.** Valid UTF-8 is UTF-8 (its BOM dropped), anything else Windows-1252: what
//!   `CHARSET:1252` files are, and a superset of the Latin-1 of many `CHARSET:NONE` ones.
//!   The bytes decide, not the header, which lies (`ENCODING:USASCII` over accented names
//!   is the norm). `\r\n` and `\r` become `\n`: line numbers are those an editor shows.
//! * **Ids.** An OFX movement's is its `FITID`; a CSV row's its id column's, else
//!   [`derived_key`]. A "documento" column is never the id: banks repeat document numbers
//!   (`000000`, one per batch), and deduplicating on them would drop real movements.
//! * **Refusals** never stop the parse. **Amounts** follow [`amount`]'s rule.

use std::collections::HashMap;
use std::fmt;

use super::csv::{clean, decode, fold, record};
use super::dates::Date;
use super::money::Cents;

/// Which format the bytes were read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Ofx,
    Csv,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Ofx => "ofx",
            Format::Csv => "csv",
        }
    }
}

/// One movement of the statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// 1-based line number in the decoded text where the movement starts (OFX: the line
    /// of its `<STMTTRN>`; CSV: the row's line).
    pub line: usize,
    /// The statement's own id of the movement: the OFX `FITID` (trimmed); a CSV row's id
    /// column ([`HEADERS`]) when the header has one and the cell is not empty, else [`derived_key`].
    pub fitid: String,
    pub date: Date,
    /// Signed: negative is money out (a debit), positive money in. Never zero.
    pub amount: Cents,
    /// What the bank calls it: OFX `NAME`, else `PAYEE`'s `NAME`, else `MEMO`, else the
    /// `TRNTYPE`, else "Movimento"; CSV the description column, else the histórico one.
    /// Cleaned ([`clean`]): never empty, at most 255 characters.
    pub description: String,
    /// OFX `MEMO` when it differs from the description; in a CSV with both a description
    /// and a histórico column, the histórico when it differs.
    pub memo: Option<String>,
    /// OFX `CHECKNUM`, else `REFNUM`; a CSV's document column. At most 100 characters
    /// (a transaction's document).
    pub document: Option<String>,
}

/// A line the parser could not take, with its 1-based line number and why. The reasons:
/// `missing_id` (an OFX movement without `FITID`), `missing_field` (no date or no
/// amount), `invalid_date`, `invalid_amount` (unreadable or ambiguous, see [`amount`]; or
/// both a debit and a credit), `zero_amount`, `too_many_columns` (a CSV row with more
/// non-empty cells than its header names: an unquoted separator shifted its columns).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub line: usize,
    pub reason: &'static str,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    pub format: Format,
    pub lines: Vec<Line>,
    pub refused: Vec<Refused>,
    /// OFX `<BANKID>`/`<ACCTID>` of the statement's own account (`BANKACCTFROM`,
    /// `CCACCTFROM`: the first outside any movement, so not a transfer's `BANKACCTTO`).
    pub bank_id: Option<String>,
    pub account_id: Option<String>,
}

/// Why a whole file cannot be read (answered as one 422 by the caller).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatementError {
    Empty,
    UnknownFormat,
    /// A file that parsed but has no movement and no refused line.
    NoMovements,
    /// More than [`MAX_LINES`] movements and refused lines: how many.
    TooManyLines(usize),
}

impl fmt::Display for StatementError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("the file is empty"),
            Self::UnknownFormat => f.write_str("the file is neither OFX nor a CSV with a date and an amount column"),
            Self::NoMovements => f.write_str("the statement has no movements"),
            Self::TooManyLines(n) => write!(f, "the file has {n} lines, more than {MAX_LINES}: split it by period"),
        }
    }
}

/// At most this many movements (and refused lines) per file.
pub const MAX_LINES: usize = 5_000;

/// The longest description or memo, in characters.
const MAX_TEXT: usize = 255;
/// The longest document, in characters: a transaction's `document`.
const MAX_DOCUMENT: usize = 100;
/// How many lines of a CSV may come before its header (the bank's, account, period…).
const HEADER_SEARCH: usize = 50;

/// Parses a statement file: OFX (1.x SGML, 2.x XML) or CSV, detected from the content.
pub fn parse(bytes: &[u8]) -> Result<Statement, StatementError> {
    let text = decode(bytes);
    if text.trim().is_empty() {
        return Err(StatementError::Empty);
    }
    let statement = if is_ofx(&text) { ofx(&text) } else { csv(&text).ok_or(StatementError::UnknownFormat)? };
    match statement.lines.len() + statement.refused.len() {
        0 => Err(StatementError::NoMovements),
        n if n > MAX_LINES => Err(StatementError::TooManyLines(n)),
        _ => Ok(statement),
    }
}

/// OFX when it starts with the 1.x header or holds an `<OFX>` element anywhere.
fn is_ofx(text: &str) -> bool {
    let head = text.trim_start().get(..9).is_some_and(|head| head.eq_ignore_ascii_case("OFXHEADER"));
    head || text.as_bytes().windows(5).any(|w| w.eq_ignore_ascii_case(b"<OFX>"))
}

/// The description — the first of `texts` not empty once cleaned, else "Movimento" —
/// and the memo, cleaned, when it is not empty and not the description.
fn describe(texts: &[Option<&str>], memo: Option<&str>) -> (String, Option<String>) {
    let cleaned = |text: &Option<&str>| text.map(|t| clean(t, MAX_TEXT)).filter(|t| !t.is_empty());
    let description = texts.iter().find_map(cleaned).unwrap_or_else(|| "Movimento".to_owned());
    let memo = cleaned(&memo).filter(|memo| *memo != description);
    (description, memo)
}

fn refused(line: usize, reason: &'static str, message: String) -> Refused {
    Refused { line, reason, message }
}

/// The refusal of `text` (its start) for not being `what`.
fn invalid(line: usize, reason: &'static str, text: &str, what: &str) -> Refused {
    refused(line, reason, format!("{:?} is not {what}", clean(text, 40)))
}

/// An amount as banks write it: one sign mark at most (`-`, `+`, parentheses or a
/// trailing `D`/`C`), maybe `R$`, then digits with `.` and `,` — the sign is the truth (an
/// OFX `TRNTYPE` is informative). When both separators appear, the last is the decimal
/// one and the other groups thousands; one appearing several times alone groups
/// thousands; a lone one is decimal — but in a CSV (`csv`) a lone one followed by exactly
/// three digits (`1.500`: R$ 1.500,00 to a Brazilian, 1.5 to a program) is refused as
/// ambiguous rather than guessed. OFX writes no thousands: there `7.500` is 7.50.
/// Decimals past the second must be zeros; 13 integer digits at most.
fn amount(text: &str, csv: bool) -> Option<Cents> {
    let (mut body, mut marks, mut negative) = (text.trim(), 0, false);
    if let Some(inner) = body.strip_prefix('(').and_then(|b| b.strip_suffix(')')) {
        (body, marks, negative) = (inner.trim(), 1, true);
    }
    let digit_or_space = |c: char| c.is_ascii_digit() || c.is_whitespace();
    if let Some(head) = body.strip_suffix(['D', 'd', 'C', 'c']).filter(|head| head.ends_with(digit_or_space)) {
        negative |= body.ends_with(['D', 'd']);
        (body, marks) = (head.trim_end(), marks + 1);
    }
    for strip_currency in [true, false] {
        if let Some(rest) = body.strip_prefix(['-', '\u{2212}', '+']) {
            negative |= !body.starts_with('+');
            (body, marks) = (rest.trim_start(), marks + 1);
        }
        if strip_currency {
            body = body.strip_prefix("R$").unwrap_or(body).trim_start();
        }
    }
    if marks > 1 || body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit() || b == b'.' || b == b',') {
        return None;
    }
    let separators = body.bytes().filter(|&b| b == b'.' || b == b',').count();
    let decimal = body.rfind(['.', ',']).filter(|&at| {
        let mark = body.as_bytes()[at];
        separators == 1 || body.bytes().any(|b| (b == b'.' || b == b',') && b != mark)
    });
    if csv && separators == 1 && decimal.is_some_and(|at| body.len() - at == 4) {
        return None;
    }
    let (int, frac) = decimal.map_or((body, ""), |at| (&body[..at], &body[at + 1..]));
    let groups: Vec<&str> = int.split(['.', ',']).collect();
    let grouped = groups.len() == 1 || ((1..=3).contains(&groups[0].len()) && groups[1..].iter().all(|g| g.len() == 3));
    let twice = decimal.is_some_and(|at| int.contains(char::from(body.as_bytes()[at])));
    if !grouped || twice || (decimal.is_some() && frac.is_empty()) || frac.bytes().skip(2).any(|b| b != b'0') {
        return None;
    }
    let digits = groups.concat();
    let digits = digits.trim_start_matches('0');
    if digits.len() > 13 {
        return None;
    }
    let whole: i64 = if digits.is_empty() { 0 } else { digits.parse().ok()? };
    let cents = frac.bytes().chain(std::iter::repeat(b'0')).take(2).fold(0, |n, b| n * 10 + i64::from(b - b'0'));
    let value = whole * 100 + cents;
    Some(Cents(if negative { -value } else { value }))
}

/// The leaves of a movement that are read, in the order of [`ofx_line`]'s (whose last is
/// `PAYEE`'s `NAME`).
const LEAVES: [&str; 8] = ["FITID", "DTPOSTED", "TRNAMT", "NAME", "MEMO", "TRNTYPE", "CHECKNUM", "REFNUM"];

/// The movement of the `<STMTTRN>` at line `at`, from its leaves (the first of each).
fn ofx_line(at: usize, leaves: [Option<String>; 9]) -> Result<Line, Refused> {
    let [fitid, posted, amount_text, name, memo, kind, check, reference, payee] = leaves;
    let fitid = fitid.ok_or_else(|| refused(at, "missing_id", "the movement has no <FITID>".into()))?;
    let posted = posted.ok_or_else(|| refused(at, "missing_field", "the movement has no <DTPOSTED>".into()))?;
    let date = ofx_date(&posted).ok_or_else(|| invalid(at, "invalid_date", &posted, "a date YYYYMMDD"))?;
    let text = amount_text.ok_or_else(|| refused(at, "missing_field", "the movement has no <TRNAMT>".into()))?;
    let amount = amount(&text, false).ok_or_else(|| invalid(at, "invalid_amount", &text, "an amount"))?;
    if amount.0 == 0 {
        return Err(refused(at, "zero_amount", "the movement's <TRNAMT> is zero".into()));
    }
    let texts = [name.as_deref(), payee.as_deref(), memo.as_deref(), kind.as_deref()];
    let (description, memo) = describe(&texts, memo.as_deref());
    let document = check.or(reference).map(|d| clean(&d, MAX_DOCUMENT));
    Ok(Line { line: at, fitid, date, amount, description, memo, document })
}

/// The calendar date the bank wrote: the first eight digits, `YYYYMMDD` (the time and
/// the `[-3:BRT]` zone after them do not move it).
fn ofx_date(text: &str) -> Option<Date> {
    let digits = text.get(..8).filter(|d| d.bytes().all(|b| b.is_ascii_digit()))?;
    Date::from_ymd(digits[..4].parse().ok()?, digits[4..6].parse().ok()?, digits[6..].parse().ok()?)
}

/// Reads OFX as a stream of tags, each with the text after it up to the next `<`: that
/// is a leaf's value whether or not the leaf is closed, on one line or many. Tag names
/// are case-insensitive; `<?…>` and `<!…>` are skipped. A movement ends at
/// `</STMTTRN>`, at the next `<STMTTRN>`, at `</BANKTRANLIST>` or at the end. Inside one,
/// only its own leaves count, and a `PAYEE`'s `NAME` (a transfer's `BANKACCTTO` holds
/// none of them); outside, the first `BANKID` and `ACCTID`.
fn ofx(text: &str) -> Statement {
    let mut statement =
        Statement { format: Format::Ofx, lines: vec![], refused: vec![], bank_id: None, account_id: None };
    let (mut current, mut payee, mut rest, mut line) = (None::<(usize, [Option<String>; 9])>, false, text, 1);
    while let Some(open) = rest.find('<') {
        line += rest[..open].matches('\n').count();
        let after = &rest[open + 1..];
        let Some(end) = after.find('>') else { break };
        let (raw, tail, at) = (&after[..end], &after[end + 1..], line);
        line += raw.matches('\n').count();
        rest = tail;
        let (closing, name) = raw.strip_prefix('/').map_or((false, raw), |name| (true, name));
        let name = name.split_whitespace().next().unwrap_or_default().to_ascii_uppercase();
        match (closing, name.as_str()) {
            (_, "STMTTRN") | (true, "BANKTRANLIST") => {
                if let Some((line, leaves)) = current.take() {
                    statement.push(ofx_line(line, leaves));
                }
                payee = false;
                current = (!closing && name == "STMTTRN").then(|| (at, Default::default()));
            }
            (_, "PAYEE") => payee = !closing,
            (false, leaf) if !raw.starts_with(['?', '!']) => {
                let value = entities(tail[..tail.find('<').unwrap_or(tail.len())].trim());
                if value.is_empty() {
                    continue;
                }
                let slot = match (current.as_mut(), leaf) {
                    (None, "BANKID") => &mut statement.bank_id,
                    (None, "ACCTID") => &mut statement.account_id,
                    (Some((_, leaves)), "NAME") if payee => &mut leaves[8],
                    (Some((_, leaves)), _) if !payee => match LEAVES.iter().position(|known| *known == leaf) {
                        Some(index) => &mut leaves[index],
                        None => continue,
                    },
                    _ => continue,
                };
                slot.get_or_insert(value);
            }
            _ => {}
        }
    }
    if let Some((line, leaves)) = current.take() {
        statement.push(ofx_line(line, leaves));
    }
    statement
}

impl Statement {
    fn push(&mut self, read: Result<Line, Refused>) {
        match read {
            Ok(line) => self.lines.push(line),
            Err(refused) => self.refused.push(refused),
        }
    }
}

/// SGML/XML entities: `&amp;` `&lt;` `&gt;` `&quot;` `&apos;` and numeric `&#NNN;`
/// `&#xHH;`. Anything else is kept as written: SGML exports often carry a bare `&`.
fn entities(text: &str) -> String {
    let mut pieces = text.split('&');
    let mut out = pieces.next().unwrap_or_default().to_owned();
    for piece in pieces {
        let decoded = piece.split_once(';').and_then(|(name, rest)| Some((entity(name)?, rest)));
        let (c, rest) = decoded.unwrap_or(('&', piece));
        out.push(c);
        out.push_str(rest);
    }
    out
}

/// The named entities of XML (SGML's OFX uses no others).
const ENTITIES: [(&str, char); 5] = [("amp", '&'), ("lt", '<'), ("gt", '>'), ("quot", '"'), ("apos", '\'')];

fn entity(name: &str) -> Option<char> {
    if let Some(&(_, c)) = ENTITIES.iter().find(|(known, _)| *known == name) {
        return Some(c);
    }
    let code = name.strip_prefix('#')?;
    let hex = code.strip_prefix(['x', 'X']);
    char::from_u32(hex.map_or_else(|| code.parse().ok(), |hex| u32::from_str_radix(hex, 16).ok())?)
}

/// What a CSV column holds (an index of [`Columns::roles`]).
#[derive(Debug, Clone, Copy)]
enum Role {
    Date,
    Amount,
    Debit,
    Credit,
    Description,
    History,
    Document,
    Id,
    /// A `D`/`C` (débito/crédito) column: it decides the sign of the row's amount.
    Sign,
}

/// The header names of each role, `|` between them, as [`fold`] writes them (`Valor
/// (R$)` is `valor r`, `Nº Documento` is `n documento`). Exact names, not prefixes: `Data
/// do Balancete` beside `Data`, or `Saldo`, must not be taken for the date or the amount.
const HEADERS: [(Role, &str); 10] = [
    (Role::Date, "data|date|data lancamento|data do lancamento|data movimento|data mov|data transacao"),
    (Role::Amount, "valor|value|amount|valor r|valor rs|valor em r|valor lancamento|valor do lancamento"),
    (Role::Debit, "debito|debitos|debit|debits|saida|saidas|debito r|valor debito"),
    (Role::Credit, "credito|creditos|credit|credits|entrada|entradas|credito r|valor credito"),
    (Role::Description, "descricao|description|lancamento|lancamentos|title|detalhes|details|estabelecimento"),
    (Role::History, "historico|memo|complemento"),
    (Role::Document, "documento|document|doc|docto|n doc|nr doc|n documento|no documento|nr documento"),
    (Role::Document, "numero documento|numero do documento|num documento"),
    (Role::Id, "id|fitid|identificador|id transacao|id da transacao|transaction id"),
    (Role::Sign, "deb cred|debito credito|credito debito|d c|c d|dc|natureza"),
];

/// A CSV's header: its separator, how many cells it names (empty ones after the last
/// name do not count: a trailing separator), and the column of each role (the first
/// column of that name).
struct Columns {
    separator: char,
    width: usize,
    roles: [Option<usize>; 9],
}

impl Columns {
    /// The header of `cells`: one with a date column and an amount, debit or credit one.
    fn of(cells: &[String], separator: char) -> Option<Columns> {
        let mut roles = [None; 9];
        for (index, cell) in cells.iter().enumerate() {
            let name = fold(cell);
            if let Some((role, _)) = HEADERS.iter().find(|(_, names)| names.split('|').any(|n| n == name)) {
                roles[*role as usize].get_or_insert(index);
            }
        }
        let money = [Role::Amount, Role::Debit, Role::Credit].iter().any(|&role| roles[role as usize].is_some());
        let width = cells.iter().rposition(|c| !c.is_empty()).map_or(0, |last| last + 1);
        (roles[Role::Date as usize].is_some() && money).then_some(Columns { separator, width, roles })
    }

    /// The row's non-empty cell of `role` (a lone `-` is empty, as some banks fill the
    /// unused one of débito/crédito).
    fn cell<'a>(&self, cells: &'a [String], role: Role) -> Option<&'a str> {
        cells.get(self.roles[role as usize]?).map(String::as_str).filter(|c| !c.is_empty() && *c != "-")
    }
}

/// Reads a CSV: `None` when no header is found. The header is the first of the first
/// [`HEADER_SEARCH`] lines that names a date and an amount column, its separator the
/// first of `;` (most Brazilian exports), tab and `,` that makes it one; the lines before
/// it (bank, account, period) are passed over.
fn csv(text: &str) -> Option<Statement> {
    let (index, columns) = text.split('\n').take(HEADER_SEARCH).enumerate().find_map(|(index, row)| {
        let header = |separator| Columns::of(&record(row, &mut 0, &mut 0, separator), separator);
        Some((index, [';', '\t', ','].into_iter().find_map(header)?))
    })?;
    let (mut pos, mut line) = (text.split('\n').take(index + 1).map(|row| row.len() + 1).sum(), index + 2);
    let mut statement =
        Statement { format: Format::Csv, lines: vec![], refused: vec![], bank_id: None, account_id: None };
    let mut seen: HashMap<String, usize> = HashMap::new();
    while pos < text.len() {
        let at = line;
        let cells = record(text, &mut pos, &mut line, columns.separator);
        let Some(mut read) = row(&columns, &cells, at) else { continue };
        match &mut read {
            Ok(movement) if movement.fitid.is_empty() => movement.fitid = derived_key(movement, &mut seen),
            _ => {}
        }
        statement.push(read);
    }
    Some(statement)
}

/// The id of a CSV row without one: `csv:{date}:{signed cents}:{description}:{n}`, the
/// description lower-cased (as cleaned: whitespace runs one space), and `n` how many
/// identical earlier rows (same date, amount and description) the file has: two
/// identical rows are two movements, and a re-import of the file gives the same keys.
/// Example: `csv:2026-11-03:-1250:padaria pão quente:0`.
fn derived_key(movement: &Line, seen: &mut HashMap<String, usize>) -> String {
    let stem = format!("csv:{}:{}:{}", movement.date, movement.amount.0, movement.description.to_lowercase());
    let n = seen.entry(stem.clone()).or_insert(0);
    *n += 1;
    format!("{stem}:{}", *n - 1)
}

/// A CSV row: `None` when it is not a movement — empty, a note or title (no amount, and
/// no date in the date column), or a balance ("Saldo", "SALDO ANTERIOR", "S A L D O").
fn row(columns: &Columns, cells: &[String], at: usize) -> Option<Result<Line, Refused>> {
    let cell = |role| columns.cell(cells, role);
    let money = [Role::Amount, Role::Debit, Role::Credit];
    let note = money.into_iter().all(|role| cell(role).is_none()) && cell(Role::Date).and_then(csv_date).is_none();
    if note || cells.iter().any(|c| fold(c).replace(' ', "").starts_with("saldo")) {
        return None;
    }
    Some(movement(columns, cells, at))
}

fn movement(columns: &Columns, cells: &[String], at: usize) -> Result<Line, Refused> {
    let cell = |role| columns.cell(cells, role);
    if cells.iter().skip(columns.width).any(|c| !c.is_empty()) {
        let message = format!("the row has {} cells, its header {}", cells.len(), columns.width);
        return Err(refused(at, "too_many_columns", message));
    }
    let text = cell(Role::Date).ok_or_else(|| refused(at, "missing_field", "the row has no date".into()))?;
    let date = csv_date(text).ok_or_else(|| invalid(at, "invalid_date", text, "a date dd/mm/yyyy or yyyy-mm-dd"))?;
    let read = |role: Role| {
        let text = cell(role)?;
        Some(amount(text, true).ok_or_else(|| invalid(at, "invalid_amount", text, "an amount")))
    };
    let amount = match (read(Role::Amount), read(Role::Debit), read(Role::Credit)) {
        (Some(value), _, _) => match cell(Role::Sign).map(fold).as_deref() {
            Some("d" | "deb" | "debito") => Cents(-value?.0.abs()),
            Some("c" | "cred" | "credito") => Cents(value?.0.abs()),
            _ => value?,
        },
        (None, None, None) => return Err(refused(at, "missing_field", "the row has no amount".into())),
        (None, debit, credit) => {
            let debit = debit.transpose()?.map_or(0, |d| -d.0.abs());
            let credit = credit.transpose()?.map_or(0, |c| c.0.abs());
            if debit != 0 && credit != 0 {
                return Err(refused(at, "invalid_amount", "the row has both a debit and a credit".into()));
            }
            Cents(debit + credit)
        }
    };
    if amount.0 == 0 {
        return Err(refused(at, "zero_amount", "the row's amount is zero".into()));
    }
    let (description, memo) = describe(&[cell(Role::Description), cell(Role::History)], cell(Role::History));
    let document = cell(Role::Document).map(|d| clean(d, MAX_DOCUMENT));
    let fitid = cell(Role::Id).unwrap_or_default().to_owned();
    Ok(Line { line: at, fitid, date, amount, description, memo, document })
}

/// `dd/mm/yyyy`, `dd/mm/yy` (20yy), `yyyy-mm-dd` (any of `/`, `-`, `.` between) or
/// `yyyymmdd`, day before month as Brazil writes it; a time after a space or `T` is ignored.
fn csv_date(text: &str) -> Option<Date> {
    let token = text.split_whitespace().next()?.split('T').next()?;
    let parts: Vec<&str> = token.split(['/', '-', '.']).collect();
    let [a, b, c] = parts.as_slice() else { return ofx_date(token).filter(|_| token.len() == 8) };
    if parts.iter().any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit())) || b.len() > 2 {
        return None;
    }
    let (year, day) = match (a.len(), c.len()) {
        (4, 1..=2) => (a.parse().ok()?, c),
        (1..=2, 4) => (c.parse().ok()?, a),
        (1..=2, 2) => (2000 + c.parse::<i32>().ok()?, a),
        _ => return None,
    };
    Date::from_ymd(year, b.parse().ok()?, day.parse().ok()?)
}

#[cfg(test)]
mod tests {
    use super::StatementError::{Empty, NoMovements, TooManyLines, UnknownFormat};
    use super::*;

    type Row<'a> = (usize, Date, Cents, &'a str, Option<&'a str>, Option<&'a str>);

    fn nov(day: u8) -> Date {
        Date::from_ymd(2026, 11, day).expect("a real day")
    }

    fn rows(statement: &Statement) -> Vec<Row<'_>> {
        statement
            .lines
            .iter()
            .map(|l| (l.line, l.date, l.amount, &*l.description, l.memo.as_deref(), l.document.as_deref()))
            .collect()
    }

    fn ids(statement: &Statement) -> Vec<&str> {
        statement.lines.iter().map(|l| l.fitid.as_str()).collect()
    }

    fn reasons(statement: &Statement) -> Vec<(usize, &str)> {
        statement.refused.iter().map(|r| (r.line, r.reason)).collect()
    }

    /// Itaú's OFX 1.02 as downloaded: CRLF, cp1252 bytes (é \xe9, Á \xc1, – \x96), leaves left open.
    const ITAU: &[u8] = b"OFXHEADER:100\r\nDATA:OFXSGML\r\nVERSION:102\r\nSECURITY:NONE\r\nENCODING:USASCII\r\n\
        CHARSET:1252\r\nCOMPRESSION:NONE\r\nOLDFILEUID:NONE\r\nNEWFILEUID:NONE\r\n\r\n<OFX>\r\n<SIGNONMSGSRSV1><SONRS>\
        <STATUS><CODE>0<SEVERITY>INFO</STATUS><DTSERVER>20261130120000[-3:BRT]</SONRS></SIGNONMSGSRSV1>\r\n\
        <BANKMSGSRSV1><STMTTRNRS><TRNUID>1001<STATUS><CODE>0<SEVERITY>INFO</STATUS><STMTRS><CURDEF>BRL\r\n\
        <BANKACCTFROM><BANKID>0341<ACCTID>12345-6<ACCTTYPE>CHECKING</BANKACCTFROM>\r\n\
        <BANKTRANLIST><DTSTART>20261101<DTEND>20261130\r\n<STMTTRN>\r\n<TRNTYPE>DEBIT\r\n\
        <DTPOSTED>20261103120000[-3:BRT]\r\n<TRNAMT>-150.00\r\n<FITID>20261103001\r\n<CHECKNUM>000123\r\n\
        <NAME>PAGTO ELETRON  COBRANCA\r\n<MEMO>CONTA DE LUZ\r\n</STMTTRN>\r\n<STMTTRN>\r\n<TRNTYPE>CREDIT\r\n\
        <DTPOSTED>20261105000000[-3:BRT]\r\n<TRNAMT>1234.56\r\n<FITID> 20261105002 \r\n\
        <NAME>Pix recebido de Jos\xe9 \xc1vila\r\n<MEMO>Pix recebido de Jos\xe9 \xc1vila\r\n</STMTTRN>\r\n<STMTTRN>\r\n\
        <TRNTYPE>XFER\r\n<DTPOSTED>20261110\r\n<TRNAMT>-89,90\r\n<FITID>20261110003\r\n\
        <MEMO>TED PARA CONCESSION\xc1RIA \x96 REVIS\xc3O\r\n</STMTTRN>\r\n</BANKTRANLIST><LEDGERBAL><BALAMT>994.66\
        <DTASOF>20261130</LEDGERBAL></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>\r\n";

    #[test]
    fn itau_sgml_in_cp1252_is_read_with_its_accents_account_and_line_numbers() {
        let s = parse(ITAU).expect("read");
        let account = (s.bank_id.as_deref(), s.account_id.as_deref());
        assert_eq!((s.format, account), (Format::Ofx, (Some("0341"), Some("12345-6"))));
        assert_eq!((ids(&s), s.refused.len()), (vec!["20261103001", "20261105002", "20261110003"], 0));
        let boleto = (16, nov(3), Cents(-15000), "PAGTO ELETRON COBRANCA", Some("CONTA DE LUZ"), Some("000123"));
        let ted = (33, nov(10), Cents(-8990), "TED PARA CONCESSIONÁRIA – REVISÃO", None, None);
        assert_eq!(rows(&s), [boleto, (25, nov(5), Cents(123456), "Pix recebido de José Ávila", None, None), ted]);
    }

    #[test]
    fn a_one_line_sgml_file_with_lower_case_and_closed_leaves_is_read_with_its_entities() {
        let file = "OFXHEADER:100 DATA:OFXSGML <OFX><stmtrs><bankacctfrom><bankid>0260</bankid><acctid>987-2</acctid>\
            </bankacctfrom><banktranlist><stmttrn><trntype>DEBIT</trntype><dtposted>20261101000000[-3:BRT]<trnamt>-10.5\
            <fitid>a1</fitid><memo>M&amp;M P&G &#233; &#xE7; &lt;x&gt;</memo></stmttrn><stmttrn><trntype>OTHER\
            <dtposted>20261102</dtposted><trnamt>2,00</trnamt><fitid>a2</fitid></stmttrn></banktranlist></OFX>";
        let s = parse(file.as_bytes()).expect("read");
        let read =
            [(1, nov(1), Cents(-1050), "M&M P&G é ç <x>", None, None), (1, nov(2), Cents(200), "OTHER", None, None)];
        assert_eq!((rows(&s), s.account_id.as_deref()), (read.to_vec(), Some("987-2")));
    }

    #[test]
    fn ofx_2_xml_in_utf8_with_a_bom_is_read_and_a_transfers_account_is_not_the_statements() {
        let file = "\u{FEFF}<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<?OFX OFXHEADER=\"200\" VERSION=\"220\"?>\n\
            <OFX><STMTTRNRS><STMTRS><BANKACCTFROM><BANKID>001</BANKID><ACCTID>5555-X</ACCTID></BANKACCTFROM>\n\
            <BANKTRANLIST><STMTTRN><TRNTYPE>PAYMENT</TRNTYPE><DTPOSTED>20261101</DTPOSTED><TRNAMT>-1.234,56</TRNAMT>\n\
            <FITID>bb-1</FITID><REFNUM>9988</REFNUM><NAME>Água &amp; Esgoto &#8211; SABESP</NAME><MEMO>Débito</MEMO>\n\
            </STMTTRN><STMTTRN><DTPOSTED>20261102</DTPOSTED><TRNAMT>50</TRNAMT><FITID>bb-2</FITID>\n\
            <PAYEE><NAME>Maria</NAME><CITY>Recife</CITY></PAYEE><BANKACCTTO><BANKID>237</BANKID><ACCTID>1</ACCTID>\
            </BANKACCTTO></STMTTRN></BANKTRANLIST></STMTRS></STMTTRNRS></OFX>\n";
        let s = parse(file.as_bytes()).expect("read");
        let account = (s.bank_id.as_deref(), s.account_id.as_deref());
        assert_eq!((account, ids(&s)), ((Some("001"), Some("5555-X")), vec!["bb-1", "bb-2"]));
        let payment = (4, nov(1), Cents(-123456), "Água & Esgoto – SABESP", Some("Débito"), Some("9988"));
        assert_eq!(rows(&s), [payment, (6, nov(2), Cents(5000), "Maria", None, None)]);
    }

    #[test]
    fn bad_ofx_movements_are_refused_with_their_line_and_the_others_kept() {
        let file = "<OFX><BANKTRANLIST>\n<STMTTRN><DTPOSTED>20261101<TRNAMT>-1.00<NAME>sem id</STMTTRN>\n\
            <STMTTRN><DTPOSTED>20261332<TRNAMT>-1.00<FITID>x2\n<STMTTRN><DTPOSTED>20261101<TRNAMT>0,00<FITID>x3\n\
            <STMTTRN><DTPOSTED>20261101<TRNAMT>12.345<FITID>x4\n<STMTTRN><TRNAMT>1<FITID>x5\n\
            <STMTTRN><DTPOSTED>20261101<TRNAMT>7.500<FITID>x6\n</BANKTRANLIST></OFX>";
        let s = parse(file.as_bytes()).expect("read");
        let refused =
            [(2, "missing_id"), (3, "invalid_date"), (4, "zero_amount"), (5, "invalid_amount"), (6, "missing_field")];
        assert_eq!((reasons(&s), rows(&s)), (refused.to_vec(), vec![(7, nov(1), Cents(750), "Movimento", None, None)]));
    }

    #[test]
    fn amounts_follow_the_separator_rule() {
        let read = |csv, texts: &[&str]| texts.iter().map(|text| amount(text, csv)).collect::<Vec<_>>();
        let credits = read(true, &["1.234,56", "1234,56", "+R$ 1.234,56", "1,234.56", "1.234,56 C", "1.234,5600"]);
        assert_eq!(credits, [Some(Cents(123456)); 6]);
        let debits = read(true, &["-1.234,56", "R$ -1.234,56", "-R$ 1.234,56", "(1.234,56)", "-1234.56", "1.234,56D"]);
        assert_eq!(debits, [Some(Cents(-123456)); 6]);
        let ofx = read(false, &["-150,00", "-150", "-150.000", "7.500", ".5"]);
        assert_eq!(ofx, [-15000, -15000, -15000, 750, 50].map(|c| Some(Cents(c))));
        let refused = read(true, &["7.500", "7,500", "1.234.56", "1.234,5.6", "", "R$", "1e3", "--1", "(-1,00)"]);
        assert_eq!(refused, [None; 9]);
        assert_eq!(read(false, &["12.345", "1.", "1.2.3,4", "1.234.5678", "12345678901234.00"]), [None; 5]);
        assert_eq!(read(true, &["1.500.000", "1,234,567"]), [Some(Cents(150_000_000)), Some(Cents(123_456_700))]);
    }

    #[test]
    fn a_semicolon_csv_with_debit_and_credit_columns_skips_its_preamble_balances_and_empty_rows() {
        let file = "Extrato Conta Corrente\nConta ;12345-6\nPeríodo ;01/11/2026 a 30/11/2026\nSaldo ;1.234,56\n\n\
            Data Lançamento;Histórico;Descrição;Débito (R$);Crédito (R$);Saldo\n01/11/2026;Saldo Anterior;;;;1.000,00\n\
            03/11/2026;Pix enviado;\"Padaria; \"\"Pão\"\"\n Quente\";12,50;\n05/11/2026;Pix recebido;José;-;1.500,00\n\
            \n06/11/2026;Saldo do dia;;;;1,00\n07/11/26;Tarifa;;R$ 9,90;;\n08/11/2026;X;;1,00;2,00\nFim do extrato\n";
        let s = parse(file.as_bytes()).expect("read");
        let padaria = (8, nov(3), Cents(-1250), "Padaria; \"Pão\" Quente", Some("Pix enviado"), None);
        let tarifa = (13, nov(7), Cents(-990), "Tarifa", None, None);
        assert_eq!(rows(&s), [padaria, (10, nov(5), Cents(150000), "José", Some("Pix recebido"), None), tarifa]);
        assert_eq!((reasons(&s), s.format.as_str()), (vec![(14, "invalid_amount")], "csv"));
    }

    #[test]
    fn a_comma_csv_reads_its_documents_and_refuses_a_row_shifted_by_a_separator() {
        let file = "\"Data\",\"Dependencia Origem\",\"Histórico\",\"Data do Balancete\",\"Número do documento\",\
            \"Valor\",\n\"30/10/2026\",\"\",\"Saldo Anterior\",\"\",\"0\",\"1500.00\",\n\
            \"03/11/2026\",\"0000\",\"Pix - Enviado\",\"\",\"112233\",\"-45.90\",\n03/11/2026,,Café,,1,-1,50\n\
            \"03/11/2026\",\"\",\"S A L D O\",\"\",\"0\",\"1454.10\",\n";
        let s = parse(file.as_bytes()).expect("read");
        assert_eq!(rows(&s), [(3, nov(3), Cents(-4590), "Pix - Enviado", None, Some("112233"))]);
        assert_eq!(reasons(&s), [(4, "too_many_columns")]);
    }

    #[test]
    fn csv_ids_are_the_id_column_else_keys_derived_stably_counting_identical_rows() {
        let file = "Data,Valor,Identificador,Descrição\n03/11/2026,-5.00,,Café   Expresso\n\
            03/11/2026,-5.00,,CAFÉ EXPRESSO\n2026-11-04,-5.00,,Café Expresso\n04/11/2026,-50.00,6543a1b2,Café\n";
        let s = parse(file.as_bytes()).expect("read");
        let key = ["csv:2026-11-03:-500:café expresso:0", "csv:2026-11-03:-500:café expresso:1"];
        assert_eq!(ids(&s), [key[0], key[1], "csv:2026-11-04:-500:café expresso:0", "6543a1b2"]);
        assert_eq!(parse(file.as_bytes()), Ok(s), "a re-import reads the same ids");
    }

    #[test]
    fn a_csv_sign_column_signs_the_amounts_of_its_row() {
        let file = "\"Conta\";\"Data_Mov\";\"Nr_Doc\";\"Historico\";\"Valor\";\"Deb_Cred\"\n\
            \"1\";\"20261103\";\"0123\";\"BOLETO\";\"150.00\";\"D\"\n\"1\";\"20261104\";\"\";\"PIX\";\"20.00\";\"C\"\n";
        let boleto = (2, nov(3), Cents(-15000), "BOLETO", None, Some("0123"));
        assert_eq!(rows(&parse(file.as_bytes()).expect("read")), [boleto, (3, nov(4), Cents(2000), "PIX", None, None)]);
    }

    #[test]
    fn files_that_cannot_be_read_are_errors() {
        assert_eq!((parse(b""), parse(b"\xEF\xBB\xBF \r\n\t")), (Err(Empty), Err(Empty)));
        assert_eq!(parse(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"), Err(UnknownFormat));
        assert_eq!(parse(b"nome;cpf\nJos\xe9;1\n"), Err(UnknownFormat));
        assert_eq!(parse(b"OFXHEADER:100\n<OFX><BANKTRANLIST></BANKTRANLIST></OFX>"), Err(NoMovements));
        assert_eq!(parse(b"data;valor;historico\n01/11/2026;10,00;Saldo\n"), Err(NoMovements));
    }

    #[test]
    fn a_file_past_max_lines_is_refused_whole() {
        let file = |n: usize| "data;valor\n".to_owned() + &"01/11/2026;1,00\n".repeat(n);
        assert_eq!(parse(file(MAX_LINES).as_bytes()).map(|s| s.lines.len()), Ok(MAX_LINES));
        assert_eq!(parse(file(MAX_LINES + 1).as_bytes()), Err(TooManyLines(MAX_LINES + 1)));
    }

    #[test]
    fn bytes_are_utf8_or_cp1252_and_texts_are_cleaned_and_cut() {
        assert_eq!(decode(b"\x80\x81\x96\xe9A\r\nB\rC"), "€\u{FFFD}–éA\nB\nC");
        assert_eq!(decode(b"\xEF\xBB\xBFJos\xC3\xA9"), "José");
        assert_eq!(clean(" a \t b\u{0}c  ", MAX_TEXT), "a b c");
        assert_eq!(clean(&"é ".repeat(300), MAX_TEXT), "é ".repeat(128).trim_end());
        assert_eq!(describe(&[None, Some(" "), Some("x")], Some("x")), ("x".into(), None));
    }
}
