//! The security suite: a table of token attacks, each refused with 401 on both doors
//! (the MCP endpoint and `/v1`); the `Origin` allowlist; and tenant isolation — every
//! `/v1` route (and every tool that takes an id or a workspace) called by one
//! workspace's owner with the other workspace's ids answers not found, and the answer
//! carries none of the other workspace's data.

use crate::common;

use aws_lc_rs::hmac;
use base64::Engine;
use common::*;
use http::Method;
use kobana_finance_mcp::storage::seed::{
    BETA_ACCOUNT, BETA_ATTACHMENT, BETA_CATEGORY, BETA_COST_CENTER, BETA_PAYABLE, BETA_PERSON, BETA_RECEIVABLE,
    BETA_SETTLEMENT_TRANSACTION, BETA_TAX, BETA_TRANSFER,
};
use serde_json::{json, Value};

// ---------------------------------------------------------------------------------------
// Token attacks
// ---------------------------------------------------------------------------------------

/// Which door a request goes through.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Door {
    Mcp,
    Rest,
}

impl Door {
    /// The audience a genuine token for this door carries.
    fn audience(self) -> String {
        match self {
            Door::Mcp => PUBLIC_URL.to_string(),
            Door::Rest => format!("{PUBLIC_URL}/v1"),
        }
    }

    fn other(self) -> Door {
        match self {
            Door::Mcp => Door::Rest,
            Door::Rest => Door::Mcp,
        }
    }
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn now() -> u64 {
    kobana_finance_mcp::clock::now_unix() as u64
}

/// The claims of a genuine token for `door`, to be spoiled by an attack.
fn claims(door: Door) -> Value {
    json!({
        "iss": PUBLIC_URL,
        "aud": door.audience(),
        "sub": DEMO_OWNER,
        "scope": "finance.all",
        "exp": now() + 600,
        "iat": now(),
        "jti": uuid::Uuid::new_v4().to_string(),
    })
}

/// A JWT with exactly this header and payload, signed with HMAC-SHA512 under `key`
/// (hand-made, so an attack controls every byte).
fn forge(header: &Value, payload: &Value, key: &[u8]) -> String {
    let signing_input = format!("{}.{}", b64(header.to_string().as_bytes()), b64(payload.to_string().as_bytes()));
    let tag = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA512, key), signing_input.as_bytes());
    format!("{signing_input}.{}", b64(tag.as_ref()))
}

fn hs512() -> Value {
    json!({"alg": "HS512", "typ": "JWT"})
}

/// A genuine token (the control row: it must pass, or the table proves nothing).
fn genuine(door: Door) -> String {
    forge(&hs512(), &claims(door), SECRET.as_bytes())
}

fn without(mut claims: Value, key: &str) -> Value {
    claims.as_object_mut().unwrap().remove(key);
    claims
}

fn with(mut claims: Value, key: &str, value: Value) -> Value {
    claims[key] = value;
    claims
}

/// How an attack presents itself: the `Authorization` header and the path's query.
struct Attack {
    name: &'static str,
    authorization: Option<String>,
    query: &'static str,
}

fn bearer(name: &'static str, token: String) -> Attack {
    Attack { name, authorization: Some(format!("Bearer {token}")), query: "" }
}

