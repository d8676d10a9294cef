//! Where a payment goes, as a person confirming it reads it: enough to recognise the
//! payee and notice a changed destination, masked as Brazilian banks mask it on a
//! payment's confirmation screen.
//!
//! * A CPF shows its middle six digits (`***.456.789-**`, the Pix directory's form); a
//!   CNPJ, a company's public id, shows whole.
//! * An account number shows its last three digits (`***871-3`); the bank and branch
//!   show whole.
//! * A Pix key shows by its type: a CPF or CNPJ as above, an e-mail its first letter and
//!   its domain, a phone its last four digits, a random key its first and last groups.
//! * A boleto's digitable line shows whole, grouped as printed on the slip: the person
//!   compares it with the slip.
//! * A Pix copy-and-paste code shows its payee as the code names it (merchant name, key
//!   and city: its EMV fields 59, 26.01 and 60).
//!
//! Text from outside (a name, a merchant name) is shown through
//! [`super::text::quoted`].

use super::documents::normalize;
use super::text::quoted;

/// A payee's CPF or CNPJ as shown: a CPF masked, a CNPJ whole and formatted; anything
/// else as quoted text.
pub fn document(document: &str) -> String {
    let digits = normalize(document);
    let b = digits.as_bytes();
    match b.len() {
        11 if digits.bytes().all(|c| c.is_ascii_digit()) => format!("CPF ***.{}.{}-**", &digits[3..6], &digits[6..9]),
        14 if digits.is_ascii() => {
            format!("CNPJ {}.{}.{}/{}-{}", &digits[..2], &digits[2..5], &digits[5..8], &digits[8..12], &digits[12..])
        }
        _ => quoted(document),
    }
}

/// An account number (and its check digit) as shown: its last three characters.
pub fn account(number: &str, digit: Option<&str>) -> String {
    let chars: Vec<char> = number.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    let kept: String = chars[chars.len().saturating_sub(3)..].iter().collect();
    let masked = if chars.len() > 3 { format!("***{kept}") } else { kept };
    match digit.filter(|d| !d.is_empty()) {
        Some(digit) => format!("{masked}-{}", digit.chars().filter(char::is_ascii_alphanumeric).collect::<String>()),
        None => masked,
    }
}

/// A Pix key of `key_type` as shown, with its type: `e-mail key f***@example.com.br`.
pub fn pix_key(key_type: Option<&str>, key: &str) -> String {
    let key = key.trim();
    match key_type {
        Some("cpf") => format!("CPF key {}", document(key).trim_start_matches("CPF ")),
        Some("cnpj") => format!("CNPJ key {}", document(key).trim_start_matches("CNPJ ")),
        Some("email") => match key.split_once('@') {
            Some((user, host)) if key.is_ascii() => {
                format!("e-mail key {}***@{}", user.chars().next().unwrap_or('*'), host)
            }
            _ => format!("e-mail key {}", quoted(key)),
        },
        Some("phone") => {
            let digits: String = key.chars().filter(char::is_ascii_digit).collect();
            format!("phone key ****{}", &digits[digits.len().saturating_sub(4)..])
        }
        Some("random") if key.len() == 36 && key.is_ascii() => format!("random key {}…{}", &key[..8], &key[32..]),
        _ => format!("key {}", quoted(key)),
    }
}

/// A barcode or digitable line as printed on the slip: a bank boleto's 47 digits in its
/// five fields, a collection slip's 48 in four blocks, a barcode's 44 as they are.
pub fn barcode(code: &str) -> String {
    let code: String = code.chars().filter(char::is_ascii_digit).collect();
    match code.len() {
        47 => format!(
            "{}.{} {}.{} {}.{} {} {}",
            &code[..5],
            &code[5..10],
            &code[10..15],
            &code[15..21],
            &code[21..26],
            &code[26..32],
            &code[32..33],
            &code[33..]
        ),
        48 => code.as_bytes().chunks(12).map(|c| String::from_utf8_lossy(c).into_owned()).collect::<Vec<_>>().join(" "),
        _ => code,
    }
}

/// The payee a Pix BR Code names: its merchant name, its key and its city, where the code
/// carries them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct BrCodePayee {
    pub name: Option<String>,
    pub key: Option<String>,
    pub city: Option<String>,
}

/// The EMV fields of a BR Code (`id`, two-digit length, value), in order; `None` when it
/// does not parse.
fn emv_fields(code: &str) -> Option<Vec<(&str, &str)>> {
    let mut fields = Vec::new();
    let mut rest = code;
    while !rest.is_empty() {
        let id = rest.get(..2)?;
        let length: usize = rest.get(2..4)?.parse().ok()?;
        let value = rest.get(4..4 + length)?;
        fields.push((id, value));
        rest = &rest[4 + length..];
    }
    Some(fields)
}

/// The payee of a Pix copy-and-paste code (fields 59, 26.01 and 60).
pub fn br_code_payee(code: &str) -> BrCodePayee {
    let Some(fields) = emv_fields(code.trim()) else { return BrCodePayee::default() };
    let field = |id: &str| fields.iter().find(|(i, _)| *i == id).map(|(_, v)| v.to_string());
    let key = fields
        .iter()
        .filter(|(id, _)| *id == "26")
        .filter_map(|(_, account)| emv_fields(account))
        .find_map(|inner| inner.iter().find(|(i, _)| *i == "01").map(|(_, v)| v.to_string()));
    BrCodePayee { name: field("59"), key, city: field("60") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_accounts_and_keys_are_masked_as_banks_mask_them() {
        assert_eq!(document("123.456.789-09"), "CPF ***.456.789-**");
        assert_eq!(document("45997418000153"), "CNPJ 45.997.418/0001-53");
        assert_eq!(document("x\ny"), "“x y”");
        assert_eq!(account("45871", Some("3")), "***871-3");
        assert_eq!(account("12", None), "12");
        assert_eq!(
            pix_key(Some("email"), "financeiro@papelariaboavista.com.br"),
            "e-mail key f***@papelariaboavista.com.br"
        );
        assert_eq!(pix_key(Some("cpf"), "12345678909"), "CPF key ***.456.789-**");
        assert_eq!(pix_key(Some("phone"), "+5511987654321"), "phone key ****4321");
        assert_eq!(pix_key(Some("random"), "123e4567-e89b-12d3-a456-426614174000"), "random key 123e4567…4000");
        assert_eq!(
            barcode("34191090080000000000000000000018316560000450000"),
            "34191.09008 00000.000000 00000.000018 3 16560000450000"
        );
    }

    #[test]
    fn a_br_code_names_its_payee() {
        let code = "00020126360014br.gov.bcb.pix0114+5511987654321520400005303986540510.005802BR5913FULANO DE TAL6008BRASILIA62070503***6304ABCD";
        let payee = br_code_payee(code);
        assert_eq!(payee.name.as_deref(), Some("FULANO DE TAL"));
        assert_eq!(payee.key.as_deref(), Some("+5511987654321"));
        assert_eq!(payee.city.as_deref(), Some("BRASILIA"));
        assert_eq!(br_code_payee("garbage"), BrCodePayee::default());
    }
}
