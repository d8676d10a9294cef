//! Migrations on deploy, through the Lambda handler (the suite's database: SQLite, and
//! PostgreSQL in its pass) and through the real binary under the Runtime API stand-in
//! (`common::runtime_api`):
//!
//! * `{"kfin":"migrate"}` invoked directly applies the migrations, and a second run is a
//!   no-op; a database that fails makes it a function error;
//! * a CloudFormation custom-resource Create / Update migrates and Delete does nothing,
//!   each PUTting `SUCCESS` (or `FAILED` with a reason) to the `ResponseURL`;
//! * an API Gateway / Function URL event whose body is the migrate payload is an HTTP
//!   request like any other: refused, and nothing is migrated.

use crate::common;

use std::time::Duration;

use common::runtime_api::{start_function, RuntimeApi};
use common::*;
use kobana_finance_mcp::app::{App, AppState};
use kobana_finance_mcp::transport::lambda::{self, Answer};
use lambda_http::{Context, LambdaEvent};
use serde_json::{json, value::RawValue, Value};

/// An app over a fresh database that nothing has migrated.
async fn unmigrated() -> (AppState, TestDb) {
    let db = TestDb::new().await;
    let state = App::build(common::config(db.url.clone())).await.expect("app");
    (state, db)
}

async fn invoke(state: &AppState, event: Value) -> Result<Value, lambda_http::lambda_runtime::Diagnostic> {
    let app = kobana_finance_mcp::transport::router(state.clone());
    let payload = RawValue::from_string(event.to_string()).unwrap();
    let answer = lambda::invoke(state.clone(), app, LambdaEvent { payload, context: Context::default() }).await?;
    Ok(match answer {
        Answer::Deploy(v) => v,
        Answer::Http(r) => json!({"http": serde_json::to_value(&r).unwrap()}),
    })
}

async fn applied_count(state: &AppState) -> Option<i64> {
    sql::query("SELECT COUNT(*) FROM schema_migrations").fetch_one(&state.db).await.ok().map(|r| r.try_get(0).unwrap())
}

fn custom_resource(request_type: &str, response_url: &str, physical: Option<&str>) -> Value {
    let mut event = json!({
        "RequestType": request_type,
        "ServiceToken": "arn:aws:lambda:us-east-1:123456789012:function:kobana-finance",
        "ResponseURL": response_url,
        "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/kobana-finance/1e2d3c4b",
        "RequestId": format!("req-{request_type}"),
        "LogicalResourceId": "MigrateOnDeploy",
        "ResourceType": "Custom::KobanaFinanceMigrations",
        "ResourceProperties": {"ServiceToken": "arn:aws:lambda:us-east-1:123456789012:function:kobana-finance", "Command": "migrate", "DeployId": "2"},
    });
    if let Some(id) = physical {
        event["PhysicalResourceId"] = json!(id);
        event["OldResourceProperties"] = json!({"Command": "migrate", "DeployId": "1"});
    }
    event
}

#[tokio::test]
async fn a_direct_migrate_invocation_applies_the_migrations_and_a_second_is_a_no_op() {
    let (state, _db) = unmigrated().await;
    assert_eq!(applied_count(&state).await, None, "nothing migrated yet");
    let first = invoke(&state, json!({"kfin": "migrate"})).await.expect("migrated");
    let total = applied_count(&state).await.expect("schema_migrations");
    assert!(total >= 5);
    assert_eq!(first, json!({"kfin": "migrate", "applied": total}));
    let second = invoke(&state, json!({"kfin": "migrate"})).await.expect("no-op");
    assert_eq!(second, json!({"kfin": "migrate", "applied": 0}));
    assert_eq!(applied_count(&state).await, Some(total));
}

#[tokio::test]
async fn an_unknown_direct_command_is_a_function_error() {
    let (state, _db) = unmigrated().await;
    let err = invoke(&state, json!({"kfin": "drop-everything"})).await.unwrap_err();
    assert_eq!(err.error_type, "UnknownCommand");
    assert_eq!(applied_count(&state).await, None);
}

