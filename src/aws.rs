//! The AWS calls of the server, and nothing else: Secrets Manager `GetSecretValue` (the
//! signing keys, the database credentials) and S3 `PutObject` / `GetObject` /
//! `DeleteObject` (attachment bytes). Each is one SigV4-signed HTTPS request (signed by
//! `aws-sigv4`) sent by [`Https`], the server's one HTTPS client (hyper, HTTP/1.1,
//! rustls on aws-lc-rs) — no SDK runtime, no second TLS setup. The CloudFormation
//! custom-resource response (`transport::deploy`, a PUT to a presigned S3 URL) is sent
//! by the same client.
//!
//! The environment is the one Lambda provides:
//!
//! * region: `AWS_REGION`, else `AWS_DEFAULT_REGION`;
//! * credentials: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and, for temporary ones,
//!   `AWS_SESSION_TOKEN`. Other credential sources (profiles and `~/.aws` files, web
//!   identity tokens, ECS or EC2 instance metadata) are not supported: run with the
//!   variables set. Without them every call fails with a message saying so (the caller
//!   answers 503 and logs it), and building the client logs it once;
//! * endpoint: `AWS_ENDPOINT_URL_SECRETS_MANAGER` / `AWS_ENDPOINT_URL_S3`, else
//!   `AWS_ENDPOINT_URL` (a local stand-in such as moto or MinIO); otherwise the service's
//!   regional endpoint. S3 is addressed path-style (`endpoint/bucket/key`) on a custom
//!   endpoint, since such endpoints do not resolve bucket subdomains, and
//!   virtual-host style (`bucket.s3.region.amazonaws.com/key`) otherwise (path-style for
//!   a bucket with dots, which a wildcard certificate cannot cover).
//!
//! A call has a short connect timeout and an overall deadline (retries included), and a
//! transport failure, a throttling answer or a 5xx is retried quickly, so a store that is
//! down is reported (503) rather than waited for. No secret value, credential or
//! signature is ever put into an error or a log line.

use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{
    sign, PayloadChecksumKind, PercentEncodingMode, SignableBody, SignableRequest, SigningSettings,
    UriPathNormalizationMode,
};
use aws_sigv4::sign::v4;
use bytes::Bytes;
use http::{HeaderValue, Method, StatusCode};
use http_body_util::{BodyExt, Full};
use serde::Deserialize;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
const RETRY_BACKOFF: Duration = Duration::from_millis(100);

type Connector = hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>;
type HttpClient = hyper_util::client::legacy::Client<Connector, Full<Bytes>>;

/// Why a call did not succeed. Its text names the cause for operators and never quotes a
/// secret value, a credential or a signature.
#[derive(Debug)]
pub enum AwsError {
    /// The environment does not allow the call (no region, no credentials, a bad endpoint).
    Setup(String),
    /// No answer: connection refused or cut, TLS failure, deadline passed.
    Transport(String),
    /// The service answered with an error.
    Service { status: StatusCode, code: String, message: String },
}

impl std::fmt::Display for AwsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AwsError::Setup(e) | AwsError::Transport(e) => f.write_str(e),
            AwsError::Service { status, code, message } if message.is_empty() => {
                write!(f, "the service answered {status}: {code}")
            }
            AwsError::Service { status, code, message } => {
                write!(f, "the service answered {status}: {code}: {message}")
            }
        }
    }
}

impl std::error::Error for AwsError {}

/// Which service a client calls; each has its own endpoint variable and signing rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Service {
    SecretsManager,
    S3,
}

impl Service {
    /// The name requests are signed for (and the endpoint's first label).
    fn signing_name(self) -> &'static str {
        match self {
            Service::SecretsManager => "secretsmanager",
            Service::S3 => "s3",
        }
    }

    fn endpoint_variable(self) -> &'static str {
        match self {
            Service::SecretsManager => "AWS_ENDPOINT_URL_SECRETS_MANAGER",
            Service::S3 => "AWS_ENDPOINT_URL_S3",
        }
    }
}

/// What the environment said, read once per client.
struct Setup {
    region: String,
    credentials: Credentials,
    /// A custom endpoint (scheme, host, port and an optional base path), if one is set.
    custom_endpoint: Option<url::Url>,
}

