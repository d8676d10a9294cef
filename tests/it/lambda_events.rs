//! Every API Gateway / Function URL / ALB fixture in `events/` runs through the real
//! Lambda handler (event → router → Lambda response) and answers the status listed in
//! `events/expected.json`; the `replay` command prints the same response; and the binary
//! itself, in Lambda mode under the Runtime API stand-in, answers every fixture, reports
//! invalid events and failed invocations on `…/invocation/{id}/error`, and keeps serving.

use crate::common;

use common::*;
use serde_json::Value;

fn fixtures() -> Vec<(String, u16)> {
    let root = env!("CARGO_MANIFEST_DIR");
    let expected: serde_json::Map<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(format!("{root}/events/expected.json")).unwrap()).unwrap();
    expected.into_iter().map(|(path, status)| (format!("{root}/{path}"), status.as_u64().unwrap() as u16)).collect()
}

async fn invoke(h: &Harness, path: &str) -> Value {
    invoke_with(h, path, lambda_http::Context::default()).await
}

async fn invoke_with(h: &Harness, path: &str, context: lambda_http::Context) -> Value {
    let bytes = std::fs::read(path).unwrap();
    let payload = kobana_finance_mcp::transport::lambda::parse_event(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
    let event = lambda_http::LambdaEvent { payload, context };
    let Ok(response) = kobana_finance_mcp::transport::lambda::handle_event(h.app.clone(), event).await;
    serde_json::to_value(&response).unwrap()
}

fn header<'a>(response: &'a Value, name: &str) -> Option<&'a str> {
    response["headers"][name].as_str().or_else(|| response["multiValueHeaders"][name][0].as_str())
}

