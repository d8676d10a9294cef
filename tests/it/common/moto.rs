//! `moto_server`, the AWS stand-in, on 127.0.0.1 for the tests that talk to AWS for real
//! (Secrets Manager, S3). Found through `KFIN_TEST_MOTO_SERVER`,
//! `target/tools/venv/bin/moto_server` or `PATH`. Without it a test is skipped with a
//! loud message, except in CI, where it fails.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `moto_server`; stopped when dropped.
pub struct Moto {
    child: Child,
    /// `http://127.0.0.1:PORT`
    pub endpoint: String,
    pub port: u16,
}

impl Moto {
    /// Stops the server now (its port is closed afterwards).
    pub fn stop(mut self) {
        self.kill();
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        self.kill();
    }
}

fn binary() -> Option<String> {
    if let Ok(path) = std::env::var("KFIN_TEST_MOTO_SERVER") {
        return Some(path);
    }
    let local = format!("{}/target/tools/venv/bin/moto_server", env!("CARGO_MANIFEST_DIR"));
    if std::path::Path::new(&local).exists() {
        return Some(local);
    }
    Command::new("moto_server")
        .arg("--help")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()
        .filter(|s| s.success())
        .map(|_| "moto_server".into())
}

/// Starts `moto_server` on a free loopback port, or `None` (locally) when it is not
/// installed; `what` names the test that did not run.
pub fn start(what: &str) -> Option<Moto> {
    start_on(what, None)
}

/// As [`start`], on `port` when given (a store brought back where it was: its state is
/// gone, the address is the same).
pub fn start_on(what: &str, port: Option<u16>) -> Option<Moto> {
    let Some(binary) = binary() else {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("moto_server is required in CI (run scripts/ensure-tools.sh)");
        }
        eprintln!("\n*** SKIPPED: moto_server not found; {what} did not run. Run scripts/ensure-tools.sh. ***\n");
        return None;
    };
    let port = port.unwrap_or_else(|| TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port());
    let child = Command::new(binary)
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start moto_server");
    let moto = Moto { child, port, endpoint: format!("http://127.0.0.1:{port}") };
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "moto_server did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    Some(moto)
}

/// The SDK's standard environment for a test binary that talks to moto: fixed test
/// credentials and region, no profile, no instance metadata lookups.
pub fn aws_test_environment() {
    std::env::set_var("AWS_ACCESS_KEY_ID", "testing");
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "testing");
    std::env::set_var("AWS_REGION", "us-east-1");
    std::env::set_var("AWS_EC2_METADATA_DISABLED", "true");
    std::env::remove_var("AWS_PROFILE");
    std::env::remove_var("AWS_SESSION_TOKEN");
}

/// A Secrets Manager client for the test itself (creating and rotating secrets in moto).
pub fn secrets_client(endpoint: &str) -> aws_sdk_secretsmanager::Client {
    use aws_sdk_secretsmanager::config::{BehaviorVersion, Credentials, Region};
    aws_sdk_secretsmanager::Client::from_conf(
        aws_sdk_secretsmanager::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .endpoint_url(endpoint)
            .region(Region::new("us-east-1"))
            .credentials_provider(Credentials::new("testing", "testing", None, None, "test"))
            .build(),
    )
}