/// Every attack on `door`. Each must be answered 401.
fn attacks(door: Door) -> Vec<Attack> {
    let secret = SECRET.as_bytes();
    let valid = || claims(door);
    let signed = |payload: Value| forge(&hs512(), &payload, secret);
    let unsigned = |header: Value, payload: Value| {
        format!("{}.{}.", b64(header.to_string().as_bytes()), b64(payload.to_string().as_bytes()))
    };
    let hs = |alg: jsonwebtoken::Algorithm| {
        jsonwebtoken::encode(
            &jsonwebtoken::Header::new(alg),
            &valid(),
            &jsonwebtoken::EncodingKey::from_secret(secret).unwrap(),
        )
        .unwrap()
    };
    // A genuine read-only token whose payload is rewritten: scope escalated, then the
    // subject swapped for the other workspace's owner; the signature is kept.
    let tampered = |edit: fn(&mut Value)| {
        let token = genuine(door);
        let mut parts = token.split('.');
        let (header, _, signature) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
        let mut payload = claims(door);
        edit(&mut payload);
        format!("{header}.{}.{signature}", b64(payload.to_string().as_bytes()))
    };
    let spliced = {
        let one = genuine(door);
        let other = forge(&hs512(), &with(valid(), "sub", json!(DEMO_BETA_OWNER)), secret);
        let signature = other.rsplit('.').next().unwrap().to_string();
        format!("{}.{signature}", one.rsplit_once('.').unwrap().0)
    };
    let mut table = vec![
        bearer("alg none", unsigned(json!({"alg": "none", "typ": "JWT"}), valid())),
        bearer("alg None (capitalised)", unsigned(json!({"alg": "None", "typ": "JWT"}), valid())),
        bearer("alg none with a signature", format!("{}sig", unsigned(json!({"alg": "none"}), valid()))),
        bearer("HS256 signed with the server's secret", hs(jsonwebtoken::Algorithm::HS256)),
        bearer("HS384 signed with the server's secret", hs(jsonwebtoken::Algorithm::HS384)),
        bearer(
            "kid pointing at no key, signed with the attacker's key",
            forge(&json!({"alg": "HS512", "kid": "no-such-key"}), &valid(), b"attacker"),
        ),
        bearer(
            "kid naming a file, signed with its (empty) content",
            forge(&json!({"alg": "HS512", "kid": "../../../../../../dev/null"}), &valid(), b""),
        ),
        bearer(
            "kid naming the previous key, signed with another key",
            forge(&json!({"alg": "HS512", "kid": "previous"}), &valid(), b"another-secret"),
        ),
        bearer(
            "kid as an SQL injection",
            forge(&json!({"alg": "HS512", "kid": "x' UNION SELECT 'attacker' --"}), &valid(), b"attacker"),
        ),
        bearer(
            "embedded jwk with the attacker's key",
            forge(&json!({"alg": "HS512", "jwk": {"kty": "oct", "k": b64(b"attacker")}}), &valid(), b"attacker"),
        ),
        bearer(
            "jku pointing at the attacker's key set",
            forge(&json!({"alg": "HS512", "jku": "http://127.0.0.1:9/keys.json"}), &valid(), b"attacker"),
        ),
        bearer("signed with an empty key", forge(&hs512(), &valid(), b"")),
        bearer("signed with another secret", forge(&hs512(), &valid(), b"test-signing-secret-2")),
        bearer("signature stripped", format!("{}.", genuine(door).rsplit_once('.').unwrap().0)),
        bearer("signature of another token", spliced),
        bearer(
            "tampered payload: scope escalated, signature kept",
            tampered(|c| c["scope"] = json!(kobana_finance_mcp::domain::roles::all_scopes().join(" "))),
        ),
        bearer("tampered payload: subject swapped, signature kept", tampered(|c| c["sub"] = json!(DEMO_BETA_OWNER))),
        bearer("wrong aud", signed(with(valid(), "aud", json!("https://evil.example.com")))),
        bearer(
            "aud list without this server",
            signed(with(valid(), "aud", json!(["https://evil.example.com", "https://other.example.com"]))),
        ),
        bearer("aud with a trailing slash", signed(with(valid(), "aud", json!(format!("{}/", door.audience()))))),
        bearer("missing aud", signed(without(valid(), "aud"))),
        bearer("wrong iss", signed(with(valid(), "iss", json!("https://evil.example.com")))),
        bearer("missing iss", signed(without(valid(), "iss"))),
        bearer("missing sub", signed(without(valid(), "sub"))),
        bearer("blank sub", signed(with(valid(), "sub", json!("  ")))),
        bearer("missing exp", signed(without(valid(), "exp"))),
        bearer("exp not a number", signed(with(valid(), "exp", json!("tomorrow")))),
        bearer("expired beyond the 60 s leeway", signed(with(valid(), "exp", json!(now() - 120)))),
        bearer("expired long ago", signed(with(valid(), "exp", json!(1_000_000)))),
        bearer("not yet valid (nbf in an hour)", signed(with(valid(), "nbf", json!(now() + 3600)))),
        bearer("the other door's token", forge(&hs512(), &claims(door.other()), secret)),
        bearer("huge token (100 KB)", format!("{}{}", genuine(door), "A".repeat(100 * 1024))),
        bearer(
            "huge claims (100 KB scope), genuinely signed",
            signed(with(valid(), "scope", json!("finance.all ".repeat(8 * 1024)))),
        ),
        bearer("three dots", "a.b.c.d".to_string()),
        bearer("not base64", "!!!.???.***".to_string()),
        bearer("empty segments", "..".to_string()),
        bearer("header not JSON", format!("{}.{}.sig", b64(b"not json"), b64(valid().to_string().as_bytes()))),
        Attack { name: "empty bearer", authorization: Some("Bearer ".into()), query: "" },
        Attack { name: "Basic credentials", authorization: Some("Basic YWRtaW46YWRtaW4=".into()), query: "" },
        Attack { name: "token without a scheme", authorization: Some(genuine(door)), query: "" },
    ];
    // Revocation: a genuinely signed token whose jti is on the deny list.
    table.push(bearer("revoked jti", signed(with(valid(), "jti", json!(REVOKED_JTI)))));
    // The query string is never a place for a token.
    table.push(Attack { name: "token in the query string (access_token)", authorization: None, query: "access_token" });
    table
}

const REVOKED_JTI: &str = "security-suite-revoked";

fn request(door: Door, attack: &Attack, token_for_query: &str) -> http::Request<axum::body::Body> {
    let query = if attack.query.is_empty() { String::new() } else { format!("?{}={token_for_query}", attack.query) };
    let mut m = match door {
        Door::Mcp => Mcp::modern("server/discover", json!({})).path(&format!("/{query}")),
        Door::Rest => Mcp::raw("").method(Method::GET).path(&format!("/v1/workspaces{query}")),
    };
    if let Some(authorization) = &attack.authorization {
        m = m.header("authorization", authorization);
    }
    m.build()
}