fn variable(name: &str) -> Option<String> {
    std::env::var(name).ok().map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

impl Setup {
    fn from_env(service: Service) -> Result<Setup, String> {
        let region = variable("AWS_REGION")
            .or_else(|| variable("AWS_DEFAULT_REGION"))
            .ok_or("no AWS region: set AWS_REGION (or AWS_DEFAULT_REGION)")?;
        if !region.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return Err(format!("AWS_REGION {region:?} is not a region name"));
        }
        let (Some(key_id), Some(secret)) = (variable("AWS_ACCESS_KEY_ID"), variable("AWS_SECRET_ACCESS_KEY")) else {
            return Err("no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary \
                        ones); only credentials from the environment are supported"
                .into());
        };
        let credentials = Credentials::new(key_id, secret, variable("AWS_SESSION_TOKEN"), None, "environment");
        let endpoint_variable =
            [service.endpoint_variable(), "AWS_ENDPOINT_URL"].into_iter().find(|name| variable(name).is_some());
        let custom_endpoint = match endpoint_variable {
            None => None,
            Some(name) => {
                let text = variable(name).unwrap_or_default();
                let url = url::Url::parse(&text).map_err(|_| format!("{name} is not a URL: {text:?}"))?;
                if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() || url.query().is_some() {
                    return Err(format!("{name} must be an http(s) URL with a host and no query: {text:?}"));
                }
                Some(url)
            }
        };
        Ok(Setup { region, credentials, custom_endpoint })
    }

    /// The service's base URL, without a trailing slash.
    fn base(&self, service: Service) -> String {
        match &self.custom_endpoint {
            Some(url) => url.as_str().trim_end_matches('/').to_string(),
            None => format!("https://{}.{}.{}", service.signing_name(), self.region, dns_suffix(&self.region)),
        }
    }
}

/// The partition's domain: the China regions have their own.
fn dns_suffix(region: &str) -> &'static str {
    if region.starts_with("cn-") {
        "amazonaws.com.cn"
    } else {
        "amazonaws.com"
    }
}

/// The connector of every HTTPS client of the process: the TLS roots are read once.
/// Each client has its own connection pool on top (a pool belongs to the runtime it was
/// first used on).
fn connector() -> Result<Connector, String> {
    static CONNECTOR: OnceLock<Result<Connector, String>> = OnceLock::new();
    CONNECTOR
        .get_or_init(|| {
            let mut http = hyper_util::client::legacy::connect::HttpConnector::new();
            http.enforce_http(false);
            http.set_connect_timeout(Some(CONNECT_TIMEOUT));
            Ok(hyper_rustls::HttpsConnectorBuilder::new()
                .with_native_roots()
                .map_err(|e| format!("no TLS roots for HTTPS calls: {e}"))?
                .https_or_http()
                .enable_http1()
                .wrap_connector(http))
        })
        .clone()
}

/// An error with its causes, `outer: inner: innermost` (hyper's own text is terse).
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// An answer, whatever its status, read to its end.
pub struct Answer {
    pub status: StatusCode,
    pub body: Bytes,
}

/// The HTTPS client of the server's outgoing calls (the AWS services here, the
/// CloudFormation response in `transport::deploy`): HTTP/1.1 over rustls, a connection
/// given up after `CONNECT_TIMEOUT` (3 s). It sends one request and reads its answer; a
/// caller puts its own deadline around that (and its own retries, if any).
pub struct Https {
    client: Result<HttpClient, String>,
}

impl Default for Https {
    fn default() -> Https {
        Https::new()
    }
}

impl Https {
    /// A client with its own connection pool (over the process's connector).
    pub fn new() -> Https {
        let client = connector()
            .map(|c| hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new()).build(c));
        Https { client }
    }

    /// Sends `request` and reads the answer whole. Any status is an answer; only a failure
    /// to get one is an error: [`AwsError::Setup`] when there are no TLS roots,
    /// [`AwsError::Transport`] (naming the causes) when no answer came.
    pub async fn send(&self, request: http::Request<Full<Bytes>>) -> Result<Answer, AwsError> {
        let http = self.client.as_ref().map_err(|e| AwsError::Setup(e.clone()))?;
        let response =
            http.request(request).await.map_err(|e| AwsError::Transport(format!("no answer: {}", with_causes(&e))))?;
        let status = response.status();
        match response.into_body().collect().await {
            Ok(collected) => Ok(Answer { status, body: collected.to_bytes() }),
            Err(e) => Err(AwsError::Transport(format!("the answer was cut: {}", with_causes(&e)))),
        }
    }
}

/// Worth another attempt: throttling or a server-side failure.
fn retryable(status: StatusCode, body: &[u8]) -> bool {
    status.is_server_error()
        || status == StatusCode::TOO_MANY_REQUESTS
        || (status == StatusCode::BAD_REQUEST && std::str::from_utf8(body).is_ok_and(|b| b.contains("Throttling")))
}

