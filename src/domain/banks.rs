//! The participants of the Central Bank's settlement system (STR), as the Banco Central
//! do Brasil publishes them in `ParticipantesSTR.csv` (`ISPB`, `Nome_Reduzido`,
//! `Número_Código`, `Participa_da_Compe`, `Acesso_Principal`, `Nome_Extenso`,
//! `Início_da_Operação`; UTF-8 or Windows-1252) and as this product ships them
//! (`data/banks/banks.csv`: `compe`, `ispb`, `short_name`, `long_name`). Both are read by
//! [`parse`], which finds the columns by their header names, so the shipped list and a
//! file downloaded from the Bank go through the same checks. No I/O here.
//!
//! A participant is known by its ISPB (8 digits, never reused), its bank's id is a
//! name-based UUID of it ([`bank_id`]): the same on every deployment and after every
//! refresh. Its COMPE code (3 digits) is what accounts and payments name; clearing
//! houses and the Central Bank itself have none (`n/a`, or `0` in the source).

use super::csv::{decode, fold, record};

/// One participant of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Participant {
    /// 8 digits.
    pub ispb: String,
    /// The COMPE code, 3 digits; `None` for a participant without one.
    pub code: Option<String>,
    pub short_name: String,
    /// The long name (`Nome_Extenso`), else the short one.
    pub name: String,
}

/// Why a file is refused: the line (1-based, as an editor shows it) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for Refusal {}

/// The most participants a list may have (the STR has about 450; the Pix list under 1,000).
pub const MAX_PARTICIPANTS: usize = 5_000;

/// The columns the reader looks for, each by the header names it may have (folded:
/// lower case, no accents, other characters as spaces).
const ISPB: &str = "ispb";
const CODE: &str = "numero codigo|compe|codigo|code";
const SHORT_NAME: &str = "nome reduzido|short name";
const LONG_NAME: &str = "nome extenso|long name|name";

fn column(header: &[String], names: &str) -> Option<usize> {
    header.iter().position(|cell| names.split('|').any(|name| fold(cell) == name))
}

fn refused(line: usize, message: impl Into<String>) -> Refusal {
    Refusal { line, message: message.into() }
}

/// Reads a list of participants; the first refusal stops it (a list is taken whole or
/// not at all). Refused: a header without an ISPB, a code or a name column; a row whose
/// cells are not the header's; an ISPB that is not 8 digits, a code that is not 1 to 3
/// digits (or `n/a`, empty, `0`: none); a row without a name; an ISPB or a code twice; a
/// quote left open; a list without participants or with more than [`MAX_PARTICIPANTS`].
pub fn parse(bytes: &[u8]) -> Result<Vec<Participant>, Refusal> {
    let text = decode(bytes);
    let first = text.split('\n').next().unwrap_or_default();
    let separator = if first.contains(';') && !first.contains(',') { ';' } else { ',' };
    let (mut pos, mut line) = (0, 0);
    let header = record(&text, &mut pos, &mut line, separator);
    let ispb = column(&header, ISPB).ok_or_else(|| refused(1, "the header has no ISPB column"))?;
    let code =
        column(&header, CODE).ok_or_else(|| refused(1, "the header has no Número_Código (COMPE code) column"))?;
    let short = column(&header, SHORT_NAME);
    let long = column(&header, LONG_NAME);
    if short.is_none() && long.is_none() {
        return Err(refused(1, "the header has no Nome_Reduzido or Nome_Extenso column"));
    }
    let mut participants: Vec<Participant> = Vec::new();
    let mut seen_ispb = std::collections::HashMap::new();
    let mut seen_code = std::collections::HashMap::new();
    while pos < text.len() {
        let at = line + 1;
        let cells = record(&text, &mut pos, &mut line, separator);
        if line > at {
            return Err(refused(at, "a quote is not closed on this line"));
        }
        if cells.iter().all(String::is_empty) {
            continue;
        }
        if cells.len() != header.len() {
            return Err(refused(at, format!("{} cells where the header has {}", cells.len(), header.len())));
        }
        let participant = participant(&cells, ispb, code, short, long).map_err(|message| refused(at, message))?;
        if let Some(first) = seen_ispb.insert(participant.ispb.clone(), at) {
            return Err(refused(at, format!("ISPB {} is also on line {first}", participant.ispb)));
        }
        if let Some(code) = &participant.code {
            if let Some(first) = seen_code.insert(code.clone(), at) {
                return Err(refused(at, format!("code {code} is also on line {first}")));
            }
        }
        participants.push(participant);
        if participants.len() > MAX_PARTICIPANTS {
            return Err(refused(at, format!("more than {MAX_PARTICIPANTS} participants")));
        }
    }
    if participants.is_empty() {
        return Err(refused(line.max(1), "the file lists no participant"));
    }
    Ok(participants)
}

