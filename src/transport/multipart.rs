//! `multipart/form-data` uploads (RFC 7578), read by `multer` from a body the route has
//! already read under its cap, into the typed [`Upload`] the attachments operation
//! takes. Only the form is decided here — one `file` part with a file name and a
//! content type, an optional `title`, nothing else; what the file may be (type, size,
//! name) is the operation's rule.

use bytes::Bytes;
use http::header;
use serde_json::json;

use crate::error::ApiError;
use crate::ops::attachments::Upload;
use crate::ops::machinery::common::invalid;

/// The most parts an upload may have (it needs two).
const MAX_PARTS: usize = 16;

/// One part of the form, as sent.
struct Part {
    disposition: Option<Vec<u8>>,
    name: Option<String>,
    file_name: Option<String>,
    content_type: Option<String>,
    data: Bytes,
}

fn malformed(reason: &str) -> ApiError {
    ApiError::bad_request("The request body is not valid multipart/form-data").with_details(json!({ "reason": reason }))
}

/// What a `multer` failure means for the sender.
fn refused(error: multer::Error) -> ApiError {
    match error {
        multer::Error::IncompleteStream | multer::Error::IncompleteFieldData { .. } => {
            malformed("missing_closing_boundary")
        }
        multer::Error::IncompleteHeaders
        | multer::Error::ReadHeaderFailed(_)
        | multer::Error::DecodeHeaderName { .. }
        | multer::Error::DecodeHeaderValue { .. } => malformed("invalid_part_headers"),
        multer::Error::NoBoundary => malformed("missing_boundary"),
        multer::Error::NoMultipart | multer::Error::DecodeContentType(_) => malformed("not_multipart"),
        _ => malformed("invalid_multipart"),
    }
}

/// The `boundary` of a `multipart/form-data` content type.
fn boundary(content_type: Option<&str>) -> Result<String, ApiError> {
    let content_type = content_type.ok_or_else(|| malformed("not_multipart"))?;
    multer::parse_boundary(content_type).map_err(refused)
}

