//! What an attachment's file may be: its type (declared content type and extension
//! agree, the first bytes match), its size and its name.

use serde_json::json;

use super::{MAX_FILE_BYTES, MAX_NAME_CHARS};
use crate::error::{ApiError, ErrorCode};
use crate::ops::machinery::common::invalid;

/// The file types an attachment may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileType {
    Pdf,
    Png,
    Jpeg,
    Xml,
    Ofx,
    Csv,
    Xlsx,
}

pub(super) const XLSX_MIME: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

impl FileType {
    /// From a file extension (lower-case, without the dot).
    fn from_extension(ext: &str) -> Option<FileType> {
        Some(match ext {
            "pdf" => FileType::Pdf,
            "png" => FileType::Png,
            "jpg" | "jpeg" => FileType::Jpeg,
            "xml" => FileType::Xml,
            "ofx" => FileType::Ofx,
            "csv" => FileType::Csv,
            "xlsx" => FileType::Xlsx,
            _ => return None,
        })
    }

    /// The media type files of this type are stored with.
    fn media_type(self) -> &'static str {
        match self {
            FileType::Pdf => "application/pdf",
            FileType::Png => "image/png",
            FileType::Jpeg => "image/jpeg",
            FileType::Xml => "application/xml",
            FileType::Ofx => "application/x-ofx",
            FileType::Csv => "text/csv",
            FileType::Xlsx => XLSX_MIME,
        }
    }

    /// From a media type's essence (lower-case, without parameters).
    fn from_mime(mime: &str) -> Option<FileType> {
        Some(match mime {
            "application/pdf" => FileType::Pdf,
            "image/png" => FileType::Png,
            "image/jpeg" => FileType::Jpeg,
            "application/xml" | "text/xml" => FileType::Xml,
            "application/x-ofx" => FileType::Ofx,
            "text/csv" => FileType::Csv,
            XLSX_MIME => FileType::Xlsx,
            _ => return None,
        })
    }

    /// Whether `content` starts the way a file of this type does.
    ///
    /// Binary types are recognised by their signature (an XLSX workbook is a ZIP
    /// archive). XML must start with `<` after an optional UTF-8 byte order mark and
    /// white space. XML, OFX and CSV must be text: UTF-8, or a single-byte Latin-1 /
    /// Windows-1252 encoding as Brazilian banks still produce; NUL and the other control
    /// bytes (except tab, line feed and carriage return) are refused.
    fn matches(self, content: &[u8]) -> bool {
        match self {
            FileType::Pdf => content.starts_with(b"%PDF-"),
            FileType::Png => content.starts_with(b"\x89PNG\r\n\x1a\n"),
            FileType::Jpeg => content.starts_with(b"\xFF\xD8\xFF"),
            FileType::Xlsx => content.starts_with(b"PK\x03\x04"),
            FileType::Xml => {
                let text = content.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(content);
                let first = text.iter().find(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'));
                first == Some(&b'<') && is_text(content)
            }
            FileType::Ofx | FileType::Csv => is_text(content),
        }
    }
}

/// Text in UTF-8 or a single-byte Latin encoding: no control bytes but tab, LF and CR.
fn is_text(content: &[u8]) -> bool {
    content.iter().all(|&b| (b >= 0x20 && b != 0x7F) || matches!(b, b'\t' | b'\n' | b'\r'))
}

/// 422 `too_large` (with `details.limit_bytes`): also what the door answers for a
/// request body over its own cap.
pub fn too_large() -> ApiError {
    ApiError::new(ErrorCode::UnprocessableEntity, "The file is larger than 10 MB")
        .with_details(json!({ "field": "file", "reason": "too_large", "limit_bytes": MAX_FILE_BYTES }))
}

pub(super) fn file_problem(reason: &str, message: &str) -> ApiError {
    crate::ops::machinery::common::unprocessable("file", reason, message)
}

/// The file name as stored: the last path segment (some clients send a full path),
/// without control characters, trimmed, at most 255 characters.
pub(super) fn clean_file_name(raw: &str) -> Result<String, ApiError> {
    let base = raw.rsplit(['/', '\\']).next().unwrap_or(raw);
    let cleaned: String = base.chars().filter(|c| !c.is_control()).collect();
    let cleaned = cleaned.trim();
    if cleaned.is_empty() || cleaned == "." || cleaned == ".." {
        return Err(invalid("file", "missing_file_name", "The file part needs a file name"));
    }
    if cleaned.chars().count() > MAX_NAME_CHARS {
        return Err(invalid("file", "too_long", "The file name is longer than 255 characters"));
    }
    Ok(cleaned.to_string())
}

