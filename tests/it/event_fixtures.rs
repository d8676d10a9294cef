//! The Lambda event fixtures of `events/` (see events/README.md), built here from the
//! typed event structs `lambda_http` itself parses (`aws_lambda_events`: API Gateway
//! REST 1.0, HTTP API 2.0 — which Function URL events share — and ALB), and compared with
//! the committed files. `KFIN_WRITE_EVENTS=1` rewrites `events/*/` and
//! `events/expected.json` instead. The output is deterministic: fixed request ids, times
//! (2026-07-28T12:00:00Z onwards, one second apart) and the fixture token, which the
//! library's own `jwt::mint` signs (the one the `token` command uses).
//! lambda_events.rs replays every fixture through the handler.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use base64::Engine;
use kobana_finance_mcp::auth::jwt::{self, Audience, Claims};
use kobana_finance_mcp::auth::keys::Keys;
use lambda_http::aws_lambda_events::alb::AlbTargetGroupRequest;
use lambda_http::aws_lambda_events::apigw::{ApiGatewayProxyRequest, ApiGatewayV2httpRequest};
use lambda_http::http::{HeaderMap, HeaderName, HeaderValue, Method};
use lambda_http::request::LambdaRequest;
use serde_json::{json, Value};

use crate::common::{DEMO_OWNER, FIXTURE_KEY, PUBLIC_URL};

const V2026: &str = "2026-07-28";
const V2025: &str = "2025-06-18";
/// Over the 14,680,064-byte body cap.
const OVERSIZED_CONTENT_LENGTH: usize = 20 * 1024 * 1024;

const ACCOUNT_ID: &str = "123456789012";
const REST_API_ID: &str = "abc123";
const HTTP_API_ID: &str = "def456";
const FUNCTION_URL_ID: &str = "k7m2p9q4r8s1t6v3w5x0y2z4a6b8c1d3";
const TARGET_GROUP_ARN: &str =
    "arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/kobana-finance-mcp/1a2b3c4d5e6f7a8b";
const SOURCE_IP: &str = "203.0.113.10";
const USER_AGENT: &str = "kobana-finance-fixture/1.0";
/// 2026-07-28T12:00:00Z: the first fixture's arrival; each next one a second later.
const BASE_EPOCH: i64 = 1_785_240_000;

/// The fixture token's fixed claims (events/README.md lists them).
const FIXTURE_JTI: &str = "5a0f3c6e-2d41-4c8b-9e1a-7b6d5c4f3e21";
const ISSUED_AT: u64 = 1_780_000_000;
/// 2100-01-01T00:00:00Z.
const EXPIRES_AT: u64 = 4_102_444_800;

/// The bearer token of the authenticated fixtures: the demo owner, every scope, signed
/// with the fixture-only key.
pub fn fixture_token() -> String {
    let claims = Claims {
        iss: PUBLIC_URL.into(),
        aud: Audience::One(PUBLIC_URL.into()),
        sub: DEMO_OWNER.into(),
        scope: kobana_finance_mcp::domain::roles::all_scopes().join(" "),
        exp: EXPIRES_AT,
        iat: Some(ISSUED_AT),
        nbf: None,
        jti: Some(FIXTURE_JTI.into()),
        client_id: None,
        gid: None,
    };
    jwt::mint(&claims, &Keys::from_secret(FIXTURE_KEY, None)).expect("mint the fixture token")
}

/// What the request carries as its body.
#[derive(Clone)]
enum Body {
    None,
    Text(String),
    /// The text, base64-encoded in the event (`isBase64Encoded: true`).
    Encoded(String),
    /// Already "encoded", and not valid base64.
    Malformed(&'static str),
}

/// One HTTP request to the endpoint, before a front door wraps it.
#[derive(Clone)]
struct Request {
    method: Method,
    path: &'static str,
    /// The query string, without its `?` (empty: none).
    query: String,
    headers: Vec<(&'static str, String)>,
    body: Body,
    auth: bool,
    status: u16,
    content_length: Option<usize>,
}

impl Request {
    fn post(body: String) -> Request {
        Request {
            method: Method::POST,
            path: "/",
            query: String::new(),
            headers: vec![],
            body: Body::Text(body),
            auth: true,
            status: 200,
            content_length: None,
        }
    }

