//! The properties the small fuzz targets check, one function per target. Each takes the
//! fuzzer's bytes, never panics on its own account, and panics (a crash the fuzzer
//! reports) only when the code under test breaks a rule. The main test suite replays
//! the committed corpora through these same functions (tests/it/fuzz_corpus.rs).

use base64::Engine;
use kobana_finance_mcp::domain::money::{Cents, MoneyError};
use kobana_finance_mcp::mcp::confirm::{self, State};
use kobana_finance_mcp::ops::machinery::list::{self, Bind, ListRequest};
use kobana_finance_mcp::protocol::headers;
use serde_json::Value;

/// The key the targets sign request states and cursors with.
pub const KEY: &[u8] = b"fuzz-state-key";

/// Splits `data` into at most `n` fields at NUL bytes.
fn fields(data: &[u8], n: usize) -> Vec<String> {
    data.splitn(n, |b| *b == 0).map(|f| String::from_utf8_lossy(f).into_owned()).collect()
}

/// A few positions and replacement bytes derived from the input, for tampering.
fn tamperings(data: &[u8], len: usize) -> Vec<(usize, u8)> {
    if len == 0 {
        return Vec::new();
    }
    let seed = data.iter().fold(0x9e37_79b9_u32, |h, b| h.rotate_left(5) ^ u32::from(*b));
    (0..8u32)
        .map(|i| {
            let x = seed.wrapping_mul(2_654_435_761).wrapping_add(i.wrapping_mul(40_503));
            ((x as usize) % len, b"AQgw_-.=/+a0Z9\0"[(x >> 16) as usize % 15])
        })
        .collect()
}

/// `Cents::parse` agrees with a plain reference parser on every string, and what it
/// accepts prints back to an amount that parses to the same cents.
pub fn money(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for signed in [false, true] {
        let expected = reference_money(text, signed);
        let got = Cents::parse(text, signed);
        assert_eq!(got, expected, "Cents::parse({text:?}, signed={signed})");
        if let Ok(cents) = got {
            let printed = cents.to_string();
            assert_eq!(Cents::parse(&printed, true), Ok(cents), "{printed:?} does not parse back");
        }
    }
    match Cents::parse(text, false) {
        Ok(cents) => assert_eq!(Cents::parse_positive(text).is_ok(), cents.0 > 0, "parse_positive({text:?})"),
        Err(e) => assert_eq!(Cents::parse_positive(text), Err(e)),
    }
}

/// `^-?\d{1,13}\.\d{1,2}$` (the sign only when `signed`), computed in i128.
fn reference_money(text: &str, signed: bool) -> Result<Cents, MoneyError> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(_) if !signed => return Err(MoneyError::Negative),
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let Some((int, frac)) = rest.split_once('.') else { return Err(MoneyError::Format) };
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    if !digits(int) || !digits(frac) || int.len() > 13 || frac.len() > 2 {
        return Err(MoneyError::Format);
    }
    let whole: i128 = int.bytes().fold(0, |n, b| n * 10 + i128::from(b - b'0'));
    let cents: i128 = frac.bytes().fold(0, |n, b| n * 10 + i128::from(b - b'0')) * if frac.len() == 1 { 10 } else { 1 };
    let value = whole * 100 + cents;
    Ok(Cents(i64::try_from(if negative { -value } else { value }).expect("13 digits fit in i64")))
}

/// `Mcp-Name` decoding: the exact `=?base64?…?=` form decodes strictly (re-encoding
/// the result gives back the same base64), any other value is literal; reading the
/// header trims only spaces and tabs and never fails on visible ASCII.
pub fn mcp_name(data: &[u8]) {
    if let Ok(value) = std::str::from_utf8(data) {
        let wrapped = value.len() >= 11 && value.starts_with("=?base64?") && value.ends_with("?=");
        match headers::decode_value(value) {
            Ok(decoded) if wrapped => {
                let inner = &value[9..value.len() - 2];
                assert_eq!(
                    base64::engine::general_purpose::STANDARD.encode(decoded.as_bytes()),
                    inner,
                    "non-canonical base64 accepted: {value:?}"
                );
            }
            Ok(decoded) => assert_eq!(decoded, value, "a literal value was changed"),
            Err(_) => assert!(wrapped, "a literal value was refused: {value:?}"),
        }
    }
    if let Ok(header) = http::HeaderValue::from_bytes(data) {
        let mut map = http::HeaderMap::new();
        map.insert(headers::MCP_NAME, header);
        match headers::read(&map, headers::MCP_NAME) {
            Ok(Some(read)) => {
                assert!(!read.starts_with([' ', '\t']) && !read.ends_with([' ', '\t']), "not trimmed: {read:?}");
                assert!(data.iter().all(|b| (0x20..0x7f).contains(b) || *b == b'\t'), "non-ASCII header read as text");
            }
            Ok(None) => panic!("a present header read as absent"),
            Err(_) => assert!(data.iter().any(|b| !(0x20..0x7f).contains(b) && *b != b'\t'), "visible ASCII refused"),
        }
    }
}