#[tokio::test]
async fn every_token_attack_is_refused_with_401_on_both_doors() {
    let h = Harness::new().await;
    kobana_finance_mcp::storage::identity::revoke(&h.state.db, REVOKED_JTI).await.unwrap();
    let mut failures = Vec::new();
    let mut tried = 0;
    for door in [Door::Mcp, Door::Rest] {
        let control = h.send(request(door, &bearer("genuine", genuine(door)), "")).await;
        assert_eq!(
            control.status,
            200,
            "{door:?}: the genuine token must pass: {}",
            String::from_utf8_lossy(&control.bytes)
        );
        for attack in attacks(door) {
            tried += 1;
            let reply = h.send(request(door, &attack, &genuine(door))).await;
            let challenge = reply.header("www-authenticate").unwrap_or_default().to_string();
            let body = String::from_utf8_lossy(&reply.bytes).to_string();
            let mut problems = Vec::new();
            if reply.status != 401 {
                problems.push(format!("status {}", reply.status));
            }
            if !challenge.starts_with("Bearer resource_metadata=") {
                problems.push(format!("challenge {challenge:?}"));
            }
            match door {
                Door::Mcp if reply.json().get("error").is_none() => problems.push("no JSON-RPC error".into()),
                Door::Rest if reply.json()["error"]["code"] != "invalid_token" => {
                    problems.push("code is not invalid_token".into())
                }
                _ => {}
            }
            // No tool (`finance_…`), scope (`finance.…`) or workspace: a refusal may name
            // the command that mints a token (`kobana-finance-mcp token`), nothing more.
            if body.contains("finance_") || body.contains("finance.") || body.contains(DEMO_WORKSPACE_ACME) {
                problems.push("the answer carries data".into());
            }
            if !problems.is_empty() {
                failures.push(format!("{door:?} / {}: {} — {body}", attack.name, problems.join("; ")));
            }
        }
    }
    assert!(tried >= 80, "{tried} attacks");
    assert!(failures.is_empty(), "{} attack(s) not refused:\n{}", failures.len(), failures.join("\n"));
}

/// A token is refused as a whole: a door's genuine token keeps working after every
/// attack (nothing an attack sent was cached as the caller's identity).
#[tokio::test]
async fn attacks_leave_genuine_tokens_working() {
    let h = Harness::new().await;
    for door in [Door::Mcp, Door::Rest] {
        for attack in attacks(door).into_iter().take(5) {
            assert_eq!(h.send(request(door, &attack, "")).await.status, 401, "{}", attack.name);
        }
        assert_eq!(h.send(request(door, &bearer("genuine", genuine(door)), "")).await.status, 200);
    }
}

// ---------------------------------------------------------------------------------------
// Origin
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn foreign_origins_are_refused_before_anything_else() {
    let h = Harness::new().await;
    let token = h.token(DEMO_OWNER);
    let discover =
        |origin: &str| Mcp::modern("server/discover", json!({})).bearer(&token).header("origin", origin).build();
    for origin in [
        "https://evil.example.com",
        "null",
        "https://app.kobana.com.br.evil.com",
        "https://evil.com/https://app.kobana.com.br",
        "http://app.kobana.com.br",
        "https://app.kobana.com.br:8443",
        "http://localhost.evil.com",
        "http://127.0.0.1.evil.com",
        "http://[::1].evil.com",
        "file://localhost",
        "http://0.0.0.0:8080",
        "",
    ] {
        let reply = h.send(discover(origin)).await;
        assert_eq!(reply.status, 403, "{origin:?}");
        assert!(
            !String::from_utf8_lossy(&reply.bytes).contains("kobana-finance"),
            "{origin:?}: the answer reveals nothing"
        );
    }
    // A foreign Origin is refused even without a token (step 2 comes before step 3).
    let anonymous =
        h.send(Mcp::modern("server/discover", json!({})).header("origin", "https://evil.example.com").build()).await;
    assert_eq!(anonymous.status, 403);
    for origin in [
        "https://app.kobana.com.br",
        "https://APP.kobana.com.br",
        "https://app.kobana.com.br/",
        "http://localhost:6274",
        "http://127.0.0.1:8080",
    ] {
        assert_eq!(h.send(discover(origin)).await.status, 200, "{origin:?}");
    }
    // Outside local mode, loopback origins are foreign too.
    let production = Harness::with(|c| c.mode = kobana_finance_mcp::config::Mode::Lambda).await;
    let token = production.token(DEMO_OWNER);
    let reply = production
        .send(
            Mcp::modern("server/discover", json!({})).bearer(&token).header("origin", "http://localhost:6274").build(),
        )
        .await;
    assert_eq!(reply.status, 403);
}

mod huge_tokens;
mod isolation;
