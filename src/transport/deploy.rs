//! Migrations on deploy, and the other invocations of the Lambda function that are not
//! HTTP.
//!
//! * A direct invoke (`aws lambda invoke`, IAM `lambda:InvokeFunction`) with the payload
//!   `{"kfin":"migrate"}` applies the pending migrations and answers
//!   `{"kfin":"migrate","applied":N}` (0 when the schema is current); a failure is a
//!   function error.
//! * `{"kfin":"banks-import","file_base64":"…"}`, invoked directly, refreshes the bank
//!   list from the Central Bank's `ParticipantesSTR.csv` (its bytes, base64: the file
//!   may be Windows-1252), as `kobana-finance-mcp banks import FILE` does, and answers
//!   what was added, renamed and dropped; a bad file is a function error naming its line,
//!   and changes nothing.
//! * `{"kfin":"workspace-create","name":"…","owner_email":"…"}`, invoked directly,
//!   creates a workspace and invites its first owner (the person who signs in with that
//!   address, verified by the company's identity provider), as `kobana-finance-mcp
//!   workspace create` does; it answers the workspace and the invitation.
//! * A CloudFormation custom-resource request (the template's `MigrateOnDeploy`, sent on
//!   every deploy): `Create` and `Update` apply the migrations, `Delete` does nothing
//!   (the data outlives the stack); the outcome is PUT to the request's presigned
//!   `ResponseURL` as the documented response object, `SUCCESS` or `FAILED` with a reason.
//!
//! Neither can arrive through API Gateway or a Function URL: those wrap every request in
//! an event with a `requestContext`, and such an event is HTTP whatever its body says
//! (it reaches the router, which knows no migrate). [`classify`] decides, on the event's
//! top-level fields only.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::https::Https;
use crate::storage::{migrate, Db};

/// What an invocation is, from its top-level fields.
#[derive(Debug)]
pub enum Invocation {
    /// API Gateway (REST or HTTP API), Function URL or ALB: the router answers it.
    Http,
    /// `{"kfin":"migrate"}`, invoked directly.
    Migrate,
    /// `{"kfin":"banks-import","file_base64":"…"}`, invoked directly: the file's bytes.
    BanksImport(Vec<u8>),
    /// `{"kfin":"workspace-create","name":"…","owner_email":"…"}`, invoked directly.
    WorkspaceCreate { name: String, owner_email: String },
    /// A CloudFormation custom-resource request.
    CustomResource(CustomResourceRequest),
    /// `{"kfin": <anything else>}`.
    UnknownCommand(String),
}

#[derive(Deserialize)]
struct Probe {
    #[serde(rename = "requestContext")]
    request_context: Option<serde::de::IgnoredAny>,
    kfin: Option<Value>,
    #[serde(rename = "RequestType")]
    request_type: Option<serde::de::IgnoredAny>,
    #[serde(rename = "ResponseURL")]
    response_url: Option<serde::de::IgnoredAny>,
}

/// The fields of a CloudFormation custom-resource request this handler uses.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CustomResourceRequest {
    pub request_type: String,
    #[serde(rename = "ResponseURL")]
    pub response_url: String,
    pub stack_id: String,
    pub request_id: String,
    pub logical_resource_id: String,
    pub physical_resource_id: Option<String>,
    /// The template's properties; `Command` must be `"migrate"`.
    pub resource_properties: Option<Value>,
}

/// Classifies an invocation's payload. An event with a `requestContext` is HTTP, always.
pub fn classify(payload: &str) -> Result<Invocation, String> {
    let probe: Probe =
        serde_json::from_str(payload).map_err(|_| "the invocation payload is not a JSON object".to_string())?;
    if probe.request_context.is_some() {
        return Ok(Invocation::Http);
    }
    if let Some(command) = probe.kfin {
        return Ok(match command.as_str() {
            Some("migrate") => Invocation::Migrate,
            Some("banks-import") => Invocation::BanksImport(banks_file(payload)?),
            Some("workspace-create") => {
                #[derive(Deserialize)]
                #[serde(deny_unknown_fields)]
                struct Create {
                    #[serde(rename = "kfin")]
                    _kfin: Value,
                    name: String,
                    owner_email: String,
                }
                let create: Create = serde_json::from_str(payload)
                    .map_err(|e| format!("workspace-create needs name and owner_email: {e}"))?;
                Invocation::WorkspaceCreate { name: create.name, owner_email: create.owner_email }
            }
            _ => Invocation::UnknownCommand(command.to_string()),
        });
    }
    if probe.request_type.is_some() && probe.response_url.is_some() {
        let request =
            serde_json::from_str(payload).map_err(|e| format!("not a CloudFormation custom-resource request: {e}"))?;
        return Ok(Invocation::CustomResource(request));
    }
    Ok(Invocation::Http)
}

