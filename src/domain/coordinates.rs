//! A payable's payment coordinates as Brazilian banks take them: the boleto's barcode or
//! digitable line (FEBRABAN layouts, bank and collection), the Pix copy-and-paste code
//! (an EMV BR Code with its CRC), a Pix key by its type, a payee's CPF or CNPJ, and the
//! bank, ISPB, branch and account numbers of a transfer. Each check returns the value in
//! the form it is stored in (formatting stripped), or why it is refused. A tax guide
//! paid by its data ([`TaxData`]) is kept as sent: the bank checks its members.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};

use super::documents::{is_valid_cnpj, is_valid_cpf, normalize};

/// Why a coordinate is refused: the `reason` of the 422 and its message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    pub reason: &'static str,
    pub message: &'static str,
}

const fn refusal(reason: &'static str, message: &'static str) -> Refusal {
    Refusal { reason, message }
}

fn digits_of(text: &str) -> Vec<u32> {
    text.bytes().map(|b| u32::from(b - b'0')).collect()
}

/// The modulo-10 check digit: weights 2, 1, 2… from the right, a product's digits added.
fn mod10(digits: &[u32]) -> u32 {
    let sum: u32 = digits.iter().rev().zip([2, 1].into_iter().cycle()).map(|(d, w)| d * w / 10 + d * w % 10).sum();
    (10 - sum % 10) % 10
}

/// The weighted sum of the modulo-11 check digits: weights 2 to 9 from the right.
fn mod11_sum(digits: &[u32]) -> u32 {
    digits.iter().rev().zip((2..=9).cycle()).map(|(d, w)| d * w).sum()
}

/// A bank boleto's general check digit (0, 10 and 11 are written 1).
fn boleto_digit(digits: &[u32]) -> u32 {
    match 11 - mod11_sum(digits) % 11 {
        0 | 10 | 11 => 1,
        digit => digit,
    }
}

/// A collection slip's (utility, tax) check digit: modulo 10 when its third digit is 6
/// or 7, modulo 11 when 8 or 9 (a rest of 0 or 1 is written 0).
fn collection_digit(value_id: u32, digits: &[u32]) -> Option<u32> {
    match value_id {
        6 | 7 => Some(mod10(digits)),
        8 | 9 => Some(match mod11_sum(digits) % 11 {
            0 | 1 => 0,
            rest => 11 - rest,
        }),
        _ => None,
    }
}

/// Whether a 44-digit barcode's general check digit is right: a collection slip's
/// (first digit 8) at position 4, a bank boleto's at position 5.
fn barcode_is_valid(code: &[u32]) -> bool {
    if code[0] == 8 {
        let rest: Vec<u32> = code[..3].iter().chain(&code[4..]).copied().collect();
        collection_digit(code[2], &rest) == Some(code[3])
    } else {
        let rest: Vec<u32> = code[..4].iter().chain(&code[5..]).copied().collect();
        boleto_digit(&rest) == code[4]
    }
}

/// A boleto's 47-digit digitable line: its three fields' check digits, and the general
/// one of the barcode it spells.
fn boleto_line_is_valid(line: &[u32]) -> bool {
    let fields_valid = [(0, 9), (10, 20), (21, 31)].iter().all(|&(start, end)| mod10(&line[start..end]) == line[end]);
    let code: Vec<u32> =
        [&line[0..4], &line[32..33], &line[33..47], &line[4..9], &line[10..20], &line[21..31]].concat();
    fields_valid && barcode_is_valid(&code)
}

/// A collection slip's 48-digit line: four blocks of 11 digits and a check digit each,
/// and the general one of the barcode they spell.
fn collection_line_is_valid(line: &[u32]) -> bool {
    let blocks: Vec<&[u32]> = line.chunks(12).collect();
    let blocks_valid = blocks.iter().all(|block| collection_digit(line[2], &block[..11]) == Some(block[11]));
    let code: Vec<u32> = blocks.iter().flat_map(|block| block[..11].iter().copied()).collect();
    line[0] == 8 && blocks_valid && barcode_is_valid(&code)
}

