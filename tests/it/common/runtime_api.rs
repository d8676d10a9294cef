//! A stand-in for the Lambda Runtime API (the documented 2018-06-01 protocol) on
//! 127.0.0.1, so a test runs the real binary as Lambda runs it: the binary, started with
//! `AWS_LAMBDA_RUNTIME_API` pointing here, long-polls
//! `GET /2018-06-01/runtime/invocation/next` and gets the next queued event with the
//! `Lambda-Runtime-Aws-Request-Id`, `-Deadline-Ms`, `-Invoked-Function-Arn` and
//! `-Trace-Id` headers; it answers on `POST …/invocation/{id}/response` or
//! `…/invocation/{id}/error`, and reports a failed start on `POST …/init/error`.
//!
//! It also takes `PUT /cfn-response/{name}` the way CloudFormation's presigned
//! `ResponseURL` does, keeping each body, for the custom-resource tests.
//!
//! Accepted sockets get TCP_NODELAY (small request/response exchanges: without it
//! delayed ACKs add ~40 ms to each). The server stops when the stand-in is dropped.
//! `timings` says when the function first asked for work and first answered, what a
//! cold-start measurement needs; `start_function` runs the real binary against it.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{get, post, put};
use axum::serve::ListenerExt;
use axum::Router;
use serde_json::Value;
use tokio::sync::Notify;

pub const FUNCTION_ARN: &str = "arn:aws:lambda:us-east-1:123456789012:function:kobana-finance-test";

/// What the function answered for one invocation.
#[derive(Debug, Clone)]
pub enum Outcome {
    Response(Value),
    Error(Value),
}

impl Outcome {
    pub fn response(self) -> Value {
        match self {
            Outcome::Response(v) => v,
            Outcome::Error(e) => panic!("the invocation failed: {e}"),
        }
    }

    pub fn error(self) -> Value {
        match self {
            Outcome::Error(e) => e,
            Outcome::Response(v) => panic!("the invocation succeeded: {v}"),
        }
    }
}

#[derive(Default)]
struct Inner {
    queue: VecDeque<(String, Value)>,
    outcomes: HashMap<String, Outcome>,
    init_error: Option<Value>,
    cfn_responses: HashMap<String, Value>,
    next_id: u64,
    timings: Timings,
}

/// When the function first long-polled `GET …/invocation/next` (its runtime is up) and
/// when it first answered an invocation (`…/response` or `…/error`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Timings {
    pub first_next: Option<Instant>,
    pub first_answer: Option<Instant>,
}

#[derive(Default)]
struct Shared {
    inner: Mutex<Inner>,
    queued: Notify,
    answered: Notify,
}

pub struct RuntimeApi {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for RuntimeApi {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn next(State(shared): State<Arc<Shared>>) -> impl IntoResponse {
    shared.inner.lock().unwrap().timings.first_next.get_or_insert_with(Instant::now);
    loop {
        let notified = shared.queued.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if let Some((id, event)) = shared.inner.lock().unwrap().queue.pop_front() {
            let deadline =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap() + Duration::from_secs(30);
            let mut headers = HeaderMap::new();
            headers.insert("lambda-runtime-aws-request-id", id.parse().unwrap());
            headers.insert("lambda-runtime-deadline-ms", deadline.as_millis().to_string().parse().unwrap());
            headers.insert("lambda-runtime-invoked-function-arn", FUNCTION_ARN.parse().unwrap());
            headers.insert(
                "lambda-runtime-trace-id",
                "Root=1-00000000-000000000000000000000000;Sampled=0".parse().unwrap(),
            );
            headers.insert("content-type", "application/json".parse().unwrap());
            return (StatusCode::OK, headers, event.to_string());
        }
        notified.await;
    }
}

fn body_json(body: &Bytes) -> Value {
    serde_json::from_slice(body).unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()))
}

fn answer(shared: &Shared, id: String, outcome: Outcome) -> StatusCode {
    let mut inner = shared.inner.lock().unwrap();
    inner.timings.first_answer.get_or_insert_with(Instant::now);
    inner.outcomes.insert(id, outcome);
    drop(inner);
    shared.answered.notify_waiters();
    StatusCode::ACCEPTED
}

async fn respond(State(shared): State<Arc<Shared>>, Path(id): Path<String>, body: Bytes) -> StatusCode {
    answer(&shared, id, Outcome::Response(body_json(&body)))
}

