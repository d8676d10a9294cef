//! Reading request bodies under the 14 MB cap (SPEC §2 steps 1 and 4).
//!
//! A body within the cap is always read to its end, even when the request is refused
//! before it is needed, so a kept-alive connection stays in sync. A body over the cap
//! is not read further: the answer is 413 and the connection is closed.

use axum::body::Body;
use bytes::{Bytes, BytesMut};
use http::HeaderMap;
use http_body_util::BodyExt;

/// 14 MiB: room for the largest legitimate request, a 10 MB upload in base64.
pub const MAX_BODY_BYTES: usize = 14_680_064;

#[derive(Debug)]
pub enum BodyError {
    TooLarge,
    /// The client went away or sent a broken body.
    Broken,
}

/// The declared `Content-Length`, when there is a readable one.
pub fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers.get(http::header::CONTENT_LENGTH)?.to_str().ok()?.trim().parse().ok()
}

/// Reads the whole body, stopping at the cap.
pub async fn read(body: Body, limit: usize) -> Result<Bytes, BodyError> {
    let mut body = body;
    let mut buf = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| BodyError::Broken)?;
        if let Ok(data) = frame.into_data() {
            if buf.len() + data.len() > limit {
                return Err(BodyError::TooLarge);
            }
            buf.extend_from_slice(&data);
        }
    }
    Ok(buf.freeze())
}

/// Reads and discards the body (up to the cap).
pub async fn drain(body: Body, limit: usize) -> Result<(), BodyError> {
    let mut body = body;
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| BodyError::Broken)?;
        if let Ok(data) = frame.into_data() {
            seen += data.len();
            if seen > limit {
                return Err(BodyError::TooLarge);
            }
        }
    }
    Ok(())
}
