//! Over real TCP: a refused upload within the cap is read to its end so the kept-alive
//! connection serves the next request; a 10 MB upload passes every layer; a body
//! declared over the cap is refused with the REST envelope and the connection closes.

use super::*;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn fill(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<()> {
    let mut chunk = [0u8; 65536];
    let n = tokio::time::timeout(Duration::from_secs(20), stream.read(&mut chunk)).await.ok()?.ok()?;
    (n > 0).then(|| buf.extend_from_slice(&chunk[..n]))
}

/// One Content-Length framed response; `None` at end of stream.
async fn response(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<(u16, String, Vec<u8>)> {
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let status: u16 = head.split(' ').nth(1)?.parse().ok()?;
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:").map(|v| v.trim().parse().unwrap()))
                .unwrap_or(0);
            while buf.len() < end + 4 + length {
                fill(stream, buf).await?;
            }
            let body = buf[end + 4..end + 4 + length].to_vec();
            buf.drain(..end + 4 + length);
            return Some((status, head, body));
        }
        fill(stream, buf).await?;
    }
}

fn request(method: &str, path: &str, token: &str, content_type: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

#[tokio::test]
async fn upload_connection_stays_in_sync_and_oversize_closes_it() {
    let h = Harness::new().await;
    let addr = serve_over_tcp(&h).await;
    let multipart_type = format!("multipart/form-data; boundary={BOUNDARY}");
    let mut big = PDF.to_vec();
    big.resize(10_000_000, b' ');
    let body = multipart("grande.pdf", "application/pdf", &big, None);

    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut buf = Vec::new();
    stream
        .write_all(&request("POST", "/v1/attachments", &h.api_token(DEMO_VIEWER), &multipart_type, &body))
        .await
        .unwrap();
    let (status, _, reply) = response(&mut stream, &mut buf).await.unwrap();
    assert_eq!(status, 403);
    assert_eq!(serde_json::from_slice::<Value>(&reply).unwrap()["error"]["code"], "forbidden");
    let owner = h.api_token(DEMO_OWNER);
    stream.write_all(&request("POST", "/v1/attachments", &owner, &multipart_type, &body)).await.unwrap();
    let (status, head, reply) = response(&mut stream, &mut buf).await.unwrap();
    assert_eq!(status, 201, "{head} {}", String::from_utf8_lossy(&reply));
    assert_eq!(serde_json::from_slice::<Value>(&reply).unwrap()["file_size"], 10_000_000);
    stream.write_all(&request("GET", "/v1/attachments", &owner, "application/json", b"")).await.unwrap();
    assert_eq!(response(&mut stream, &mut buf).await.unwrap().0, 200);

    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut buf = Vec::new();
    let head = format!(
        "POST /v1/attachments HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {owner}\r\nContent-Type: {multipart_type}\r\nContent-Length: {}\r\n\r\n",
        12 * 1024 * 1024
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let (status, head, reply) = response(&mut stream, &mut buf).await.unwrap();
    assert_eq!(status, 422);
    assert!(head.contains("connection: close"), "{head}");
    let error = serde_json::from_slice::<Value>(&reply).unwrap();
    assert_eq!(error["error"]["details"]["reason"], "too_large");
    assert!(response(&mut stream, &mut buf).await.is_none(), "the server closed the connection");
}
