//! Protocol eras and versions (SPEC §3).
//!
//! The era is decided by the body, with headers as a cross-check: a request whose
//! `params._meta` carries `io.modelcontextprotocol/protocolVersion` is on the stateless
//! 2026 path; anything else is the 2025 (initialize) era, provided its
//! `MCP-Protocol-Version` header names a 2025 version or is absent.

use http::HeaderMap;
use serde_json::{Map, Value};

use super::headers::{self, Unreadable};
use super::rpc::{Request, RpcError};

pub const V2026_07_28: &str = "2026-07-28";
pub const V2025_06_18: &str = "2025-06-18";
pub const V2025_03_26: &str = "2025-03-26";
pub const SUPPORTED_VERSIONS: [&str; 3] = [V2026_07_28, V2025_06_18, V2025_03_26];

pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// The era a request is served in.
#[derive(Debug, Clone, PartialEq)]
pub enum Era {
    /// 2026-07-28: stateless, per-request capabilities.
    Modern { client_capabilities: Map<String, Value> },
    /// 2025-06-18 or 2025-03-26: the initialize handshake.
    Legacy { version: &'static str },
}

impl Era {
    /// The version answered in `MCP-Protocol-Version`.
    pub fn version(&self) -> &'static str {
        match self {
            Era::Modern { .. } => V2026_07_28,
            Era::Legacy { version } => version,
        }
    }

    pub fn is_modern(&self) -> bool {
        matches!(self, Era::Modern { .. })
    }

    /// 2025-03-26 lacks titles, output schemas, structured content and resource links.
    pub fn is_2025_03_26(&self) -> bool {
        matches!(self, Era::Legacy { version } if *version == V2025_03_26)
    }
}

fn legacy_version(v: &str) -> Option<&'static str> {
    match v {
        V2025_06_18 => Some(V2025_06_18),
        V2025_03_26 => Some(V2025_03_26),
        _ => None,
    }
}

fn header(headers: &HeaderMap, name: &'static str) -> Result<Option<String>, RpcError> {
    headers::read(headers, name)
        .map_err(|Unreadable(n)| RpcError::header_mismatch(format!("{n} header is not readable")))
}

/// Decides the era of `request` and runs the checks of that era in the contract's
/// order; the first failing check answers.
pub fn decide(headers: &HeaderMap, request: &Request) -> Result<Era, RpcError> {
    let meta = request.params.get("_meta").and_then(Value::as_object);
    let envelope = meta.and_then(|m| m.get(META_PROTOCOL_VERSION));
    let header_version = header(headers, headers::PROTOCOL_VERSION)?;
    match envelope {
        Some(envelope) => check_modern(headers, request, meta, envelope, header_version),
        None => match header_version.as_deref() {
            None => Ok(Era::Legacy { version: V2025_03_26 }),
            Some(V2026_07_28) => Err(RpcError::bad_params(
                "MCP-Protocol-Version 2026-07-28 requires params._meta with io.modelcontextprotocol/protocolVersion \
                 and io.modelcontextprotocol/clientCapabilities",
            )),
            Some(v) => {
                legacy_version(v).map(|version| Era::Legacy { version }).ok_or_else(|| RpcError::unsupported_version(v))
            }
        },
    }
}

/// The 2026 checks, in order: routing headers, `_meta` shape, version header, version.
fn check_modern(
    headers: &HeaderMap,
    request: &Request,
    meta: Option<&Map<String, Value>>,
    envelope: &Value,
    header_version: Option<String>,
) -> Result<Era, RpcError> {
    // 1. Mcp-Method and Mcp-Name must repeat the body.
    match header(headers, headers::MCP_METHOD)? {
        None => return Err(RpcError::header_mismatch("Mcp-Method header is required")),
        Some(m) if m != request.method => {
            return Err(RpcError::header_mismatch(format!(
                "Mcp-Method header value '{m}' does not match body value '{}'",
                request.method
            )))
        }
        Some(_) => {}
    }
    let (name_field, required) = match request.method.as_str() {
        "tools/call" => (Some("name"), true),
        "prompts/get" => (Some("name"), false),
        "resources/read" => (Some("uri"), false),
        _ => (None, false),
    };
    if let Some(field) = name_field {
        match header(headers, headers::MCP_NAME)? {
            None if required => return Err(RpcError::header_mismatch("Mcp-Name header is required for tools/call")),
            None => {}
            Some(raw) => {
                let decoded = headers::decode_value(&raw)
                    .map_err(|_| RpcError::header_mismatch("Mcp-Name header has an invalid base64 value"))?;
                let body = request.params.get(field).and_then(Value::as_str);
                if body != Some(decoded.as_str()) {
                    return Err(RpcError::header_mismatch(format!(
                        "Mcp-Name header value '{decoded}' does not match body value '{}'",
                        body.unwrap_or("")
                    )));
                }
            }
        }
    }
    // 2. The request metadata must be well formed.
    let Some(version) = envelope.as_str() else {
        return Err(RpcError::bad_params("params._meta io.modelcontextprotocol/protocolVersion must be a string"));
    };
    let Some(capabilities) = meta.and_then(|m| m.get(META_CLIENT_CAPABILITIES)).and_then(Value::as_object) else {
        return Err(RpcError::bad_params(
            "params._meta io.modelcontextprotocol/clientCapabilities is required and must be an object",
        ));
    };
    // 3. The version header must be present and agree with the envelope.
    match header_version.as_deref() {
        None => return Err(RpcError::header_mismatch("MCP-Protocol-Version header is required")),
        Some(h) if h != version => {
            return Err(RpcError::header_mismatch(format!(
                "MCP-Protocol-Version header value '{h}' does not match body value '{version}'"
            )))
        }
        Some(_) => {}
    }
    // 4. The envelope is a 2026 construct: only 2026-07-28 is served on this path.
    if version != V2026_07_28 {
        return Err(RpcError::unsupported_version(version));
    }
    Ok(Era::Modern { client_capabilities: capabilities.clone() })
}

/// `initialize`'s negotiation: the requested version when it is an initialize-era
/// version we serve, else 2025-06-18.
pub fn negotiate_initialize(requested: Option<&str>) -> &'static str {
    requested.and_then(legacy_version).unwrap_or(V2025_06_18)
}