/// The file of a `banks-import` invocation.
fn banks_file(payload: &str) -> Result<Vec<u8>, String> {
    use base64::Engine;
    #[derive(Deserialize)]
    struct BanksImport {
        file_base64: Option<String>,
    }
    let command: BanksImport = serde_json::from_str(payload).map_err(|e| format!("banks-import: {e}"))?;
    let encoded = command.file_base64.ok_or("banks-import needs file_base64: the bytes of ParticipantesSTR.csv")?;
    base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .map_err(|_| "banks-import: file_base64 is not base64".to_string())
}

/// Refreshes the bank list (pending migrations applied first, so the list exists); the
/// answer of a direct `banks-import`, and of `kobana-finance-mcp banks import`.
pub async fn banks_import(db: &Db, file: &[u8]) -> Result<Value, String> {
    migrate::run(db).await.map_err(|e| format!("migration failed: {e}"))?;
    let outcome = crate::storage::banks::import(db, file).await.map_err(|e| e.to_string())?;
    tracing::info!(
        listed = outcome.listed,
        added = outcome.added.len(),
        renamed = outcome.renamed.len(),
        dropped = outcome.dropped.len(),
        "bank list refreshed"
    );
    let mut answer = serde_json::to_value(&outcome).map_err(|e| e.to_string())?;
    answer["kfin"] = json!("banks-import");
    Ok(answer)
}

/// Creates a workspace named `name` (one line, 1–120 characters) with the invitation of
/// its first owner, `owner_email` (pending migrations applied first); the answer of a
/// direct `workspace-create`, and of `kobana-finance-mcp workspace create`.
pub async fn workspace_create(db: &Db, name: &str, owner_email: &str) -> Result<Value, String> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 120 || !crate::domain::text::is_plain(name) {
        return Err("the workspace's name must be one line of 1 to 120 characters".into());
    }
    let email = crate::domain::email::normalized(owner_email)
        .ok_or_else(|| format!("{owner_email:?} is not an e-mail address (name@example.com)"))?;
    migrate::run(db).await.map_err(|e| format!("migration failed: {e}"))?;
    let fail = |e: crate::storage::Error| format!("cannot create the workspace: {e}");
    let mut tx = db.begin().await.map_err(fail)?;
    let created = crate::storage::people::create_workspace(&mut tx, name, &email, crate::clock::now_unix())
        .await
        .map_err(fail)?;
    crate::storage::audit::append(
        &mut tx,
        crate::domain::channel::Channel::System,
        &crate::storage::audit::AuditEvent {
            workspace_id: Some(&created.workspace_id),
            action: "workspaces.created",
            target_type: Some("invitation"),
            target_id: Some(&created.owner_invitation.id),
            outcome: "success",
            details: Some(json!({"owner_email": email}).to_string()),
            ..Default::default()
        },
    )
    .await
    .map_err(fail)?;
    tx.commit().await.map_err(fail)?;
    tracing::info!(workspace = %created.workspace_id, "workspace created");
    let mut answer = serde_json::to_value(&created).map_err(|e| e.to_string())?;
    answer["kfin"] = json!("workspace-create");
    Ok(answer)
}

/// Applies the pending migrations; the answer of a direct `{"kfin":"migrate"}`.
pub async fn migrate(db: &Db) -> Result<Value, String> {
    let applied = migrate::run(db).await.map_err(|e| format!("migration failed: {e}"))?;
    tracing::info!(applied, "migrations run by a direct invocation");
    Ok(json!({"kfin": "migrate", "applied": applied}))
}

/// CloudFormation keeps a reason of at most a few KB; ours stay short.
const MAX_REASON: usize = 1_000;