/// A barcode (44 digits) or digitable line (47 for a bank boleto, 48 for a utility or
/// tax slip), spaces, dots and hyphens aside: its digits, every check digit right.
pub fn barcode(text: &str) -> Result<String, Refusal> {
    let code: String = text.chars().filter(|c| !matches!(c, ' ' | '.' | '-')).collect();
    if !code.bytes().all(|b| b.is_ascii_digit()) || ![44, 47, 48].contains(&code.len()) {
        return Err(refusal(
            "invalid_format",
            "barcode must be a barcode (44 digits) or a digitable line (47 or 48 digits)",
        ));
    }
    let digits = digits_of(&code);
    let valid = match digits.len() {
        44 => barcode_is_valid(&digits),
        47 => boleto_line_is_valid(&digits),
        _ => collection_line_is_valid(&digits),
    };
    if !valid {
        return Err(refusal("invalid_check_digit", "barcode has a wrong check digit: check it against the slip"));
    }
    Ok(code)
}

/// The 44-digit barcode a checked barcode or digitable line ([`barcode`]'s answer)
/// stands for: both forms name one slip, so two bills are the same slip when their
/// keys are equal. A bank boleto's line moves the barcode's general check digit, due
/// factor and amount to its end; a collection line adds a check digit to each block of
/// eleven.
pub fn barcode_key(code: &str) -> String {
    match code.len() {
        47 => [&code[0..4], &code[32..33], &code[33..47], &code[4..9], &code[10..20], &code[21..31]].concat(),
        48 => (0..4).map(|block| &code[block * 12..block * 12 + 11]).collect(),
        _ => code.to_string(),
    }
}

/// CRC-16/CCITT-FALSE (polynomial 0x1021, initial 0xFFFF), the BR Code's checksum.
fn crc16(bytes: &[u8]) -> u16 {
    bytes.iter().fold(0xFFFF, |crc, &byte| {
        (0..8).fold(
            crc ^ (u16::from(byte) << 8),
            |crc, _| {
                if crc & 0x8000 != 0 {
                    (crc << 1) ^ 0x1021
                } else {
                    crc << 1
                }
            },
        )
    })
}

/// A Pix copy-and-paste code: an EMV BR Code (`000201…`) ending in its CRC field
/// (`6304` and four hexadecimal digits) whose checksum is right. Kept as sent, trimmed.
pub fn pix_copia_e_cola(text: &str) -> Result<String, Refusal> {
    let code = text.trim();
    let malformed =
        refusal("invalid_format", "pix_copia_e_cola must be a Pix BR Code: 000201… ending in 6304 and its CRC");
    if !code.is_ascii() || !code.starts_with("000201") || code.len() < 14 {
        return Err(malformed);
    }
    let (payload, crc) = code.split_at(code.len() - 4);
    if !payload.ends_with("6304") {
        return Err(malformed);
    }
    let expected = u16::from_str_radix(crc, 16).map_err(|_| malformed)?;
    if crc16(payload.as_bytes()) != expected {
        return Err(refusal("invalid_check_digit", "pix_copia_e_cola has a wrong CRC: copy the whole code again"));
    }
    Ok(code.to_string())
}

/// The types of Pix key.
pub const PIX_KEY_TYPES: &[&str] = &["cpf", "cnpj", "email", "phone", "random"];