/// One row's participant, or what is wrong with it.
fn participant(
    cells: &[String],
    ispb: usize,
    code: usize,
    short: Option<usize>,
    long: Option<usize>,
) -> Result<Participant, String> {
    let text = |index: Option<usize>| index.map(|i| cells[i].trim().to_string()).filter(|t| !t.is_empty());
    let raw_ispb = cells[ispb].trim();
    if raw_ispb.is_empty() || raw_ispb.len() > 8 || !raw_ispb.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("the ISPB {raw_ispb:?} is not 8 digits"));
    }
    let raw_code = cells[code].trim();
    let code = match raw_code {
        "" => None,
        c if c.eq_ignore_ascii_case("n/a") => None,
        c if c.len() <= 3 && c.bytes().all(|b| b.is_ascii_digit()) => {
            (c.bytes().any(|b| b != b'0')).then(|| format!("{c:0>3}"))
        }
        c => return Err(format!("the code {c:?} is not a COMPE code (up to 3 digits, or n/a)")),
    };
    let (short_name, long_name) = (text(short), text(long));
    let name = long_name.clone().or_else(|| short_name.clone()).ok_or("the participant has no name")?;
    Ok(Participant {
        ispb: format!("{raw_ispb:0>8}"),
        code,
        short_name: short_name.unwrap_or_else(|| name.clone()),
        name,
    })
}

/// The id of the bank with this ISPB: a name-based (version 5) UUID of it in this
/// product's namespace of banks, so it is the same on every deployment and survives
/// every refresh of the list.
pub fn bank_id(ispb: &str) -> String {
    name_based(&namespace(), ispb.as_bytes()).to_string()
}

/// The namespace of the banks' ids: the name-based UUID of this product's banks URL.
fn namespace() -> uuid::Uuid {
    name_based(&uuid::Uuid::NAMESPACE_URL, b"https://api.finance.kobana.com.br/v1/banks")
}