async fn fail(State(shared): State<Arc<Shared>>, Path(id): Path<String>, body: Bytes) -> StatusCode {
    answer(&shared, id, Outcome::Error(body_json(&body)))
}

async fn init_error(State(shared): State<Arc<Shared>>, body: Bytes) -> StatusCode {
    shared.inner.lock().unwrap().init_error = Some(body_json(&body));
    shared.answered.notify_waiters();
    StatusCode::ACCEPTED
}

async fn cfn_response(State(shared): State<Arc<Shared>>, Path(name): Path<String>, body: Bytes) -> StatusCode {
    shared.inner.lock().unwrap().cfn_responses.insert(name, body_json(&body));
    shared.answered.notify_waiters();
    StatusCode::OK
}

impl RuntimeApi {
    pub async fn start() -> RuntimeApi {
        let shared = Arc::new(Shared::default());
        let app = Router::new()
            .route("/2018-06-01/runtime/invocation/next", get(next))
            .route("/2018-06-01/runtime/invocation/{id}/response", post(respond))
            .route("/2018-06-01/runtime/invocation/{id}/error", post(fail))
            .route("/2018-06-01/runtime/init/error", post(init_error))
            .route("/cfn-response/{name}", put(cfn_response))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind the runtime stand-in");
        let addr = listener.local_addr().unwrap();
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        RuntimeApi { addr, shared, server }
    }

    /// When the function first asked for an invocation and first answered one.
    pub fn timings(&self) -> Timings {
        self.shared.inner.lock().unwrap().timings
    }

    /// `127.0.0.1:PORT`, the value of `AWS_LAMBDA_RUNTIME_API`.
    pub fn runtime_api(&self) -> String {
        self.addr.to_string()
    }

    /// A presigned-URL stand-in for CloudFormation's `ResponseURL`.
    pub fn response_url(&self, name: &str) -> String {
        format!("http://{}/cfn-response/{name}", self.addr)
    }

    /// Queues an event and waits (at most `within`) for the function's answer.
    pub async fn invoke(&self, event: Value, within: Duration) -> Outcome {
        let id = {
            let mut inner = self.shared.inner.lock().unwrap();
            inner.next_id += 1;
            let id = format!("req-{}", inner.next_id);
            inner.queue.push_back((id.clone(), event));
            id
        };
        self.shared.queued.notify_waiters();
        let found = self.wait(within, |inner| inner.outcomes.remove(&id)).await;
        found.unwrap_or_else(|| panic!("no answer to invocation {id} within {within:?}"))
    }

    /// The body PUT to `response_url(name)`, waiting at most `within`.
    pub async fn cfn_response(&self, name: &str, within: Duration) -> Value {
        self.wait(within, |inner| inner.cfn_responses.remove(name))
            .await
            .unwrap_or_else(|| panic!("no custom-resource response {name}"))
    }

    /// The init error the function reported, if it did within `within`.
    pub async fn init_error(&self, within: Duration) -> Option<Value> {
        self.wait(within, |inner| inner.init_error.take()).await
    }

    async fn wait<T>(&self, within: Duration, mut take: impl FnMut(&mut Inner) -> Option<T>) -> Option<T> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let answered = self.shared.answered.notified();
            tokio::pin!(answered);
            answered.as_mut().enable();
            if let Some(found) = take(&mut self.shared.inner.lock().unwrap()) {
                return Some(found);
            }
            if tokio::time::timeout_at(deadline, answered).await.is_err() {
                return take(&mut self.shared.inner.lock().unwrap());
            }
        }
    }
}

/// The real binary in Lambda mode, polling `runtime`; killed when dropped.
pub struct Function(pub std::process::Child);

impl Drop for Function {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Function {
    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.0.try_wait(), Ok(None))
    }
}

/// Starts the binary as Lambda starts it (a cleared environment: the Runtime API, the
/// function's variables, the stage kept out of REST paths, the fixture signing key).
pub fn start_function(runtime: &RuntimeApi, database_url: &str) -> Function {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_kobana-finance-mcp"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("AWS_LAMBDA_RUNTIME_API", runtime.runtime_api())
        .env("AWS_LAMBDA_FUNCTION_NAME", "kobana-finance-test")
        .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "256")
        .env("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
        .env("AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH", "true")
        .env("KFIN_DATABASE_URL", database_url)
        .env("KFIN_JWT_SECRET", super::FIXTURE_KEY)
        .env("KFIN_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the binary");
    Function(child)
}