/// A Pix key of `key_type` in the form the Pix directory holds it: a CPF or CNPJ's
/// digits (check digits right), an e-mail address (77 characters at most), a Brazilian
/// phone as `+55` and 10 or 11 digits, a random key as a lower-case UUID.
pub fn pix_key(key_type: &str, text: &str) -> Result<String, Refusal> {
    let text = text.trim();
    match key_type {
        "cpf" => Some(normalize(text)).filter(|cpf| is_valid_cpf(cpf)),
        "cnpj" => Some(normalize(text)).filter(|cnpj| is_valid_cnpj(cnpj)),
        "email" => (text.len() <= 77 && super::email::is_address(text)).then(|| text.to_string()),
        "phone" => {
            let digits: String = text.chars().filter(|c| !matches!(c, ' ' | '-' | '(' | ')')).collect();
            let (plus, number) = digits.strip_prefix('+').map_or((false, digits.as_str()), |rest| (true, rest));
            let national = match number.strip_prefix("55") {
                Some(rest) if plus || number.len() > 11 => rest,
                _ if plus => "",
                _ => number,
            };
            (matches!(national.len(), 10 | 11) && national.bytes().all(|b| b.is_ascii_digit()))
                .then(|| format!("+55{national}"))
        }
        "random" => uuid::Uuid::parse_str(text).ok().map(|key| key.hyphenated().to_string()),
        _ => None,
    }
    .ok_or(refusal("invalid_pix_key", "pix_key is not a valid key of its pix_key_type"))
}

/// A payee's CPF (11 digits) or CNPJ (14 characters), formatting aside, check digits right.
pub fn person_document(text: &str) -> Result<String, Refusal> {
    let document = normalize(text);
    match document.len() {
        11 if is_valid_cpf(&document) => Ok(document),
        14 if is_valid_cnpj(&document) => Ok(document),
        _ => Err(refusal("invalid_document", "beneficiary_document is not a valid CPF or CNPJ (check digits)")),
    }
}

/// A bank's COMPE code: three digits.
pub fn is_compe(code: &str) -> bool {
    code.len() == 3 && code.bytes().all(|b| b.is_ascii_digit())
}

/// A bank's ISPB: eight digits.
pub fn is_ispb(code: &str) -> bool {
    code.len() == 8 && code.bytes().all(|b| b.is_ascii_digit())
}

/// A branch or account number: digits only (its check digit apart).
pub fn is_number(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// A branch's or account's check digit: digits, or the `X` some banks use.
pub fn is_check_digit(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit() || b == b'X' || b == b'x')
}

// The kind of a tax slip (guia).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaxKind {
    Itbi,
    Icms,
    Iss,
    Iptu,
    Fgts,
    Dare,
    Darf,
    Gru,
    Gps,
}

impl TaxKind {
    pub const ALL: [TaxKind; 9] = [
        TaxKind::Itbi,
        TaxKind::Icms,
        TaxKind::Iss,
        TaxKind::Iptu,
        TaxKind::Fgts,
        TaxKind::Dare,
        TaxKind::Darf,
        TaxKind::Gru,
        TaxKind::Gps,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TaxKind::Itbi => "itbi",
            TaxKind::Icms => "icms",
            TaxKind::Iss => "iss",
            TaxKind::Iptu => "iptu",
            TaxKind::Fgts => "fgts",
            TaxKind::Dare => "dare",
            TaxKind::Darf => "darf",
            TaxKind::Gru => "gru",
            TaxKind::Gps => "gps",
        }
    }

    pub fn parse(text: &str) -> Option<TaxKind> {
        TaxKind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

/// A number of zero or more, as the tax slip's amounts travel (the banking gateway
/// takes them as JSON numbers).
fn non_negative(_: &mut SchemaGenerator) -> Schema {
    schemars::json_schema!({ "type": "number", "minimum": 0 })
}

/// A tax slip paid by its data instead of a barcode (DARF, GPS, FGTS…), as the banking
/// gateway takes it: every member optional, the amounts JSON numbers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaxData {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub tax_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub reference_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub taxpayer_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub taxpayer_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub taxpayer_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub calculation_date: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub competence_date: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub expire_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "non_negative")]
    pub fine_amount: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "non_negative")]
    pub interest_amount: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "non_negative")]
    pub gross_income_amount: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "non_negative")]
    pub total_amount: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "non_negative")]
    pub discount_amount: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "non_negative")]
    pub other_deduction_amount: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "non_negative")]
    pub other_addition_amount: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "non_negative")]
    pub other_entities_amount: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "non_negative")]
    pub monetary_update_amount: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub contributor_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub fgts_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub collection_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub pis_pasep_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "non_negative")]
    pub jam_percentage: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub connectivity_seal: Option<String>,
}

