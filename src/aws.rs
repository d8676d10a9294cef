//! The AWS SDK client of the two secrets (signing keys, database credentials): the
//! SDK's standard environment (region, credentials, `AWS_ENDPOINT_URL`), with short
//! timeouts and one quick retry, so a secret store that is down is reported (503) rather
//! than waited for.

use std::time::Duration;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
const OPERATION_TIMEOUT: Duration = Duration::from_secs(8);
const RETRY_BACKOFF: Duration = Duration::from_millis(100);

pub async fn secrets_manager() -> aws_sdk_secretsmanager::Client {
    let timeouts = aws_config::timeout::TimeoutConfig::builder().connect_timeout(CONNECT_TIMEOUT).operation_timeout(OPERATION_TIMEOUT).build();
    let retries = aws_config::retry::RetryConfig::standard().with_max_attempts(2).with_initial_backoff(RETRY_BACKOFF);
    let sdk = aws_config::defaults(aws_config::BehaviorVersion::latest()).timeout_config(timeouts).retry_config(retries).load().await;
    aws_sdk_secretsmanager::Client::new(&sdk)
}