    fn at(mut self, path: &'static str) -> Request {
        self.path = path;
        self
    }

    fn header(mut self, name: &'static str, value: &str) -> Request {
        self.headers.push((name, value.to_string()));
        self
    }

    /// The 2026 headers: version, `Mcp-Method` and, for a `tools/call`, `Mcp-Name`.
    fn mcp(self, method: &str, name: Option<&str>) -> Request {
        let r = self.header("MCP-Protocol-Version", V2026).header("Mcp-Method", method);
        match name {
            Some(name) => r.header("Mcp-Name", name),
            None => r,
        }
    }

    fn answers(mut self, status: u16) -> Request {
        self.status = status;
        self
    }

    fn anonymous(mut self) -> Request {
        self.auth = false;
        self
    }

    /// (the event's body, isBase64Encoded, the decoded length).
    fn wire_body(&self) -> (Option<String>, bool, usize) {
        match &self.body {
            Body::None => (None, false, 0),
            Body::Text(text) => (Some(text.clone()), false, text.len()),
            Body::Encoded(text) => (Some(base64::engine::general_purpose::STANDARD.encode(text)), true, text.len()),
            Body::Malformed(raw) => (Some(raw.to_string()), true, raw.len()),
        }
    }

    /// The headers as the front door forwards them (names lower-case, as `http` keeps them).
    fn header_map(&self, host: &str, token: &str) -> HeaderMap {
        let mut headers: Vec<(&str, String)> = vec![
            ("accept", "application/json, text/event-stream".into()),
            ("host", host.into()),
            ("user-agent", USER_AGENT.into()),
            ("x-forwarded-for", SOURCE_IP.into()),
            ("x-forwarded-port", "443".into()),
            ("x-forwarded-proto", "https".into()),
        ];
        if self.method == Method::POST {
            if !self.headers.iter().any(|(n, _)| *n == "content-type") {
                headers.push(("content-type", "application/json".into()));
            }
            headers.push(("content-length", self.content_length.unwrap_or(self.wire_body().2).to_string()));
        }
        if self.auth {
            headers.push(("authorization", format!("Bearer {token}")));
        }
        headers.extend(self.headers.iter().map(|(n, v)| (*n, v.clone())));
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.insert(HeaderName::from_bytes(name.as_bytes()).unwrap(), HeaderValue::from_str(&value).unwrap());
        }
        map
    }
}

fn rpc_2026(method: &str, params: Value) -> String {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "fixture", "version": "1.0.0"},
    });
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string()
}

