//! The server's own HTTPS client, for the calls that are not AWS API calls: Kobana's
//! banking API (`gateway`), the stand-in's webhook deliveries, and the CloudFormation
//! custom-resource response (`transport::deploy`, one PUT per deploy to a presigned S3
//! URL). hyper, HTTP/1.1, rustls on aws-lc-rs (the crypto of everything else); the AWS
//! SDK clients of `aws` have their own, of the same stack.

use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use http::StatusCode;
use http_body_util::{BodyExt, Full};

/// How long a connection may take to open (TCP and TLS).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

type Connector = hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>;
type HttpClient = hyper_util::client::legacy::Client<Connector, Full<Bytes>>;

/// Why no answer came: its text names the causes and never quotes a credential.
#[derive(Debug)]
pub enum HttpsError {
    /// The client cannot be made (no TLS roots).
    Setup(String),
    /// No answer: connection refused or cut, TLS failure.
    Transport(String),
}

impl std::fmt::Display for HttpsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HttpsError::Setup(e) | HttpsError::Transport(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for HttpsError {}

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
pub fn with_causes(error: &dyn std::error::Error) -> String {
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

/// The HTTPS client: HTTP/1.1 over rustls, a connection given up after
/// [`CONNECT_TIMEOUT`]. It sends one request and reads its answer; a caller puts its own
/// deadline around that (and its own retries, if any).
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
    /// to get one is an error: [`HttpsError::Setup`] when there are no TLS roots,
    /// [`HttpsError::Transport`] (naming the causes) when no answer came.
    pub async fn send(&self, request: http::Request<Full<Bytes>>) -> Result<Answer, HttpsError> {
        let http = self.client.as_ref().map_err(|e| HttpsError::Setup(e.clone()))?;
        let response = http
            .request(request)
            .await
            .map_err(|e| HttpsError::Transport(format!("no answer: {}", with_causes(&e))))?;
        let status = response.status();
        match response.into_body().collect().await {
            Ok(collected) => Ok(Answer { status, body: collected.to_bytes() }),
            Err(e) => Err(HttpsError::Transport(format!("the answer was cut: {}", with_causes(&e)))),
        }
    }
}