/// The media type's essence: lower-case, parameters dropped.
fn essence(content_type: &str) -> String {
    content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}

/// The media type a file name's extension names (`None` for an unsupported type), for
/// an upload that does not declare one.
pub fn media_type_of(file_name: &str) -> Option<&'static str> {
    let (_, ext) = file_name.rsplit_once('.')?;
    FileType::from_extension(&ext.to_ascii_lowercase()).map(FileType::media_type)
}

/// Decides the file's type from its declared content type and its extension, which
/// must name the same supported type, then checks its first bytes.
pub(super) fn check_type(file_name: &str, content_type: &str, content: &[u8]) -> Result<(FileType, String), ApiError> {
    let mime = essence(content_type);
    let by_mime = FileType::from_mime(&mime);
    let by_extension =
        file_name.rsplit_once('.').and_then(|(_, ext)| FileType::from_extension(&ext.to_ascii_lowercase()));
    let (Some(declared), Some(named)) = (by_mime, by_extension) else {
        return Err(file_problem(
            "unsupported_type",
            "Unsupported file type: send pdf, png, jpeg, xml, ofx, csv or xlsx with its content type and extension",
        ));
    };
    if declared != named {
        return Err(file_problem("type_mismatch", "The content type and the file extension name different types"));
    }
    if !declared.matches(content) {
        return Err(file_problem("type_mismatch", "The file content does not match its declared type"));
    }
    Ok((declared, mime))
}

pub(super) fn sha256_hex(content: &[u8]) -> String {
    aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, content).as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_is_decided_by_content_type_and_extension_then_checked_by_magic_bytes() {
        let reason = |name: &str, ct: &str, data: &[u8]| {
            check_type(name, ct, data).err().map(|e| e.details.unwrap()["reason"].as_str().unwrap().to_string())
        };
        assert_eq!(reason("a.PDF", "Application/PDF", b"%PDF-1.4"), None);
        assert_eq!(reason("a.jpg", "image/jpeg", b"\xFF\xD8\xFF\xE0"), None);
        assert_eq!(reason("a.jpeg", "image/jpeg", b"\xFF\xD8\xFF\xE0"), None);
        assert_eq!(reason("a.png", "image/png", b"\x89PNG\r\n\x1a\n...."), None);
        assert_eq!(reason("a.xlsx", XLSX_MIME, b"PK\x03\x04...."), None);
        assert_eq!(reason("a.xml", "text/xml; charset=utf-8", b"\xEF\xBB\xBF \r\n<?xml version=\"1.0\"?><a/>"), None);
        assert_eq!(reason("a.ofx", "application/x-ofx", b"OFXHEADER:100\r\nCHARSET:1252\r\nNAME:Jo\xe3o\r\n"), None);
        assert_eq!(reason("a.csv", "text/csv", "data;valor\n2026-01-01;1,00\tação\n".as_bytes()), None);
        assert_eq!(reason("a.pdf", "image/png", b"%PDF-").as_deref(), Some("type_mismatch"));
        assert_eq!(reason("a.pdf", "application/pdf", b"\x89PNG\r\n\x1a\n").as_deref(), Some("type_mismatch"));
        assert_eq!(reason("a.png", "image/png", b"GIF89a").as_deref(), Some("type_mismatch"));
        assert_eq!(reason("a.xml", "application/xml", b"not xml").as_deref(), Some("type_mismatch"));
        assert_eq!(reason("a.csv", "text/csv", b"a,b\x00c").as_deref(), Some("type_mismatch"));
        assert_eq!(reason("a.xlsx", XLSX_MIME, b"%PDF-").as_deref(), Some("type_mismatch"));
        assert_eq!(reason("a.gif", "image/gif", b"GIF89a").as_deref(), Some("unsupported_type"));
        assert_eq!(reason("a.pdf", "application/octet-stream", b"%PDF-").as_deref(), Some("unsupported_type"));
        assert_eq!(reason("pdf", "application/pdf", b"%PDF-").as_deref(), Some("unsupported_type"));
    }

    #[test]
    fn file_names_lose_paths_and_control_characters() {
        assert_eq!(clean_file_name("C:\\fakepath\\nota.pdf").unwrap(), "nota.pdf");
        assert_eq!(clean_file_name("../../etc/na\r\nme.pdf").unwrap(), "name.pdf");
        assert!(clean_file_name("dir/").is_err());
        assert!(clean_file_name(&"a".repeat(256)).is_err());
    }
}
