//! Brazilian tax ids: CPF (11 digits) and CNPJ (14 characters, numeric or the new
//! alphanumeric format of the Receita Federal), with their check digits.

/// Strips the usual formatting (`.`, `-`, `/`, spaces) and upper-cases letters.
pub fn normalize(document: &str) -> String {
    document.chars().filter(|c| !matches!(c, '.' | '-' | '/' | ' ')).map(|c| c.to_ascii_uppercase()).collect()
}

fn mod11_digit(values: &[u32], weights: &[u32]) -> u32 {
    let sum: u32 = values.iter().zip(weights).map(|(v, w)| v * w).sum();
    let rest = sum % 11;
    if rest < 2 {
        0
    } else {
        11 - rest
    }
}

/// A valid CPF: 11 digits, not all equal, both check digits right.
pub fn is_valid_cpf(cpf: &str) -> bool {
    if cpf.len() != 11 || !cpf.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let d: Vec<u32> = cpf.bytes().map(|b| (b - b'0') as u32).collect();
    if d.iter().all(|&x| x == d[0]) {
        return false;
    }
    let first = {
        let sum: u32 = d[..9].iter().zip((2..=10).rev()).map(|(v, w)| v * w).sum();
        (sum * 10 % 11) % 10
    };
    let second = {
        let sum: u32 = d[..10].iter().zip((2..=11).rev()).map(|(v, w)| v * w).sum();
        (sum * 10 % 11) % 10
    };
    first == d[9] && second == d[10]
}

/// A valid CNPJ: 12 base characters (digits, or digits and letters in the alphanumeric
/// format, each worth its ASCII code − 48) and two numeric check digits.
pub fn is_valid_cnpj(cnpj: &str) -> bool {
    let bytes = cnpj.as_bytes();
    if bytes.len() != 14
        || !bytes[..12].iter().all(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
        || !bytes[12..].iter().all(|b| b.is_ascii_digit())
    {
        return false;
    }
    if bytes.iter().all(|&b| b == bytes[0]) {
        return false;
    }
    let values: Vec<u32> = bytes.iter().map(|&b| (b - b'0') as u32).collect();
    const W1: [u32; 12] = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
    const W2: [u32; 13] = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
    mod11_digit(&values[..12], &W1) == values[12] && mod11_digit(&values[..13], &W2) == values[13]
}

/// Headquarters (`matriz`) when the branch part (positions 9–12) is `0001`.
pub fn cnpj_is_headquarters(cnpj: &str) -> bool {
    cnpj.get(8..12) == Some("0001")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpf_check_digits() {
        assert!(is_valid_cpf("52998224725"));
        assert!(is_valid_cpf(&normalize("529.982.247-25")));
        assert!(!is_valid_cpf("52998224724"));
        assert!(!is_valid_cpf("11111111111"));
        assert!(!is_valid_cpf("5299822472"));
    }

    #[test]
    fn cnpj_check_digits() {
        assert!(is_valid_cnpj("11222333000181"));
        assert!(is_valid_cnpj(&normalize("11.444.777/0001-61")));
        assert!(!is_valid_cnpj("11222333000182"));
        assert!(!is_valid_cnpj("00000000000000"));
        // The alphanumeric format (example published by the Receita Federal).
        assert!(is_valid_cnpj("12ABC34501DE35"));
        assert!(!is_valid_cnpj("12ABC34501DE36"));
        assert!(cnpj_is_headquarters("11222333000181"));
        assert!(!cnpj_is_headquarters("11222333000262"));
    }
}