#[tokio::test]
async fn a_custom_resource_migrates_on_create_and_update_and_deletes_nothing() {
    let sink = RuntimeApi::start().await;
    let (state, _db) = unmigrated().await;

    let sent = invoke(&state, custom_resource("Create", &sink.response_url("create"), None)).await.expect("responded");
    let put = sink.cfn_response("create", Duration::from_secs(5)).await;
    assert_eq!(put, sent, "the function returns what it PUT");
    let total = applied_count(&state).await.expect("migrated");
    assert_eq!(put["Status"], "SUCCESS", "{put}");
    assert_eq!(put["Data"]["Applied"], total);
    assert_eq!(put["RequestId"], "req-Create");
    assert_eq!(put["LogicalResourceId"], "MigrateOnDeploy");
    assert_eq!(put["StackId"], "arn:aws:cloudformation:us-east-1:123456789012:stack/kobana-finance/1e2d3c4b");
    let physical = put["PhysicalResourceId"].as_str().expect("a physical id").to_string();

    invoke(&state, custom_resource("Update", &sink.response_url("update"), Some(&physical))).await.expect("responded");
    let put = sink.cfn_response("update", Duration::from_secs(5)).await;
    assert_eq!(put["Status"], "SUCCESS", "{put}");
    assert_eq!(put["Data"]["Applied"], 0, "a second deploy is a no-op");
    assert_eq!(put["PhysicalResourceId"], physical.as_str(), "the same resource: no replacement, no Delete");

    invoke(&state, custom_resource("Delete", &sink.response_url("delete"), Some(&physical))).await.expect("responded");
    let put = sink.cfn_response("delete", Duration::from_secs(5)).await;
    assert_eq!(put["Status"], "SUCCESS", "{put}");
    assert_eq!(applied_count(&state).await, Some(total), "Delete leaves the schema (and the data) alone");
}

#[tokio::test]
async fn a_database_failure_is_reported_as_a_failure() {
    let sink = RuntimeApi::start().await;
    let (state, _db) = unmigrated().await;
    state.db.close().await;

    let err = invoke(&state, json!({"kfin": "migrate"})).await.unwrap_err();
    assert_eq!(err.error_type, "MigrationFailed");
    assert!(err.error_message.starts_with("migration failed"), "{}", err.error_message);

    invoke(&state, custom_resource("Create", &sink.response_url("failed"), None)).await.expect("the failure was sent");
    let put = sink.cfn_response("failed", Duration::from_secs(5)).await;
    assert_eq!(put["Status"], "FAILED", "{put}");
    assert!(put["Reason"].as_str().is_some_and(|r| r.starts_with("migration failed")), "{put}");
    assert!(
        put["PhysicalResourceId"].as_str().is_some_and(|p| !p.is_empty()),
        "CloudFormation requires one even on failure"
    );
}

#[tokio::test]
async fn a_custom_resource_for_another_command_fails_and_migrates_nothing() {
    let sink = RuntimeApi::start().await;
    let (state, _db) = unmigrated().await;
    let mut event = custom_resource("Create", &sink.response_url("other"), None);
    event["ResourceProperties"]["Command"] = json!("seed");
    invoke(&state, event).await.expect("responded");
    let put = sink.cfn_response("other", Duration::from_secs(5)).await;
    assert_eq!(put["Status"], "FAILED", "{put}");
    assert_eq!(applied_count(&state).await, None);
}

#[tokio::test]
async fn a_custom_resource_never_sends_its_answer_to_a_plain_http_address() {
    let (state, _db) = unmigrated().await;
    let err = invoke(&state, custom_resource("Create", "http://example.com/cfn", None)).await.unwrap_err();
    assert_eq!(err.error_type, "CustomResourceResponseFailed");
    assert_eq!(applied_count(&state).await, None, "nothing ran for a request with a refused ResponseURL");
}

#[tokio::test]
async fn an_http_event_carrying_the_migrate_payload_is_refused() {
    let _env = common::environment().await;
    std::env::set_var("AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH", "true");
    let (state, _db) = unmigrated().await;
    let root = env!("CARGO_MANIFEST_DIR");
    for kind in ["v1", "v2", "function-url"] {
        let mut event: Value =
            serde_json::from_str(&std::fs::read_to_string(format!("{root}/events/{kind}/tools-list.json")).unwrap())
                .unwrap();
        event["body"] = json!(json!({"kfin": "migrate"}).to_string());
        event["isBase64Encoded"] = json!(false);
        // Even with the command beside the HTTP fields, it stays an HTTP request.
        event["kfin"] = json!("migrate");
        let answer = invoke(&state, event).await.expect("an HTTP answer");
        let status =
            answer["http"]["statusCode"].as_u64().unwrap_or_else(|| panic!("{kind}: not an HTTP response: {answer}"));
        assert!((400..500).contains(&status), "{kind}: {answer}");
        assert_eq!(applied_count(&state).await, None, "{kind}: an HTTP request migrated the database");
    }
}

// ---------------------------------------------------------------------------------------
// The real binary under the Runtime API stand-in
// ---------------------------------------------------------------------------------------