/// `requestState` verification: a token verifies only if it is exactly what the key
/// signed (re-signing what it carries gives the same token); a state survives its
/// round trip; any change to a signed token is refused.
pub fn request_state(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Some(state) = confirm::verify(KEY, &text) {
        assert_eq!(confirm::sign(KEY, &state), text, "a token verified that the key did not sign");
    }
    let f = fields(data, 7);
    let get = |i: usize| f.get(i).cloned().unwrap_or_default();
    let state = State {
        u: get(0),
        w: get(1),
        t: get(2),
        d: get(3),
        q: get(4),
        n: get(5),
        e: get(6).parse().unwrap_or(data.len() as i64),
    };
    let token = confirm::sign(KEY, &state);
    assert_eq!(confirm::verify(KEY, &token), Some(state.clone()), "a signed state did not verify");
    assert_eq!(confirm::verify(b"another-key", &token), None, "verified with the wrong key");
    for (position, byte) in tamperings(data, token.len()) {
        let mut tampered = token.clone().into_bytes();
        tampered[position] = byte;
        let Ok(tampered) = String::from_utf8(tampered) else { continue };
        if tampered != token {
            assert_eq!(confirm::verify(KEY, &tampered), None, "tampered token verified: {tampered:?}");
        }
    }
    for cut in [1, token.len() / 2, token.len().saturating_sub(1)] {
        if let Some(prefix) = token.get(..cut) {
            assert_eq!(confirm::verify(KEY, prefix), None, "a truncated token verified");
        }
    }
}

/// Query pairs as the `/v1` door splits them (no percent-decoding needed here).
fn pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| p.split_once('=').unwrap_or((p, "")))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// List requests and cursors: any query compiles or is refused without a panic; a
/// cursor is accepted only if it is exactly one the key signed for that sort, and
/// then binds the value and id it carries; any change to a signed cursor is refused.
pub fn cursor(data: &[u8]) {
    let f = fields(data, 4);
    let get = |i: usize| f.get(i).cloned().unwrap_or_default();
    let spec = &kobana_finance_mcp::ops::transactions::LIST;
    // 1. Whatever the query, no panic; an accepted cursor is a genuine one.
    if let Ok(request) = ListRequest::from_query(&pairs(&get(0))) {
        if let Ok(compiled) = spec.compile(&request, "ws", KEY) {
            assert!(compiled.sql.starts_with("WHERE financial_transactions.workspace_id = $1"), "{}", compiled.sql);
            assert!((1..=list::MAX_LIMIT).contains(&compiled.limit));
            if let Some(cursor) = &request.cursor {
                let n = compiled.binds.len();
                let (value, id) = match (&compiled.binds[n - 2], &compiled.binds[n - 1]) {
                    (Bind::Text(v), Bind::Text(id)) => (Value::String(v.clone()), id.clone()),
                    (Bind::Int(v), Bind::Text(id)) => (Value::from(*v), id.clone()),
                    other => panic!("a cursor bound {other:?}"),
                };
                assert_eq!(
                    &list::encode_cursor(KEY, &compiled, value, &id),
                    cursor,
                    "a cursor the key did not sign was accepted"
                );
            }
        }
        let _ = spec.compile_ids(&request, "ws", KEY);
    }
    // 2. A genuine cursor round-trips, for the sort it was made for only.
    let sorts: Vec<&str> = spec.sorts.iter().map(|(name, _)| *name).collect();
    let sort = sorts[data.first().copied().unwrap_or(0) as usize % sorts.len()];
    let sort = if data.get(1).copied().unwrap_or(0) % 2 == 1 { format!("-{sort}") } else { sort.to_string() };
    let base = ListRequest { sort: Some(sort.clone()), ..ListRequest::default() };
    let Ok(first) = spec.compile(&base, "ws", KEY) else { panic!("sort {sort} refused") };
    let value = match get(2).parse::<i64>() {
        Ok(n) => Value::from(n),
        Err(_) => Value::String(get(2)),
    };
    let id = get(3);
    let cursor = list::encode_cursor(KEY, &first, value.clone(), &id);
    let next = spec
        .compile(&ListRequest { cursor: Some(cursor.clone()), ..base.clone() }, "ws", KEY)
        .expect("a genuine cursor is accepted");
    let n = next.binds.len();
    let expected_value = match &value {
        Value::String(s) => Bind::Text(s.clone()),
        v => Bind::Int(v.as_i64().unwrap_or_default()),
    };
    assert_eq!(next.binds[n - 2..], [expected_value, Bind::Text(id.clone())]);
    let flipped = if let Some(name) = sort.strip_prefix('-') { name.to_string() } else { format!("-{sort}") };
    assert!(spec
        .compile(
            &ListRequest { cursor: Some(cursor.clone()), sort: Some(flipped), ..ListRequest::default() },
            "ws",
            KEY
        )
        .is_err());
    for (position, byte) in tamperings(data, cursor.len()) {
        let mut tampered = cursor.clone().into_bytes();
        tampered[position] = byte;
        let Ok(tampered) = String::from_utf8(tampered) else { continue };
        if tampered != cursor {
            assert!(
                spec.compile(&ListRequest { cursor: Some(tampered.clone()), ..base.clone() }, "ws", KEY).is_err(),
                "tampered cursor accepted: {tampered:?}"
            );
        }
    }
}
