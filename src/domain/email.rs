//! E-mail addresses as people give them: one `@`, a local part, a domain of two or more
//! labels, no spaces. What a provider verified is compared in lower case (an
//! invitation names an address; the provider's `email` claim may differ in case).

/// The longest address (RFC 5321 §4.5.3.1.3, a path of 256 less its angle brackets).
pub const MAX_LENGTH: usize = 254;

/// Whether `text` has the form of an address.
pub fn is_address(text: &str) -> bool {
    text.len() <= MAX_LENGTH
        && !text.contains(char::is_whitespace)
        && text.split_once('@').is_some_and(|(user, host)| {
            !user.is_empty()
                && !host.contains('@')
                && host.split('.').count() >= 2
                && !host.split('.').any(str::is_empty)
        })
}

/// The address in the form it is kept and compared: trimmed, lower case; `None` when
/// it is not one.
pub fn normalized(text: &str) -> Option<String> {
    let text = text.trim();
    is_address(text).then(|| text.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_kept_in_lower_case_and_refused_when_malformed() {
        assert_eq!(normalized(" Ana.Souza@Acme.com.BR ").as_deref(), Some("ana.souza@acme.com.br"));
        for bad in ["", "ana", "ana@", "@acme.com", "ana@acme", "ana@@acme.com", "ana souza@acme.com", "ana@acme..com"]
        {
            assert_eq!(normalized(bad), None, "{bad}");
        }
        assert!(normalized(&format!("{}@acme.com", "a".repeat(MAX_LENGTH))).is_none());
    }
}
