use super::*;

// ---------------------------------------------------------------------------------------
// Huge tokens over real TCP
// ---------------------------------------------------------------------------------------

/// Sends one request over a fresh connection and returns the status line's code, or
/// `None` when the server closed the connection without an answer.
async fn over_tcp(addr: std::net::SocketAddr, request: Vec<u8>) -> Option<u16> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.ok()?;
    // The server may answer (and close) before it has read everything: a failed write
    // is not the answer, the bytes read back are.
    let _ = stream.write_all(&request).await;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout(std::time::Duration::from_secs(10), stream.read(&mut chunk)).await.ok()?.ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    String::from_utf8_lossy(&buf).split(' ').nth(1)?.parse().ok()
}

#[tokio::test]
async fn huge_tokens_are_refused_cleanly_over_tcp() {
    let h = Harness::new().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = h.app.clone();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    let mcp = |token: &str| {
        format!(
            "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAuthorization: Bearer {token}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    };
    let rest = |token: &str| {
        format!("GET /v1/workspaces HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\r\n").into_bytes()
    };
    let genuine_mcp = h.token(DEMO_OWNER);
    let genuine_api = h.api_token(DEMO_OWNER);
    assert_eq!(over_tcp(addr, mcp(&genuine_mcp)).await, Some(200));
    assert_eq!(over_tcp(addr, rest(&genuine_api)).await, Some(200));
    // 100 KB: read, and refused by the verifier's size check.
    let padded = format!("{genuine_mcp}{}", "A".repeat(100 * 1024));
    assert_eq!(over_tcp(addr, mcp(&padded)).await, Some(401));
    assert_eq!(over_tcp(addr, rest(&format!("{genuine_api}{}", "A".repeat(100 * 1024)))).await, Some(401));
    // 1 MB: beyond what the HTTP layer buffers for a request head — refused there
    // (431) or the connection is closed; never a 5xx, and the server keeps serving.
    for request in [mcp(&"A".repeat(1 << 20)), rest(&"A".repeat(1 << 20))] {
        let status = over_tcp(addr, request).await;
        assert!(matches!(status, None | Some(400 | 401 | 431)), "{status:?}");
    }
    assert_eq!(over_tcp(addr, mcp(&genuine_mcp)).await, Some(200));
}
