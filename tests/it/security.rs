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
            if body.contains("finance") || body.contains(DEMO_WORKSPACE_ACME) {
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

// ---------------------------------------------------------------------------------------
// Isolation
// ---------------------------------------------------------------------------------------

fn rest(method: Method, path: &str, token: &str, body: Option<Value>) -> http::Request<axum::body::Body> {
    let mut m = Mcp::raw(body.map(|b| b.to_string()).unwrap_or_default()).method(method).path(path).bearer(token);
    if !m.body.is_empty() {
        m = m.header("content-type", "application/json");
    }
    m.build()
}

/// One workspace's records: ids by resource, and strings only its data contains.
struct Tenant {
    owner: &'static str,
    workspace: &'static str,
    company: &'static str,
    account: String,
    category: &'static str,
    cost_center: &'static str,
    person: &'static str,
    tax: &'static str,
    payable: &'static str,
    receivable: &'static str,
    transaction: &'static str,
    transfer: String,
    attachment: &'static str,
    /// Names, descriptions, documents and amounts of its records.
    markers: Vec<&'static str>,
}

fn beta() -> Tenant {
    Tenant {
        owner: DEMO_BETA_OWNER,
        workspace: DEMO_WORKSPACE_BETA,
        company: BETA_COMPANY,
        account: BETA_ACCOUNT.into(),
        category: BETA_CATEGORY,
        cost_center: BETA_COST_CENTER,
        person: BETA_PERSON,
        tax: BETA_TAX,
        payable: BETA_PAYABLE,
        receivable: BETA_RECEIVABLE,
        transaction: BETA_SETTLEMENT_TRANSACTION,
        transfer: BETA_TRANSFER.into(),
        attachment: BETA_ATTACHMENT,
        markers: vec![
            "Beta Tecnologia S.A.",
            "Conta corrente Nubank",
            "Caixa Beta",
            "Infraestrutura em nuvem",
            "Engenharia Beta",
            "Nuvem Sul Hospedagem",
            "60456789000111",
            "PIS Beta",
            "Licenças de software",
            "990.00",
            "Consultoria Beta NF-77",
            "7777.00",
            "Suprimento do caixa Beta",
            "333.00",
            "nfse-beta-77.xml",
        ],
    }
}

fn acme(transfer: String) -> Tenant {
    Tenant {
        owner: DEMO_OWNER,
        workspace: DEMO_WORKSPACE_ACME,
        company: ACME_COMPANY,
        account: ACME_CHECKING_ACCOUNT.into(),
        category: ACME_RENT_CATEGORY,
        cost_center: ACME_ADMIN_COST_CENTER,
        person: ACME_LANDLORD,
        tax: ACME_IRRF_TAX,
        payable: ACME_RENT_NOVEMBER,
        receivable: ACME_SALE_PENDING,
        transaction: ACME_CAPITAL_CONTRIBUTION,
        transfer,
        attachment: ACME_RENT_RECEIPT,
        markers: vec![
            "Acme Comércio Ltda",
            "11222333000181",
            "Conta corrente Itaú",
            "Aluguel",
            "Administrativo",
            "Imobiliária Central",
            "IRRF",
            "4500.00",
            "Venda NF-1001",
            "12000.00",
            "Aporte dos sócios",
            "2000.00",
            "Troco do caixa Acme",
            "123.45",
            "recibo-aluguel-novembro.pdf",
        ],
    }
}

/// What a caller may send at the other workspace's records: every `/v1` route that
/// takes an id (reads, updates, deletes, actions), and lists naming its workspace.
fn calls_at(them: &Tenant, us: &Tenant) -> Vec<(Method, String, Option<Value>)> {
    let ws = them.workspace;
    let mut calls = Vec::new();
    let crud = [
        ("/v1/companies", them.company, json!({"name": "Mine"})),
        ("/v1/categories", them.category, json!({"name": "Mine"})),
        ("/v1/classification_centers", them.cost_center, json!({"name": "Mine"})),
        ("/v1/people", them.person, json!({"name": "Mine"})),
        ("/v1/taxes", them.tax, json!({"name": "Mine"})),
        ("/v1/financial-accounts", them.account.as_str(), json!({"name": "Mine"})),
        ("/v1/financial-transactions", them.transaction, json!({"description": "Mine"})),
        ("/v1/payables", them.payable, json!({"description": "Mine"})),
        ("/v1/receivables", them.receivable, json!({"description": "Mine"})),
    ];
    for (base, id, patch) in crud {
        calls.push((Method::GET, format!("{base}/{id}"), None));
        calls.push((Method::GET, format!("{base}/{id}?workspace_id={ws}"), None));
        calls.push((Method::PATCH, format!("{base}/{id}"), Some(patch.clone())));
        calls.push((Method::PATCH, format!("{base}/{id}?workspace_id={ws}"), Some(patch)));
        calls.push((Method::DELETE, format!("{base}/{id}"), None));
        calls.push((Method::GET, format!("{base}?workspace_id={ws}"), None));
    }
    for base in ["/v1/payables", "/v1/receivables", "/v1/financial-transactions"] {
        calls.push((Method::GET, format!("{base}/aggregates?workspace_id={ws}"), None));
        calls.push((Method::GET, format!("{base}/ids?workspace_id={ws}"), None));
    }
    calls.push((Method::GET, format!("/v1/people/ids?workspace_id={ws}"), None));
    for (base, id) in [("/v1/payables", them.payable), ("/v1/receivables", them.receivable)] {
        calls.push((
            Method::POST,
            format!("{base}/{id}/settle"),
            Some(json!({"payment_date": "2026-12-01", "financial_account_id": us.account})),
        ));
        calls.push((Method::POST, format!("{base}/{id}/cancel"), None));
        calls.push((Method::POST, format!("{base}/{id}/reopen"), None));
    }
    calls.push((
        Method::POST,
        format!("/v1/financial-accounts/{}/adjust-balance", them.account),
        Some(json!({"target_balance": "1.00", "category_id": us.category, "occurred_at": "2026-12-01"})),
    ));
    calls.push((Method::GET, format!("/v1/transfers/{}", them.transfer), None));
    calls.push((Method::GET, format!("/v1/attachments/{}", them.attachment), None));
    calls.push((Method::GET, format!("/v1/attachments/{}/download", them.attachment), None));
    calls.push((Method::DELETE, format!("/v1/attachments/{}", them.attachment), None));
    calls.push((Method::GET, format!("/v1/attachments?workspace_id={ws}"), None));
    calls.push((
        Method::POST,
        format!("/v1/attachments/{}/links", them.attachment),
        Some(json!({"type": "payable", "id": us.payable})),
    ));
    calls.push((
        Method::DELETE,
        format!("/v1/attachments/{}/links", them.attachment),
        Some(json!({"type": "transaction", "id": them.transaction})),
    ));
    // Our own attachment pointed at their records.
    calls.push((
        Method::POST,
        format!("/v1/attachments/{}/links", us.attachment),
        Some(json!({"type": "payable", "id": them.payable})),
    ));
    calls.push((
        Method::POST,
        format!("/v1/attachments/{}/links", us.attachment),
        Some(json!({"type": "transaction", "id": them.transaction})),
    ));
    calls
}

/// Writes in our workspace that name their records: refused (not found, or an invalid
/// reference), never a record pointing into the other workspace.
fn references_to(them: &Tenant, us: &Tenant) -> Vec<(Method, String, Value)> {
    let bill = |extra: Value| {
        let mut body = json!({"company_id": us.company, "description": "Referência cruzada", "amount": "10.00", "due_date": "2026-12-20", "person_name": "Fornecedor"});
        for (k, v) in extra.as_object().unwrap() {
            match v {
                Value::Null => drop(body.as_object_mut().unwrap().remove(k)),
                v => body[k] = v.clone(),
            }
        }
        body
    };
    vec![
        (Method::POST, "/v1/payables".into(), bill(json!({"company_id": them.company}))),
        (Method::POST, "/v1/payables".into(), bill(json!({"person_id": them.person, "person_name": null}))),
        (Method::POST, "/v1/payables".into(), bill(json!({"category_id": them.category}))),
        (Method::POST, "/v1/payables".into(), bill(json!({"financial_account_id": them.account}))),
        (Method::POST, "/v1/receivables".into(), bill(json!({"company_id": them.company}))),
        (
            Method::POST,
            "/v1/transfers".into(),
            json!({"from_account_id": us.account, "to_account_id": them.account, "amount": "1.00", "occurred_at": "2026-12-01", "description": "Cruzada"}),
        ),
        (
            Method::POST,
            "/v1/transfers".into(),
            json!({"from_account_id": them.account, "to_account_id": us.account, "amount": "1.00", "occurred_at": "2026-12-01", "description": "Cruzada"}),
        ),
        (
            Method::POST,
            "/v1/financial-transactions".into(),
            json!({"company_id": us.company, "financial_account_id": them.account, "description": "x", "amount": "1.00", "occurred_at": "2026-12-01", "type": "debit"}),
        ),
        (
            Method::POST,
            "/v1/financial-accounts".into(),
            json!({"company_id": them.company, "name": "Conta cruzada", "type": "checking"}),
        ),
        (
            Method::POST,
            "/v1/categories".into(),
            json!({"company_id": us.company, "name": "Filha cruzada", "type": "debit", "parent_id": them.category}),
        ),
    ]
}

/// Their names, documents and amounts found in an answer (an id the caller sent may
/// be echoed in an error's details; a record's data may not).
fn leaks(body: &str, them: &Tenant) -> Vec<&'static str> {
    them.markers.iter().copied().filter(|m| body.contains(m)).collect()
}