#[tokio::test]
async fn every_fixture_answers_its_expected_status_through_the_lambda_handler() {
    let _env = common::environment().await;
    std::env::set_var("AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH", "true");
    let h = Harness::with(|c| {
        c.keys = kobana_finance_mcp::config::KeySourceConfig::Static { jwt_secret: FIXTURE_KEY.into(), state_key: None }
    })
    .await;
    let fixtures = fixtures();
    assert!(fixtures.len() >= 58, "fixtures for v1, v2, Function URL and ALB");
    let mut failures = Vec::new();
    for (path, status) in &fixtures {
        let response = invoke(&h, path).await;
        let got = response["statusCode"].as_u64().unwrap_or(0) as u16;
        if got != *status {
            failures.push(format!("{path}: status {got}, expected {status}: {response}"));
        }
        if header(&response, "cache-control") != Some("no-store") {
            failures.push(format!("{path}: no Cache-Control: no-store: {response}"));
        }
        if header(&response, "request-id").is_none_or(|id| uuid::Uuid::parse_str(id).is_err()) {
            failures.push(format!("{path}: no Request-Id: {response}"));
        }
        if path.contains("/v1/") && response.get("multiValueHeaders").is_none() {
            failures.push(format!("{path}: a REST API response carries multiValueHeaders"));
        }
        if path.contains("/alb/") && response.get("statusDescription").is_none() {
            failures.push(format!("{path}: an ALB response carries statusDescription"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn tools_call_fixture_returns_the_demo_workspace() {
    let _env = common::environment().await;
    std::env::set_var("AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH", "true");
    let h = Harness::with(|c| {
        c.keys = kobana_finance_mcp::config::KeySourceConfig::Static { jwt_secret: FIXTURE_KEY.into(), state_key: None }
    })
    .await;
    for kind in ["v1", "v2", "function-url"] {
        let response = invoke(&h, &format!("{}/events/{kind}/tools-call.json", env!("CARGO_MANIFEST_DIR"))).await;
        let body: Value = serde_json::from_str(response["body"].as_str().unwrap()).unwrap();
        assert_eq!(body["result"]["structuredContent"]["data"][0]["id"], DEMO_WORKSPACE_ACME, "{kind}: {body}");
        assert_eq!(header(&response, "mcp-protocol-version"), Some("2026-07-28"), "{kind}");
    }
}

/// On Lambda, the Request-Id of an answer is the invocation's request id, so the answer
/// is found under it in CloudWatch; a malformed event's answer carries it too.
#[tokio::test]
async fn the_request_id_is_the_invocations() {
    let _env = common::environment().await;
    std::env::set_var("AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH", "true");
    let h = Harness::with(|c| {
        c.keys = kobana_finance_mcp::config::KeySourceConfig::Static { jwt_secret: FIXTURE_KEY.into(), state_key: None }
    })
    .await;
    for fixture in ["v2/tools-call.json", "v1/tools-call.json", "v2/malformed-base64.json"] {
        let mut context = lambda_http::Context::default();
        context.request_id = "8f1c2e4a-6b3d-4f5e-9a7b-0c1d2e3f4a5b".into();
        let response = invoke_with(&h, &format!("{}/events/{fixture}", env!("CARGO_MANIFEST_DIR")), context).await;
        assert_eq!(header(&response, "request-id"), Some("8f1c2e4a-6b3d-4f5e-9a7b-0c1d2e3f4a5b"), "{fixture}");
    }
}

/// SPEC §5.4 through the Lambda handler: every front door routes the view paths.
#[tokio::test]
async fn views_narrow_the_catalogue_behind_every_front_door() {
    let _env = common::environment().await;
    std::env::set_var("AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH", "true");
    let h = Harness::with(|c| {
        c.keys = kobana_finance_mcp::config::KeySourceConfig::Static { jwt_secret: FIXTURE_KEY.into(), state_key: None }
    })
    .await;
    let root = env!("CARGO_MANIFEST_DIR");
    for kind in ["v1", "v2", "function-url"] {
        let response = invoke(&h, &format!("{root}/events/{kind}/tools-list-view.json")).await;
        let body: Value = serde_json::from_str(response["body"].as_str().unwrap()).unwrap();
        let names: Vec<&str> =
            body["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        let expected = crate::tools_catalogue::views::of_toolsets(&["payables", "receivables"], false);
        assert_eq!(names, expected, "{kind}");
        assert!(
            names[1..].iter().all(|n| n.starts_with("finance_payables_") || n.starts_with("finance_receivables_")),
            "{kind}: {names:?}"
        );
        let response = invoke(&h, &format!("{root}/events/{kind}/tools-call-outside-view.json")).await;
        let body: Value = serde_json::from_str(response["body"].as_str().unwrap()).unwrap();
        assert_eq!(body["error"]["code"], -32602, "{kind}: {body}");
        assert_eq!(body["error"]["message"], "Unknown tool: finance_payables_settle", "{kind}");
        let response = invoke(&h, &format!("{root}/events/{kind}/reject-unknown-toolset-400.json")).await;
        let body: Value = serde_json::from_str(response["body"].as_str().unwrap()).unwrap();
        assert!(
            body["error"]["message"].as_str().unwrap().contains("valid toolsets are reports, cash_flow, payables"),
            "{kind}: {body}"
        );
    }
}

#[tokio::test]
async fn malformed_base64_is_answered_not_panicked() {
    let _env = common::environment().await;
    let h = Harness::new().await;
    for kind in ["v1", "v2", "function-url"] {
        let response = invoke(&h, &format!("{}/events/{kind}/malformed-base64.json", env!("CARGO_MANIFEST_DIR"))).await;
        assert_eq!(response["statusCode"], 400, "{kind}");
        let body: Value = serde_json::from_str(response["body"].as_str().unwrap()).unwrap();
        assert_eq!(body["error"]["code"], -32700);
    }
}

#[test]
fn replay_command_prints_the_lambda_response() {
    let _env = common::environment_blocking();
    let dir = TempDir::new();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_kobana-finance-mcp"))
        .args(["replay", &format!("{}/events/v2/tools-list.json", env!("CARGO_MANIFEST_DIR"))])
        .env("KFIN_JWT_SECRET", FIXTURE_KEY)
        .env("KFIN_DATABASE_URL", format!("sqlite:{}", dir.0.join("replay.db").display()))
        .env_remove("KFIN_PUBLIC_URL")
        .env_remove("KFIN_SECRET_ID")
        .env_remove("AWS_LAMBDA_RUNTIME_API")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let response: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(response["statusCode"], 200);
    let body: Value = serde_json::from_str(response["body"].as_str().unwrap()).unwrap();
    assert_eq!(body["result"]["tools"][0]["name"], "finance_workspaces_list");
}

/// The handler contract under the real runtime loop: an HTTP event is always answered
/// on `…/response` (a rejection is an HTTP error response with its status); an event
/// that is no HTTP event and no deploy step (`InvalidEvent`) and a deploy step that
/// fails (`UnknownCommand` here) are function errors on `…/error`. After each the
/// process keeps polling for the next invocation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_in_lambda_mode_answers_every_fixture_and_survives_bad_invocations() {
    use common::runtime_api::{start_function, RuntimeApi};
    const WITHIN: std::time::Duration = std::time::Duration::from_secs(30);
    let h = Harness::new().await;
    let runtime = RuntimeApi::start().await;
    let started = std::time::Instant::now();
    let mut function = start_function(&runtime, &h.db.url);
    let tools_list = || {
        serde_json::from_str::<Value>(
            &std::fs::read_to_string(format!("{}/events/v2/tools-list.json", env!("CARGO_MANIFEST_DIR"))).unwrap(),
        )
        .unwrap()
    };

    let first = runtime.invoke(tools_list(), WITHIN).await.response();
    assert_eq!(first["statusCode"], 200, "{first}");
    let timings = runtime.timings();
    let (polled, answered) =
        (timings.first_next.expect("the function polled"), timings.first_answer.expect("it answered"));
    assert!(started <= polled && polled <= answered, "{timings:?}");

    let mut failures = Vec::new();
    for (path, status) in fixtures() {
        let event: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let response = runtime.invoke(event, WITHIN).await.response();
        if response["statusCode"].as_u64() != Some(status as u64) {
            failures.push(format!("{path}: expected {status}: {response}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    for (bad, error_type) in [
        (serde_json::json!({"hello": "world"}), "InvalidEvent"),
        (serde_json::json!(["not", "an", "object"]), "InvalidEvent"),
        (serde_json::json!({"requestContext": {"nothing": "useful"}, "body": 7}), "InvalidEvent"),
        (serde_json::json!({"kfin": "drop-everything"}), "UnknownCommand"),
    ] {
        let error = runtime.invoke(bad.clone(), WITHIN).await.error();
        assert_eq!(error["errorType"], error_type, "{bad}: {error}");
        assert!(error["errorMessage"].as_str().is_some_and(|m| !m.is_empty()), "{bad}: {error}");
        assert!(function.is_running(), "the process ended after {bad}");
        let after = runtime.invoke(tools_list(), WITHIN).await.response();
        assert_eq!(after["statusCode"], 200, "served again after {bad}: {after}");
    }
    assert!(runtime.init_error(std::time::Duration::from_millis(10)).await.is_none());
}

/// The sign-in through the Lambda handler, each step a fresh process on one database
/// (as each request may land on another Lambda instance): the consent page of a sealed
/// request in a signed-in session, the approval (a redirect with the code), the code's
/// exchange (the token fixture with that code), and the access token's `tools/list`.
#[test]
fn the_sign_in_replays_step_by_step_in_fresh_processes() {
    use crate::event_fixtures::{oauth, token_event, tools_list_event};
    let _env = common::environment_blocking();
    let dir = TempDir::new();
    let database = format!("sqlite:{}", dir.0.join("replay.db").display());
    let replay = |event: &str| -> Value {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_kobana-finance-mcp"))
            .args(["replay", event])
            .env("KFIN_JWT_SECRET", FIXTURE_KEY)
            .env("KFIN_DATABASE_URL", &database)
            .env_remove("KFIN_PUBLIC_URL")
            .env_remove("KFIN_AUTH_SERVER")
            .env_remove("KFIN_SECRET_ID")
            .env_remove("AWS_LAMBDA_RUNTIME_API")
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_slice(&output.stdout).unwrap()
    };
    let root = env!("CARGO_MANIFEST_DIR");
    let consent = replay(&format!("{root}/events/v2/oauth-consent.json"));
    assert_eq!(consent["statusCode"], 200, "{consent}");
    assert!(consent["body"].as_str().unwrap().contains("Fixture client"));
    let approved = replay(&format!("{root}/events/v2/oauth-approve.json"));
    assert_eq!(approved["statusCode"], 302, "{approved}");
    let location = header(&approved, "location").unwrap();
    assert!(location.starts_with(oauth::CALLBACK), "{location}");
    let query = location.split_once('?').unwrap().1;
    let code = url::form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == "code").unwrap().1.into_owned();
    let write = |name: &str, event: Value| {
        let path = dir.0.join(name);
        std::fs::write(&path, event.to_string()).unwrap();
        path.display().to_string()
    };
    let tokens = replay(&write("token.json", token_event(&code)));
    assert_eq!(tokens["statusCode"], 200, "{tokens}");
    let body: Value = serde_json::from_str(tokens["body"].as_str().unwrap()).unwrap();
    let access = body["access_token"].as_str().unwrap();
    let listed = replay(&write("tools-list.json", tools_list_event(access)));
    assert_eq!(listed["statusCode"], 200, "{listed}");
    // The code is spent: the same exchange again is refused.
    let again = replay(&write("token.json", token_event(&code)));
    assert_eq!(again["statusCode"], 400, "{again}");
}