impl TaxData {
    /// The members the banking gateway requires of the data that it lacks (a blank text
    /// lacks), in order; empty when it is complete. The data names what is paid in one
    /// of two forms (`v2_new_payment_tax.data`, one of): a DARF's — the revenue code, the
    /// taxpayer (`taxpayer_type` `cpf` or `cnpj`), the dates of calculation and expiry —
    /// or a guide's totals — its expiry and total. Data with a `total_amount` is read in
    /// the second form, any other in the first.
    pub fn missing(&self) -> Vec<&'static str> {
        let has = |text: &Option<String>| text.as_deref().is_some_and(|t| !t.trim().is_empty());
        let form = match self.total_amount {
            Some(_) => vec![("expire_at", has(&self.expire_at))],
            None => vec![
                ("tax_code", has(&self.tax_code)),
                ("taxpayer_type", has(&self.taxpayer_type)),
                ("taxpayer_number", has(&self.taxpayer_number)),
                ("taxpayer_name", has(&self.taxpayer_name)),
                ("calculation_date", has(&self.calculation_date)),
                ("expire_at", has(&self.expire_at)),
            ],
        };
        form.into_iter().filter(|(_, present)| !present).map(|(member, _)| member).collect()
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_line_and_its_barcode_have_one_key() {
        let line = "34191090080000000000000000000018316560000450000";
        let key = barcode_key(line);
        assert_eq!(key, "34193165600004500001090000000000000000000001");
        assert_eq!(barcode(&key).as_deref(), Ok(key.as_str()), "the key is a valid barcode");
        assert_eq!(barcode_key(&key), key);
        let other = barcode("00190.50095 40144.816069 06809.350314 3 37370000000100").unwrap();
        assert_eq!(barcode(&barcode_key(&other)).map(|b| barcode_key(&b)), Ok(barcode_key(&other)));
    }

    use super::*;

    #[test]
    fn bank_boletos_are_checked_line_and_barcode() {
        // Digitable lines of real boletos (Banco do Brasil, Itaú), as printed.
        for line in [
            "00190500954014481606906809350314337370000000100",
            "34191.79001 01043.510047 91020.150008 1 84340000016200",
        ] {
            assert!(barcode(line).is_ok(), "{line}");
        }
        assert_eq!(barcode("34191.79001 01043.510047 91020.150008 1 84340000016200").unwrap().len(), 47);
        // The barcodes they spell.
        assert!(barcode("00193373700000001000500940144816060680935031").is_ok());
        assert!(barcode("34191843400000162001790001043510049102015000").is_ok());
        // One digit off, in a field or in the amount (the general digit catches it).
        for bad in [
            "00190500954014481606906809350314337370000000101",
            "00190500964014481606906809350314337370000000100",
            "00193373700000001000500940144816060680935032",
        ] {
            assert_eq!(barcode(bad).unwrap_err().reason, "invalid_check_digit", "{bad}");
        }
        for malformed in [
            "",
            "123",
            "0019050095401448160690680935031433737000000010X",
            "001905009540144816069068093503143373700000001000",
        ] {
            assert!(barcode(malformed).is_err(), "{malformed}");
        }
    }

    #[test]
    fn collection_slips_are_checked_by_their_modulo() {
        // A utility bill (modulo 10) and a tax slip (modulo 11), as printed.
        assert!(barcode("836200000005 667800481000 180975657313 001589636081").is_ok());
        assert!(barcode("846700000017 435900240209 024050002435 842210108119").is_ok());
        assert!(barcode("83620000000667800481001809756573100158963608").is_ok());
        assert!(barcode("84670000001435900240200240500024384221010811").is_ok());
        assert_eq!(
            barcode("836200000005 667800481000 180975657313 001589636082").unwrap_err().reason,
            "invalid_check_digit"
        );
        assert_eq!(barcode("84670000001435900240200240500024384221010812").unwrap_err().reason, "invalid_check_digit");
    }

