//! The AWS calls of the server, and nothing else, through the AWS SDK: Secrets Manager
//! `GetSecretValue` (the signing keys, the database credentials, the banking gateway's
//! secret) and S3 `PutObject` / `GetObject` / `DeleteObject` (attachment bytes).
//!
//! [`Aws`] is the process's one handle on them: the application builds it once and
//! lends it to the key store, the database secret, the blob store and the gateway. Its
//! SDK configuration is loaded from the environment on the first call, once, and both
//! clients are built from it (so a process that never calls AWS, a local server, never
//! loads it). The configuration is the SDK's standard one, with the providers this
//! build has: region from `AWS_REGION` (or the profile); credentials from the
//! environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`: what
//! Lambda sets), else a profile's static keys, a web identity token, the ECS or EC2
//! instance metadata; no SSO and no `credential_process` (their features are off);
//! endpoints from `AWS_ENDPOINT_URL_SECRETS_MANAGER` / `AWS_ENDPOINT_URL_S3`, else
//! `AWS_ENDPOINT_URL` (a local stand-in such as moto or MinIO), else the service's
//! regional endpoint. S3 is addressed path-style on a custom endpoint, since such
//! endpoints do not resolve bucket subdomains.
//!
//! A call has a short connect timeout and an overall deadline, retries included, and a
//! transport failure, a throttling answer or a 5xx is retried quickly (the SDK's standard
//! retry, few attempts, a 100 ms first backoff), so a store that is down is reported
//! (the caller answers 503) rather than waited for. No secret value or credential is
//! ever put into an error or a log line.

use std::sync::Arc;
use std::time::Duration;

use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::{BehaviorVersion, SdkConfig};
use aws_sdk_s3::error::{DisplayErrorContext, ProvideErrorMetadata};
use bytes::Bytes;
use tokio::sync::OnceCell;

use crate::https::CONNECT_TIMEOUT;

/// How long a Secrets Manager call may take in all, and its attempts (one quick retry).
const SECRETS_DEADLINE: Duration = Duration::from_secs(8);
const SECRETS_ATTEMPTS: u32 = 2;

/// How long an S3 call may take in all, and its attempts.
const S3_DEADLINE: Duration = Duration::from_secs(10);
const S3_ATTEMPTS: u32 = 3;

/// The first retry's backoff (the SDK's standard retry doubles it, with jitter).
const FIRST_BACKOFF: Duration = Duration::from_millis(100);

/// Why a call did not succeed: the SDK's error with its causes, for operators. It never
/// quotes a secret value or a credential.
#[derive(Debug)]
pub struct AwsError(String);

impl AwsError {
    fn of<E: std::error::Error>(operation: &str, error: E) -> AwsError {
        AwsError(format!("{operation}: {}", DisplayErrorContext(error)))
    }
}

impl std::fmt::Display for AwsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AwsError {}

/// The process's AWS clients, over one configuration loaded on first use. Cheap to
/// clone: the clones share it.
#[derive(Clone, Default)]
pub struct Aws(Arc<Shared>);

#[derive(Default)]
struct Shared {
    config: OnceCell<SdkConfig>,
    secrets: OnceCell<aws_sdk_secretsmanager::Client>,
    s3: OnceCell<aws_sdk_s3::Client>,
}

impl std::fmt::Debug for Aws {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Aws")
    }
}

/// A service's deadline and attempts, on top of the shared configuration.
fn resilience(deadline: Duration, attempts: u32) -> (TimeoutConfig, RetryConfig) {
    let timeouts = TimeoutConfig::builder().connect_timeout(CONNECT_TIMEOUT).operation_timeout(deadline).build();
    let retries = RetryConfig::standard().with_max_attempts(attempts).with_initial_backoff(FIRST_BACKOFF);
    (timeouts, retries)
}

impl Aws {
    /// The SDK's configuration from the environment, loaded once.
    async fn config(&self) -> &SdkConfig {
        self.0
            .config
            .get_or_init(|| async {
                aws_config::defaults(BehaviorVersion::latest())
                    .timeout_config(TimeoutConfig::builder().connect_timeout(CONNECT_TIMEOUT).build())
                    .load()
                    .await
            })
            .await
    }