/// The requests, by fixture name (events/README.md says what each shows).
fn requests() -> Vec<(&'static str, Request)> {
    let tools_list = rpc_2026("tools/list", json!({}));
    let list = || Request::post(tools_list.clone()).mcp("tools/list", None);
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": V2025, "capabilities": {}, "clientInfo": {"name": "fixture", "version": "1.0.0"}}});
    let settle = json!({"name": "finance_payables_settle", "arguments": {"id": crate::common::ACME_RENT_DECEMBER, "payment_date": "2026-12-01"}});
    vec![
        ("discover", Request::post(rpc_2026("server/discover", json!({}))).mcp("server/discover", None)),
        ("initialize", Request::post(initialize.to_string()).at("/mcp")),
        ("tools-list", list()),
        (
            "tools-call",
            Request::post(rpc_2026("tools/call", json!({"name": "finance_workspaces_list", "arguments": {}})))
                .at("/mcp")
                .mcp("tools/call", Some("finance_workspaces_list")),
        ),
        (
            "reject-get-405",
            Request { method: Method::GET, body: Body::None, ..Request::post(String::new()) }.anonymous().answers(405),
        ),
        (
            "reject-too-large-413",
            Request { content_length: Some(OVERSIZED_CONTENT_LENGTH), ..list() }.anonymous().answers(413),
        ),
        ("reject-origin-403", list().header("Origin", "https://evil.example.com").answers(403)),
        ("reject-no-token-401", list().anonymous().answers(401)),
        (
            "reject-parse-400",
            Request::post(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","#.into())
                .mcp("tools/list", None)
                .answers(400),
        ),
        ("reject-batch-400", Request::post(format!("[{tools_list}]")).mcp("tools/list", None).answers(400)),
        ("reject-header-mismatch-400", Request::post(tools_list.clone()).mcp("tools/call", None).answers(400)),
        (
            "reject-unsupported-version-400",
            Request::post(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())
                .header("MCP-Protocol-Version", "1999-01-01")
                .answers(400),
        ),
        (
            "reject-unknown-method-404",
            Request::post(rpc_2026("nope/nope", json!({}))).mcp("nope/nope", None).answers(404),
        ),
        (
            "notification-202",
            Request::post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string())
                .header("MCP-Protocol-Version", V2025)
                .answers(202),
        ),
        ("base64-body", Request { body: Body::Encoded(tools_list.clone()), ..list() }),
        ("tools-list-view", list().at("/mcp/x/payables,receivables")),
        (
            "tools-call-outside-view",
            Request::post(rpc_2026("tools/call", settle))
                .at("/mcp/readonly")
                .mcp("tools/call", Some("finance_payables_settle")),
        ),
        ("reject-unknown-toolset-400", list().at("/mcp/x/wages").answers(400)),
        (
            "malformed-base64",
            Request { body: Body::Malformed("eyJqc29ucnBjIjoiMi4wIiw*not-base64*"), ..list() }.answers(400),
        ),
        ("oauth-consent", oauth::consent()),
        ("oauth-approve", oauth::approve()),
        ("oauth-token", oauth::token("a-code-of-another-run").answers(400)),
        (
            "health",
            Request { method: Method::GET, path: "/health", body: Body::None, ..Request::post(String::new()) }
                .anonymous(),
        ),
        (
            "browser-page",
            Request { method: Method::GET, body: Body::None, ..Request::post(String::new()) }
                .anonymous()
                .header("accept", "text/html,application/xhtml+xml,*/*;q=0.8"),
        ),
    ]
}

/// The sign-in's steps as a browser and a client send them: the consent page of a
/// checked authorization request (sealed, as `/authorize` seals it, with the fixture key)
/// in a signed-in session, the person's approval, and the code's exchange. The first two
/// replay alone; the exchange needs the code the approval issued in the same database
/// (its fixture carries one of another run: `invalid_grant`), which the chained replay of
/// `lambda_events.rs` puts in.
pub mod oauth {
    use kobana_finance_mcp::auth::keys::Keys;
    use kobana_finance_mcp::oauth::authorize::Request as Authorization;
    use kobana_finance_mcp::oauth::clients::Client;
    use kobana_finance_mcp::oauth::session::{seal, Purpose, Session};
    use lambda_http::http::Method;

    use super::{Body, Request, EXPIRES_AT};
    use crate::common::{DEMO_OWNER, FIXTURE_KEY};

    pub const CLIENT_ID: &str = "kfin-fixture-client";
    pub const CALLBACK: &str = "http://127.0.0.1:7777/callback";
    /// The PKCE verifier whose challenge the sealed request carries.
    pub const VERIFIER: &str = "fixture-verifier-0123456789-abcdefghijklmnopqrstuvwxyz";
    const SESSION_ID: &str = "fixture-session";

    fn state_key() -> Vec<u8> {
        Keys::from_secret(FIXTURE_KEY, None).state
    }

    /// The checked request, sealed until the fixture token's expiry.
    pub fn sealed_request() -> String {
        let request = Authorization {
            client: Client {
                client_id: CLIENT_ID.into(),
                client_name: Some("Fixture client".into()),
                redirect_uris: vec![CALLBACK.into()],
                by_document: false,
            },
            redirect_uri: CALLBACK.into(),
            state: Some("fixture-state".into()),
            code_challenge: kobana_finance_mcp::oauth::s256(VERIFIER),
            scope: kobana_finance_mcp::oauth::metadata::default_scope(),
            resource: format!("{}/mcp", crate::common::PUBLIC_URL),
        };
        seal(&state_key(), Purpose::Request, &request, EXPIRES_AT as i64)
    }

    fn session() -> Session {
        Session { sub: DEMO_OWNER.into(), sid: SESSION_ID.into() }
    }

    fn cookie() -> String {
        format!("kfin_session={}", seal(&state_key(), Purpose::Session, &session(), EXPIRES_AT as i64))
    }