/// RFC 9562's version 5 UUID: the SHA-1 of the namespace's bytes and the name.
fn name_based(namespace: &uuid::Uuid, name: &[u8]) -> uuid::Uuid {
    let mut context = aws_lc_rs::digest::Context::new(&aws_lc_rs::digest::SHA1_FOR_LEGACY_USE_ONLY);
    context.update(namespace.as_bytes());
    context.update(name);
    let digest = context.finish();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest.as_ref()[..16]);
    uuid::Builder::from_sha1_bytes(bytes).into_uuid()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Bank's own layout, as it publishes `ParticipantesSTR.csv`.
    const BCB: &str =
        "ISPB,Nome_Reduzido,Número_Código,Participa_da_Compe,Acesso_Principal,Nome_Extenso,Início_da_Operação\n\
        00000000,BCO DO BRASIL S.A.,001,Sim,RSFN,Banco do Brasil S.A.,22/04/2002\n\
        00038166,Bacen,n/a,Não,RSFN,Banco Central do Brasil,22/04/2002\n\
        60701190,ITAÚ UNIBANCO S.A.,341,Sim,RSFN,\"ITAÚ UNIBANCO S.A., SÃO PAULO\",22/04/2002\n";

    #[test]
    fn the_banks_layout_is_read_in_utf8_and_in_windows_1252() {
        let utf8 = parse(BCB.as_bytes()).unwrap();
        // The same file in Windows-1252: ú \xfa, Ú \xda, ã \xe3, Ã \xc3, í \xed.
        let cp1252 = b"ISPB,Nome_Reduzido,N\xfamero_C\xf3digo,Participa_da_Compe,Acesso_Principal,Nome_Extenso,\
            In\xedcio_da_Opera\xe7\xe3o\n00000000,BCO DO BRASIL S.A.,001,Sim,RSFN,Banco do Brasil S.A.,22/04/2002\n\
            00038166,Bacen,n/a,N\xe3o,RSFN,Banco Central do Brasil,22/04/2002\n\
            60701190,ITA\xda UNIBANCO S.A.,341,Sim,RSFN,\"ITA\xda UNIBANCO S.A., S\xc3O PAULO\",22/04/2002\n";
        assert_eq!(parse(cp1252).unwrap(), utf8);
        assert_eq!(utf8.len(), 3);
        assert_eq!(
            utf8[1],
            Participant {
                ispb: "00038166".into(),
                code: None,
                short_name: "Bacen".into(),
                name: "Banco Central do Brasil".into()
            }
        );
        assert_eq!(utf8[2].code.as_deref(), Some("341"));
        assert_eq!(utf8[2].name, "ITAÚ UNIBANCO S.A., SÃO PAULO");
    }

    #[test]
    fn the_shipped_list_is_read_and_its_check_rows_are_there() {
        let shipped = parse(include_bytes!("../../data/banks/banks.csv")).unwrap();
        assert_eq!(shipped.len(), 448);
        assert_eq!(shipped.iter().filter(|p| p.code.is_none()).count(), 10);
        for (code, ispb) in [
            ("001", "00000000"),
            ("033", "90400888"),
            ("077", "00416968"),
            ("104", "00360305"),
            ("237", "60746948"),
            ("260", "18236120"),
            ("341", "60701190"),
        ] {
            assert!(shipped.iter().any(|p| p.code.as_deref() == Some(code) && p.ispb == ispb), "{code}");
        }
    }

    #[test]
    fn a_bad_file_is_refused_with_its_line() {
        let head = "ISPB,Nome_Reduzido,Número_Código,Nome_Extenso\n";
        for (body, line, says) in [
            ("0000000A,X,001,X\n", 2, "ISPB"),
            ("00000000,X,001,X\n00000001,Y,1234,Y\n", 3, "code"),
            ("00000000,X,001,X\n00000000,Y,002,Y\n", 3, "also on line 2"),
            ("00000000,X,001,X\n00000001,Y,1,Y\n", 3, "also on line 2"),
            ("00000000,X,001\n", 2, "3 cells"),
            ("00000000,,001,\n", 2, "no name"),
            ("00000000,\"X,001,X\n00000001,Y,002,Y\n", 2, "quote"),
            ("", 1, "no participant"),
        ] {
            let refusal = parse(format!("{head}{body}").as_bytes()).unwrap_err();
            assert_eq!(refusal.line, line, "{body:?}: {refusal}");
            assert!(refusal.message.contains(says), "{body:?}: {refusal}");
        }
        assert_eq!(parse(b"code,name\n001,X\n").unwrap_err().line, 1);
        assert_eq!(parse(b"ispb,name\n00000000,X\n").unwrap_err().line, 1);
    }

    #[test]
    fn codes_and_ispbs_get_their_leading_zeros_and_a_zero_code_is_none() {
        let list = parse(b"ispb,compe,short_name,long_name\n360305,104,CAIXA,\n28719664,0,B3,Balcao B3\n").unwrap();
        assert_eq!(
            (list[0].ispb.as_str(), list[0].code.as_deref(), list[0].name.as_str()),
            ("00360305", Some("104"), "CAIXA")
        );
        assert_eq!(list[1].code, None);
    }

    #[test]
    fn a_banks_id_is_a_name_based_uuid_of_its_ispb_that_never_changes() {
        let id = bank_id("00000000");
        assert_eq!(id, bank_id("00000000"));
        assert_ne!(id, bank_id("60701190"));
        let parsed = uuid::Uuid::parse_str(&id).unwrap();
        assert_eq!(parsed.get_version_num(), 5);
        // Pinned: an id handed out once is the bank's for good (the same as Python's
        // `uuid.uuid5(uuid.uuid5(uuid.NAMESPACE_URL, "https://api.finance.kobana.com.br/v1/banks"), ispb)`).
        assert_eq!(id, "c55139a6-47a1-51f6-bb60-5b0fe717e54c");
        assert_eq!(bank_id("60701190"), "8b0573a0-ff9c-557e-ba0a-3147e039288a");
        // RFC 9562's construction, checked on the classic example.
        assert_eq!(
            name_based(&uuid::Uuid::NAMESPACE_DNS, b"python.org").to_string(),
            "886313e1-3b8a-5372-9b90-0c9aee199e5d"
        );
    }
}