    async fn secrets_client(&self) -> &aws_sdk_secretsmanager::Client {
        self.0
            .secrets
            .get_or_init(|| async {
                let (timeouts, retries) = resilience(SECRETS_DEADLINE, SECRETS_ATTEMPTS);
                let config = aws_sdk_secretsmanager::config::Builder::from(self.config().await)
                    .timeout_config(timeouts)
                    .retry_config(retries)
                    .build();
                aws_sdk_secretsmanager::Client::from_conf(config)
            })
            .await
    }

    async fn s3_client(&self) -> &aws_sdk_s3::Client {
        self.0
            .s3
            .get_or_init(|| async {
                let shared = self.config().await;
                let (timeouts, retries) = resilience(S3_DEADLINE, S3_ATTEMPTS);
                let config = aws_sdk_s3::config::Builder::from(shared)
                    .force_path_style(custom_endpoint(shared, "S3"))
                    // The payload is signed (its SHA-256); no extra checksum header, which
                    // S3-compatible stores do not all take.
                    .request_checksum_calculation(aws_sdk_s3::config::RequestChecksumCalculation::WhenRequired)
                    .timeout_config(timeouts)
                    .retry_config(retries)
                    .build();
                aws_sdk_s3::Client::from_conf(config)
            })
            .await
    }

    /// The string value of the secret `secret_id` (its current version); `Ok(None)` when
    /// the secret holds a binary value.
    pub async fn get_secret_string(&self, secret_id: &str) -> Result<Option<String>, AwsError> {
        let answer = self
            .secrets_client()
            .await
            .get_secret_value()
            .secret_id(secret_id)
            .send()
            .await
            .map_err(|e| AwsError::of("GetSecretValue", e))?;
        Ok(answer.secret_string)
    }

    pub async fn put_object(
        &self,
        bucket: &str,
        key: &str,
        content: Bytes,
        content_type: &str,
    ) -> Result<(), AwsError> {
        self.s3_client()
            .await
            .put_object()
            .bucket(bucket)
            .key(key)
            .content_type(content_type)
            .body(content.into())
            .send()
            .await
            .map_err(|e| AwsError::of("PutObject", e))?;
        Ok(())
    }

    /// The object's bytes; `Ok(None)` when there is no such key.
    pub async fn get_object(&self, bucket: &str, key: &str) -> Result<Option<Bytes>, AwsError> {
        let answer = match self.s3_client().await.get_object().bucket(bucket).key(key).send().await {
            Ok(answer) => answer,
            Err(e) if e.as_service_error().is_some_and(|e| e.is_no_such_key() || e.code() == Some("NoSuchKey")) => {
                return Ok(None)
            }
            Err(e) => return Err(AwsError::of("GetObject", e)),
        };
        let body = answer.body.collect().await.map_err(|e| AwsError::of("GetObject", e))?;
        Ok(Some(body.into_bytes()))
    }

    /// Removes the object; removing one that is gone succeeds (S3 answers 204 either way).
    pub async fn delete_object(&self, bucket: &str, key: &str) -> Result<(), AwsError> {
        self.s3_client()
            .await
            .delete_object()
            .bucket(bucket)
            .key(key)
            .send()
            .await
            .map_err(|e| AwsError::of("DeleteObject", e))?;
        Ok(())
    }
}

/// Whether the configuration names an endpoint of its own for `service` (the SDK's
/// `AWS_ENDPOINT_URL_<SERVICE>`, `AWS_ENDPOINT_URL` or a profile's `endpoint_url`), as
/// the service's client reads it.
fn custom_endpoint(config: &SdkConfig, service: &str) -> bool {
    let key = aws_types::service_config::ServiceConfigKey::builder()
        .service_id(service)
        .env("AWS_ENDPOINT_URL")
        .profile("endpoint_url")
        .build();
    let own = key.ok().and_then(|key| config.service_config().and_then(|c| c.load_config(key)));
    own.is_some() || config.endpoint_url().is_some()
}