    fn form(pairs: &[(&str, &str)]) -> String {
        let mut body = url::form_urlencoded::Serializer::new(String::new());
        for (name, value) in pairs {
            body.append_pair(name, value);
        }
        body.finish()
    }

    /// `GET /authorize?request=…` in the demo owner's session: the consent page.
    pub(super) fn consent() -> Request {
        let query = form(&[("request", &sealed_request())]);
        Request { method: Method::GET, body: Body::None, query, ..Request::post(String::new()) }
            .at("/authorize")
            .header("cookie", &cookie())
            .anonymous()
    }

    /// The consent page's form, approved: a redirect with the code.
    pub(super) fn approve() -> Request {
        let sealed = sealed_request();
        let csrf = session().csrf(&state_key(), &sealed);
        let body = form(&[("request", &sealed), ("csrf", &csrf), ("decision", "approve")]);
        Request::post(body)
            .at("/authorize")
            .header("content-type", "application/x-www-form-urlencoded")
            .header("cookie", &cookie())
            .anonymous()
            .answers(302)
    }

    /// `POST /token` exchanging `code`.
    pub(super) fn token(code: &str) -> Request {
        let body = form(&[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", CALLBACK),
            ("code_verifier", VERIFIER),
            ("client_id", CLIENT_ID),
        ]);
        Request::post(body).at("/token").header("content-type", "application/x-www-form-urlencoded").anonymous()
    }
}

/// Where and when one event arrives: its request id and epoch seconds.
struct Arrival {
    request_id: String,
    epoch: i64,
}

impl Arrival {
    fn nth(index: usize) -> Arrival {
        Arrival {
            request_id: format!("6b1f7c1e-4a53-4f0e-8d7a-{:012x}", 0x2c9e_5b3a_0000 + index),
            epoch: BASE_EPOCH + index as i64,
        }
    }

    /// API Gateway's `requestTime` / `time`: "28/Jul/2026:12:00:03 +0000".
    fn clf_time(&self) -> String {
        let seconds = self.epoch - BASE_EPOCH;
        format!("28/Jul/2026:{:02}:{:02}:{:02} +0000", 12 + seconds / 3600, seconds / 60 % 60, seconds % 60)
    }
}

fn proxy(path: &str) -> Option<String> {
    Some(path.trim_start_matches('/').to_string()).filter(|p| !p.is_empty())
}

/// API Gateway REST API, Lambda proxy integration, payload 1.0, stage `prod`.
fn rest_api(request: &Request, at: &Arrival, token: &str) -> Value {
    let host = format!("{REST_API_ID}.execute-api.us-east-1.amazonaws.com");
    let headers = request.header_map(&host, token);
    let (body, encoded, _) = request.wire_body();
    let proxy = proxy(request.path);
    let resource = if proxy.is_some() { "/{proxy+}" } else { "/" };
    let mut event = ApiGatewayProxyRequest::default();
    event.resource = Some(resource.into());
    event.path = Some(request.path.into());
    event.http_method = request.method.clone();
    event.headers = headers.clone();
    event.multi_value_headers = headers;
    event.path_parameters = proxy.map(|p| HashMap::from([("proxy".to_string(), p)])).unwrap_or_default();
    event.body = body;
    event.is_base64_encoded = encoded;
    let query = query_pairs(&request.query);
    let context = &mut event.request_context;
    context.account_id = Some(ACCOUNT_ID.into());
    context.resource_id = Some(if resource == "/" { "rootid1" } else { "a1b2c3" }.into());
    context.resource_path = Some(resource.into());
    context.http_method = request.method.clone();
    context.request_time = Some(at.clf_time());
    context.request_time_epoch = at.epoch * 1000;
    context.path = Some(format!("/prod{}", request.path));
    context.protocol = Some("HTTP/1.1".into());
    context.stage = Some("prod".into());
    context.domain_prefix = Some(REST_API_ID.into());
    context.domain_name = Some(host);
    context.request_id = Some(at.request_id.clone());
    context.apiid = Some(REST_API_ID.into());
    context.identity.source_ip = Some(SOURCE_IP.into());
    context.identity.user_agent = Some(USER_AGENT.into());
    let mut value = serde_json::to_value(&event).unwrap();
    if !query.is_empty() {
        value["queryStringParameters"] = query.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        value["multiValueQueryStringParameters"] = query.iter().map(|(k, v)| (k.clone(), json!([v]))).collect();
    }
    value
}