/// Carries out a custom-resource request and PUTs its outcome to the `ResponseURL`;
/// returns the response object sent. `Err` only when the response could not be sent
/// (the invocation then fails, and an asynchronous invoke is retried by Lambda).
pub async fn custom_resource(db: &Db, request: &CustomResourceRequest) -> Result<Value, String> {
    let url = response_url(&request.response_url)?;
    let command = request.resource_properties.as_ref().and_then(|p| p.get("Command")).and_then(Value::as_str);
    let outcome = match (request.request_type.as_str(), command) {
        // Deleting the resource (or the stack) never touches the schema, and never blocks.
        ("Delete", _) => Ok(0),
        ("Create" | "Update", Some("migrate")) => migrate::run(db).await.map_err(|e| format!("migration failed: {e}")),
        ("Create" | "Update", _) => Err("the custom resource's Command property must be \"migrate\"".to_string()),
        (other, _) => Err(format!("unknown RequestType {other:?}")),
    };
    let physical_id = request
        .physical_resource_id
        .clone()
        .filter(|id| !id.is_empty())
        .unwrap_or_else(|| format!("kobana-finance-migrations-{}", request.logical_resource_id));
    let mut response = json!({
        "StackId": request.stack_id,
        "RequestId": request.request_id,
        "LogicalResourceId": request.logical_resource_id,
        "PhysicalResourceId": physical_id,
        "NoEcho": false,
    });
    match &outcome {
        Ok(applied) => {
            tracing::info!(request_type = %request.request_type, applied, "custom resource: migrations");
            response["Status"] = json!("SUCCESS");
            response["Reason"] = json!(format!("{applied} migration(s) applied"));
            response["Data"] = json!({"Applied": applied});
        }
        Err(reason) => {
            tracing::error!(request_type = %request.request_type, error = %reason, "custom resource: migrations failed");
            let mut reason = reason.clone();
            if reason.len() > MAX_REASON {
                let mut end = MAX_REASON;
                while !reason.is_char_boundary(end) {
                    end -= 1;
                }
                reason.truncate(end);
            }
            response["Status"] = json!("FAILED");
            response["Reason"] = json!(reason);
        }
    }
    put(&url, response.to_string()).await?;
    Ok(response)
}

/// The presigned URL CloudFormation gave: HTTPS, or plain HTTP to a loopback address (a
/// local stand-in in tests). Anything else is refused, so a forged request cannot make
/// the function send data to an arbitrary plain-text address.
fn response_url(url: &str) -> Result<url::Url, String> {
    let parsed = url::Url::parse(url).map_err(|_| "the ResponseURL is not a URL".to_string())?;
    let loopback = match parsed.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d == "localhost",
        None => false,
    };
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if loopback => Ok(parsed),
        _ => Err("the ResponseURL must be https".into()),
    }
}

/// How long the response PUT may take in all, its connection being set up within the
/// client's connect timeout (`https::CONNECT_TIMEOUT`, 3 s). One attempt: a failure fails
/// the invocation, and Lambda retries an asynchronous one.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(30);

/// PUTs the response object (no Content-Type: the presigned URL is signed without one),
/// with the server's HTTPS client ([`Https`]).
async fn put(url: &url::Url, body: String) -> Result<(), String> {
    let length = body.len();
    let request = http::Request::put(url.as_str())
        .header(http::header::CONTENT_LENGTH, length)
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| format!("cannot build the response request: {e}"))?;
    let answer = tokio::time::timeout(RESPONSE_TIMEOUT, Https::new().send(request))
        .await
        .map_err(|_| format!("the ResponseURL did not answer in {} s", RESPONSE_TIMEOUT.as_secs()))?
        .map_err(|e| format!("cannot send the response to CloudFormation: {e}"))?;
    if !answer.status.is_success() {
        return Err(format!("the ResponseURL answered {}", answer.status));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_with_a_request_context_is_http_whatever_its_body() {
        let event = r#"{"version":"2.0","routeKey":"$default","rawPath":"/","requestContext":{"http":{"method":"POST"}},"body":"{\"kfin\":\"migrate\"}","kfin":"migrate"}"#;
        assert!(matches!(classify(event).unwrap(), Invocation::Http));
    }

    #[test]
    fn direct_commands_and_custom_resources_are_recognised() {
        assert!(matches!(classify(r#"{"kfin":"migrate"}"#).unwrap(), Invocation::Migrate));
        assert!(matches!(classify(r#"{"kfin":"drop"}"#).unwrap(), Invocation::UnknownCommand(_)));
        match classify(r#"{"kfin":"banks-import","file_base64":"aXNwYg=="}"#).unwrap() {
            Invocation::BanksImport(file) => assert_eq!(file, b"ispb"),
            other => panic!("{other:?}"),
        }
        assert!(classify(r#"{"kfin":"banks-import"}"#).unwrap_err().contains("file_base64"));
        let cfn = r#"{"RequestType":"Create","ResponseURL":"https://example.com/x","StackId":"s","RequestId":"r","LogicalResourceId":"M","ResourceType":"Custom::Migrations","ResourceProperties":{"Command":"migrate"}}"#;
        match classify(cfn).unwrap() {
            Invocation::CustomResource(r) => assert_eq!(r.request_type, "Create"),
            other => panic!("{other:?}"),
        }
        assert!(classify("[1]").is_err());
    }

    #[test]
    fn the_response_url_must_be_https_or_loopback() {
        assert!(
            response_url("https://cloudformation-custom-resource-response-useast1.s3.amazonaws.com/x?sig=1").is_ok()
        );
        assert!(response_url("http://127.0.0.1:9/x").is_ok());
        assert!(response_url("http://example.com/x").is_err());
        assert!(response_url("file:///etc/passwd").is_err());
    }
}
