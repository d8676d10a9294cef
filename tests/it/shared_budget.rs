//! Two server processes, one budget (SPEC §8): two `serve` processes of the built binary
//! on 127.0.0.1, against the same PostgreSQL database, with a small read budget. Requests
//! alternate between them; the (limit + 1)-th request overall is 429 whichever process
//! (and whichever door) gets it. PostgreSQL only (skipped loudly on SQLite).
//!
//! Each process runs under `timeout`, so it stops by itself even if this test is killed;
//! dropping it stops it at once.

use crate::common;

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const READS: i64 = 5;

/// A `serve` process of the built binary.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    async fn start(database_url: &str, reads: i64) -> Server {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new("timeout")
            .args([
                "120",
                env!("CARGO_BIN_EXE_kobana-finance-mcp"),
                "serve",
                "--addr",
                &format!("127.0.0.1:{port}"),
                "--database-url",
                database_url,
            ])
            .env("KFIN_JWT_SECRET", SECRET)
            .env("KFIN_PUBLIC_URL", PUBLIC_URL)
            .env("KFIN_RATE_LIMIT_READS", reads.to_string())
            .env("KFIN_RATE_LIMIT_WINDOW_SECONDS", "86400")
            .env("KFIN_LOG", "warn")
            .env_remove("KFIN_BLOB_URL")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("start kobana-finance-mcp serve under timeout");
        let mut server = Server { child, port };
        let deadline = Instant::now() + Duration::from_secs(60);
        while TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            assert!(server.child.try_wait().unwrap().is_none(), "serve exited before listening");
            assert!(Instant::now() < deadline, "serve did not listen on 127.0.0.1:{port}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        server
    }

    /// One request on a fresh connection: the status, the headers (lower-case names)
    /// and the body.
    async fn send(
        &self,
        method: &str,
        path: &str,
        token: &str,
        body: Option<&Value>,
    ) -> (u16, Vec<(String, String)>, Value) {
        let body = body.map(Value::to_string).unwrap_or_default();
        let mut extra = String::new();
        if !body.is_empty() {
            extra = format!(
                "Content-Type: application/json\r\nContent-Length: {}\r\nMCP-Protocol-Version: 2025-06-18\r\n",
                body.len()
            );
        }
        let request = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n{extra}Connection: close\r\n\r\n{body}");
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut raw = Vec::new();
        tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut raw))
            .await
            .expect("an answer in time")
            .unwrap();
        let text = String::from_utf8_lossy(&raw);
        let (head, body) = text.split_once("\r\n\r\n").expect("an HTTP response");
        let mut lines = head.lines();
        let status =
            lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).expect("a status line");
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        (status, headers, serde_json::from_str(body).unwrap_or(Value::Null))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // SIGTERM to `timeout` reaches `serve`, which shuts down gracefully.
        let stopped = Command::new("kill").arg(self.child.id().to_string()).status().is_ok_and(|s| s.success());
        if !stopped {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

#[tokio::test]
async fn two_processes_on_one_database_share_one_budget() {
    let _env = common::environment().await;
    if !postgres_only("the two-process budget test") {
        return;
    }
    let h = Harness::new().await;
    let servers = [Server::start(&h.db.url, READS).await, Server::start(&h.db.url, READS).await];
    let api = h.api_token(DEMO_OWNER);

    for n in 1..=READS {
        let server = &servers[(n % 2) as usize];
        let (status, _, _) = server.send("GET", "/v1/workspaces", &api, None).await;
        assert_eq!(status, 200, "request {n} of {READS} is within the budget");
    }
    let hits: i64 =
        sql::query("SELECT CAST(SUM(hits) AS BIGINT) FROM rate_limit_counters WHERE user_id = $1 AND bucket = 'read'")
            .bind(DEMO_OWNER)
            .fetch_one(&h.state.db)
            .await
            .unwrap()
            .try_get(0)
            .unwrap();
    assert_eq!(hits, READS, "every request counted once, in the one shared counter");
    for (n, server) in [(READS + 1, &servers[0]), (READS + 2, &servers[1])] {
        let (status, headers, body) = server.send("GET", "/v1/workspaces", &api, None).await;
        assert_eq!(status, 429, "request {n} is over the budget on port {}", server.port);
        assert_eq!(body["error"]["code"], "rate_limited");
        assert!(header(&headers, "retry-after").is_some_and(|v| v.parse::<u64>().is_ok()));
        assert_eq!(header(&headers, "ratelimit-remaining"), Some("0"));
    }
    // The MCP door spends the same read budget.
    let list = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}});
    let (status, headers, body) = servers[0].send("POST", "/", &h.token(DEMO_OWNER), Some(&list)).await;
    assert_eq!(status, 429);
    assert_eq!(body["error"]["code"], -31429);
    assert!(header(&headers, "retry-after").is_some());
}

/// Reads whose counts ride on them take their numbers in blocks (PostgreSQL): two
/// processes reading in turn until both refuse still admit exactly the budget: each
/// number handed out once, none lost.
#[tokio::test]
async fn two_processes_reading_in_blocks_admit_exactly_the_budget() {
    let _env = common::environment().await;
    if !postgres_only("the two-process budget test") {
        return;
    }
    const BLOCK_READS: i64 = 300;
    let h = Harness::new().await;
    let servers = [Server::start(&h.db.url, BLOCK_READS).await, Server::start(&h.db.url, BLOCK_READS).await];
    let token = h.token(DEMO_OWNER);
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "finance_payables_list",
        "arguments": {"workspace_id": DEMO_WORKSPACE_ACME, "limit": 1, "fields": ["id"]}}});
    let mut admitted = 0;
    let mut refused = [0; 2];
    for n in 0..2 * BLOCK_READS + 40 {
        let at = (n % 2) as usize;
        let (status, headers, body) = servers[at].send("POST", "/", &token, Some(&list)).await;
        match status {
            200 => {
                assert_ne!(body["result"]["isError"], true, "{body}");
                assert_eq!(refused[at], 0, "port {} admitted a read after refusing one", servers[at].port);
                admitted += 1;
            }
            429 => {
                assert_eq!(body["error"]["code"], -31429, "{body}");
                assert_eq!(header(&headers, "ratelimit-remaining"), Some("0"));
                refused[at] += 1;
            }
            other => panic!("{other}: {body}"),
        }
    }
    assert_eq!(admitted, BLOCK_READS, "every number of the budget handed out once");
    assert!(refused.iter().all(|&r| r > 0), "{refused:?}");
}