/// The pairs of a query string, decoded (what a front door hands over as parameters).
fn query_pairs(query: &str) -> Vec<(String, String)> {
    url::form_urlencoded::parse(query.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
}

/// Payload 2.0: the HTTP API (stage `$default`, routes `ANY /` and `ANY /{proxy+}`) and
/// the Function URL (its own host, route `$default`, account `anonymous`).
fn payload_2(request: &Request, at: &Arrival, token: &str, function_url: bool) -> Value {
    let (host, api_id, route, account) = if function_url {
        (format!("{FUNCTION_URL_ID}.lambda-url.us-east-1.on.aws"), FUNCTION_URL_ID, "$default", "anonymous")
    } else {
        let route = if proxy(request.path).is_some() { "ANY /{proxy+}" } else { "ANY /" };
        (format!("{HTTP_API_ID}.execute-api.us-east-1.amazonaws.com"), HTTP_API_ID, route, ACCOUNT_ID)
    };
    let (body, encoded, _) = request.wire_body();
    let mut event = ApiGatewayV2httpRequest::default();
    event.version = Some("2.0".into());
    event.route_key = Some(route.into());
    event.raw_path = Some(request.path.into());
    event.raw_query_string = Some(request.query.clone());
    event.headers = request.header_map(&host, token);
    if !function_url {
        event.path_parameters =
            proxy(request.path).map(|p| HashMap::from([("proxy".to_string(), p)])).unwrap_or_default();
    }
    event.body = body;
    event.is_base64_encoded = encoded;
    let context = &mut event.request_context;
    context.route_key = Some(route.into());
    context.account_id = Some(account.into());
    context.stage = Some("$default".into());
    context.request_id = Some(at.request_id.clone());
    context.apiid = Some(api_id.into());
    context.domain_prefix = Some(api_id.into());
    context.domain_name = Some(host);
    context.time = Some(at.clf_time());
    context.time_epoch = at.epoch * 1000;
    context.http.method = request.method.clone();
    context.http.path = Some(request.path.into());
    context.http.protocol = Some("HTTP/1.1".into());
    context.http.source_ip = Some(SOURCE_IP.into());
    context.http.user_agent = Some(USER_AGENT.into());
    let mut value = serde_json::to_value(&event).unwrap();
    // The struct also models Custom Authorizer v1 payloads; an HTTP event has none of
    // their fields (and a top-level `httpMethod` would make it look like a REST event).
    for authorizer_only in ["type", "methodArn", "httpMethod", "identitySource", "authorizationToken", "resource"] {
        value.as_object_mut().unwrap().remove(authorizer_only);
    }
    let query = query_pairs(&request.query);
    if !query.is_empty() {
        value["queryStringParameters"] = query.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    }
    value
}

/// An ALB target group with multi-value headers off.
fn alb(request: &Request, _: &Arrival, token: &str) -> Value {
    let (body, encoded, _) = request.wire_body();
    let mut event = AlbTargetGroupRequest::default();
    event.http_method = request.method.clone();
    event.path = Some(request.path.into());
    event.headers = request.header_map("kobana-finance-mcp-1234567890.us-east-1.elb.amazonaws.com", token);
    event.request_context.elb.target_group_arn = Some(TARGET_GROUP_ARN.into());
    event.is_base64_encoded = encoded;
    event.body = Some(body.unwrap_or_default());
    let mut value = serde_json::to_value(&event).unwrap();
    for multi_value in ["multiValueHeaders", "multiValueQueryStringParameters"] {
        value.as_object_mut().unwrap().remove(multi_value);
    }
    value
}

/// Every file of `events/` this module writes: path from the repository root → text.
pub fn build() -> BTreeMap<String, String> {
    let token = fixture_token();
    let requests = requests();
    let mut jobs: Vec<(&str, &str, &Request)> = Vec::new();
    for front_door in ["v1", "v2", "function-url"] {
        jobs.extend(requests.iter().map(|(name, request)| (front_door, *name, request)));
    }
    jobs.extend(
        requests.iter().filter(|(name, _)| *name == "tools-list").map(|(name, request)| ("alb", *name, request)),
    );
    let mut files = BTreeMap::new();
    let mut expected = serde_json::Map::new();
    for (index, (front_door, name, request)) in jobs.into_iter().enumerate() {
        let at = Arrival::nth(index);
        let event = match front_door {
            "v1" => rest_api(request, &at, &token),
            "v2" => payload_2(request, &at, &token, false),
            "function-url" => payload_2(request, &at, &token, true),
            _ => alb(request, &at, &token),
        };
        let path = format!("events/{front_door}/{name}.json");
        assert_front_door(&path, front_door, &event);
        files.insert(path.clone(), render(&event));
        expected.insert(path, Value::from(request.status));
    }
    let expected: BTreeMap<_, _> = expected.into_iter().collect();
    files.insert("events/expected.json".into(), render(&serde_json::to_value(expected).unwrap()));
    files
}

/// `lambda_http` reads the event as the front door it is for (a REST event is tried
/// first, so a 2.0 event must not parse as one).
fn assert_front_door(path: &str, front_door: &str, event: &Value) {
    let parsed = kobana_finance_mcp::transport::lambda::parse_event(event.to_string().as_bytes())
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    let read_as = match parsed {
        LambdaRequest::ApiGatewayV1(_) => "v1",
        LambdaRequest::ApiGatewayV2(_) => "2.0",
        LambdaRequest::Alb(_) => "alb",
        #[allow(unreachable_patterns)]
        _ => "something else",
    };
    let wanted = if front_door == "v1" || front_door == "alb" { front_door } else { "2.0" };
    assert_eq!(read_as, wanted, "{path} is read as the wrong front door");
}

fn render(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap() + "\n"
}

#[test]
fn the_committed_event_fixtures_are_the_ones_built_here() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = build();
    if std::env::var("KFIN_WRITE_EVENTS").as_deref() == Ok("1") {
        for (path, text) in &files {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        eprintln!("wrote {} files under events/", files.len());
    }
    let mut problems = Vec::new();
    for (path, text) in &files {
        if std::fs::read_to_string(root.join(path)).ok().as_ref() != Some(text) {
            problems.push(format!("out of date: {path}"));
        }
    }
    for front_door in ["v1", "v2", "function-url", "alb"] {
        for entry in std::fs::read_dir(root.join("events").join(front_door)).unwrap() {
            let path = format!("events/{front_door}/{}", entry.unwrap().file_name().to_string_lossy());
            if path.ends_with(".json") && !files.contains_key(&path) {
                problems.push(format!("not built here: {path}"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{}\nrebuild them with KFIN_WRITE_EVENTS=1 cargo nextest run -E 'test(event_fixtures)'",
        problems.join("\n")
    );
}

#[test]
fn the_fixture_token_carries_the_documented_claims() {
    let token = fixture_token();
    let keys = Keys::from_secret(FIXTURE_KEY, None);
    let claims = jwt::verify(&token, &keys, &jwt::Rules::new(&[PUBLIC_URL.to_string()], PUBLIC_URL));
    let claims = claims.unwrap_or_else(|_| panic!("the fixture token does not verify with the fixture key"));
    assert_eq!(claims.sub, DEMO_OWNER);
    assert_eq!(claims.exp, EXPIRES_AT);
    assert_eq!(claims.jti.as_deref(), Some(FIXTURE_JTI));
    assert_eq!(claims.scope.split(' ').count(), 30);
}

/// The HTTP API (2.0) event of the code's exchange, with `code` (a step of the chained
/// replay: the code the approval issued in that run).
pub fn token_event(code: &str) -> Value {
    payload_2(&oauth::token(code), &Arrival::nth(900), &fixture_token(), false)
}

/// The HTTP API (2.0) event of a `tools/list` on `/mcp` with the bearer `token`.
pub fn tools_list_event(token: &str) -> Value {
    let request = Request::post(rpc_2026("tools/list", json!({}))).at("/mcp").mcp("tools/list", None);
    payload_2(&request, &Arrival::nth(901), token, false)
}
