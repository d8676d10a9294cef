//! The Lambda entry point: API Gateway REST (v1), HTTP API (v2), Function URL and ALB
//! events run through the same router as the local server; the direct `migrate`
//! invocation and CloudFormation's custom-resource requests go to `deploy` (which
//! decides what an invocation is).
//!
//! One guard sits in front of the runtime's event conversion: a body flagged
//! `isBase64Encoded` that is not valid base64 would make that conversion panic, so such
//! an event is answered 400 (-32700) here, as the framing error it is.

use std::convert::Infallible;

use axum::Router;
use base64::Engine;
use lambda_http::lambda_runtime::Diagnostic;
use lambda_http::request::LambdaRequest;
use lambda_http::{lambda_runtime, service_fn, Adapter, LambdaEvent, Service};
use serde_json::value::RawValue;
use serde_json::Value;

use super::deploy::{self, Invocation};
use super::response;
use crate::app::AppState;
use crate::protocol::rpc::{RpcError, PARSE_ERROR};

pub type LambdaResponse =
    <Adapter<'static, axum::response::Response, Router> as Service<LambdaEvent<LambdaRequest>>>::Response;

/// What one invocation answers: a Lambda HTTP response, or the JSON of a deploy step.
/// (One per invocation, on the stack until serialised: the common HTTP variant is not
/// boxed, which would allocate on every request for nothing.)
#[derive(serde::Serialize)]
#[serde(untagged)]
#[allow(clippy::large_enum_variant)]
pub enum Answer {
    Http(LambdaResponse),
    Deploy(Value),
}

/// Runs the Lambda runtime loop until the process is stopped.
pub async fn run(state: AppState) -> Result<(), lambda_runtime::Error> {
    let app = super::router(state.clone());
    lambda_runtime::run(service_fn(move |event: LambdaEvent<Box<RawValue>>| invoke(state.clone(), app.clone(), event)))
        .await
}

/// Handles one invocation of any kind: HTTP events through the router, the deploy
/// invocations through `deploy`. A failed deploy step is a function error.
pub async fn invoke(state: AppState, app: Router, event: LambdaEvent<Box<RawValue>>) -> Result<Answer, Diagnostic> {
    let LambdaEvent { payload, context } = event;
    let failure =
        |error_type: &str, message: String| Diagnostic { error_type: error_type.into(), error_message: message };
    match deploy::classify(payload.get()).map_err(|e| failure("InvalidEvent", e))? {
        Invocation::Http => {
            let request = parse_event(payload.get().as_bytes()).map_err(|e| failure("InvalidEvent", e))?;
            let Ok(response) = handle_event(app, LambdaEvent { payload: request, context }).await;
            Ok(Answer::Http(response))
        }
        Invocation::Migrate => {
            deploy::migrate(&state.db).await.map(Answer::Deploy).map_err(|e| failure("MigrationFailed", e))
        }
        Invocation::BanksImport(file) => deploy::banks_import(&state.db, &file)
            .await
            .map(Answer::Deploy)
            .map_err(|e| failure("BanksImportFailed", e)),
        Invocation::WorkspaceCreate { name, owner_email } => deploy::workspace_create(&state.db, &name, &owner_email)
            .await
            .map(Answer::Deploy)
            .map_err(|e| failure("WorkspaceCreateFailed", e)),
        Invocation::CustomResource(request) => deploy::custom_resource(&state.db, &request)
            .await
            .map(Answer::Deploy)
            .map_err(|e| failure("CustomResourceResponseFailed", e)),
        Invocation::UnknownCommand(command) => Err(failure(
            "UnknownCommand",
            format!("unknown kfin command {command}; the ones there are: \"migrate\", \"banks-import\", \"workspace-create\""),
        )),
    }
}

/// Takes the body out of an event whose base64 body does not decode; returns whether
/// it did.
fn remove_malformed_body(event: &mut LambdaRequest) -> bool {
    let (encoded, body) = match event {
        LambdaRequest::ApiGatewayV1(r) => (r.is_base64_encoded, &mut r.body),
        LambdaRequest::ApiGatewayV2(r) => (r.is_base64_encoded, &mut r.body),
        LambdaRequest::Alb(r) => (r.is_base64_encoded, &mut r.body),
        #[allow(unreachable_patterns)]
        _ => return false,
    };
    let malformed =
        encoded && body.as_deref().is_some_and(|b| base64::engine::general_purpose::STANDARD.decode(b).is_err());
    if malformed {
        *body = None;
    }
    malformed
}

/// Handles one invocation: the event becomes an HTTP request for the router, and the
/// router's response becomes the Lambda response for that event's source.
pub async fn handle_event(app: Router, event: LambdaEvent<LambdaRequest>) -> Result<LambdaResponse, Infallible> {
    let LambdaEvent { mut payload, context } = event;
    if remove_malformed_body(&mut payload) {
        let error =
            RpcError::new(http::StatusCode::BAD_REQUEST, PARSE_ERROR, "Parse error: the body is not valid base64");
        let mut answer = response::no_store(response::rpc_error(&Value::Null, &error, None)).await;
        if let Ok(id) = http::HeaderValue::from_str(&super::RequestId::of_invocation(Some(&context))) {
            answer.headers_mut().insert("request-id", id);
        }
        let mut fixed = Some(answer);
        let mut adapter: Adapter<'static, _, _> = Adapter::from(service_fn(move |_request: lambda_http::Request| {
            let answer = fixed.take().unwrap_or_else(response::accepted);
            async move { Ok::<_, Infallible>(answer) }
        }));
        return adapter.call(LambdaEvent { payload, context }).await;
    }
    let mut adapter: Adapter<'static, _, _> = Adapter::from(app);
    adapter.call(LambdaEvent { payload, context }).await
}

/// Parses an event fixture (API Gateway v1/v2, Function URL or ALB).
pub fn parse_event(bytes: &[u8]) -> Result<LambdaRequest, String> {
    serde_json::from_slice(bytes).map_err(|e| format!("not an API Gateway, Function URL or ALB event: {e}"))
}
