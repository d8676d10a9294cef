//! The local server over real TCP: a body within the cap is read to its end even when
//! the request is refused early, so the kept-alive connection serves the next request;
//! after a 413 the server closes the connection.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Reads one HTTP/1.1 response (Content-Length framed); `None` at end of stream.
async fn read_response(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<(u16, String, Vec<u8>)> {
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_string();
            let status: u16 = head.split(' ').nth(1)?.parse().ok()?;
            let length: usize = head
                .lines()
                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap()))
                .unwrap_or(0);
            while buf.len() < end + 4 + length {
                let mut chunk = [0u8; 65536];
                let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut chunk)).await.ok()?.ok()?;
                if n == 0 {
                    return None;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            let body = buf[end + 4..end + 4 + length].to_vec();
            buf.drain(..end + 4 + length);
            return Some((status, head, body));
        }
        let mut chunk = [0u8; 65536];
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut chunk)).await.ok()?.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn post(body: &str, extra_headers: &str) -> Vec<u8> {
    format!("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{extra_headers}\r\n{body}", body.len())
        .into_bytes()
}

#[tokio::test]
async fn connection_stays_in_sync_after_early_rejections() {
    let h = Harness::new().await;
    let addr = serve_over_tcp(&h).await;
    let token = h.token(DEMO_OWNER);
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut buf = Vec::new();
    // A large body refused at authentication, then one refused at the Origin check ...
    let big = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","pad":"{}"}}"#, "x".repeat(300_000));
    stream.write_all(&post(&big, "")).await.unwrap();
    assert_eq!(read_response(&mut stream, &mut buf).await.unwrap().0, 401);
    stream.write_all(&post(&big, "Origin: https://evil.example.com\r\n")).await.unwrap();
    assert_eq!(read_response(&mut stream, &mut buf).await.unwrap().0, 403);
    // ... and the same connection still answers a proper request.
    let ping = json!({"jsonrpc":"2.0","id":2,"method":"ping"}).to_string();
    stream
        .write_all(&post(&ping, &format!("Authorization: Bearer {token}\r\nMCP-Protocol-Version: 2025-06-18\r\n")))
        .await
        .unwrap();
    let (status, head, body) = read_response(&mut stream, &mut buf).await.unwrap();
    assert_eq!(status, 200, "{head}");
    assert_eq!(serde_json::from_slice::<Value>(&body).unwrap()["id"], 2);
}