    #[test]
    fn a_br_code_carries_its_crc() {
        // The example of the Central Bank's BR Code manual.
        let code = "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D";
        assert_eq!(pix_copia_e_cola(&format!(" {code}\n")).unwrap(), code);
        assert_eq!(pix_copia_e_cola(&code.replace("Fulano", "Fulana")).unwrap_err().reason, "invalid_check_digit");
        assert_eq!(pix_copia_e_cola(&code.replace("1D3D", "1D3E")).unwrap_err().reason, "invalid_check_digit");
        for bad in ["", "6304ABCD", "pix", &code.replace("6304", "6305"), &code.replace("1D3D", "1D3G")] {
            assert_eq!(pix_copia_e_cola(bad).unwrap_err().reason, "invalid_format", "{bad}");
        }
    }

    #[test]
    fn pix_keys_are_checked_by_type() {
        assert_eq!(pix_key("cpf", "529.982.247-25").unwrap(), "52998224725");
        assert!(pix_key("cpf", "52998224724").is_err());
        assert_eq!(pix_key("cnpj", "11.222.333/0001-81").unwrap(), "11222333000181");
        assert!(pix_key("cnpj", "52998224725").is_err());
        assert_eq!(pix_key("email", " financeiro@acme.com.br ").unwrap(), "financeiro@acme.com.br");
        for bad in ["acme.com.br", "a@b", "a@@b.com", "a b@c.com", "@acme.com", "a@acme..com"] {
            assert!(pix_key("email", bad).is_err(), "{bad}");
        }
        for phone in ["+5511987654321", "+55 (11) 98765-4321", "11987654321", "5511987654321", "1132654321"] {
            assert!(pix_key("phone", phone).unwrap().starts_with("+5511"), "{phone}");
        }
        for bad in ["+1415555123", "987654321", "+55119876543210", "phone"] {
            assert!(pix_key("phone", bad).is_err(), "{bad}");
        }
        assert_eq!(
            pix_key("random", "123E4567-E12B-12D1-A456-426655440000").unwrap(),
            "123e4567-e12b-12d1-a456-426655440000"
        );
        assert!(pix_key("random", "123e4567").is_err());
        assert!(pix_key("iban", "x").is_err());
    }

    #[test]
    fn documents_and_bank_numbers() {
        assert_eq!(person_document("529.982.247-25").unwrap(), "52998224725");
        assert_eq!(person_document("11.222.333/0001-81").unwrap(), "11222333000181");
        assert!(person_document("11.222.333/0001-82").is_err());
        assert!(person_document("1234").is_err());
        assert!(is_compe("001") && !is_compe("1") && !is_compe("0a1"));
        assert!(is_ispb("00000000") && !is_ispb("0000000") && !is_ispb("0000000a"));
        assert!(is_number("0001") && !is_number("") && !is_number("12-3"));
        assert!(is_check_digit("X") && is_check_digit("7") && !is_check_digit("-"));
    }

    #[test]
    fn a_tax_guides_data_lacks_the_members_of_its_form() {
        let darf: TaxData = serde_json::from_value(serde_json::json!({"tax_code": "0561", "taxpayer_type": "cnpj",
            "taxpayer_number": "11222333000181", "taxpayer_name": "Acme", "calculation_date": "2026-11-30",
            "expire_at": "2026-12-20"}))
        .unwrap();
        assert!(darf.missing().is_empty());
        let partial = TaxData { taxpayer_name: Some(" ".into()), calculation_date: None, ..darf.clone() };
        assert_eq!(partial.missing(), ["taxpayer_name", "calculation_date"]);
        let totals = TaxData { total_amount: Some(250.5), expire_at: Some("2026-12-20".into()), ..TaxData::default() };
        assert!(totals.missing().is_empty());
        assert_eq!(TaxData { expire_at: None, ..totals }.missing(), ["expire_at"]);
        assert_eq!(TaxData::default().missing().len(), 6);
        for kind in TaxKind::ALL {
            assert_eq!(TaxKind::parse(kind.as_str()), Some(kind));
        }
    }
}
