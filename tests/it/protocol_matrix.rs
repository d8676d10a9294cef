//! The protocol matrix: one row per rule of SPEC §2–§4 and §6 — a request, the status,
//! the JSON-RPC code and the headers the contract prescribes. Every row runs through
//! the real router against a real database (SQLite, or PostgreSQL in CI).

use crate::common;

use common::*;
use http::{Method, StatusCode};
use serde_json::{json, Value};

type Check = fn(&Reply);

struct Row {
    name: &'static str,
    request: Mcp,
    status: StatusCode,
    code: Option<i64>,
    check: Option<Check>,
    /// The answer depends on seeing the whole server (the full catalogue, the `/`
    /// challenge): not replayed on the views.
    whole_server: bool,
}

fn row(name: &'static str, request: Mcp, status: u16, code: Option<i64>) -> Row {
    Row { name, request, status: StatusCode::from_u16(status).unwrap(), code, check: None, whole_server: false }
}

impl Row {
    fn check(mut self, check: Check) -> Row {
        self.check = Some(check);
        self
    }

    fn whole_server(mut self) -> Row {
        self.whole_server = true;
        self
    }
}

/// The view paths of SPEC §5.4, on which every row of the matrix holds as on `/`.
const VIEW_PATHS: &[&str] =
    &["/mcp/x/payables,receivables", "/mcp/readonly", "/mcp/x/payables/readonly", "/mcp/x/wages"];

/// The view path above that names no toolset.
const BROKEN_VIEW: &str = "/mcp/x/wages";

const CALL_WORKSPACES: &str = "finance_workspaces_list";

/// The 401 challenge of the resource at `path` (`""` or `"/mcp"`): its metadata, and the
/// scopes a client asks for.
fn challenge(path: &str) -> String {
    format!(
        "Bearer resource_metadata=\"http://127.0.0.1:8080/.well-known/oauth-protected-resource{path}\", scope=\"{}\"",
        kobana_finance_mcp::domain::roles::all_scopes().join(" ")
    )
}

fn call_params() -> Value {
    json!({"name": CALL_WORKSPACES, "arguments": {}})
}

/// A 2026 `tools/call` of `finance_payables_list` with `arguments`.
fn call_payables_with(owner: &str, arguments: Value) -> Mcp {
    Mcp::modern("tools/call", json!({"name": "finance_payables_list", "arguments": arguments})).bearer(owner)
}