#[tokio::test]
async fn declared_oversize_body_gets_413_and_the_connection_closes() {
    let h = Harness::new().await;
    let addr = serve_over_tcp(&h).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 20000000\r\n\r\n{")
        .await
        .unwrap();
    let mut buf = Vec::new();
    let (status, head, body) = read_response(&mut stream, &mut buf).await.unwrap();
    assert_eq!(status, 413);
    assert!(head.to_ascii_lowercase().contains("connection: close"), "{head}");
    assert_eq!(
        serde_json::from_slice::<Value>(&body).unwrap()["error"]["message"],
        "Request body too large (limit 14680064 bytes)"
    );
    assert!(read_response(&mut stream, &mut buf).await.is_none(), "the server closes the connection after a 413");
}

#[tokio::test]
async fn streamed_body_over_the_cap_is_cut_at_the_cap() {
    let h = Harness::new().await;
    let addr = serve_over_tcp(&h).await;
    let token = h.token(DEMO_OWNER);
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let chunk = vec![b' '; 1 << 20];
    let mut sent = 0usize;
    // Send up to 16 MiB in 1 MiB chunks; the server answers once the cap is crossed.
    while sent <= 16 << 20 {
        let mut frame = format!("{:x}\r\n", chunk.len()).into_bytes();
        frame.extend_from_slice(&chunk);
        frame.extend_from_slice(b"\r\n");
        if stream.write_all(&frame).await.is_err() {
            break;
        }
        sent += chunk.len();
    }
    let mut buf = Vec::new();
    let (status, _, _) = read_response(&mut stream, &mut buf).await.expect("a 413 answer");
    assert_eq!(status, 413);
}

/// One `GET` with a bearer token over a fresh connection; the status.
async fn status_of(addr: std::net::SocketAddr, path: &str, token: &str) -> u16 {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    read_response(&mut stream, &mut Vec::new()).await.expect("an answer").0
}

/// `serve` as `make run` starts it, in `dir` on a free port, without the caller's
/// `KFIN_*` settings; its output a pipe, its log to `stderr`.
fn make_run(dir: &TempDir, stderr: std::process::Stdio) -> (std::process::Child, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_kobana-finance-mcp"));
    command
        .args(["serve", "--addr", &format!("127.0.0.1:{port}")])
        .current_dir(&dir.0)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(stderr);
    for (name, _) in std::env::vars().filter(|(n, _)| n.starts_with("KFIN_") || n.starts_with("AWS_LAMBDA")) {
        command.env_remove(name);
    }
    (command.spawn().unwrap(), port)
}

/// `make run | head -3`: the reader of its output goes away before the server prints;
/// the server loses those lines and keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_that_goes_away_costs_the_lines_not_the_server() {
    let dir = TempDir::new();
    let (mut child, port) = make_run(&dir, std::process::Stdio::null());
    drop(child.stdout.take());
    let addr: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let mut answered = None;
    while std::time::Instant::now() < deadline {
        if let Some(exit) = child.try_wait().unwrap() {
            panic!("the server exited when its output's reader went away: {exit}");
        }
        if TcpStream::connect(addr).await.is_ok() {
            answered = Some(status_of(addr, "/health", "").await);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let alive = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(answered, Some(200), "the server answers /health");
    assert!(alive, "and is still running after printing into a closed pipe");
}

/// `make run` (`serve` on a fresh data directory, its output a pipe): its first lines
/// are the README's, but for the port and the tokens; the MCP token opens the MCP
/// endpoint and the API token `/v1`; the log on stderr is plain text (no colour codes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn make_run_prints_the_urls_both_tokens_and_the_reset_in_plain_lines() {
    use std::io::{BufRead, Read};
    let dir = TempDir::new();
    let (mut child, port) = make_run(&dir, std::process::Stdio::piped());
    let (stdout, mut stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let log = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    // Standard output is read to its end (a closed pipe would fail the server's next line).
    let (lines, printed_lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let printed = tokio::task::spawn_blocking(move || {
        let mut printed = Vec::new();
        while let Ok(line) = printed_lines.recv_timeout(Duration::from_secs(120)) {
            let last = line.starts_with("Start the demo afresh");
            printed.push(line);
            if last {
                break;
            }
        }
        printed
    });
    let printed = printed.await.unwrap();
    assert!(printed.len() >= 8, "the banner in time: {printed:?}");
    let (mcp_token, api_token) = (printed[4].clone(), printed[6].clone());
    let addr: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let mcp = status_of(addr, "/mcp", &mcp_token).await;
    let api = status_of(addr, "/v1/workspaces", &api_token).await;
    let crossed = status_of(addr, "/v1/workspaces", &mcp_token).await;
    let _ = child.kill();
    let _ = child.wait();
    let log = log.join().unwrap();
    assert_eq!((mcp, api, crossed), (405, 200, 401), "the MCP token opens /mcp (a GET: 405), the API token /v1");

    let shown_token = |token: &str| {
        assert_eq!(token.split('.').count(), 3, "a JWT: {token}");
        format!("{}.eyJ…", token.split('.').next().unwrap())
    };
    let mut shown = printed.join("\n").replace(&format!("127.0.0.1:{port}"), "127.0.0.1:8080");
    shown = shown.replace(&mcp_token, &shown_token(&mcp_token)).replace(&api_token, &shown_token(&api_token));
    let readme = std::fs::read_to_string(format!("{}/README.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
    assert!(
        readme.contains(&format!("$ make run\n{shown}\n")),
        "README's `make run` block is not what it prints:\n{shown}"
    );
    assert!(!log.contains('\u{1b}'), "no colour codes in a log that is not a terminal:\n{log}");
    assert!(log.contains("demo data written"), "{log}");
}