const WITHIN: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_migrates_on_a_direct_invoke_and_on_a_custom_resource_under_the_runtime_api() {
    let runtime = RuntimeApi::start().await;
    let dir = TempDir::new();
    let url = format!("sqlite:{}", dir.0.join("lambda.db").display());
    let _function = start_function(&runtime, &url);

    let first = runtime.invoke(json!({"kfin": "migrate"}), WITHIN).await.response();
    let applied = first["applied"].as_u64().expect("applied");
    assert!(applied >= 5, "{first}");
    assert_eq!(
        runtime.invoke(json!({"kfin": "migrate"}), WITHIN).await.response(),
        json!({"kfin": "migrate", "applied": 0})
    );

    runtime.invoke(custom_resource("Create", &runtime.response_url("create"), None), WITHIN).await.response();
    let put = runtime.cfn_response("create", WITHIN).await;
    assert_eq!((put["Status"].as_str(), put["Data"]["Applied"].as_u64()), (Some("SUCCESS"), Some(0)), "{put}");
    runtime
        .invoke(custom_resource("Delete", &runtime.response_url("delete"), put["PhysicalResourceId"].as_str()), WITHIN)
        .await
        .response();
    assert_eq!(runtime.cfn_response("delete", WITHIN).await["Status"], "SUCCESS");

    // HTTP events keep working through the same runtime loop…
    let root = env!("CARGO_MANIFEST_DIR");
    let discover: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{root}/events/v2/discover.json")).unwrap()).unwrap();
    let answer = runtime.invoke(discover.clone(), WITHIN).await.response();
    assert_eq!(answer["statusCode"], 200, "{answer}");
    // …and one whose body is the migrate payload is just a request.
    let mut disguised = discover;
    disguised["body"] = json!(json!({"kfin": "migrate"}).to_string());
    disguised["isBase64Encoded"] = json!(false);
    let answer = runtime.invoke(disguised, WITHIN).await.response();
    assert!(answer["statusCode"].as_u64().is_some_and(|s| (400..500).contains(&s)), "{answer}");
    assert!(runtime.init_error(Duration::from_millis(10)).await.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_reports_a_failed_migration_as_an_invocation_error_and_to_cloudformation() {
    let runtime = RuntimeApi::start().await;
    let dir = TempDir::new();
    let path = dir.0.join("conflict.db");
    // A table in the way of the first migration.
    let db = kobana_finance_mcp::storage::Db::connect(&format!("sqlite:{}", path.display()), 1).await.unwrap();
    db.execute_script("CREATE TABLE workspaces (something_else INTEGER)").await.unwrap();
    db.close().await;
    let _function = start_function(&runtime, &format!("sqlite:{}", path.display()));

    let error = runtime.invoke(json!({"kfin": "migrate"}), WITHIN).await.error();
    assert_eq!(error["errorType"], "MigrationFailed", "{error}");
    assert!(error["errorMessage"].as_str().is_some_and(|m| m.contains("migration failed")), "{error}");

    runtime
        .invoke(
            custom_resource(
                "Update",
                &runtime.response_url("update"),
                Some("kobana-finance-migrations-MigrateOnDeploy"),
            ),
            WITHIN,
        )
        .await
        .response();
    let put = runtime.cfn_response("update", WITHIN).await;
    assert_eq!(put["Status"], "FAILED", "{put}");
    assert!(put["Reason"].as_str().is_some_and(|r| r.contains("migration failed")), "{put}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_creates_a_workspace_and_invites_its_owner_on_a_direct_invoke_under_the_runtime_api() {
    let runtime = RuntimeApi::start().await;
    let dir = TempDir::new();
    let url = format!("sqlite:{}", dir.0.join("lambda.db").display());
    let _function = start_function(&runtime, &url);

    // An empty deployment: the invocation migrates first.
    let created = runtime
        .invoke(
            json!({"kfin": "workspace-create", "name": "Gama Serviços", "owner_email": " Dona@Gama.com.br "}),
            WITHIN,
        )
        .await
        .response();
    assert_eq!(created["kfin"], "workspace-create", "{created}");
    assert_eq!(created["name"], "Gama Serviços");
    let invitation = &created["owner_invitation"];
    assert_eq!((invitation["email"].as_str(), invitation["role"].as_str()), (Some("dona@gama.com.br"), Some("owner")));
    assert_eq!(invitation["workspace_id"], created["workspace_id"]);

    for (bad, error) in [
        (json!({"kfin": "workspace-create", "name": "Gama", "owner_email": "not an address"}), "e-mail address"),
        (json!({"kfin": "workspace-create", "name": " ", "owner_email": "dona@gama.com.br"}), "1 to 120"),
        (json!({"kfin": "workspace-create", "name": "Gama"}), "owner_email"),
    ] {
        let refused = runtime.invoke(bad, WITHIN).await.error();
        assert!(refused["errorMessage"].as_str().is_some_and(|m| m.contains(error)), "{refused}");
    }
    drop(_function);
    let db = kobana_finance_mcp::storage::Db::connect(&url, 1).await.unwrap();
    let workspaces =
        sql::query("SELECT COUNT(*) FROM workspaces").fetch_one(&db).await.unwrap().try_get::<i64, _>(0).unwrap();
    assert_eq!(workspaces, 1, "the refused ones created nothing");
}