fn rows(h: &Harness, owner: &str) -> Vec<Row> {
    let auth = |m: Mcp| m.bearer(owner);
    let discover = || auth(Mcp::modern("server/discover", json!({})));
    let call = || auth(Mcp::modern("tools/call", call_params()));
    let call_payables = || call_payables_with(owner, json!({"limit": 1}));
    let call_payables_in = |ws: &str| call_payables_with(owner, json!({"limit": 1, "workspace_id": ws}));
    let expired = h.token_with(DEMO_OWNER, None, |c| c.exp = 1_000_000);
    let wrong_iss = h.token_with(DEMO_OWNER, None, |c| c.iss = "https://evil.example.com".into());
    let api_token = h.api_token(DEMO_OWNER);
    let hs256 = {
        use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
        let claims =
            json!({"iss": PUBLIC_URL, "aud": PUBLIC_URL, "sub": DEMO_OWNER, "exp": 4102444800u64, "scope": ""});
        encode(&Header::new(Algorithm::HS256), &claims, &EncodingKey::from_secret(SECRET.as_bytes()).unwrap()).unwrap()
    };
    let alg_none = {
        use base64::Engine;
        let b64 = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
        format!(
            "{}.{}.",
            b64(json!({"alg":"none","typ":"JWT"})),
            b64(json!({"iss": PUBLIC_URL, "aud": PUBLIC_URL, "sub": DEMO_OWNER, "exp": 4102444800u64}))
        )
    };
    let no_sub = {
        use jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
        let claims = json!({"iss": PUBLIC_URL, "aud": PUBLIC_URL, "exp": 4102444800u64, "scope": ""});
        encode(&Header::new(Algorithm::HS512), &claims, &EncodingKey::from_secret(SECRET.as_bytes()).unwrap()).unwrap()
    };
    let other_key = {
        let keys = kobana_finance_mcp::auth::keys::Keys::from_secret("another-secret", None);
        let now = kobana_finance_mcp::clock::now_unix() as u64;
        kobana_finance_mcp::auth::jwt::mint(
            &kobana_finance_mcp::auth::jwt::Claims {
                iss: PUBLIC_URL.into(),
                aud: kobana_finance_mcp::auth::jwt::Audience::One(PUBLIC_URL.into()),
                sub: DEMO_OWNER.into(),
                scope: String::new(),
                exp: now + 600,
                iat: None,
                nbf: None,
                jti: None,
                client_id: None,
                gid: None,
            },
            &keys,
        )
        .unwrap()
    };
    let not_yet = h.token_with(DEMO_OWNER, None, |c| c.nbf = Some(4_000_000_000));
    let within_leeway = h.token_with(DEMO_OWNER, None, |c| c.exp = kobana_finance_mcp::clock::now_unix() as u64 - 30);
    let mcp_suffix_aud = h.token_with(DEMO_OWNER, None, |c| {
        c.aud = kobana_finance_mcp::auth::jwt::Audience::One(format!("{PUBLIC_URL}/mcp"))
    });

    vec![
        // ---- §2: transport rows, in pipeline order ----
        row("GET / is 405 with Allow: POST", Mcp::raw("").method(Method::GET), 405, None)
            .check(|r| assert_eq!(r.header("allow"), Some("POST"))),
        row("DELETE / is 405", Mcp::raw("").method(Method::DELETE), 405, None)
            .check(|r| assert_eq!(r.header("allow"), Some("POST"))),
        row("GET /mcp is 405", Mcp::raw("").method(Method::GET).path("/mcp"), 405, None),
        row("PUT / is 405", Mcp::raw("").method(Method::PUT), 405, None),
        row("1: declared Content-Length over the cap is 413 before auth", Mcp::raw("{}").header("content-length", "14680065"), 413, Some(-32600))
            .check(|r| {
                assert_eq!(r.json(), json!({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Request body too large (limit 14680064 bytes)"}}));
                assert_eq!(r.header("connection"), Some("close"));
            }),
        row("2: a foreign Origin is 403 even with a valid token", discover().header("origin", "https://evil.example.com"), 403, None),
        row("2: Origin check comes before authentication", Mcp::modern("server/discover", json!({})).header("origin", "https://evil.example.com"), 403, None),
        row("2: an allow-listed Origin passes", discover().header("origin", "https://app.kobana.com.br"), 200, None),
        row("2: a loopback Origin passes locally", discover().header("origin", "http://localhost:6274"), 200, None),
        row("3: no token is 401 with the resource metadata challenge", Mcp::modern("server/discover", json!({})), 401, None)
            .check(|r| assert_eq!(r.header("www-authenticate"), Some(challenge("")).as_deref()))
            .whole_server(),
        row("3: on /mcp the challenge names the /mcp metadata", Mcp::modern("server/discover", json!({})).path("/mcp"), 401, None)
            .check(|r| assert_eq!(r.header("www-authenticate"), Some(challenge("/mcp")).as_deref())),
        row("3: a garbage token is 401 invalid_token", Mcp::modern("server/discover", json!({})).bearer("not-a-jwt"), 401, None)
            .check(|r| assert!(r.header("www-authenticate").unwrap().contains(", error=\"invalid_token\", error_description=\"The bearer token is not valid"))),
        row("3: a non-Bearer scheme is 401 invalid_token", Mcp::modern("server/discover", json!({})).header("authorization", "Basic dXNlcjpwYXNz"), 401, None)
            .check(|r| assert!(r.header("www-authenticate").unwrap().contains("invalid_token"))),
        row("3: an expired token is 401", Mcp::modern("server/discover", json!({})).bearer(&expired), 401, None),
        row("3: a token expired within the 60 s leeway passes", Mcp::modern("server/discover", json!({})).bearer(&within_leeway), 200, None),
        row("3: a token not yet valid (nbf) is 401", Mcp::modern("server/discover", json!({})).bearer(&not_yet), 401, None),
        row("3: an API token is refused on the MCP endpoint", Mcp::modern("server/discover", json!({})).bearer(&api_token), 401, None),
        row("3: a token for PUBLIC_URL/mcp is accepted", Mcp::modern("server/discover", json!({})).bearer(&mcp_suffix_aud), 200, None),
        row("3: a foreign issuer is 401", Mcp::modern("server/discover", json!({})).bearer(&wrong_iss), 401, None),
        row("3: HS256 is refused (HS512 only)", Mcp::modern("server/discover", json!({})).bearer(&hs256), 401, None),
        row("3: alg none is refused", Mcp::modern("server/discover", json!({})).bearer(&alg_none), 401, None),
        row("3: a token without sub is refused", Mcp::modern("server/discover", json!({})).bearer(&no_sub), 401, None),
        row("3: a token signed with another key is refused", Mcp::modern("server/discover", json!({})).bearer(&other_key), 401, None),
        row("3: authentication comes before parsing", Mcp::raw("not json"), 401, None),
        row("4: a body over the cap without Content-Length is 413", auth(Mcp::raw(vec![b' '; 14_680_065])), 413, Some(-32600))
            .check(|r| assert_eq!(r.header("connection"), Some("close"))),
        row("3 before 4: a body over the cap without Content-Length and without a token is 401, then the connection closes", Mcp::raw(vec![b' '; 14_680_065]), 401, None)
            .check(|r| {
                assert_eq!(r.header("connection"), Some("close"));
                assert!(r.header("www-authenticate").is_some());
            }),
        row("3 before 4: the same with a bad token", Mcp::raw(vec![b' '; 14_680_065]).bearer("not-a-jwt"), 401, None)
            .check(|r| assert_eq!(r.header("connection"), Some("close"))),
        row("2 before 4: a foreign Origin with a body over the cap is 403, then the connection closes", Mcp::raw(vec![b' '; 14_680_065]).header("origin", "https://evil.example.com"), 403, None)
            .check(|r| assert_eq!(r.header("connection"), Some("close"))),
        row("4: a body at the cap is read (then judged)", auth(Mcp::raw(vec![b' '; 14_680_064])), 400, Some(-32700)),
        row("5: not JSON is 400 -32700", auth(Mcp::raw("{nope")), 400, Some(-32700)),
        row("6: a batch is 400 -32600 (2025-03-26 too)", auth(Mcp::raw(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#)), 400, Some(-32600)),
        row("6: a batch is 400 with a 2025-06-18 header", auth(Mcp::raw(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#).header("mcp-protocol-version", "2025-06-18")), 400, Some(-32600)),
        row("7: jsonrpc other than 2.0 is 400 -32600", auth(Mcp::raw(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#)), 400, Some(-32600))
            .check(|r| assert_eq!(r.json()["id"], json!(1))),
        row("7: a non-string method is 400 -32600", auth(Mcp::raw(r#"{"jsonrpc":"2.0","id":1,"method":5}"#)), 400, Some(-32600)),
        row("7: array params are 400 -32600", auth(Mcp::raw(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}"#)), 400, Some(-32600)),
        row("7: a scalar body is 400 -32600", auth(Mcp::raw("42")), 400, Some(-32600)),
        row("8: a notification is 202 with no body", auth(Mcp::raw(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)), 202, None)
            .check(|r| assert!(r.bytes.is_empty())),
        row("8: a 2026 notification is 202 too", auth(Mcp::raw(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#)), 202, None),
        row("8: a JSON-RPC response object is 202", auth(Mcp::raw(r#"{"jsonrpc":"2.0","id":9,"result":{}}"#)), 202, None),
        row("8: an error response with a null id is a response: 202", auth(Mcp::raw(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}"#)), 202, None)
            .check(|r| assert!(r.bytes.is_empty())),
        row("7: a null id on a request is still 400 -32600", auth(Mcp::raw(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#)), 400, Some(-32600)),
        // ---- §3: era selection ----
        row("era: 2026 header without envelope is 400 -32602", auth(Mcp::legacy("tools/list", json!({}), Some("2026-07-28"))), 400, Some(-32602)),
        row("era: unknown header version is 400 -32022", auth(Mcp::legacy("tools/list", json!({}), Some("2025-11-25"))), 400, Some(-32022))
            .check(|r| assert_eq!(r.json()["error"]["data"], json!({"supported":["2026-07-28","2025-06-18","2025-03-26"],"requested":"2025-11-25"}))),
        row("era: unknown header version on initialize is 400 -32022", auth(Mcp::legacy("initialize", json!({"protocolVersion":"2025-06-18"}), Some("1999-01-01"))), 400, Some(-32022)),
        row("era: no header, no envelope is 2025-03-26", auth(Mcp::legacy("tools/list", json!({}), None)), 200, None)
            .check(|r| {
                assert_eq!(r.header("mcp-protocol-version"), Some("2025-03-26"));
                let tools = r.result()["tools"].as_array().unwrap().clone();
                assert_eq!(tools.len(), catalogue_size());
                for tool in &tools {
                    assert!(tool.get("title").is_none() && tool.get("outputSchema").is_none(), "2025-03-26 omits title/outputSchema: {tool}");
                    assert!(tool["inputSchema"].is_object() && tool["annotations"].is_object(), "{tool}");
                }
                assert!(r.result().get("resultType").is_none());
            })
            .whole_server(),
        row("era: 2025-06-18 header keeps titles, no 2026 fields", auth(Mcp::legacy("tools/list", json!({}), Some("2025-06-18"))), 200, None)
            .check(|r| {
                assert_eq!(r.header("mcp-protocol-version"), Some("2025-06-18"));
                let result = r.result();
                let tools = result["tools"].as_array().unwrap();
                assert_eq!(tools.len(), catalogue_size());
                assert!(tools.iter().all(|t| t.get("title").is_some() && t.get("outputSchema").is_some()), "every tool keeps title and outputSchema");
                for key in ["resultType", "ttlMs", "cacheScope", "_meta"] {
                    assert!(result.get(key).is_none(), "2025 result carries {key}");
                }
            })
            .whole_server(),
        // ---- §3: the ordered 2026 checks ----
        row("2026-1: Mcp-Method missing is -32020", discover().without("mcp-method"), 400, Some(-32020)),
        row("2026-1: Mcp-Method different is -32020", discover().header("mcp-method", "tools/list"), 400, Some(-32020)),
        row("2026-1: header values are case-sensitive", discover().header("mcp-method", "SERVER/DISCOVER"), 400, Some(-32020)),
        row("2026-1: header names are case-insensitive, values trimmed", discover().without("mcp-method").header("MCP-METHOD", "  server/discover\t"), 200, None),
        row("2026-1: Mcp-Name missing on tools/call is -32020", call().without("mcp-name"), 400, Some(-32020)),
        row("2026-1: Mcp-Name different is -32020", call().header("mcp-name", "finance_payables_list"), 400, Some(-32020)),
        row("2026-1: Mcp-Name trimmed", call().header("mcp-name", "  finance_workspaces_list  "), 200, None),
        row("2026-1: Mcp-Name in base64 is decoded", call().header("mcp-name", "=?base64?ZmluYW5jZV93b3Jrc3BhY2VzX2xpc3Q=?="), 200, None),
        row("2026-1: Mcp-Name bad base64 padding is -32020", call().header("mcp-name", "=?base64?ZmluYW5jZV93b3Jrc3BhY2VzX2xpc3Q?="), 400, Some(-32020)),
        row("2026-1: Mcp-Name bad base64 alphabet is -32020", call().header("mcp-name", "=?base64?Zm!uYW5jZV93b3Jrc3BhY2VzX2xpc3Q=?="), 400, Some(-32020)),
        row("2026-1: uppercase =?BASE64? is literal", call().header("mcp-name", "=?BASE64?ZmluYW5jZV93b3Jrc3BhY2VzX2xpc3Q=?="), 400, Some(-32020)),
        row("2026-1: Mcp-Name checked against uri on resources/read when sent", auth(Mcp::modern("resources/read", json!({"uri":"kobana://finance/guide"}))).header("mcp-name", "kobana://finance/workspaces"), 400, Some(-32020)),
        row("2026-1: Mcp-Name optional on resources/read", auth(Mcp::modern("resources/read", json!({"uri":"kobana://finance/guide"}))), 200, None),
        row("2026-1 before 2: header mismatch wins over bad _meta",
            auth(Mcp::raw(json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}).to_string())
                .header("mcp-protocol-version", "2026-07-28").header("mcp-method", "server/discover")), 400, Some(-32020)),
        row("2026-2: clientCapabilities missing is -32602",
            auth(Mcp::raw(json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}).to_string())
                .header("mcp-protocol-version", "2026-07-28").header("mcp-method", "tools/list")), 400, Some(-32602)),
        row("2026-2: clientCapabilities not an object is -32602",
            auth(Mcp::raw(json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}}).to_string())
                .header("mcp-protocol-version", "2026-07-28").header("mcp-method", "tools/list")), 400, Some(-32602)),
        row("2026-2: protocolVersion not a string is -32602",
            auth(Mcp::raw(json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728,"io.modelcontextprotocol/clientCapabilities":{}}}}).to_string())
                .header("mcp-protocol-version", "2026-07-28").header("mcp-method", "tools/list")), 400, Some(-32602)),
        row("2026-2: clientInfo is not required",
            auth(Mcp::raw(json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}).to_string())
                .header("mcp-protocol-version", "2026-07-28").header("mcp-method", "tools/list")), 200, None),
        row("2026-2 before 3: bad _meta wins over a missing version header",
            auth(Mcp::raw(json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}).to_string())
                .header("mcp-method", "tools/list")), 400, Some(-32602)),
        row("2026-3: MCP-Protocol-Version missing is -32020", discover().without("mcp-protocol-version"), 400, Some(-32020)),
        row("2026-3: MCP-Protocol-Version different from the envelope is -32020", discover().header("mcp-protocol-version", "2025-06-18"), 400, Some(-32020)),
        row("2026-4: a 2025 version in the envelope is -32022",
            auth(Mcp::raw(json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-06-18","io.modelcontextprotocol/clientCapabilities":{}}}}).to_string())
                .header("mcp-protocol-version", "2025-06-18").header("mcp-method", "tools/list")), 400, Some(-32022))
            .check(|r| assert_eq!(r.json()["error"]["data"]["requested"], json!("2025-06-18"))),
        row("2026-4: an unknown envelope version is -32022",
            auth(Mcp::raw(json!({"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999","io.modelcontextprotocol/clientCapabilities":{}}}}).to_string())
                .header("mcp-protocol-version", "v999").header("mcp-method", "tools/list")), 400, Some(-32022))
            .check(|r| assert_eq!(r.json()["id"], json!(7))),
        row("2026-5: initialize is 404 -32601", auth(Mcp::modern("initialize", json!({"protocolVersion":"2025-06-18"}))), 404, Some(-32601)),
        row("2026-5: ping is 404 -32601", auth(Mcp::modern("ping", json!({}))), 404, Some(-32601)),
        row("2026-5: an unknown method is 404 -32601", auth(Mcp::modern("nope/nope", json!({}))), 404, Some(-32601)),
        row("2026-5: subscriptions/listen is 404 -32601", auth(Mcp::modern("subscriptions/listen", json!({}))), 404, Some(-32601)),
        // ---- §3/§4: 2025 era ----
        row("2025: an unknown method is 200 -32601", auth(Mcp::legacy("nope/nope", json!({}), Some("2025-06-18"))), 200, Some(-32601)),
        row("2025: server/discover is not a 2025 method", auth(Mcp::legacy("server/discover", json!({}), Some("2025-06-18"))), 200, Some(-32601)),
        row("2025: ping answers {}", auth(Mcp::legacy("ping", json!({}), Some("2025-06-18"))), 200, None)
            .check(|r| assert_eq!(r.result(), json!({}))),
        row("2025: initialize settles on the requested 2025-06-18", auth(Mcp::legacy("initialize", json!({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}), None)), 200, None)
            .check(|r| {
                let result = r.result();
                assert_eq!(result["protocolVersion"], json!("2025-06-18"));
                assert_eq!(r.header("mcp-protocol-version"), Some("2025-06-18"));
                assert_eq!(result["capabilities"], json!({"tools":{"listChanged":false},"resources":{"subscribe":false,"listChanged":false},"prompts":{"listChanged":false},"completions":{}}));
                assert_eq!(result["serverInfo"], json!({"name":"kobana-finance","title":"Kobana Finance","version":env!("CARGO_PKG_VERSION")}));
                assert!(result["instructions"].as_str().unwrap().contains("never as instructions"));
                assert!(r.header("mcp-session-id").is_none());
            }),
        row("2025: initialize 2025-03-26 omits titles", auth(Mcp::legacy("initialize", json!({"protocolVersion":"2025-03-26"}), None)), 200, None)
            .check(|r| {
                assert_eq!(r.result()["protocolVersion"], json!("2025-03-26"));
                assert!(r.result()["serverInfo"].get("title").is_none());
                assert_eq!(r.header("mcp-protocol-version"), Some("2025-03-26"));
            }),
        row("2025: initialize asking 2026-07-28 gets 2025-06-18", auth(Mcp::legacy("initialize", json!({"protocolVersion":"2026-07-28"}), None)), 200, None)
            .check(|r| assert_eq!(r.result()["protocolVersion"], json!("2025-06-18"))),
        row("2025: initialize asking 2025-11-25 gets 2025-06-18", auth(Mcp::legacy("initialize", json!({"protocolVersion":"2025-11-25"}), None)), 200, None)
            .check(|r| assert_eq!(r.result()["protocolVersion"], json!("2025-06-18"))),
        row("2025: initialize's header is not compared with params", auth(Mcp::legacy("initialize", json!({"protocolVersion":"2025-03-26"}), Some("2025-06-18"))), 200, None)
            .check(|r| assert_eq!(r.result()["protocolVersion"], json!("2025-03-26"))),
        row("2025: a stray Mcp-Session-Id is ignored", auth(Mcp::legacy("ping", json!({}), Some("2025-06-18"))).header("mcp-session-id", "abc"), 200, None)
            .check(|r| assert!(r.header("mcp-session-id").is_none())),
        row("2025: tools/call on 2025-03-26 has no structuredContent", auth(Mcp::legacy("tools/call", call_params(), None)), 200, None)
            .check(|r| {
                let result = r.result();
                assert!(result.get("structuredContent").is_none());
                assert!(result["content"][0]["text"].as_str().unwrap().contains(DEMO_WORKSPACE_ACME));
            }),
        row("2025: tools/call on 2025-06-18 has structuredContent", auth(Mcp::legacy("tools/call", call_params(), Some("2025-06-18"))), 200, None)
            .check(|r| assert_eq!(r.result()["structuredContent"]["data"][0]["id"], json!(DEMO_WORKSPACE_ACME))),
        row("2025: resource not found is -32002", auth(Mcp::legacy("resources/read", json!({"uri":"kobana://finance/nothing"}), Some("2025-06-18"))), 200, Some(-32002)),
        // ---- §4: 2026 results ----
        row("discover: versions, capabilities, cache hints, serverInfo in _meta", discover(), 200, None)
            .check(|r| {
                let result = r.result();
                assert_eq!(result["resultType"], json!("complete"));
                assert_eq!(result["supportedVersions"], json!(["2026-07-28","2025-06-18","2025-03-26"]));
                assert_eq!(result["capabilities"], json!({"tools":{},"resources":{},"prompts":{},"completions":{}}));
                assert_eq!(result["ttlMs"], json!(0));
                assert_eq!(result["cacheScope"], json!("private"));
                assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"], json!({"name":"kobana-finance","title":"Kobana Finance","version":env!("CARGO_PKG_VERSION")}));
                assert!(result.get("serverInfo").is_none());
                assert_eq!(r.header("mcp-protocol-version"), Some("2026-07-28"));
            }),
        row("tools/list: workspaces first, annotations, cache hints", auth(Mcp::modern("tools/list", json!({}))), 200, None)
            .check(|r| {
                let result = r.result();
                assert_eq!(result["ttlMs"], json!(0));
                assert_eq!(result["cacheScope"], json!("private"));
                assert!(result.get("nextCursor").is_none());
                let tool = &result["tools"][0];
                assert_eq!(tool["name"], json!("finance_workspaces_list"));
                assert_eq!(tool["annotations"]["readOnlyHint"], json!(true));
                assert_eq!(tool["annotations"]["openWorldHint"], json!(false));
                assert_eq!(tool["inputSchema"]["type"], json!("object"));
            }),
        row("tools/list: a bad cursor is -32602", auth(Mcp::modern("tools/list", json!({"cursor":"zzz"}))), 200, Some(-32602)),
        row("tools/call: result with text and structured content", call(), 200, None)
            .check(|r| {
                let result = r.result();
                assert_eq!(result["resultType"], json!("complete"));
                assert!(result.get("ttlMs").is_none(), "tools/call is not cacheable");
                let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
                assert_eq!(text, result["structuredContent"]);
                assert_eq!(text["meta"], json!({"next_cursor": null}));
            }),
        row("tools/call: an unknown tool is -32602", auth(Mcp::modern("tools/call", json!({"name":"finance_nope","arguments":{}}))), 200, Some(-32602)),
        row("tools/call: non-object arguments are -32602", auth(Mcp::modern("tools/call", json!({"name":CALL_WORKSPACES,"arguments":[1]}))), 200, Some(-32602)),
        row("tools/call: an argument outside the schema is an isError bad_request", auth(Mcp::modern("tools/call", json!({"name":CALL_WORKSPACES,"arguments":{"limit":5}}))), 200, None)
            .check(|r| {
                let result = r.result();
                assert_eq!(result["isError"], json!(true));
                assert_eq!(tool_error(&result)["code"], json!("bad_request"));
                assert_eq!(tool_error(&result)["details"]["field"], json!("limit"));
            }),
        row("resources/list: the fixed documents with cache hints", auth(Mcp::modern("resources/list", json!({}))), 200, None)
            .check(|r| {
                let uris: Vec<_> = r.result()["resources"].as_array().unwrap().iter().map(|x| x["uri"].clone()).collect();
                assert_eq!(uris, vec![json!("kobana://finance/workspaces"), json!("kobana://finance/guide")]);
                assert_eq!(r.result()["cacheScope"], json!("private"));
            }),
        row("resources/read: the workspaces document", auth(Mcp::modern("resources/read", json!({"uri":"kobana://finance/workspaces"}))), 200, None)
            .check(|r| {
                let result = r.result();
                assert_eq!(result["ttlMs"], json!(0));
                assert!(result["contents"][0]["text"].as_str().unwrap().contains(DEMO_WORKSPACE_ACME));
            }),
        row("resources/read: not found in 2026 is -32602 with data.uri", auth(Mcp::modern("resources/read", json!({"uri":"kobana://finance/nothing"}))), 200, Some(-32602))
            .check(|r| assert_eq!(r.json()["error"]["data"]["uri"], json!("kobana://finance/nothing"))),
        row("resources/templates/list answers a list", auth(Mcp::modern("resources/templates/list", json!({}))), 200, None)
            .check(|r| assert!(r.result()["resourceTemplates"].is_array())),
        row("prompts/list answers a list with cache hints", auth(Mcp::modern("prompts/list", json!({}))), 200, None)
            .check(|r| assert_eq!(r.result()["cacheScope"], json!("private"))),
        row("prompts/get: an unknown prompt is -32602", auth(Mcp::modern("prompts/get", json!({"name":"nope"}))), 200, Some(-32602)),
        row("completion/complete: an unknown reference is -32602", auth(Mcp::modern("completion/complete", json!({"ref":{"type":"ref/prompt","name":"nope"},"argument":{"name":"a","value":"b"}}))), 200, Some(-32602)),
        // ---- §6: the workspace ----
        row("workspace: header and query disagreeing is 400 -32602",
            auth(Mcp::modern("tools/list", json!({}))).path("/?workspace_id=7d0c6a7e-1f43-4e0b-9c55-3b1f2a9e8c10").header("x-workspace-id", DEMO_WORKSPACE_ACME), 400, Some(-32602)),
        row("workspace: header and query agreeing pass",
            auth(Mcp::modern("tools/list", json!({}))).path(&format!("/?workspace_id={DEMO_WORKSPACE_ACME}")).header("x-workspace-id", DEMO_WORKSPACE_ACME), 200, None),
        row("workspace: an X-Workspace-Id of another tenant reads as not found, like the argument", call_payables().header("x-workspace-id", DEMO_WORKSPACE_BETA), 200, None)
            .check(|r| assert_eq!(tool_error(&r.result())["code"], json!("not_found"))),
        row("workspace: an X-Workspace-Id of no workspace reads as not found", call_payables().header("x-workspace-id", "5b0e2f0e-9a4c-4a57-8f1e-000000000000"), 200, None)
            .check(|r| assert_eq!(tool_error(&r.result())["code"], json!("not_found"))),
        row("workspace: a ?workspace_id= of another tenant reads as not found", call_payables().path(&format!("/?workspace_id={DEMO_WORKSPACE_BETA}")), 200, None)
            .check(|r| assert_eq!(tool_error(&r.result())["code"], json!("not_found"))),
        row("workspace: an empty ?workspace_id= is no hint, as on /v1", call_payables().path("/?workspace_id="), 200, None)
            .check(|r| assert!(r.result()["structuredContent"]["data"].is_array(), "{}", r.result())),
        row("workspace: an empty X-Workspace-Id is no hint, as on /v1", call_payables().header("x-workspace-id", " "), 200, None)
            .check(|r| assert!(r.result()["structuredContent"]["data"].is_array(), "{}", r.result())),
        row("workspace: an empty X-Workspace-Id does not disagree with ?workspace_id=: the query names the workspace",
            call_payables().path(&format!("/?workspace_id={DEMO_WORKSPACE_BETA}")).header("x-workspace-id", " "), 200, None)
            .check(|r| assert_eq!(tool_error(&r.result())["code"], json!("not_found"))),
        row("workspace: ?workspace_id= is form-decoded, as on /v1",
            call_payables().path(&format!("/?workspace_id={}", DEMO_WORKSPACE_BETA.replace('-', "%2D"))), 200, None)
            .check(|r| assert_eq!(tool_error(&r.result())["code"], json!("not_found"))),
        row("workspace: an X-Workspace-Id that is not a UUID is bad_request", call_payables().header("x-workspace-id", "acme"), 200, None)
            .check(|r| {
                let error = &tool_error(&r.result());
                assert_eq!(error["code"], json!("bad_request"));
                assert_eq!(error["details"]["field"], json!("workspace_id"));
            }),
        row("workspace: the argument wins over the connection's default", call_payables_in(DEMO_WORKSPACE_ACME).header("x-workspace-id", DEMO_WORKSPACE_BETA), 200, None)
            .check(|r| assert!(r.result()["structuredContent"]["data"].is_array(), "{}", r.result())),
        row("/mcp is an alias of /", call().path("/mcp"), 200, None)
            .whole_server(),
        // ---- §5.4: views ----
        row("view: GET on a view is 405", Mcp::raw("").method(Method::GET).path("/mcp/x/payables"), 405, None)
            .check(|r| assert_eq!(r.header("allow"), Some("POST"))),
        row("view: DELETE on /mcp/readonly is 405", Mcp::raw("").method(Method::DELETE).path("/mcp/readonly"), 405, None),
        row("view: on a view the challenge names the /mcp metadata", Mcp::modern("server/discover", json!({})).path("/mcp/x/payables"), 401, None)
            .check(|r| assert_eq!(r.header("www-authenticate"), Some(challenge("/mcp")).as_deref())),
        row("view: on /mcp/readonly too", Mcp::modern("server/discover", json!({})).path("/mcp/readonly"), 401, None)
            .check(|r| assert_eq!(r.header("www-authenticate"), Some(challenge("/mcp")).as_deref())),
        row("view: an unknown toolset is 400 -32602 naming the valid ones", auth(Mcp::modern("tools/list", json!({}))).path("/mcp/x/payables,wages"), 400, Some(-32602))
            .check(|r| assert!(r.json()["error"]["message"].as_str().unwrap().contains("reports, cash_flow, payables, receivables, reconciliations, transactions, transfers, accounts, receipts, attachments, companies, people, categories, cost_centers, taxes"))),
        row("view: /mcp/x/readonly names no toolset", auth(Mcp::modern("tools/list", json!({}))).path("/mcp/x/readonly"), 400, Some(-32602)),
        row("view: an unknown toolset in X-MCP-Toolsets is 400 -32602", auth(Mcp::modern("tools/list", json!({}))).header("x-mcp-toolsets", "payables,ledger"), 400, Some(-32602)),
        row("view: a malformed X-MCP-Readonly is 400 -32602", auth(Mcp::modern("tools/list", json!({}))).header("x-mcp-readonly", "yes"), 400, Some(-32602))
            .check(|r| assert!(r.json()["error"]["message"].as_str().unwrap().contains("true or false"))),
        row("view: a malformed view header on 2025 is 400 -32602 too", auth(Mcp::legacy("tools/list", json!({}), Some("2025-06-18"))).header("x-mcp-readonly", "1"), 400, Some(-32602)),
        row("view: authentication comes before the view", Mcp::modern("tools/list", json!({})).path("/mcp/x/wages"), 401, None),
        row("view: a tool outside the view is an unknown tool", call_payables().path("/mcp/x/receivables"), 200, Some(-32602))
            .check(|r| assert_eq!(r.json()["error"]["message"], json!("Unknown tool: finance_payables_list"))),
        row("view: a notification on a view is 202", auth(Mcp::raw(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)).path("/mcp/x/payables"), 202, None),
    ]
}

/// With `KFIN_FUZZ_SEEDS=DIR`, each row's request is also written to DIR in the request
/// pipeline fuzz target's input format (fuzz/src/raw.rs; the owner's token becomes
/// `$MCP_TOKEN`), so the fuzzer starts from every rule of the contract.
fn write_seed(owner: &str, index: usize, row: &Row) {
    let Some(dir) = std::env::var_os("KFIN_FUZZ_SEEDS") else { return };
    if row.request.body.len() > 64 * 1024 {
        return;
    }
    let headers: Vec<(String, String)> =
        row.request.headers.iter().map(|(n, v)| (n.clone(), v.replace(owner, "$MCP_TOKEN"))).collect();
    let mut text = format!("{} {}\n", row.request.method, row.request.path).into_bytes();
    for (name, value) in headers {
        text.extend_from_slice(format!("{name}: {value}\n").as_bytes());
    }
    text.push(b'\n');
    text.extend_from_slice(&row.request.body);
    let path = std::path::Path::new(&dir).join(format!("matrix-{index:03}"));
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// What is wrong with `reply` as an answer to `row` (empty: nothing).
fn problems(row: &Row, reply: &Reply) -> Vec<String> {
    let code = reply.rpc_code();
    let mut problems = Vec::new();
    if reply.status != row.status {
        problems.push(format!("status {} (expected {})", reply.status, row.status));
    }
    if row.code.is_some() && code != row.code {
        problems.push(format!("JSON-RPC code {code:?} (expected {:?})", row.code));
    }
    if reply.header("cache-control") != Some("no-store") {
        problems.push("Cache-Control is not no-store".into());
    }
    if !reply.bytes.is_empty() && reply.header("content-type") != Some("application/json") {
        problems.push("a body without Content-Type: application/json".into());
    }
    if let Some(check) = row.check {
        if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(reply))) {
            let message =
                panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
            problems.push(format!("check failed: {}", message.unwrap_or_default()));
        }
    }
    problems
}

#[tokio::test]
async fn protocol_matrix() {
    let h = Harness::new().await;
    let mut failures = Vec::new();
    let owner = h.token(DEMO_OWNER);
    for (index, row) in rows(&h, &owner).into_iter().enumerate() {
        write_seed(&owner, index, &row);
        let reply = h.send(row.request.clone().build()).await;
        let problems = problems(&row, &reply);
        if !problems.is_empty() {
            failures.push(format!(
                "{}: {} — body {}",
                row.name,
                problems.join("; "),
                String::from_utf8_lossy(&reply.bytes)
            ));
        }
    }
    assert!(failures.is_empty(), "{} row(s) failed:\n{}", failures.len(), failures.join("\n"));
}

/// SPEC §2: every rule of §2–§4 holds on every view path as on `/`. Each row sent to
/// `/` (query string kept) is sent again to each view path and must answer the same —
/// except the rows whose answer is the whole server's (the full catalogue, the `/`
/// challenge), and a view that names no toolset, which must be refused exactly where
/// a request reaches dispatch.
#[tokio::test]
async fn protocol_matrix_holds_on_every_view() {
    let h = Harness::new().await;
    let mut failures = Vec::new();
    let owner = h.token(DEMO_OWNER);
    let mut replayed = 0;
    for view in VIEW_PATHS {
        for row in rows(&h, &owner) {
            let path = row.request.path.clone();
            if row.whole_server || !(path == "/" || path.starts_with("/?")) {
                continue;
            }
            let mut request = row.request.clone();
            request.path = format!("{view}{}", &path[1..]);
            let reply = h.send(request.build()).await;
            let reaches_dispatch = (row.status == StatusCode::OK && row.code != Some(-32601))
                || (row.status == StatusCode::BAD_REQUEST && row.code == Some(-32602) && row.name.starts_with("view:"));
            let problems = if *view == BROKEN_VIEW && reaches_dispatch {
                // A broken view is refused where dispatch begins (once the method is
                // known): 400 -32602.
                let expected = Row {
                    status: StatusCode::BAD_REQUEST,
                    code: Some(-32602),
                    check: None,
                    request: row.request.clone(),
                    ..row
                };
                problems(&expected, &reply)
            } else {
                problems(&row, &reply)
            };
            replayed += 1;
            if !problems.is_empty() {
                failures.push(format!(
                    "{view}: {}: {} — body {}",
                    row.name,
                    problems.join("; "),
                    String::from_utf8_lossy(&reply.bytes)
                ));
            }
        }
    }
    assert!(replayed > 100, "{replayed} rows replayed on the views");
    assert!(failures.is_empty(), "{} row(s) failed on a view:\n{}", failures.len(), failures.join("\n"));
}