/// Row counts, settled or cancelled bills, and records renamed by the refused updates.
async fn snapshot(h: &Harness) -> Vec<i64> {
    let mut statements: Vec<String> = [
        "billings",
        "financial_transactions",
        "financial_accounts",
        "categories",
        "classification_centers",
        "attachment_links",
        "attachments",
        "people",
        "taxes",
        "companies",
    ]
    .iter()
    .map(|table| format!("SELECT COUNT(*) FROM {table}"))
    .collect();
    statements.push(
        "SELECT COUNT(*) FROM billings WHERE status IN ('paid', 'received', 'cancelled') OR description = 'Mine'"
            .into(),
    );
    statements.push("SELECT COUNT(*) FROM financial_transactions WHERE description = 'Mine'".into());
    for table in ["companies", "categories", "classification_centers", "people", "taxes", "financial_accounts"] {
        statements.push(format!("SELECT COUNT(*) FROM {table} WHERE name = 'Mine'"));
    }
    let mut counts = Vec::new();
    for sql in statements {
        let row = sql::query(sql).fetch_one(&h.state.db).await.unwrap();
        counts.push(row.try_get::<i64, _>(0).unwrap());
    }
    counts
}

#[tokio::test]
async fn every_rest_route_with_the_other_workspaces_ids_is_not_found_and_leaks_nothing() {
    let h = Harness::with_demo().await;
    // Acme has no transfer in the demo: its owner makes one.
    let acme_token = h.api_token(DEMO_OWNER);
    let made = h
        .send(rest(
            Method::POST,
            "/v1/transfers",
            &acme_token,
            Some(json!({"from_account_id": ACME_CASH_ACCOUNT, "to_account_id": ACME_CHECKING_ACCOUNT,
                        "amount": "123.45", "occurred_at": "2026-11-30", "description": "Troco do caixa Acme"})),
        ))
        .await;
    assert_eq!(made.status, 201, "{}", String::from_utf8_lossy(&made.bytes));
    let acme = acme(made.json()["transfer_id"].as_str().unwrap().to_string());
    let beta = beta();
    let before = snapshot(&h).await;
    let mut failures = Vec::new();
    let mut tried = 0;
    for (us, them) in [(&acme, &beta), (&beta, &acme)] {
        let token = h.api_token(us.owner);
        // The record exists for its owner (so a 404 below is isolation, not absence).
        let theirs =
            h.send(rest(Method::GET, &format!("/v1/payables/{}", them.payable), &h.api_token(them.owner), None)).await;
        assert_eq!(theirs.status, 200, "{}", them.payable);
        for (method, path, body) in calls_at(them, us) {
            tried += 1;
            let reply = h.send(rest(method.clone(), &path, &token, body)).await;
            let text = String::from_utf8_lossy(&reply.bytes).to_string();
            let code =
                serde_json::from_str::<Value>(&text).ok().and_then(|v| v["error"]["code"].as_str().map(str::to_string));
            if reply.status != 404 || code.as_deref() != Some("not_found") {
                failures.push(format!("{} {method} {path}: {} {text}", us.owner, reply.status));
            }
            let leaked = leaks(&text, them);
            if !leaked.is_empty() {
                failures.push(format!("{} {method} {path} leaks {leaked:?}: {text}", us.owner));
            }
        }
        for (method, path, body) in references_to(them, us) {
            tried += 1;
            let reply = h.send(rest(method.clone(), &path, &token, Some(body.clone()))).await;
            let text = String::from_utf8_lossy(&reply.bytes).to_string();
            let json: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            let refused = match reply.status.as_u16() {
                404 => json["error"]["code"] == "not_found",
                422 => json["error"]["details"]["reason"] == "invalid_reference",
                _ => false,
            };
            if !refused {
                failures.push(format!("{} {method} {path} {body}: {} {text}", us.owner, reply.status));
            }
            let leaked = leaks(&text, them);
            if !leaked.is_empty() {
                failures.push(format!("{} {method} {path} leaks {leaked:?}: {text}", us.owner));
            }
        }
        // Our own lists, unfiltered or filtered by their ids, show none of their records.
        for path in [
            "/v1/companies".to_string(),
            "/v1/categories".to_string(),
            "/v1/classification_centers".to_string(),
            "/v1/people".to_string(),
            "/v1/taxes".to_string(),
            "/v1/financial-accounts".to_string(),
            "/v1/financial-transactions?limit=100".to_string(),
            format!("/v1/financial-transactions?financial_account_id={}", them.account),
            "/v1/payables?limit=100".to_string(),
            format!("/v1/payables?company_id={}", them.company),
            "/v1/receivables?limit=100".to_string(),
            "/v1/payables/aggregates".to_string(),
            "/v1/receivables/aggregates".to_string(),
            "/v1/financial-transactions/aggregates".to_string(),
            "/v1/payables/ids".to_string(),
            "/v1/attachments".to_string(),
            "/v1/workspaces".to_string(),
        ] {
            tried += 1;
            let reply = h.send(rest(Method::GET, &path, &token, None)).await;
            let text = String::from_utf8_lossy(&reply.bytes).to_string();
            if reply.status != 200 {
                failures.push(format!("{} GET {path}: {} {text}", us.owner, reply.status));
            }
            let mut leaked = leaks(&text, them);
            for id in [them.payable, them.receivable, them.transaction, them.attachment, them.person] {
                if text.contains(id) {
                    leaked.push("one of their ids");
                }
            }
            if !leaked.is_empty() {
                failures.push(format!("{} GET {path} leaks {leaked:?}: {text}", us.owner));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {tried} call(s) crossed the workspace boundary:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(tried >= 150, "{tried}");
    assert_eq!(snapshot(&h).await, before, "nothing changed in either workspace");
}

/// An idempotency key is the caller's own: another tenant sending the same key (and
/// the same body) gets its own record, never a replay of someone else's response.
#[tokio::test]
async fn idempotency_keys_do_not_cross_workspaces() {
    let h = Harness::new().await;
    let body = |company: &str| json!({"company_id": company, "description": "Chave compartilhada", "amount": "10.00", "due_date": "2026-12-20", "person_name": "Fornecedor"});
    let send = |token: String, company: &'static str| {
        let m = Mcp::raw(body(company).to_string())
            .method(Method::POST)
            .path("/v1/payables")
            .bearer(&token)
            .header("content-type", "application/json")
            .header("x-idempotency-key", "same-key-for-everyone");
        m.build()
    };
    let ours = h.send(send(h.api_token(DEMO_OWNER), ACME_COMPANY)).await;
    assert_eq!(ours.status, 201);
    let theirs = h.send(send(h.api_token(DEMO_BETA_OWNER), BETA_COMPANY)).await;
    assert_eq!(theirs.status, 201, "{}", String::from_utf8_lossy(&theirs.bytes));
    assert!(theirs.header("x-idempotency-replayed").is_none());
    assert_ne!(theirs.json()["id"], ours.json()["id"]);
    assert_eq!(theirs.json()["company_id"], BETA_COMPANY);
    // And the Beta owner sending Acme's exact request is refused, not replayed.
    let replay = h.send(send(h.api_token(DEMO_BETA_OWNER), ACME_COMPANY)).await;
    assert!(
        !String::from_utf8_lossy(&replay.bytes).contains(ours.json()["id"].as_str().unwrap()),
        "no replay of another tenant's answer"
    );
}

/// Every tool that takes an id or a workspace, called by one owner with the other
/// workspace's ids: not found, nothing of theirs in the result. The table follows the
/// catalogue: a tool added later is covered by the same rule.
#[tokio::test]
async fn every_tool_with_the_other_workspaces_ids_is_not_found_and_leaks_nothing() {
    let h = Harness::with_demo().await;
    let acme = acme(String::from("7f000000-0000-4000-8000-00000000aaaa"));
    let beta = beta();
    let mut failures = Vec::new();
    let mut called = 0;
    for (us, them) in [(&acme, &beta), (&beta, &acme)] {
        let token = h.token(us.owner);
        let list = h.send(Mcp::modern("tools/list", json!({})).bearer(&token).build()).await.result();
        for tool in list["tools"].as_array().unwrap() {
            let name = tool["name"].as_str().unwrap();
            let properties = &tool["inputSchema"]["properties"];
            let resource = name.trim_start_matches("finance_").rsplit_once('_').map(|(r, _)| r).unwrap_or_default();
            let id = match resource {
                "companies" => Some(them.company.to_string()),
                "accounts" => Some(them.account.clone()),
                "categories" => Some(them.category.to_string()),
                "cost_centers" => Some(them.cost_center.to_string()),
                "people" => Some(them.person.to_string()),
                "taxes" => Some(them.tax.to_string()),
                "transactions" => Some(them.transaction.to_string()),
                "transfers" => Some(them.transfer.clone()),
                "payables" => Some(them.payable.to_string()),
                "receivables" => Some(them.receivable.to_string()),
                "attachments" => Some(them.attachment.to_string()),
                _ => None,
            };
            let mut arguments = serde_json::Map::new();
            if properties.get("id").is_some() {
                arguments.insert("id".into(), json!(id));
            } else if properties.get("attachment_id").is_some() {
                arguments.insert("attachment_id".into(), json!(them.attachment));
            } else if properties.get("workspace_id").is_some() {
                arguments.insert("workspace_id".into(), json!(them.workspace));
            } else {
                continue;
            }
            called += 1;
            let mut params = json!({"name": name, "arguments": arguments});
            params["_meta"] = meta();
            params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {"form": {}}});
            let request =
                Mcp::raw(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).to_string())
                    .header("content-type", "application/json")
                    .header("mcp-protocol-version", "2026-07-28")
                    .header("mcp-method", "tools/call")
                    .header("mcp-name", name)
                    .bearer(&token);
            let reply = h.send(request.build()).await;
            let text = String::from_utf8_lossy(&reply.bytes).to_string();
            let result = reply.json()["result"].clone();
            let code = result["structuredContent"]["error"]["code"].as_str().map(str::to_string).or_else(|| {
                result["content"][0]["text"]
                    .as_str()
                    .and_then(|t| serde_json::from_str::<Value>(t).ok())
                    .and_then(|v| v["error"]["code"].as_str().map(str::to_string))
            });
            // A tool that needs more arguments than these may refuse them by its schema
            // (bad_request) first; one that has all it requires must answer not found.
            let complete = tool["inputSchema"]["required"]
                .as_array()
                .is_none_or(|r| r.iter().all(|k| arguments.contains_key(k.as_str().unwrap_or_default())));
            let allowed: &[&str] = if complete { &["not_found"] } else { &["not_found", "bad_request"] };
            let refused = result["isError"] == json!(true) && code.as_deref().is_some_and(|c| allowed.contains(&c));
            if reply.status != 200 || !refused {
                failures.push(format!("{} {name}: {} {text}", us.owner, reply.status));
            }
            let leaked = leaks(&text, them);
            if !leaked.is_empty() {
                failures.push(format!("{} {name} leaks {leaked:?}: {text}", us.owner));
            }
        }
    }
    assert!(called >= 4, "{called} tools called");
    assert!(
        failures.is_empty(),
        "{} tool call(s) crossed the workspace boundary:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------------------
// Huge tokens over real TCP
// ---------------------------------------------------------------------------------------

/// Sends one request over a fresh connection and returns the status line's code, or
/// `None` when the server closed the connection without an answer.
async fn over_tcp(addr: std::net::SocketAddr, request: Vec<u8>) -> Option<u16> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.ok()?;
    // The server may answer (and close) before it has read everything: a failed write
    // is not the answer, the bytes read back are.
    let _ = stream.write_all(&request).await;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout(std::time::Duration::from_secs(10), stream.read(&mut chunk)).await.ok()?.ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    String::from_utf8_lossy(&buf).split(' ').nth(1)?.parse().ok()
}