/// Reads an upload from a `multipart/form-data` body: a `file` part with a file name
/// and a content type, and an optional text part `title`. Any other part is refused.
pub async fn read_upload(content_type: Option<&str>, body: Bytes) -> Result<Upload, ApiError> {
    let boundary = boundary(content_type)?;
    // A body that never names its boundary is not this form at all.
    let delimiter = format!("--{boundary}");
    if !body.windows(delimiter.len()).any(|w| w == delimiter.as_bytes()) {
        return Err(malformed("missing_boundary"));
    }
    let mut form = multer::Multipart::new(axum::body::Body::from(body).into_data_stream(), boundary);
    // The whole form is read first, so a body that is cut short is refused as such
    // before any of its parts is judged.
    let mut parts = Vec::new();
    while let Some(part) = form.next_field().await.map_err(refused)? {
        if parts.len() == MAX_PARTS {
            return Err(malformed("too_many_parts"));
        }
        let disposition = part.headers().get(header::CONTENT_DISPOSITION).map(|v| v.as_bytes().to_vec());
        let name = part.name().map(str::to_string);
        let file_name = part.file_name().map(str::to_string);
        let content_type =
            part.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(|v| v.trim().to_string());
        let data = part.bytes().await.map_err(refused)?;
        parts.push(Part { disposition, name, file_name, content_type, data });
    }
    let mut file: Option<(String, String, Bytes)> = None;
    let mut title: Option<String> = None;
    for part in parts {
        let disposition = part.disposition.ok_or_else(|| malformed("missing_content_disposition"))?;
        if !disposition.get(..9).is_some_and(|kind| kind.eq_ignore_ascii_case(b"form-data")) {
            return Err(malformed("invalid_content_disposition"));
        }
        match part.name.ok_or_else(|| malformed("missing_part_name"))?.as_str() {
            "file" => {
                if file.is_some() {
                    return Err(invalid("file", "duplicate_part", "Send one file per upload"));
                }
                let file_name = part
                    .file_name
                    .ok_or_else(|| invalid("file", "missing_file_name", "The file part needs a file name"))?;
                let content_type = part
                    .content_type
                    .ok_or_else(|| invalid("file", "missing_content_type", "The file part needs a content type"))?;
                file = Some((file_name, content_type, part.data));
            }
            "title" => {
                if title.is_some() {
                    return Err(invalid("title", "duplicate_part", "Send the title once"));
                }
                let text = String::from_utf8(part.data.to_vec())
                    .map_err(|_| invalid("title", "invalid_value", "The title must be UTF-8 text"))?;
                title = Some(text);
            }
            other => {
                let field: String = other.chars().take(64).collect();
                return Err(ApiError::bad_request("Unknown multipart part")
                    .with_details(json!({ "field": field, "reason": "unknown_field" })));
            }
        }
    }
    let (file_name, content_type, content) =
        file.ok_or_else(|| invalid("file", "required", "The file part is required"))?;
    Ok(Upload { file_name, content_type, title, content })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (part name, file name, content type, data)
    type TestPart<'a> = (&'a str, Option<&'a str>, Option<&'a str>, &'a [u8]);

    fn body(parts: &[TestPart]) -> Bytes {
        let mut out = b"preamble\r\n".to_vec();
        for (name, file_name, content_type, data) in parts {
            out.extend_from_slice(b"--XyZ\r\n");
            match file_name {
                Some(f) => out.extend_from_slice(
                    format!("Content-Disposition: form-data; name=\"{name}\"; filename=\"{f}\"\r\n").as_bytes(),
                ),
                None => out.extend_from_slice(format!("content-disposition: form-data; name={name}\r\n").as_bytes()),
            }
            if let Some(ct) = content_type {
                out.extend_from_slice(format!("Content-Type: {ct}\r\n").as_bytes());
            }
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(data);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"--XyZ--\r\nepilogue");
        Bytes::from(out)
    }

    const CT: Option<&str> = Some("multipart/form-data; charset=utf-8; boundary=\"XyZ\"");
    const MP: Option<&str> = Some("multipart/form-data; boundary=b");

    #[tokio::test]
    async fn multipart_yields_the_file_and_the_title() {
        let data = b"%PDF-1.7\n--XyZ is not a delimiter without CR LF before it\r\n\x00\xff--XyZ";
        let upload = read_upload(
            CT,
            body(&[
                ("title", None, None, "Nota de março".as_bytes()),
                ("file", Some("nota.pdf"), Some("application/pdf"), data),
            ]),
        )
        .await
        .unwrap();
        assert_eq!(upload.file_name, "nota.pdf");
        assert_eq!(upload.content_type, "application/pdf");
        assert_eq!(upload.title.as_deref(), Some("Nota de março"));
        assert_eq!(&upload.content[..], &data[..]);
    }

    #[tokio::test]
    async fn quoted_file_names_are_decoded() {
        let raw = b"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\\\"b;c.csv\"\r\nContent-Type: text/csv\r\n\r\nx\r\n--b--";
        assert_eq!(read_upload(MP, Bytes::from_static(raw)).await.unwrap().file_name, "a\"b;c.csv");
        let raw = b"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"C:\\fakepath\\nota.pdf\"\r\nContent-Type: application/pdf\r\n\r\nx\r\n--b--";
        assert_eq!(read_upload(MP, Bytes::from_static(raw)).await.unwrap().file_name, "C:\\fakepath\\nota.pdf");
    }

    #[tokio::test]
    async fn malformed_multipart_is_refused() {
        async fn reason(ct: Option<&str>, raw: &'static [u8]) -> serde_json::Value {
            read_upload(ct, Bytes::from_static(raw)).await.unwrap_err().details.unwrap()["reason"].clone()
        }
        assert_eq!(reason(Some("application/json"), b"{}").await, "not_multipart");
        assert_eq!(reason(None, b"").await, "not_multipart");
        assert_eq!(reason(Some("multipart/form-data"), b"").await, "missing_boundary");
        assert_eq!(reason(MP, b"no delimiter at all").await, "missing_boundary");
        assert_eq!(
            reason(MP, b"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\n\r\nunterminated")
                .await,
            "missing_closing_boundary"
        );
        assert_eq!(reason(MP, b"--b\r\nContent-Type: text/csv\r\n\r\nx\r\n--b--").await, "missing_content_disposition");
        assert_eq!(reason(MP, b"--b\r\nno colon here\r\n\r\nx\r\n--b--").await, "invalid_part_headers");
        assert_eq!(
            reason(MP, b"--b\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nx\r\n--b--").await,
            "unknown_field"
        );
        assert_eq!(reason(MP, b"--b--").await, "required");
        assert_eq!(
            reason(
                MP,
                b"--b\r\nContent-Disposition: form-data; name=\"file\"\r\nContent-Type: text/csv\r\n\r\nx\r\n--b--"
            )
            .await,
            "missing_file_name"
        );
        assert_eq!(
            reason(MP, b"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\n\r\nx\r\n--b--")
                .await,
            "missing_content_type"
        );
        let two = b"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\nContent-Type: text/csv\r\n\r\nx\r\n--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"b.csv\"\r\nContent-Type: text/csv\r\n\r\ny\r\n--b--";
        assert_eq!(reason(MP, two).await, "duplicate_part");
    }
}
