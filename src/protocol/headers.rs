//! The MCP request headers that repeat the body (`MCP-Protocol-Version`, `Mcp-Method`,
//! `Mcp-Name`): reading them (names case-insensitive, values trimmed, case-sensitive)
//! and decoding the `=?base64?…?=` form of `Mcp-Name`.

use base64::Engine;
use http::HeaderMap;

pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
pub const MCP_METHOD: &str = "mcp-method";
pub const MCP_NAME: &str = "mcp-name";

/// A header whose value is not visible ASCII (or not decodable) is as good as wrong.
#[derive(Debug, PartialEq, Eq)]
pub struct Unreadable(pub &'static str);

/// The trimmed value of header `name`, if present.
pub fn read(headers: &HeaderMap, name: &'static str) -> Result<Option<String>, Unreadable> {
    match headers.get(name) {
        None => Ok(None),
        Some(value) => {
            let text = value.to_str().map_err(|_| Unreadable(name))?;
            Ok(Some(text.trim_matches(|c| c == ' ' || c == '\t').to_string()))
        }
    }
}

/// Decodes a header value that may be `=?base64?<standard base64 of UTF-8>?=`. Only that
/// exact lowercase form is decoded, strictly (padding and alphabet checked, UTF-8
/// required); anything else is taken literally.
pub fn decode_value(value: &str) -> Result<String, Unreadable> {
    const PREFIX: &str = "=?base64?";
    const SUFFIX: &str = "?=";
    if value.len() >= PREFIX.len() + SUFFIX.len() && value.starts_with(PREFIX) && value.ends_with(SUFFIX) {
        let inner = &value[PREFIX.len()..value.len() - SUFFIX.len()];
        let bytes = base64::engine::general_purpose::STANDARD.decode(inner).map_err(|_| Unreadable(MCP_NAME))?;
        return String::from_utf8(bytes).map_err(|_| Unreadable(MCP_NAME));
    }
    Ok(value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_form_is_decoded() {
        assert_eq!(decode_value("=?base64?SGVsbG8sIOS4lueVjA==?=").unwrap(), "Hello, 世界");
        assert_eq!(decode_value("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=").unwrap(), "=?base64?literal?=");
    }

    #[test]
    fn bad_base64_is_refused() {
        assert!(decode_value("=?base64?SGVsbG8?=").is_err(), "missing padding");
        assert!(decode_value("=?base64?SGV*bG8=?=").is_err(), "alphabet");
        assert!(decode_value("=?base64?/w==?=").is_err(), "not UTF-8");
    }

    #[test]
    fn other_forms_are_literal() {
        assert_eq!(decode_value("=?BASE64?SGVsbG8=?=").unwrap(), "=?BASE64?SGVsbG8=?=");
        assert_eq!(decode_value("SGVsbG8=?=").unwrap(), "SGVsbG8=?=");
        assert_eq!(decode_value("=?base64?SGVsbG8=").unwrap(), "=?base64?SGVsbG8=");
        assert_eq!(decode_value("finance_workspaces_list").unwrap(), "finance_workspaces_list");
    }
}