/// A signed client of one service, with its deadline and number of attempts.
struct Client {
    service: Service,
    setup: Result<Setup, String>,
    http: Https,
    operation_timeout: Duration,
    max_attempts: u32,
}

impl Client {
    fn from_env(service: Service, operation_timeout: Duration, max_attempts: u32) -> Client {
        let setup = Setup::from_env(service);
        if let Err(e) = &setup {
            tracing::warn!(service = service.signing_name(), error = %e, "AWS calls will fail");
        }
        Client { service, setup, http: Https::new(), operation_timeout, max_attempts }
    }

    fn setup(&self) -> Result<&Setup, AwsError> {
        self.setup.as_ref().map_err(|e| AwsError::Setup(e.clone()))
    }

    /// The request, signed now (each attempt is signed afresh: the signature carries the time).
    fn signed(
        &self,
        setup: &Setup,
        method: &Method,
        uri: &str,
        headers: &[(&'static str, String)],
        body: &Bytes,
    ) -> Result<http::Request<Full<Bytes>>, AwsError> {
        let mut settings = SigningSettings::default();
        if self.service == Service::S3 {
            // S3 signs the path as sent, and the payload's SHA-256 (x-amz-content-sha256).
            settings.percent_encoding_mode = PercentEncodingMode::Single;
            settings.uri_path_normalization_mode = UriPathNormalizationMode::Disabled;
            settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256;
        }
        let identity = setup.credentials.clone().into();
        let params = v4::SigningParams::builder()
            .identity(&identity)
            .region(&setup.region)
            .name(self.service.signing_name())
            .time(SystemTime::now())
            .settings(settings)
            .build()
            .map_err(|e| AwsError::Setup(format!("cannot sign the request: {e}")))?
            .into();
        let signable = SignableRequest::new(
            method.as_str(),
            uri,
            headers.iter().map(|(n, v)| (*n, v.as_str())),
            SignableBody::Bytes(body),
        )
        .map_err(|e| AwsError::Setup(format!("cannot sign the request: {e}")))?;
        let (instructions, _signature) =
            sign(signable, &params).map_err(|e| AwsError::Setup(format!("cannot sign the request: {e}")))?.into_parts();
        let mut request = http::Request::builder().method(method.clone()).uri(uri);
        for (name, value) in headers {
            request = request.header(
                *name,
                HeaderValue::from_str(value).map_err(|_| AwsError::Setup(format!("bad {name} header")))?,
            );
        }
        let mut request = request
            .body(Full::new(body.clone()))
            .map_err(|e| AwsError::Setup(format!("cannot build the request: {e}")))?;
        instructions.apply_to_request_http1x(&mut request);
        Ok(request)
    }

    /// Sends the request, retrying as the module says, within the deadline. Any status
    /// is an answer; only a failure to get one is an error.
    async fn send(
        &self,
        method: Method,
        uri: &str,
        headers: &[(&'static str, String)],
        body: Bytes,
    ) -> Result<Answer, AwsError> {
        let setup = self.setup()?;
        let attempts = async {
            let mut attempt = 1;
            loop {
                let request = self.signed(setup, &method, uri, headers, &body)?;
                let outcome = self.http.send(request).await;
                let again = match &outcome {
                    Ok(answer) => retryable(answer.status, &answer.body),
                    Err(AwsError::Transport(_)) => true,
                    Err(_) => false,
                };
                if !again || attempt >= self.max_attempts {
                    return outcome;
                }
                tokio::time::sleep(RETRY_BACKOFF * 2u32.pow(attempt - 1)).await;
                attempt += 1;
            }
        };
        tokio::time::timeout(self.operation_timeout, attempts)
            .await
            .map_err(|_| AwsError::Transport(format!("no answer within {} s", self.operation_timeout.as_secs())))?
    }
}

/// Secrets Manager (JSON 1.1 protocol).
pub struct SecretsManager {
    client: Client,
}

impl std::fmt::Debug for SecretsManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretsManager")
    }
}

/// The part of an error answer of the JSON protocols this server reads.
#[derive(Deserialize)]
struct JsonError {
    #[serde(rename = "__type", default)]
    kind: String,
    #[serde(alias = "Message", default)]
    message: String,
}

fn json_error(answer: &Answer) -> AwsError {
    let parsed: Option<JsonError> = serde_json::from_slice(&answer.body).ok();
    let (code, message) = match parsed {
        // `__type` may carry a namespace: `com.amazonaws.secretsmanager#ResourceNotFoundException`.
        Some(e) => (e.kind.rsplit('#').next().unwrap_or_default().to_string(), e.message),
        None => (String::new(), String::new()),
    };
    AwsError::Service { status: answer.status, code, message }
}

#[derive(Deserialize)]
struct SecretValue {
    #[serde(rename = "SecretString")]
    secret_string: Option<String>,
}

impl SecretsManager {
    /// The string value of the secret `secret_id` (its current version); `Ok(None)` when
    /// the secret holds a binary value.
    pub async fn get_secret_string(&self, secret_id: &str) -> Result<Option<String>, AwsError> {
        let uri = format!("{}/", self.client.setup()?.base(Service::SecretsManager));
        let body = Bytes::from(serde_json::json!({"SecretId": secret_id}).to_string());
        let headers = [
            ("content-type", "application/x-amz-json-1.1".to_string()),
            ("x-amz-target", "secretsmanager.GetSecretValue".to_string()),
            ("content-length", body.len().to_string()),
        ];
        let answer = self.client.send(Method::POST, &uri, &headers, body).await?;
        if !answer.status.is_success() {
            return Err(json_error(&answer));
        }
        let value: SecretValue = serde_json::from_slice(&answer.body)
            .map_err(|_| AwsError::Transport("the answer of GetSecretValue is not the expected JSON".into()))?;
        Ok(value.secret_string)
    }
}

/// How long a Secrets Manager call may take in all, and its attempts (one quick retry).
const SECRETS_OPERATION_TIMEOUT: Duration = Duration::from_secs(8);
const SECRETS_ATTEMPTS: u32 = 2;

/// The Secrets Manager client of the two secrets (signing keys, database credentials),
/// from the environment.
pub fn secrets_manager() -> SecretsManager {
    SecretsManager { client: Client::from_env(Service::SecretsManager, SECRETS_OPERATION_TIMEOUT, SECRETS_ATTEMPTS) }
}

/// S3 (REST protocol, XML error answers).
pub struct S3 {
    client: Client,
}

/// S3 keys and bucket names in a path: every byte but the unreserved ones is escaped,
/// `/` between the key's segments kept (what SigV4 expects of S3's canonical path).
const KEY_ESCAPES: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~').remove(b'/');

/// `<Code>` and `<Message>` of an S3 error document (plain text inside; nothing else is read).
fn xml_field(body: &str, name: &str) -> String {
    let (open, close) = (format!("<{name}>"), format!("</{name}>"));
    body.split_once(&open)
        .and_then(|(_, rest)| rest.split_once(&close))
        .map(|(text, _)| text.trim().to_string())
        .unwrap_or_default()
}

fn xml_error(answer: &Answer) -> AwsError {
    let body = String::from_utf8_lossy(&answer.body);
    AwsError::Service { status: answer.status, code: xml_field(&body, "Code"), message: xml_field(&body, "Message") }
}

/// How long an S3 call may take in all, and its attempts.
const S3_OPERATION_TIMEOUT: Duration = Duration::from_secs(10);
const S3_ATTEMPTS: u32 = 3;

impl S3 {
    /// The client, from the environment.
    pub fn from_env() -> S3 {
        S3 { client: Client::from_env(Service::S3, S3_OPERATION_TIMEOUT, S3_ATTEMPTS) }
    }

    /// The object's URL: path-style on a custom endpoint or for a bucket with dots,
    /// virtual-host style otherwise.
    fn url(&self, bucket: &str, key: &str) -> Result<String, AwsError> {
        let setup = self.client.setup()?;
        let key = percent_encoding::utf8_percent_encode(key, KEY_ESCAPES);
        Ok(if setup.custom_endpoint.is_some() || bucket.contains('.') {
            format!("{}/{bucket}/{key}", setup.base(Service::S3))
        } else {
            format!("https://{bucket}.s3.{}.{}/{key}", setup.region, dns_suffix(&setup.region))
        })
    }

    pub async fn put_object(
        &self,
        bucket: &str,
        key: &str,
        content: Bytes,
        content_type: &str,
    ) -> Result<(), AwsError> {
        let url = self.url(bucket, key)?;
        let headers = [("content-type", content_type.to_string()), ("content-length", content.len().to_string())];
        let answer = self.client.send(Method::PUT, &url, &headers, content).await?;
        if !answer.status.is_success() {
            return Err(xml_error(&answer));
        }
        Ok(())
    }

    /// The object's bytes; `Ok(None)` when there is no such key.
    pub async fn get_object(&self, bucket: &str, key: &str) -> Result<Option<Bytes>, AwsError> {
        let url = self.url(bucket, key)?;
        let answer = self.client.send(Method::GET, &url, &[], Bytes::new()).await?;
        if answer.status.is_success() {
            return Ok(Some(answer.body));
        }
        match xml_error(&answer) {
            AwsError::Service { status: StatusCode::NOT_FOUND, code, .. } if code == "NoSuchKey" => Ok(None),
            other => Err(other),
        }
    }

    /// Removes the object; removing one that is gone succeeds (S3 answers 204 either way).
    pub async fn delete_object(&self, bucket: &str, key: &str) -> Result<(), AwsError> {
        let url = self.url(bucket, key)?;
        let answer = self.client.send(Method::DELETE, &url, &[], Bytes::new()).await?;
        if !answer.status.is_success() {
            return Err(xml_error(&answer));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(region: &str, endpoint: Option<&str>) -> Setup {
        Setup {
            region: region.into(),
            credentials: Credentials::new("AKIDEXAMPLE", "secret", None, None, "test"),
            custom_endpoint: endpoint.map(|e| url::Url::parse(e).unwrap()),
        }
    }

    fn s3(setup: Setup) -> S3 {
        S3 {
            client: Client {
                service: Service::S3,
                setup: Ok(setup),
                http: Https { client: Err("not used".into()) },
                operation_timeout: S3_OPERATION_TIMEOUT,
                max_attempts: S3_ATTEMPTS,
            },
        }
    }

    #[test]
    fn endpoints_are_regional_unless_overridden() {
        assert_eq!(
            setup("sa-east-1", None).base(Service::SecretsManager),
            "https://secretsmanager.sa-east-1.amazonaws.com"
        );
        assert_eq!(
            setup("cn-north-1", None).base(Service::SecretsManager),
            "https://secretsmanager.cn-north-1.amazonaws.com.cn"
        );
        assert_eq!(
            setup("us-east-1", Some("http://127.0.0.1:5000/")).base(Service::SecretsManager),
            "http://127.0.0.1:5000"
        );
    }

    #[test]
    fn s3_is_virtual_hosted_on_aws_and_path_style_on_a_custom_endpoint() {
        let aws = s3(setup("sa-east-1", None));
        assert_eq!(aws.url("kfin-files", "p/ws/id").unwrap(), "https://kfin-files.s3.sa-east-1.amazonaws.com/p/ws/id");
        assert_eq!(aws.url("kfin.files", "p/ws/id").unwrap(), "https://s3.sa-east-1.amazonaws.com/kfin.files/p/ws/id");
        let local = s3(setup("us-east-1", Some("http://127.0.0.1:9000")));
        assert_eq!(
            local.url("kfin-files", "a b/ç+=/x~y").unwrap(),
            "http://127.0.0.1:9000/kfin-files/a%20b/%C3%A7%2B%3D/x~y"
        );
    }

    #[test]
    fn a_signed_s3_request_carries_the_payload_hash_and_no_secret() {
        let client = s3(setup("us-east-1", None)).client;
        let body = Bytes::from_static(b"%PDF-");
        let request = client
            .signed(
                client.setup().unwrap(),
                &Method::PUT,
                "https://b.s3.us-east-1.amazonaws.com/k",
                &[("content-type", "application/pdf".into())],
                &body,
            )
            .unwrap();
        let headers = request.headers();
        let sha = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, b"%PDF-");
        let hex: String = sha.as_ref().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(headers["x-amz-content-sha256"], hex.as_str());
        let authorization = headers["authorization"].to_str().unwrap();
        assert!(authorization.starts_with("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"), "{authorization}");
        assert!(authorization.contains("/us-east-1/s3/aws4_request"));
        assert!(!authorization.contains("secret"));
        assert!(headers.contains_key("x-amz-date"));
    }

    #[test]
    fn error_answers_name_their_code() {
        let json = Answer {
            status: StatusCode::BAD_REQUEST,
            body: Bytes::from_static(
                br#"{"__type":"com.amazonaws.secretsmanager#ResourceNotFoundException","Message":"no such secret"}"#,
            ),
        };
        assert_eq!(
            json_error(&json).to_string(),
            "the service answered 400 Bad Request: ResourceNotFoundException: no such secret"
        );
        let xml = Answer {
            status: StatusCode::NOT_FOUND,
            body: Bytes::from_static(
                b"<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code><Message>gone</Message></Error>",
            ),
        };
        assert!(matches!(xml_error(&xml), AwsError::Service { code, .. } if code == "NoSuchKey"));
        assert!(retryable(StatusCode::BAD_REQUEST, br#"{"__type":"ThrottlingException"}"#));
        assert!(retryable(StatusCode::SERVICE_UNAVAILABLE, b""));
        assert!(!retryable(StatusCode::BAD_REQUEST, br#"{"__type":"ResourceNotFoundException"}"#));
    }
}
