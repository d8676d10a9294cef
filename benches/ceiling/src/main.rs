//! The benchmark ceiling: a bare hyper HTTP/1.1 server that answers every request with
//! one captured response of the product (status, headers, body), after reading the
//! request body in full. Whatever the product spends per request beyond what this
//! spends is the product's own work: `make bench` reports the ratio of the two.
//!
//! Usage: `ceiling ADDR RESPONSE_FILE`, where RESPONSE_FILE holds the response as
//! captured from the product: the status line, header lines, a blank line, the body
//! (`Content-Length`, `Date` and `Connection` are left to hyper, as in the product).

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

struct Captured {
    status: StatusCode,
    headers: Vec<(http::HeaderName, http::HeaderValue)>,
    body: Bytes,
}

fn parse(raw: &[u8]) -> Result<Captured, String> {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").ok_or("no blank line after the headers")?;
    let head = std::str::from_utf8(&raw[..split]).map_err(|e| e.to_string())?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().ok_or("empty response")?;
    let code = status_line.split(' ').nth(1).ok_or("no status code")?;
    let status = StatusCode::from_bytes(code.as_bytes()).map_err(|e| e.to_string())?;
    let mut headers = Vec::new();
    for line in lines {
        let (name, value) = line.split_once(':').ok_or_else(|| format!("bad header line {line:?}"))?;
        let name = http::HeaderName::from_bytes(name.trim().as_bytes()).map_err(|e| e.to_string())?;
        if [http::header::CONTENT_LENGTH, http::header::DATE, http::header::CONNECTION, http::header::TRANSFER_ENCODING]
            .contains(&name)
        {
            continue;
        }
        headers.push((name, http::HeaderValue::from_str(value.trim()).map_err(|e| e.to_string())?));
    }
    Ok(Captured { status, headers, body: Bytes::copy_from_slice(&raw[split + 4..]) })
}

async fn answer(captured: Arc<Captured>, request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    // Read the body as the product does before it answers.
    let _ = request.into_body().collect().await;
    let mut response = Response::new(Full::new(captured.body.clone()));
    *response.status_mut() = captured.status;
    let headers = response.headers_mut();
    for (name, value) in &captured.headers {
        headers.append(name.clone(), value.clone());
    }
    Ok(response)
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let (Some(addr), Some(file)) = (args.next(), args.next()) else {
        return Err("usage: ceiling ADDR RESPONSE_FILE".into());
    };
    let raw = std::fs::read(&file).map_err(|e| format!("{file}: {e}"))?;
    let captured = Arc::new(parse(&raw)?);
    let listener = TcpListener::bind(&addr).await.map_err(|e| format!("{addr}: {e}"))?;
    loop {
        let Ok((stream, _)) = listener.accept().await else { continue };
        let captured = captured.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| answer(captured.clone(), request));
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}