#[tokio::test]
async fn huge_tokens_are_refused_cleanly_over_tcp() {
    let h = Harness::new().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = h.app.clone();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    let mcp = |token: &str| {
        format!(
            "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer {token}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    };
    let rest = |token: &str| {
        format!("GET /v1/workspaces HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\r\n").into_bytes()
    };
    let genuine_mcp = h.token(DEMO_OWNER);
    let genuine_api = h.api_token(DEMO_OWNER);
    assert_eq!(over_tcp(addr, mcp(&genuine_mcp)).await, Some(200));
    assert_eq!(over_tcp(addr, rest(&genuine_api)).await, Some(200));
    // 100 KB: read, and refused by the verifier's size check.
    let padded = format!("{genuine_mcp}{}", "A".repeat(100 * 1024));
    assert_eq!(over_tcp(addr, mcp(&padded)).await, Some(401));
    assert_eq!(over_tcp(addr, rest(&format!("{genuine_api}{}", "A".repeat(100 * 1024)))).await, Some(401));
    // 1 MB: beyond what the HTTP layer buffers for a request head — refused there
    // (431) or the connection is closed; never a 5xx, and the server keeps serving.
    for request in [mcp(&"A".repeat(1 << 20)), rest(&"A".repeat(1 << 20))] {
        let status = over_tcp(addr, request).await;
        assert!(matches!(status, None | Some(400 | 401 | 431)), "{status:?}");
    }
    assert_eq!(over_tcp(addr, mcp(&genuine_mcp)).await, Some(200));
}
